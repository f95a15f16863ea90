//! Where iogauge keeps what outlives a run (the history database, the maps verified tests
//! leave): the XDG base directory rules.

use std::path::PathBuf;

/// iogauge's data directory: `$XDG_DATA_HOME/iogauge`, or `~/.local/share/iogauge` when
/// XDG_DATA_HOME is unset (or not absolute, which the rules say to ignore).
pub fn data() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from).filter(|p| p.is_absolute());
    let data = xdg.or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
    Some(data.join("iogauge"))
}
