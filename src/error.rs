//! The two kinds of failure and the exit statuses they map to.

use std::fmt;

/// Why a command failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// The user asked for something wrong or unsafe; nothing was written. Exit status 2.
    Input(String),
    /// Something failed while running (a ring could not be set up, a file could not be
    /// written). Exit status 1.
    Runtime(String),
    /// The user stopped it (Ctrl-C) between two tests of a study. Exit status 130.
    Stopped,
}

impl Error {
    /// The process exit status for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Input(_) => 2,
            Error::Runtime(_) => 1,
            Error::Stopped => 130,
        }
    }
}

impl Error {
    /// The same failure, of the same class, said with where it happened first
    /// (`study point outstanding=4: target /dev/sdb: ...`).
    pub fn context(self, what: impl fmt::Display) -> Error {
        match self {
            Error::Input(m) => Error::Input(format!("{what}: {m}")),
            Error::Runtime(m) => Error::Runtime(format!("{what}: {m}")),
            Error::Stopped => Error::Stopped,
        }
    }
}

impl Error {
    /// The same failure, counted as the user's to fix: what fails while iogauge checks what
    /// the user named (a server that does not answer at inspection, before anything runs) is
    /// an input error, where the same failure once the test runs is the run's.
    pub fn into_input(self) -> Error {
        match self {
            Error::Runtime(m) => Error::Input(m),
            e => e,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Said on one line and safe for a terminal, whatever a file it quotes held.
            Error::Input(m) | Error::Runtime(m) => f.write_str(&crate::format::visible(m)),
            Error::Stopped => f.write_str("stopped by the user"),
        }
    }
}

impl std::error::Error for Error {}

/// A value as a person types it (a size, a duration, a flag's word) that does not read: the
/// user's mistake wherever it is found, so it becomes an input error (exit 2), and its text
/// where a reader of another tool's format collects its own messages.
#[derive(Debug, Clone, PartialEq)]
pub struct Unreadable(pub String);

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unreadable {}

impl From<Unreadable> for Error {
    fn from(u: Unreadable) -> Error {
        Error::Input(u.0)
    }
}

impl From<Unreadable> for String {
    fn from(u: Unreadable) -> String {
        u.0
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Makes an input error from anything printable.
pub fn input(msg: impl Into<String>) -> Error {
    Error::Input(msg.into())
}

/// Makes a runtime error from anything printable.
pub fn runtime(msg: impl Into<String>) -> Error {
    Error::Runtime(msg.into())
}

/// Why a JSON text does not read, quoting nothing of it: serde's words where the text is no
/// JSON (they say where, never what), but not where a value is of another type (they quote
/// the value, and a file that is none of iogauge's may hold anything).
pub fn unquoted(e: &serde_json::Error) -> String {
    match e.classify() {
        serde_json::error::Category::Data => {
            format!("not the JSON object it should be at line {} column {}", e.line(), e.column())
        }
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_keeps_the_class_and_so_the_exit_status() {
        let (i, r) = (input("bad").context("study point 2"), runtime("gone").context("study point 2"));
        assert_eq!((i.exit_code(), i.to_string().as_str()), (2, "study point 2: bad"));
        assert_eq!((r.exit_code(), r.to_string().as_str()), (1, "study point 2: gone"));
        assert_eq!(Error::Stopped.context("x"), Error::Stopped);
    }
}
