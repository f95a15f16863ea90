//! Job files: TOML (or another tool's configuration, [`crate::import`]) read into a [`Job`],
//! checked as the [`Test`] it resolves to and the study it describes, every mistake reported
//! as `FILE:LINE:COLUMN: what`.

use std::path::Path;

use toml::de::{DeTable, DeValue};

use crate::config::{ConfigError, Job, Seg, Test};
use crate::error::{Error, Result, input};
use crate::import::{Format, Import, fio, icf};
use crate::study::doc::StudyDoc;

/// Reads and parses a job file, an Iometer configuration or a fio job file, and checks that
/// it resolves.
pub fn load(path: &Path, import: &Import) -> Result<Job> {
    refuse_target(path)?;
    let name = path.display().to_string();
    let text = crate::import::read_text(path, false).map_err(|e| e.context(format!("cannot read job file {name}")))?;
    let (job, warnings) = match Format::of(path, &text) {
        Format::Toml => return parse_in(&text, &name, path.parent().unwrap_or(Path::new("."))),
        Format::Icf => icf::parse(&text, &name, import),
        Format::Fio => fio::parse(&text, path, import).map_err(input),
    }?;
    // Before the warnings, which name the job's workers and files.
    crate::config::printable_names(&job).map_err(|e| input(format!("{name}: {}", e.message)))?;
    for w in warnings {
        say!("warning: {w}");
    }
    resolve(job).map_err(|e| input(format!("{name}: {}", e.message)))
}

/// A target given where a job file goes (`iogauge run /dev/sdb`, `iogauge run null`): said as
/// such, and a device never read as a job's text.
pub fn refuse_target(path: &Path) -> Result<()> {
    if crate::targets::names_one(path) {
        let name = crate::net::TargetName::read(&path.to_string_lossy());
        return Err(input(format!("{name} is a target, not a job file: test it with iogauge run --target {name}")));
    }
    Ok(())
}

/// Access specifications from a library file (`--spec-file`): an Iometer configuration (its
/// Access Specifications section), or TOML of `[[spec]]` tables as in a job file.
pub fn load_specs(path: &Path) -> Result<Vec<crate::spec::AccessSpec>> {
    let name = path.display().to_string();
    let text = crate::import::read_text(path, false).map_err(|e| e.context(format!("cannot read {name}")))?;
    parse_specs(&text, &name)
}

/// A library of access specifications, as its text: one of `--spec-file`'s formats by the
/// name's extension or what the text holds.
pub fn parse_specs(text: &str, name: &str) -> Result<Vec<crate::spec::AccessSpec>> {
    let specs = match Format::of(Path::new(name), text) {
        Format::Icf => icf::spec_library(text, name)?,
        Format::Fio => {
            return Err(input(format!("{name}: a fio job file holds jobs, not a library of specifications")));
        }
        Format::Toml => toml::from_str::<SpecLibrary>(text).map_err(|e| toml_error(text, name, &e))?.spec,
    };
    if specs.is_empty() {
        return Err(input(format!("{name}: no access specifications in it")));
    }
    let mut names = std::collections::HashSet::new();
    for s in &specs {
        crate::format::printable(&s.name).map_err(|c| {
            input(format!("{name}: a [[spec]]'s name holds the control character {c}: give it without"))
        })?;
        s.validate().map_err(|e| e.context(name))?;
        if !names.insert(s.name.as_str()) {
            return Err(input(format!("{name}: two specifications named '{}': give each its own name", s.name)));
        }
    }
    Ok(specs)
}

/// A library of access specifications as TOML (`[[spec]]` tables), for `--spec-file`.
pub fn specs_toml(specs: &[crate::spec::AccessSpec]) -> Result<String> {
    let text = specs_text(specs)?;
    parse_specs(&text, "specs.toml")?;
    Ok(text)
}

/// The specifications as a spec file's text, unchecked: what [`specs_toml`] checks.
pub fn specs_text(specs: &[crate::spec::AccessSpec]) -> Result<String> {
    to_toml(&SpecLibrary { spec: specs.to_vec() })
        .map_err(|e| input(format!("the specifications cannot be written as TOML: {e}")))
}

/// `value` as TOML text, in time linear in its size: the toml crate's `to_string` puts each
/// table that has tables under it (a `[[spec]]`'s `lines`) into the text already written, one
/// copy of the rest each, so 32,000 fio jobs took 9 s to write; its buffer's `Display` writes
/// the same text at once.
pub fn to_toml<T: serde::Serialize + ?Sized>(value: &T) -> std::result::Result<String, toml::ser::Error> {
    let mut buffer = toml::ser::Buffer::new();
    value.serialize(toml::ser::Serializer::new(&mut buffer))?;
    Ok(buffer.to_string())
}

/// A `--spec-file` of TOML.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecLibrary {
    #[serde(default)]
    spec: Vec<crate::spec::AccessSpec>,
}

/// Checks that a job resolves into a test (or a file-system study) and that its study's
/// points do.
fn resolve(job: Job) -> std::result::Result<Job, ConfigError> {
    if job.fs.is_some() {
        crate::config::check_fs_job(&job)?;
        return Ok(job);
    }
    Test::from_job(&job)?;
    crate::study::points(&job)?;
    Ok(job)
}

/// TOML that does not read, as one line naming where (`name:LINE:COLUMN`) when TOML says,
/// the key whose value it is, and what to give where the value was of the wrong type.
fn toml_error(text: &str, name: &str, e: &toml::de::Error) -> Error {
    let mut msg = e.message().trim().replace('\n', " ");
    if let Some((_, give)) = GIVE.iter().find(|(expected, _)| msg.ends_with(expected)) {
        msg = format!("{msg}: give {give}");
    }
    match e.span() {
        // `[worker]` where the job has a list of them.
        Some(span) if text[span.start..].starts_with('[') && msg.contains("expected a sequence") => {
            let table = text[span.start + 1..].split(']').next().unwrap_or_default();
            located(text, name, span.start, &format!("[{table}] is a list of tables: write [[{table}]]"))
        }
        Some(span) => match key_before(text, span.start) {
            Some(key) => located(text, name, span.start, &format!("{key}: {msg}")),
            None => located(text, name, span.start, &msg),
        },
        None => input(format!("{name}: {msg}")),
    }
}

/// What serde says it expected (the end of its message), and what a job file gives for it.
const GIVE: &[(&str, &str)] = &[
    ("expected u8", "a whole number from 0 to 255"),
    ("expected u32", "a whole number from 0 to 4294967295"),
    ("expected u64", "a whole number, 0 or more"),
    ("expected i32", "a whole number"),
    ("expected f64", "a number, without quotes"),
    ("expected a boolean", "true or false"),
    ("expected a sequence", "a list in brackets"),
    ("expected a string", "text in quotes"),
];

/// The key whose value starts at `offset`: the `key =` before it on its line (in a table or
/// an inline table).
fn key_before(text: &str, offset: usize) -> Option<&str> {
    let line = &text[text[..offset].rfind('\n').map_or(0, |i| i + 1)..offset];
    let before = line.trim_end().strip_suffix('=')?.trim_end();
    let key = before.rsplit(|c: char| c.is_whitespace() || c == '{' || c == ',').next()?;
    (!key.is_empty()).then_some(key)
}

/// Parses job-file text and checks that it resolves; `name` prefixes error locations, and
/// files the job names (a `[storage]` baseline, a worker's replayed trace) are found from `dir`.
pub fn parse_in(text: &str, name: &str, dir: &Path) -> Result<Job> {
    let mut config: Job = toml::from_str(text).map_err(|e| toml_error(text, name, &e))?;
    // A trace beside its job file is found from anywhere, as a baseline is.
    for r in config.workers.iter_mut().filter_map(|w| w.replay.as_mut()) {
        if r.trace.is_relative() {
            r.trace = dir.join(&r.trace);
        }
    }
    if let Some(storage) = &mut config.storage {
        if let Some(b) = storage.baseline.clone() {
            let path = dir.join(&b);
            let at = || format!("{name}: [storage] baseline {b}");
            // A FIFO would hold the reading (a command, a workbench call) until a writer came.
            if std::fs::metadata(&path).is_ok_and(|m| !m.is_file()) {
                return Err(input(format!("{}: not a regular file: give a result document", at())));
            }
            let doc = crate::document::read_file(&path).map_err(|e| e.context(at()))?;
            fill_from_baseline(storage, &doc).map_err(|e| e.context(at()))?;
        }
    }
    resolve_located(config, text, name)
}

/// Parses job-file text and checks that it resolves; `name` prefixes error locations.
pub fn parse(text: &str, name: &str) -> Result<Job> {
    parse_in(text, name, Path::new("."))
}

fn resolve_located(job: Job, text: &str, name: &str) -> Result<Job> {
    resolve(job).map_err(|e| locate(text, name, &e))
}

/// Fills the drive figures a `[storage]` section leaves out from a baseline study document
/// (`iogauge study baseline --json FILE`): its measured medians.
fn fill_from_baseline(storage: &mut crate::config::storage::Storage, text: &[u8]) -> Result<()> {
    let doc: StudyDoc =
        serde_json::from_slice(text).map_err(|e| input(format!("not an iogauge study document: {e}")))?;
    let s = &doc.points.first().ok_or_else(|| input("the study has no points"))?.summary;
    let median = |spec: &str, iops: bool| {
        s.iter().find(|x| x.spec == spec).map(|x| if iops { x.iops.median } else { x.mbps.median })
    };
    let missing = || input("not a baseline study (iogauge study baseline): it lacks streaming-read-1m");
    if storage.drive_read_mbps == 0.0 {
        storage.drive_read_mbps = median("streaming-read-1m", false).ok_or_else(missing)?;
    }
    if storage.drive_write_mbps == 0.0 {
        storage.drive_write_mbps = median("streaming-write-1m", false).ok_or_else(missing)?;
    }
    if storage.drive_iops.is_none() {
        storage.drive_iops = median("random-read-4k", true);
    }
    Ok(())
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
        // A value of the wrong type names its key and what to give.
        let e = err("[[worker]]\ncount = -1\n");
        assert!(
            e.starts_with("job.toml:2:9: count: ") && e.ends_with("give a whole number from 0 to 4294967295"),
            "{e}"
        );
        let e = err("[[worker]]\ntargets = \"null\"\n");
        assert!(e.contains("targets: ") && e.ends_with("give a list in brackets"), "{e}");
        let e = err("[[worker]]\nworking_set = -5\n");
        assert!(e.contains("working_set: a size such as \"4K\""), "{e}");
        let e = err("[worker]\ntargets = [\"null\"]\n");
        assert!(e.starts_with("job.toml:1:1: [worker] is a list of tables: write [[worker]]"), "{e}");
        let e = err("[[worker\n");
        assert!(e.starts_with("job.toml:1:"), "{e}");
        assert!(!e.contains('\n'));
    }
}
