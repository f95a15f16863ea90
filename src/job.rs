//! Job files: TOML read into a [`TestConfig`], every mistake reported as `FILE:LINE:COLUMN: what`.

use std::path::Path;

use toml::de::{DeTable, DeValue};

use crate::config::{ConfigError, Run, Seg, TestConfig};
use crate::error::{Error, Result, input};

/// Reads, parses and resolves a job file.
pub fn load(path: &Path) -> Result<(TestConfig, Vec<Run>)> {
    let name = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| input(format!("cannot read job file {name}: {e}")))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    parse_in(&text, &name.to_string(), dir)
}

/// Parses and resolves job-file text; `name` prefixes error locations, and files the job
/// names (a `[storage]` baseline) are found from `dir`.
pub fn parse_in(text: &str, name: &str, dir: &Path) -> Result<(TestConfig, Vec<Run>)> {
    let mut config: TestConfig = toml::from_str(text).map_err(|e| {
        let msg = e.message().trim().replace('\n', " ");
        match e.span() {
            Some(span) => located(text, name, span.start, &msg),
            None => input(format!("{name}: {msg}")),
        }
    })?;
    if let Some(storage) = &mut config.storage {
        if let Some(b) = storage.baseline.clone() {
            let path = dir.join(&b);
            let doc = std::fs::read_to_string(&path)
                .map_err(|e| input(format!("{name}: [storage] baseline {}: {e}", path.display())))?;
            storage.fill_from_baseline(&doc).map_err(|m| input(format!("{name}: [storage] baseline {b}: {m}")))?;
        }
    }
    resolve_located(config, text, name)
}

/// Parses and resolves job-file text; `name` prefixes error locations.
pub fn parse(text: &str, name: &str) -> Result<(TestConfig, Vec<Run>)> {
    parse_in(text, name, Path::new("."))
}

fn resolve_located(mut config: TestConfig, text: &str, name: &str) -> Result<(TestConfig, Vec<Run>)> {
    let runs = config.resolve().map_err(|e| locate(text, name, &e))?;
    crate::study::points(&config).map_err(|e| locate(text, name, &e))?;
    Ok((config, runs))
}

/// Turns a configuration error into `name:line:col: message`, finding the path in the text.
fn locate(text: &str, name: &str, e: &ConfigError) -> Error {
    let Ok(table) = DeTable::parse(text) else {
        return input(format!("{name}: {}", e.message));
    };
    let span = table.span();
    let root = toml::Spanned::new(span, DeValue::Table(table.into_inner()));
    let mut node = &root;
    let mut span = root.span();
    for seg in &e.path {
        let next = match seg {
            Seg::Key(k) => node.get_ref().get(*k),
            Seg::Index(i) => node.get_ref().get(*i),
        };
        match next {
            Some(n) => {
                node = n;
                span = n.span();
            }
            None => break,
        }
    }
    located(text, name, span.start, &e.message)
}

fn located(text: &str, name: &str, offset: usize, msg: &str) -> Error {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    input(format!("{name}:{line}:{col}: {msg}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text, "job.toml").unwrap_err().to_string()
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = err("[test]\nrun = [\"oltp-8k\"]\n\n[[worker]]\noutstanding = 0\n");
        assert!(e.starts_with("job.toml:5:15: outstanding = 0"), "{e}");
        let e = err("[[worker]]\nspec = \"nope\"\ntargets = [\"null\"]\n");
        assert!(e.starts_with("job.toml:2:8: unknown access specification 'nope'"), "{e}");
        let e = err("[test]\ntime = \"ten\"\n");
        assert!(e.starts_with("job.toml:2:8:") && e.contains("not a duration"), "{e}");
        let e = err("[test]\nbogus = 1\n");
        assert!(e.starts_with("job.toml:2:1:") && e.contains("bogus"), "{e}");
        let e = err(
            "[test]\nrun=[\"x\"]\n[[spec]]\nname = \"x\"\nlines = [{size=\"4K\", share=60, read=100, random=0}]\n[[worker]]\n",
        );
        assert!(e.starts_with("job.toml:3:1:") && e.contains("sum to 60 %"), "{e}");
        let e = err("[[worker\n");
        assert!(e.starts_with("job.toml:1:"), "{e}");
        assert!(!e.contains('\n'));
    }
}
