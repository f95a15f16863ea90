//! A fio job file's text as fio's init.c reads it: sections of `key[=value]` options,
//! `include`s read in place, `;` and `#` comments, `${ENV}` expanded.

use std::path::{Path, PathBuf};

/// One `key[=value]` of a section, where it was written.
#[derive(Debug, Clone)]
pub(super) struct Opt {
    pub(super) key: String,
    pub(super) value: Option<String>,
    pub(super) at: String,
}

#[derive(Debug)]
pub(super) struct Section {
    pub(super) name: String,
    pub(super) at: String,
    pub(super) opts: Vec<Opt>,
}

/// How deep `include`s may nest (a file including itself would never end).
const MAX_INCLUDE_DEPTH: usize = 8;

/// `${NAME}` replaced by the environment's value.
fn expand(v: &str, at: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = v;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let Some(end) = rest[i..].find('}') else { return Err(format!("{at}: \"{v}\": ${{ without }}")) };
        let name = &rest[i + 2..i + end];
        let value = std::env::var(name).map_err(|_| format!("{at}: ${{{name}}} is not set in the environment"))?;
        out.push_str(&value);
        rest = &rest[i + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The sections of a job file, includes read in place, as fio's init.c reads them: a line is
/// cut at `;` or `#`, blank lines skipped, `[name]` starts a section.
/// `known` says whether a name is one of fio's options (its table, above this file).
pub(super) fn sections(
    text: &str,
    file: &Path,
    depth: usize,
    into: &mut Vec<Section>,
    known: &dyn Fn(&str) -> bool,
) -> Result<(), String> {
    let shown = file.display().to_string();
    // Whether this file has shown itself a fio job file (a [section], or one of fio's options):
    // until then a word fio does not know is no option to quote, but maybe a secret (a token
    // file, /etc/machine-id, /proc/self/environ, included or named by mistake).
    let mut is_fio = false;
    for (n, raw) in text.lines().enumerate() {
        let at = format!("{shown}:{}", n + 1);
        let line = raw.split([';', '#']).next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if depth > 0 {
                return Err(format!("{at}: no new sections in included files (as fio)"));
            }
            printable(name, &at, "a [section]'s name")?;
            into.push(Section { name: name.trim().to_string(), at, opts: Vec::new() });
            is_fio = true;
            continue;
        }
        if let Some(inc) = line.strip_prefix("include").filter(|r| r.starts_with([' ', '\t'])) {
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(format!("{at}: includes nest deeper than {MAX_INCLUDE_DEPTH}"));
            }
            let inc = PathBuf::from(expand(inc.trim(), &at)?);
            // fio looks from where it runs, then beside the including file.
            let path = if inc.exists() { inc } else { file.parent().unwrap_or(Path::new(".")).join(inc) };
            let text =
                crate::import::read_text(&path, true).map_err(|e| format!("{at}: include {}: {e}", path.display()))?;
            sections(&text, &path, depth + 1, into, known)?;
            continue;
        }
        let (key, value) = line.split_once('=').map_or((line, None), |(k, v)| (k.trim(), Some(v.trim())));
        // A line is quoted only once it reads as an option: a file that is no job file (a
        // password file, included or named by mistake) must not have its lines printed.
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(format!("{at}: not a fio option (a name, or name=value)"));
        }
        is_fio = is_fio || known(&key.to_ascii_lowercase());
        if !is_fio {
            return Err(format!("{at}: not a fio job file (neither a [section] nor a fio option)"));
        }
        let Some(section) = into.last_mut() else {
            return Err(format!("{at}: option {key} outside of a [section]"));
        };
        let value = value.map(|v| expand(v, &at)).transpose()?;
        if let Some(v) = &value {
            printable(v, &at, &format!("{key}="))?;
        }
        section.opts.push(Opt { key: key.to_ascii_lowercase(), value, at });
    }
    Ok(())
}

/// `text` without control characters (C0, DEL, C1), which a terminal would act on where the
/// name or value is printed (a job's name in a table, a file's in "creating test file").
fn printable(text: &str, at: &str, what: &str) -> Result<(), String> {
    crate::format::printable(text).map_err(|c| format!("{at}: {what} holds the control character {c}: give it without"))
}
