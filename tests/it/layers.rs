//! docs/architecture.md's layers hold in the code: every top-level module of src/ is in its
//! table, none imports a module of a layer above its own, and no two top-level modules import
//! each other, directly or through others.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers of architecture.md's table, top first: each a set of top-level module names
/// (`cli/` and `main.rs` read as `cli` and `main`). What a cell holds in parentheses is a
/// module's own files.
fn layers() -> Vec<BTreeSet<String>> {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let table = doc.split("## Layers, top to bottom").nth(1).expect("architecture.md has its layers' table");
    let rows = table.lines().skip_while(|l| !l.starts_with("| ---")).skip(1).take_while(|l| l.starts_with('|'));
    rows.map(|row| {
        let cell = row.split('|').nth(2).unwrap();
        let mut depth = 0;
        let outside: String = cell
            .chars()
            .filter(|&c| {
                depth += (c == '(') as i32 - (c == ')') as i32;
                depth == 0 && c != ')'
            })
            .collect();
        outside
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|m| m.trim_end_matches('/').trim_end_matches(".rs").to_string())
            .collect()
    })
    .collect()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every .rs file under `dir`.
fn sources(dir: &Path, into: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, into);
        } else if p.extension().is_some_and(|x| x == "rs") {
            into.push(p);
        }
    }
}

/// `code` with its comments and the insides of its string and character literals blanked
/// (each character a space, lines kept), so that braces and names are the code's own.
fn blanked(code: &str) -> String {
    let c: Vec<char> = code.chars().collect();
    let mut out = c.clone();
    let mut i = 0;
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for ch in &mut out[from..to.min(c.len())] {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
    };
    while i < c.len() {
        let end = match (c[i], c.get(i + 1).copied()) {
            ('/', Some('/')) => (i..c.len()).find(|&j| c[j] == '\n').unwrap_or(c.len()),
            ('/', Some('*')) => (i + 2..c.len()).find(|&j| c[j - 1] == '*' && c[j] == '/').map_or(c.len(), |j| j + 1),
            ('"', _) => {
                let mut j = i + 1;
                while j < c.len() && c[j] != '"' {
                    j += if c[j] == '\\' { 2 } else { 1 };
                }
                j + 1
            }
            // A raw string: r"..." or r#"..."#, as many hashes at its end as at its start.
            ('r', Some('"' | '#')) if i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_') => {
                let hashes = c[i + 1..].iter().take_while(|&&h| h == '#').count();
                if c.get(i + 1 + hashes) != Some(&'"') {
                    i += 1;
                    continue;
                }
                let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
                let rest: String = c[i + 2 + hashes..].iter().collect();
                rest.find(&close).map_or(c.len(), |k| i + 2 + hashes + rest[..k].chars().count() + close.len())
            }
            // A character literal ('{', '\n'), not a lifetime ('a).
            ('\'', Some('\\')) => (i + 2..c.len()).find(|&j| c[j] == '\'').map_or(c.len(), |j| j + 1),
            ('\'', Some(_)) if c.get(i + 2) == Some(&'\'') => i + 3,
            _ => {
                i += 1;
                continue;
            }
        };
        blank(&mut out, i, end);
        i = end;
    }
    out.into_iter().collect()
}

/// `code` (blanked) without its items under `#[cfg(test)]`: a `mod x;` to its `;`, a
/// `mod tests { ... }` (or any item) to its matching brace.
fn without_tests(code: &str) -> String {
    let mut code = code.to_string();
    while let Some(at) = code.find("#[cfg(test)]") {
        let rest = &code[at + "#[cfg(test)]".len()..];
        let mut depth = 0;
        let mut end = code.len();
        for (i, ch) in rest.char_indices() {
            match ch {
                ';' if depth == 0 => {
                    end = at + "#[cfg(test)]".len() + i + 1;
                    break;
                }
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = at + "#[cfg(test)]".len() + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        code.replace_range(at..end, "");
    }
    code
}

/// The top-level modules `code` names as `crate::NAME`, or inside `crate::{...}`; its
/// comments, literals and tests left out (a test may reach anything).
fn imports(code: &str) -> BTreeSet<String> {
    let code = without_tests(&blanked(code));
    let word = |s: &str| s.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut names = BTreeSet::new();
    for part in code.split("crate::").skip(1) {
        match part.strip_prefix('{') {
            Some(group) => {
                let (mut depth, mut at) = (0, 0);
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            names.insert(word(&group[at..i]));
                            break;
                        }
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            names.insert(word(&group[at..i]));
                            at = i + 1;
                        }
                        _ => {}
                    }
                }
            }
            None => {
                names.insert(word(part));
            }
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

/// Files that are modules only in tests (`#[cfg(test)] mod NAME;`), which may reach anything.
fn test_only(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut only = BTreeSet::new();
    for f in files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for pair in lines.windows(2) {
            if let ("#[cfg(test)]", Some(m)) = (pair[0], pair[1].strip_prefix("mod ").and_then(|m| m.strip_suffix(';')))
            {
                let dir = f.parent().unwrap();
                only.insert(dir.join(format!("{m}.rs")));
                only.insert(dir.join(m).join("mod.rs"));
            }
        }
    }
    only
}

#[test]
fn no_module_imports_a_layer_above_it_nor_loops_back() {
    let layers = layers();
    let layer_of: BTreeMap<&str, usize> =
        layers.iter().enumerate().flat_map(|(i, l)| l.iter().map(move |m| (m.as_str(), i))).collect();
    let src = root().join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let test_only = test_only(&files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut wrong = Vec::new();
    for f in files.iter().filter(|f| !test_only.contains(*f)) {
        let rel = f.strip_prefix(&src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        if top == "lib" {
            continue;
        }
        let Some(&mine) = layer_of.get(top.as_str()) else {
            wrong.push(format!("src/{top}: not in architecture.md's table of layers"));
            continue;
        };
        for name in imports(&std::fs::read_to_string(f).unwrap()) {
            let Some(&theirs) = layer_of.get(name.as_str()) else { continue };
            if name == top {
                continue;
            }
            if theirs < mine {
                wrong.push(format!("src/{} imports {name}, a layer above its own", rel.display()));
            }
            graph.entry(top.clone()).or_default().insert(name);
        }
    }
    for m in layer_of.keys() {
        let file = src.join(format!("{m}.rs"));
        assert!(file.exists() || src.join(m).is_dir(), "architecture.md names `{m}`, which src/ does not have");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // No loop: a depth-first walk never meets a module still on its path.
    fn walk<'a>(
        m: &'a str,
        g: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(i) = path.iter().position(|p| *p == m) {
            panic!("modules import each other in a loop: {} -> {m}", path[i..].join(" -> "));
        }
        if !done.insert(m) {
            return;
        }
        path.push(m);
        for n in g.get(m).into_iter().flatten() {
            walk(n, g, path, done);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        walk(m, &graph, &mut Vec::new(), &mut done);
    }
}

#[test]
fn imports_are_read_from_paths_and_groups() {
    let code = "use crate::config::{Job, Test};\nuse crate::{host::cpu, units::{self, parse}, error};\n// crate::ui\nfn f() { crate::targets::open(); }\n#[cfg(test)]\nmod tests { use crate::cli; }";
    let got: Vec<String> = imports(code).into_iter().collect();
    assert_eq!(got, ["config", "error", "host", "targets", "units"]);
}
