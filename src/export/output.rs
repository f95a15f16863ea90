//! Where an output goes: stdout, a file written in place (a pipe, /dev/null), a regular file
//! replaced whole (a temporary file beside it, then a rename), or a directory of such files.
//! Every one is opened before the first I/O, so a bad path fails before anything is measured.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use crate::error::{Result, input, runtime};

/// One output: stdout, a file that is not a regular file (a pipe, /dev/null), written in
/// place, or a regular file, replaced whole through a temporary file beside it.
pub enum Output {
    Stdout,
    InPlace(File),
    Whole { path: PathBuf, tmp: PathBuf },
}

impl Output {
    /// Checks that `path` can be written, writing nothing to it: a regular file's directory
    /// takes a temporary file; a block device is refused.
    pub fn open(path: &Path) -> Result<Output> {
        if path.as_os_str() == "-" {
            return Ok(Output::Stdout);
        }
        let cannot = |e: std::io::Error| input(format!("cannot write {}: {e}", path.display()));
        match std::fs::metadata(path) {
            Ok(m) if m.file_type().is_block_device() => {
                Err(input(format!("{} is a block device: give a file for the output", path.display())))
            }
            Ok(m) if !m.is_file() => Ok(Output::InPlace(File::options().write(true).open(path).map_err(cannot)?)),
            _ => {
                // A symlink to a file is followed: the file it names is replaced, not the link.
                let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
                let name = path.file_name().ok_or_else(|| input(format!("{}: not a file name", path.display())))?;
                let tmp =
                    path.with_file_name(format!(".{}.iogauge-{}.tmp", name.to_string_lossy(), std::process::id()));
                File::create(&tmp).map_err(cannot)?;
                Ok(Output::Whole { path, tmp })
            }
        }
    }

    /// Writes `bytes` as the whole output (again, replacing it, on a later call).
    pub fn write(&mut self, bytes: &[u8], what: &str) -> Result<()> {
        let failed = |e: std::io::Error| runtime(format!("writing {what}: {e}"));
        match self {
            Output::Stdout => std::io::stdout().write_all(bytes).map_err(failed),
            Output::InPlace(f) => f.write_all(bytes).map_err(failed),
            Output::Whole { .. } => self.stream(what, |w| w.write_all(bytes).map_err(failed)),
        }
    }

    /// Writes an output too long to hold (a capture) as `fill` produces it: a regular file
    /// appears, whole, only once `fill` has succeeded.
    pub fn stream<T>(&mut self, what: &str, fill: impl FnOnce(&mut dyn Write) -> Result<T>) -> Result<T> {
        let failed = |e: std::io::Error| runtime(format!("writing {what}: {e}"));
        match self {
            Output::Stdout => {
                let mut w = std::io::BufWriter::new(std::io::stdout().lock());
                let t = fill(&mut w)?;
                w.flush().map_err(failed)?;
                Ok(t)
            }
            Output::InPlace(f) => {
                let mut w = std::io::BufWriter::new(f);
                let t = fill(&mut w)?;
                w.flush().map_err(failed)?;
                Ok(t)
            }
            Output::Whole { path, tmp } => {
                let mut w = std::io::BufWriter::new(File::create(&*tmp).map_err(failed)?);
                let t = fill(&mut w)?;
                let f = w.into_inner().map_err(|e| failed(e.into_error()))?;
                f.sync_all().map_err(failed)?;
                std::fs::rename(&*tmp, &*path).map_err(failed)?;
                Ok(t)
            }
        }
    }
}

/// A directory of files, each replaced whole through a temporary file beside it.
pub struct OutputDir(PathBuf);

impl OutputDir {
    /// Makes the directory if it is missing and checks that it takes files, writing nothing
    /// that stays.
    pub fn open(path: &Path, flag: &str) -> Result<OutputDir> {
        crate::targets::output_dir(path, flag)?;
        Ok(OutputDir(path.to_path_buf()))
    }

    /// Writes each (name, bytes) into the directory, whole.
    pub fn write(&self, files: &[(String, Vec<u8>)], what: &str) -> Result<()> {
        for (name, bytes) in files {
            Output::Whole {
                path: self.0.join(name),
                tmp: self.0.join(format!(".{name}.iogauge-{}.tmp", std::process::id())),
            }
            .write(bytes, what)?;
        }
        Ok(())
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Output::Whole { tmp, .. } = self {
            // Left only when nothing was written (bad input, a failed run) or a write failed.
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Refuses outputs that would overwrite the history database or each other (by identity:
/// another name for the same file is the same file), or share stdout.
pub fn apart(outputs: &[(&str, Option<&PathBuf>)], db: Option<&Path>) -> Result<()> {
    let stdout: Vec<&str> =
        outputs.iter().filter(|(_, p)| p.is_some_and(|p| p.as_os_str() == "-")).map(|o| o.0).collect();
    if let [a, b, ..] = stdout[..] {
        return Err(input(format!("{a} - and {b} - cannot both use stdout: give one a file")));
    }
    let id = |p: &Path| crate::targets::Identity::of_path(&p.to_string_lossy()).ok();
    let db = db.and_then(id);
    let files: Vec<(&str, &PathBuf)> =
        outputs.iter().filter_map(|(flag, p)| Some((*flag, (*p)?))).filter(|(_, p)| p.as_os_str() != "-").collect();
    for (flag, p) in &files {
        if db.is_some() && id(p) == db {
            return Err(input(format!(
                "{flag} {} is the history database: give another file for the output",
                p.display()
            )));
        }
    }
    for (i, (fa, a)) in files.iter().enumerate() {
        for (fb, b) in &files[i + 1..] {
            if a == b || id(a).is_some_and(|x| id(b) == Some(x)) {
                return Err(input(format!("{fa} and {fb} both name {}: give each its own file", a.display())));
            }
        }
    }
    Ok(())
}
