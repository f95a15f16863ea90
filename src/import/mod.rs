//! Other tools' configurations run as iogauge jobs: each format (Iometer's `.icf`, fio's job
//! files) read into the job as written ([`crate::config::Job`]), which then resolves and runs
//! like a job file's.

pub mod fio;
pub mod icf;

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use crate::error::input;

/// The most a job file (or a file it includes) may hold: far more than any real one, and a
/// bound on what a device or a FIFO named by mistake is read for.
pub const MAX_JOB_BYTES: u64 = 16 << 20;

/// Reads a job file's text, at most [`MAX_JOB_BYTES`], never a device's; with `regular`, only
/// a regular file (an include: never a FIFO or /proc either). Errors say why in words, never
/// what the file holds.
pub fn read_text(path: &Path, regular: bool) -> crate::error::Result<String> {
    let why = |e: std::io::Error| input(e.to_string());
    let meta = std::fs::metadata(path).map_err(why)?;
    if regular && !meta.is_file() {
        return Err(input("not a regular file: give a job file"));
    }
    if meta.is_dir() {
        return Err(input("a directory: give a job file"));
    }
    if crate::host::files::is_device(path) {
        return Err(input("a device: give a job file"));
    }
    crate::host::inputs::reading(path);
    let mut bytes = Vec::new();
    let f = std::fs::File::open(path).map_err(why)?;
    f.take(MAX_JOB_BYTES + 1).read_to_end(&mut bytes).map_err(why)?;
    if bytes.len() as u64 > MAX_JOB_BYTES {
        return Err(input(format!("larger than {} MiB: not a job file", MAX_JOB_BYTES >> 20)));
    }
    String::from_utf8(bytes).map_err(|_| input("not text (UTF-8): not a job file"))
}

/// What a foreign configuration cannot say for itself, given on the command line.
#[derive(Debug, Clone, Default)]
pub struct Import {
    /// A Windows target name (`PHYSICALDRIVE:1`, `E:`) and the Linux path it stands for.
    pub map_target: Vec<(String, String)>,
    /// The run time when the file's is 0 (Iometer's "until stopped").
    pub time: Option<Duration>,
    /// A fio option outside the subset is skipped with a warning instead of refused.
    pub ignore_unknown: bool,
}

/// The formats iogauge reads besides its own TOML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// iogauge's job file.
    Toml,
    /// Iometer's saved configuration.
    Icf,
    /// A fio job file.
    Fio,
}

impl Format {
    /// The format of a file: by its extension, else by what it holds.
    pub fn of(path: &std::path::Path, text: &str) -> Format {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("icf") => Format::Icf,
            Some("fio") => Format::Fio,
            Some("toml") => Format::Toml,
            _ if icf::looks_like(text) => Format::Icf,
            // fio's `key=value` lines are not TOML (an unquoted word is no TOML value).
            _ if text.parse::<toml::Table>().is_err() && text.lines().any(|l| l.trim_start().starts_with('[')) => {
                Format::Fio
            }
            _ => Format::Toml,
        }
    }
}
