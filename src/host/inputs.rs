//! The files a command reads (a job file and what it includes, a spec library, a result
//! document, a trace), noted where each reader opens one: the output guard
//! (`export::output::Guard`) refuses an output that is one of them, by identity (device and
//! inode: another name, a hard link, a symlink is the same file).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The inputs read so far by this process: (device, inode) and the name it was read by.
static READ: Mutex<Vec<((u64, u64), PathBuf)>> = Mutex::new(Vec::new());

/// Notes that `path` is read as one of the command's inputs.
pub fn reading(path: &Path) {
    if let Ok(m) = std::fs::metadata(path) {
        READ.lock().unwrap_or_else(|e| e.into_inner()).push(((m.dev(), m.ino()), path.to_path_buf()));
    }
}

/// The name an input was read by, where the file `id` (device, inode) is one.
pub fn read_as(id: (u64, u64)) -> Option<PathBuf> {
    let read = READ.lock().unwrap_or_else(|e| e.into_inner());
    read.iter().find(|(i, _)| *i == id).map(|(_, p)| p.clone())
}
