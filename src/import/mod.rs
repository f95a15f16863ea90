//! Other tools' configurations run as iogauge jobs: each format read into the job as written
//! ([`crate::config::Job`]), which then resolves and runs like a job file's.

pub mod icf;

use std::time::Duration;

/// What a foreign configuration cannot say for itself, given on the command line.
#[derive(Debug, Clone, Default)]
pub struct Import {
    /// A Windows target name (`PHYSICALDRIVE:1`, `E:`) and the Linux path it stands for.
    pub map_target: Vec<(String, String)>,
    /// The run time when the file's is 0 (Iometer's "until stopped").
    pub time: Option<Duration>,
}

/// The formats iogauge reads besides its own TOML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// iogauge's job file.
    Toml,
    /// Iometer's saved configuration.
    Icf,
}

impl Format {
    /// The format of a file: by its extension, else by what it holds.
    pub fn of(path: &std::path::Path, text: &str) -> Format {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("icf") => Format::Icf,
            Some("toml") => Format::Toml,
            _ if icf::looks_like(text) => Format::Icf,
            _ => Format::Toml,
        }
    }
}
