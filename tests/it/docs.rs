//! The docs stay pages a reader can hold: no prose line over 300 characters in README.md or
//! docs/*.md (code blocks aside: a command is as long as it is), docs/performance.md no
//! logbook (at most 400 lines: the history is bench/logbook.md), and the README's first hour
//! short enough to read in a minute (at most 40 lines).

use std::path::{Path, PathBuf};

const LONGEST_LINE: usize = 300;
const PERFORMANCE_LINES: usize = 400;
const FIRST_HOUR_LINES: usize = 40;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// README.md and every docs/*.md, in name order.
fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    pages.insert(0, root().join("README.md"));
    pages
}

/// Each line of a Markdown text, numbered from 1, and whether it is code: a fenced block (```
/// or ~~~), its fences included.
fn lines_and_code(text: &str) -> Vec<(usize, &str, bool)> {
    let mut fence: Option<&str> = None;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| t.starts_with(m));
        let code = fence.is_some() || marker.is_some();
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(open), Some(m)) if m == open => fence = None,
            _ => {}
        }
        out.push((i + 1, line, code));
    }
    out
}

/// The lines of a Markdown text outside fenced code blocks, numbered from 1.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    lines_and_code(text).into_iter().filter(|(_, _, code)| !code).map(|(n, l, _)| (n, l)).collect()
}

/// The level of a heading line (`## x`: 2), or 0.
fn heading_level(line: &str) -> usize {
    let hashes = line.len() - line.trim_start_matches('#').len();
    if line[hashes..].starts_with(' ') { hashes } else { 0 }
}

/// The lines of the section under `heading` (its heading line included, trailing blank
/// lines not), up to the next heading of the same or a higher level outside code.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let level = heading_level(heading);
    let mut lines = lines_and_code(text).into_iter().skip_while(|(_, l, code)| *code || *l != heading);
    let mut out: Vec<&str> = lines.next().map(|(_, l, _)| l).into_iter().collect();
    let ends = |l: &str, code: bool| !code && (1..=level).contains(&heading_level(l));
    out.extend(lines.take_while(|(_, l, code)| !ends(l, *code)).map(|(_, l, _)| l));
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    out
}

#[test]
fn no_prose_line_is_over_300_characters() {
    let mut long = Vec::new();
    for page in pages() {
        let text = read(&page);
        for (n, line) in prose_lines(&text) {
            let chars = line.chars().count();
            if chars > LONGEST_LINE {
                long.push(format!("{}:{n}: {chars} characters", page.strip_prefix(root()).unwrap().display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "lines over {LONGEST_LINE} characters (split a table cell into a short cell and a list under \
         the table):\n{}",
        long.join("\n")
    );
}

#[test]
fn the_performance_page_is_a_page_not_a_logbook() {
    let lines = read(&root().join("docs/performance.md")).lines().count();
    assert!(
        lines <= PERFORMANCE_LINES,
        "docs/performance.md has {lines} lines, over {PERFORMANCE_LINES}: keep each case's latest \
         figures there and move the history to bench/logbook.md"
    );
}

#[test]
fn the_readmes_first_hour_is_short() {
    let text = read(&root().join("README.md"));
    let first_hour = section(&text, "## The first hour");
    assert!(!first_hour.is_empty(), "README.md has no section '## The first hour'");
    assert!(
        first_hour.len() <= FIRST_HOUR_LINES,
        "README.md's first hour is {} lines, over {FIRST_HOUR_LINES}: move caveats to the pages \
         they belong to and link them",
        first_hour.len()
    );
}

#[test]
fn code_blocks_and_sections_are_found_as_written() {
    let text = "# t\nshort\n```sh\n# in code\n```\n## a\none\n~~~\n## code\n~~~\n### b\n#7 two\n\n## c\nthree\n";
    let prose: Vec<usize> = prose_lines(text).into_iter().map(|(n, _)| n).collect();
    assert_eq!(prose, [1, 2, 6, 7, 11, 12, 13, 14, 15]);
    assert_eq!(section(text, "## a"), ["## a", "one", "~~~", "## code", "~~~", "### b", "#7 two"]);
    assert_eq!(section(text, "## c"), ["## c", "three"]);
    assert!(section(text, "## none").is_empty());
}
