//! The docs' promises are tests: every paragraph of docs/safety-and-trust.md, docs/live.md and
//! docs/ui.md that says "never", "always", "kept" or "said once" holds a promise of the list in
//! docs/safety-and-trust.md ("Promises and the tests that hold them"), each promise is in its
//! page as quoted, and each test it names exists.

use std::path::Path;

const PAGES: [&str; 3] = ["safety-and-trust.md", "live.md", "ui.md"];
const LIST: &str = "## Promises and the tests that hold them";

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

/// Text with its runs of whitespace made one space.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A page's paragraphs, flattened: the blocks between blank lines, each bullet and table row
/// on its own; docs/safety-and-trust.md's promise list left out.
fn paragraphs(page: &str) -> Vec<String> {
    let text = read(&format!("docs/{page}"));
    let text = text.split(LIST).next().unwrap();
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut cur: Vec<&str> = Vec::new();
        for line in block.lines() {
            let t = line.trim_start();
            if (t.starts_with("- ") || t.starts_with("| ")) && !cur.is_empty() {
                out.push(flat(&cur.join(" ")));
                cur.clear();
            }
            cur.push(line);
        }
        out.push(flat(&cur.join(" ")));
    }
    out
}

/// Whether `text`, code spans left out, says a promise word.
fn promises(text: &str) -> bool {
    let prose: String = text.split('`').step_by(2).collect::<Vec<_>>().join(" ").to_lowercase();
    let words: Vec<&str> = prose.split(|c: char| !c.is_alphanumeric()).collect();
    words.iter().any(|w| ["never", "always", "kept"].contains(w)) || prose.contains("said once")
}

/// The list: (page, promise, tests).
fn list() -> Vec<(String, String, Vec<String>)> {
    let text = read("docs/safety-and-trust.md");
    let (_, list) = text.split_once(LIST).expect("the promise list");
    list.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| page") && !l.starts_with("| ---"))
        .map(|row| {
            let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
            assert_eq!(cells.len(), 3, "a row of three cells: {row}");
            let promise = cells[1].trim_matches('"').to_string();
            let tests = cells[2].split(", ").map(|t| t.trim_matches('`').to_string()).collect();
            (cells[0].to_string(), promise, tests)
        })
        .collect()
}

/// Whether the test `path` (`module::name` of tests/it, or a unit test's path in src/) exists.
fn exists(path: &str) -> bool {
    let parts: Vec<&str> = path.split("::").collect();
    let Some((name, module)) = parts.split_last() else { return false };
    let decl = |file: &str| read(file).contains(&format!("fn {name}()"));
    let it = format!("tests/it/{}.rs", module.join("/"));
    let src: Vec<&str> = module.iter().copied().filter(|m| *m != "tests").collect();
    let candidates = [it, format!("src/{}.rs", src.join("/")), format!("src/{}/mod.rs", src.join("/"))];
    candidates.iter().any(|f| Path::new(env!("CARGO_MANIFEST_DIR")).join(f).exists() && decl(f))
}

#[test]
fn every_promise_names_a_test_that_exists() {
    let list = list();
    assert!(list.len() > 10, "{} promises", list.len());
    for (page, promise, tests) in &list {
        assert!(PAGES.contains(&page.as_str()), "{page} is not a page of promises");
        assert!(flat(&read(&format!("docs/{page}"))).contains(promise.as_str()), "{page} does not say \"{promise}\"");
        for t in tests {
            assert!(exists(t), "no test {t} (for \"{promise}\")");
        }
    }
    for page in PAGES {
        for para in paragraphs(page).iter().filter(|p| promises(p)) {
            let held = list.iter().any(|(p, promise, _)| p == page && para.contains(promise.as_str()));
            assert!(held, "{page}: a promise no test holds (add it to the list): {para}");
        }
    }
}
