//! Where an output goes: stdout, a file written in place (a pipe, /dev/null), a regular file
//! replaced whole (a temporary file beside it, then a rename), or a directory of such files.
//! Every one is opened before the first I/O, so a bad path fails before anything is measured,
//! and every one a command writes is claimed through its [`Guard`] first (issue 46): no block
//! or character device but /dev/null, a terminal or the process's own stdout, no history
//! database or SQLite's journal beside one, no file twice, none inside another output's
//! directory.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Result, input, runtime};

/// How long an output written line by line waits for a FIFO's reader to open it.
const FIFO_READER_WAIT: Duration = Duration::from_secs(5);

/// Opens the FIFO `path` for writing once a reader has it open, waiting for one up to
/// [`FIFO_READER_WAIT`] (a plain open waits for ever).
fn open_fifo(flag: &str, path: &Path) -> Result<File> {
    let until = Instant::now() + FIFO_READER_WAIT;
    loop {
        // Without a reader, a non-blocking open for writing fails (ENXIO) rather than waits.
        match std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(path) {
            Ok(f) => {
                // Its writes then wait for the reader as a pipe's do (on the lines' own thread).
                // SAFETY: fcntl on a descriptor this function owns.
                unsafe {
                    let flags = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
                    libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
                }
                return Ok(f);
            }
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) && Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                return Err(input(format!(
                    "{flag} {}: no reader opened this FIFO within {} s: start its reader first",
                    path.display(),
                    FIFO_READER_WAIT.as_secs()
                )));
            }
            Err(e) => return Err(input(format!("{flag} {}: cannot write it: {e}", path.display()))),
        }
    }
}

/// The files SQLite keeps beside a database (rollback journal, write-ahead log, its index).
const JOURNALS: [&str; 3] = ["-journal", "-wal", "-shm"];

/// What an existing file holds that no output may replace ("a SQLite database"), or None.
pub type Kept = fn(&Path) -> Option<&'static str>;

pub use crate::host::files::Ours;

/// What one command writes, claimed before anything is opened. Each output is checked against
/// what it may never be: the command's inputs (`targets::inputs`), a history database, a file
/// holding what no output replaces, the command's other outputs; files are compared by
/// identity (device and inode), or where one does not exist yet, by the directory's identity
/// and the name.
pub struct Guard {
    /// History databases no output may be: the command's `--db` and the default one.
    protected: Vec<PathBuf>,
    /// What existing files no output replaces hold.
    kept: Vec<Kept>,
    /// The outputs claimed so far: (flag, path, whether a directory, and which of its files
    /// the command writes: None, any).
    claimed: Vec<(String, PathBuf, bool, Option<Named>)>,
}

/// Which names of a directory's files an output writes (`--log-dir`'s logs): other outputs
/// may lie beside them.
pub type Named = std::rc::Rc<dyn Fn(&str) -> bool>;

impl Guard {
    /// A command's guard, protecting the history databases `protected`.
    pub fn new(protected: Vec<PathBuf>) -> Guard {
        Guard { protected, kept: Vec::new(), claimed: Vec::new() }
    }

    /// No output replaces an existing file that `kind` says holds what it keeps.
    pub fn keeping(mut self, kind: Kept) -> Guard {
        self.kept.push(kind);
        self
    }

    /// Claims `path` for the output `flag` and opens it ([`Output::open`]).
    pub fn file(&mut self, flag: &str, path: &Path) -> Result<Output> {
        self.claim(flag, path, false)?;
        Output::open(path)
    }

    /// Claims `path` for an output written line by line as it comes (`--live-json`): stdout,
    /// or the file, created now and written in place.
    pub fn lines(&mut self, flag: &str, path: &Path) -> Result<Box<dyn Write + Send>> {
        self.claim(flag, path, false)?;
        if path.as_os_str() == "-" {
            return Ok(Box::new(std::io::stdout()));
        }
        let f = match std::fs::metadata(path) {
            Ok(m) if m.file_type().is_fifo() => open_fifo(flag, path)?,
            _ => File::create(path).map_err(|e| input(format!("{flag} {}: cannot write it: {e}", path.display())))?,
        };
        Ok(Box::new(f))
    }

    /// Claims the directory `path` for the output `flag`, makes it if missing and checks that
    /// it takes files.
    pub fn dir(&mut self, flag: &str, path: &Path) -> Result<OutputDir> {
        self.claim(flag, path, true)?;
        OutputDir::open(path, flag)
    }

    /// Claims `path` for the output `flag`, which replaces an existing regular file only where
    /// it is one of `ours`, and opens it ([`Output::open`]).
    pub fn file_of(&mut self, flag: &str, path: &Path, ours: &Ours) -> Result<Output> {
        self.claim_of(flag, path, ours)?;
        Output::open(path)
    }

    /// Checks `path` for the output `flag`, which the command writes itself and which replaces
    /// an existing regular file only where it is one of `ours` (`--iolog`), and records it.
    pub fn claim_of(&mut self, flag: &str, path: &Path, ours: &Ours) -> Result<()> {
        self.claim_checked(flag, path, (false, None), Some(ours))
    }

    /// Claims the directory `path` for the output `flag`, whose files the command writes
    /// itself, and checks each file already there whose name `named` says is one it may write
    /// (`--log-dir`: `NAME_lat.1.log`...): it is replaced only where it is one of `ours`, and
    /// never where it is an input or a history database. Writes nothing.
    pub fn claim_dir_of(&mut self, flag: &str, path: &Path, named: Named, ours: &Ours) -> Result<()> {
        self.claim_checked(flag, path, (true, Some(named.clone())), None)?;
        let Ok(entries) = std::fs::read_dir(path) else { return Ok(()) };
        for entry in entries.flatten() {
            if named(&entry.file_name().to_string_lossy()) {
                let file = entry.path();
                self.never(flag, &file)?;
                // Not a regular file (a directory, a FIFO): not one iogauge wrote.
                if !std::fs::metadata(&file).is_ok_and(|m| m.is_file()) || !(ours.is)(&file) {
                    return Err(self.not_ours(flag, &file, ours));
                }
            }
        }
        Ok(())
    }

    /// Checks `path` for the output `flag` and records it; writes nothing.
    pub fn claim(&mut self, flag: &str, path: &Path, dir: bool) -> Result<()> {
        self.claim_checked(flag, path, (dir, None), None)
    }

    /// The refusal of a file already at `path` that the output `flag` would replace and that is
    /// not one of `ours`: what it holds where a kind the guard keeps says (a trace, a SQLite database).
    fn not_ours(&self, flag: &str, path: &Path, ours: &Ours) -> crate::error::Error {
        // Read only where it is a regular file: opening a FIFO to look would wait for its writer.
        let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
        let holds = self.kept.iter().filter(|_| regular).find_map(|k| k(path));
        let what = holds.map_or_else(String::new, |h| format!(" (it holds {h})"));
        input(format!(
            "{flag} {} is already there and is not {}{what}: remove it, or give another path",
            path.display(),
            ours.what
        ))
    }

    /// [`Guard::claim`]; an existing regular file is replaced only where it is one of `ours`,
    /// where given.
    fn claim_checked(
        &mut self,
        flag: &str,
        path: &Path,
        kind: (bool, Option<Named>),
        ours: Option<&Ours>,
    ) -> Result<()> {
        let (shown, (dir, named)) = (path.display(), kind);
        if path.as_os_str() == "-" {
            if let Some((other, ..)) = self.claimed.iter().find(|(_, p, ..)| p.as_os_str() == "-") {
                return Err(input(format!("{other} - and {flag} - cannot both use stdout: give one a file")));
            }
            self.claimed.push((flag.to_string(), path.to_path_buf(), dir, named));
            return Ok(());
        }
        let mut device = false;
        if let Ok(m) = std::fs::metadata(path) {
            let kind = m.file_type();
            device = kind.is_char_device();
            if kind.is_block_device() {
                return Err(input(format!("{flag} {shown} is a block device: give a file for the output")));
            }
            if kind.is_char_device() && !harmless_device(&m) {
                return Err(input(format!(
                    "{flag} {shown} is a character device: give a file for the output (or /dev/null)"
                )));
            }
        }
        let here = self.never(flag, path)?;
        // Read only where it is a regular file: opening a FIFO to look would wait for its writer.
        let regular = !dir && std::fs::metadata(path).is_ok_and(|m| m.is_file());
        if regular && !ours.is_some_and(|o| (o.is)(path)) {
            if let Some(what) = self.kept.iter().find_map(|k| k(path)) {
                return Err(input(format!("{flag} {shown} holds {what}, which no output replaces: give another file")));
            }
            if let Some(ours) = ours {
                return Err(self.not_ours(flag, path, ours));
            }
        }
        // /dev/null or a terminal may take several outputs.
        for (other, taken, taken_dir, taken_named) in self.claimed.iter().filter(|_| !device) {
            if taken.as_os_str() == "-" {
                continue;
            }
            let there = Place::of(taken);
            if here == there {
                return Err(input(format!("{other} and {flag} both name {shown}: give each its own file")));
            }
            // (file flag, its path, directory flag, its path)
            let (file, dir_of, writes) = match (dir, *taken_dir) {
                (false, true) => ((flag, path, &here), (other.as_str(), taken.as_path(), &there), taken_named),
                (true, false) => ((other.as_str(), taken.as_path(), &there), (flag, path, &here), &named),
                _ => continue,
            };
            // A directory whose files are named (logs) takes other files beside its own.
            let written = writes.as_ref().is_none_or(|n| n(&file.2.name.to_string_lossy()));
            if written && file.2.inside(dir_of.2) {
                return Err(input(format!(
                    "{} {} is inside {}'s directory {}, whose files iogauge writes: give a path outside it",
                    file.0,
                    file.1.display(),
                    dir_of.0,
                    dir_of.1.display()
                )));
            }
        }
        self.claimed.push((flag.to_string(), path.to_path_buf(), dir, named));
        Ok(())
    }
}

impl Guard {
    /// Refuses `path` for the output `flag` where it is a history database, SQLite's journal
    /// beside one, or one of the command's inputs; where it is.
    fn never(&self, flag: &str, path: &Path) -> Result<Place> {
        let shown = path.display();
        let here = Place::of(path);
        for db in &self.protected {
            let journal = JOURNALS.iter().any(|j| here == Place::of(&with_suffix(db, j)));
            if here == Place::of(db) || journal {
                return Err(input(format!(
                    "{flag} {shown} is the history database{}: give another file for the output",
                    if journal { "'s journal" } else { "" }
                )));
            }
        }
        if let Some(read) = here.file.and_then(crate::host::inputs::read_as) {
            // Named as read, or by another name (a link) that says which input it is.
            let which = if read == path { String::new() } else { format!(" ({})", read.display()) };
            return Err(input(format!(
                "{flag} {shown} is a file this command reads{which}: give another file for the output"
            )));
        }
        Ok(here)
    }
}

/// Where a path is: the file's identity where it exists (another name for it, a hard link,
/// is the same file), its directory (by identity where it exists, else by name) and its name.
struct Place {
    file: Option<(u64, u64)>,
    dir: Option<(u64, u64)>,
    dir_name: PathBuf,
    name: std::ffi::OsString,
}

impl Place {
    fn of(path: &Path) -> Place {
        // Symlinks resolved: the place is where the name finally leads.
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let parent = real.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let dir = std::fs::metadata(parent).ok().map(|m| (m.dev(), m.ino()));
        let dir_name = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
        let file = std::fs::metadata(&real).ok().map(|m| (m.dev(), m.ino()));
        Place { file, dir, dir_name, name: real.file_name().unwrap_or_default().to_os_string() }
    }

    /// Whether a file at `self` lies directly inside the directory at `dir`.
    fn inside(&self, dir: &Place) -> bool {
        let whole = std::fs::metadata(dir.dir_name.join(&dir.name)).ok().map(|m| (m.dev(), m.ino()));
        match (self.dir, whole) {
            (Some(a), Some(b)) => a == b,
            _ => self.dir_name == dir.dir_name.join(&dir.name),
        }
    }
}

impl PartialEq for Place {
    fn eq(&self, other: &Place) -> bool {
        if let (Some(a), Some(b)) = (self.file, other.file) {
            return a == b;
        }
        let same_dir = match (self.dir, other.dir) {
            (Some(a), Some(b)) => a == b,
            _ => self.dir_name == other.dir_name,
        };
        same_dir && self.name == other.name
    }
}

/// `db` with `suffix` after its file name (`history.sqlite-wal`).
fn with_suffix(db: &Path, suffix: &str) -> PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    db.with_file_name(name)
}

/// A character device an output may be: /dev/null, a terminal, or what this process's stdout
/// or stderr is (`/dev/stdout`); never a disk's (sg, nvme) or anything else.
fn harmless_device(m: &std::fs::Metadata) -> bool {
    let null = std::fs::metadata("/dev/null").is_ok_and(|n| n.rdev() == m.rdev());
    // SAFETY: fstat of the process's own stdout and stderr writes only into the stat given.
    let ours = [1, 2].iter().any(|&fd| unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(fd, &mut st) == 0 && st.st_rdev == m.rdev()
    });
    // Terminals: the virtual consoles (4), /dev/tty (5, 0) and pseudo-terminals (136-143).
    let tty = matches!(libc::major(m.rdev()), 4 | 136..=143) || m.rdev() == libc::makedev(5, 0);
    null || ours || tty
}

/// One output: stdout, a file that is not a regular file (a pipe, /dev/null), written in
/// place, or a regular file, replaced whole through a temporary file beside it.
pub enum Output {
    Stdout,
    InPlace(File),
    Whole { path: PathBuf, tmp: PathBuf },
}

/// Whether a file the run writes itself at its end (`--iolog`) can be written at `path`, as
/// the outputs opened before the first I/O are: a temporary file made beside it, and removed
/// as the output is dropped unwritten.
pub fn can_write(path: &Path) -> Result<()> {
    Output::open(path).map(drop)
}

impl Output {
    /// Checks that `path` can be written, writing nothing to it: a regular file's directory
    /// takes a temporary file. Through a [`Guard`], which refuses what may not be written.
    pub(super) fn open(path: &Path) -> Result<Output> {
        if path.as_os_str() == "-" {
            return Ok(Output::Stdout);
        }
        let cannot = |e: std::io::Error| input(format!("cannot write {}: {e}", path.display()));
        // Devices were refused by the guard.
        match std::fs::metadata(path) {
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

    /// Writes `bytes` as the whole output (again, replacing it, on a later call). Stdout or a
    /// pipe whose reader went away (`| head`) takes nothing more, quietly, as other tools end
    /// there; no failure: the results are in the history and the other outputs.
    pub fn write(&mut self, bytes: &[u8], what: &str) -> Result<()> {
        let failed = |e: std::io::Error| runtime(format!("writing {what}: {e}"));
        let written = match self {
            Output::Stdout => std::io::stdout().write_all(bytes).and_then(|()| std::io::stdout().flush()),
            Output::InPlace(f) => f.write_all(bytes),
            Output::Whole { .. } => return self.stream(what, |w| w.write_all(bytes).map_err(failed)),
        };
        match written {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            r => r.map_err(failed),
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

/// How many first bytes tell a file of an output directory as one iogauge wrote: a chart's
/// `<svg xmlns=... class="chart`, not another tool's SVG.
const KIND_BYTES: usize = 48;

/// A directory of files, each replaced whole through a temporary file beside it.
pub struct OutputDir(PathBuf, String);

impl OutputDir {
    /// Makes the directory if it is missing and checks that it takes files, writing nothing
    /// that stays. Through a [`Guard`].
    pub(super) fn open(path: &Path, flag: &str) -> Result<OutputDir> {
        crate::targets::output_dir(path, flag)?;
        Ok(OutputDir(path.to_path_buf(), flag.to_string()))
    }

    /// Writes each (name, bytes) into the directory, whole. A file of the same name already
    /// there is replaced only by one of its kind, a file iogauge wrote (the same first bytes:
    /// a chart by a chart); another refuses them all before any is written.
    pub fn write(&self, files: &[(String, Vec<u8>)], what: &str) -> Result<()> {
        for (name, bytes) in files {
            let path = self.0.join(name);
            // Only a regular file is read: opening a FIFO to look would wait for its writer.
            let Ok(meta) = std::fs::metadata(&path) else { continue };
            if !meta.is_file() {
                return Err(input(format!(
                    "{} {}: {name} is already there and is not a regular file: remove it, or give another directory",
                    self.1,
                    self.0.display()
                )));
            }
            let Ok(mut there) = File::open(&path) else { continue };
            let mut head = vec![0u8; bytes.len().min(KIND_BYTES)];
            let theirs = std::io::Read::read_exact(&mut there, &mut head).map(|()| head);
            if theirs.ok().as_deref() != Some(&bytes[..bytes.len().min(KIND_BYTES)]) {
                return Err(input(format!(
                    "{} {}: {name} is already there and is not what iogauge writes there: remove it, or give another directory",
                    self.1,
                    self.0.display()
                )));
            }
        }
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
