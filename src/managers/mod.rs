//! Managers: the hosts of a test (Iometer's term), one per MPI rank.
//!
//! A test on one host has one manager, [`Solo`]. Launched by `mpirun` or `srun`, every rank is a
//! manager and they meet through [`Group`]: three collective operations, all called from each
//! rank's main thread in the same order (workers never touch MPI). Every rank resolves the same
//! test, runs its own workers, and receives every manager's result, so each one merges the same
//! document and a study takes the same decisions everywhere; only the lead (rank 0) writes.

#[cfg(feature = "mpi")]
mod mpi;

use std::time::Duration;

use serde::{Serialize, de::DeserializeOwned};

use crate::error::{Error, Result, input, runtime};

/// One manager: its MPI rank and host name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manager {
    /// MPI rank (0 on one host).
    pub rank: u32,
    /// Host name.
    pub host: String,
}

impl std::fmt::Display for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "manager {} ({})", self.rank, self.host)
    }
}

/// The managers of a test and the collective operations between them.
pub trait Group {
    /// This process's manager.
    fn me(&self) -> &Manager;
    /// Every manager, by rank.
    fn all(&self) -> &[Manager];
    /// Returns when every manager has called it.
    fn barrier(&self, step: &str);
    /// Every manager's `bytes`, by rank, on every manager; waits at most `timeout` (none:
    /// for as long as it takes, as when some managers still create their files).
    fn all_gather(&self, bytes: &[u8], step: &str, timeout: Option<Duration>) -> Vec<Vec<u8>>;
    /// The element-wise sum of every manager's `values`, on every manager.
    fn sum(&self, values: &[u64], step: &str) -> Vec<u64>;
    /// The element-wise maximum of every manager's `values`, on every manager.
    fn max(&self, values: &[u64], step: &str) -> Vec<u64>;

    /// Whether this manager writes the outputs (rank 0).
    fn leads(&self) -> bool {
        self.me().rank == 0
    }
}

/// A test on one host: one manager, and collectives that return at once.
pub struct Solo {
    me: [Manager; 1],
}

impl Solo {
    /// The one manager of this host.
    pub fn new() -> Solo {
        Solo { me: [Manager { rank: 0, host: crate::host::name() }] }
    }
}

impl Default for Solo {
    fn default() -> Self {
        Solo::new()
    }
}

impl Group for Solo {
    fn me(&self) -> &Manager {
        &self.me[0]
    }
    fn all(&self) -> &[Manager] {
        &self.me
    }
    fn barrier(&self, _: &str) {}
    fn all_gather(&self, bytes: &[u8], _: &str, _: Option<Duration>) -> Vec<Vec<u8>> {
        vec![bytes.to_vec()]
    }
    fn sum(&self, values: &[u64], _: &str) -> Vec<u64> {
        values.to_vec()
    }
    fn max(&self, values: &[u64], _: &str) -> Vec<u64> {
        values.to_vec()
    }
}

/// Whether host name `name` matches `pattern`, where `*` stands for any run of characters
/// and `?` for one.
pub fn matches(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Classic wildcard matching with one backtrack point (the last `*`).
    let (mut i, mut j, mut star, mut from) = (0, 0, None, 0);
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            from = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            from += 1;
            j = from;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// The launcher's environment variables that give a process's rank and the job's size
/// (Open MPI, PMIx (Slurm's srun), PMI (MPICH, Slurm)).
const LAUNCHERS: [(&str, &str); 3] =
    [("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMIX_RANK", "PMIX_SIZE"), ("PMI_RANK", "PMI_SIZE")];

/// The environment variables by which a launcher makes this process one rank of a job (those
/// of [`LAUNCHERS`] and the rest of their families): a child that must run alone, as the
/// workbench's runs do, is started without them.
pub fn launcher_vars() -> Vec<std::ffi::OsString> {
    const FAMILIES: [&str; 3] = ["OMPI_", "PMIX_", "PMI_"];
    std::env::vars_os()
        .map(|(name, _)| name)
        .filter(|n| n.to_str().is_some_and(|n| FAMILIES.iter().any(|f| n.starts_with(f))))
        .collect()
}

/// This process's rank, if a launcher started it.
pub fn launched_rank() -> Option<u32> {
    LAUNCHERS.iter().find_map(|(rank, _)| std::env::var(rank).ok()?.parse().ok())
}

/// How many ranks the launcher started, if this process was started by one.
fn launched_ranks() -> Option<u32> {
    LAUNCHERS.iter().find_map(|(rank, size)| {
        std::env::var_os(rank)?;
        // PMIx does not always export the size; a rank alone still says "launched".
        Some(std::env::var(size).ok().and_then(|s| s.parse().ok()).unwrap_or(0))
    })
}

/// The managers of this test: MPI's ranks when a launcher started this process, else [`Solo`].
///
/// Fails when a launcher started several ranks but MPI support was not compiled in: each rank
/// would otherwise run the whole test alone and report it as the whole.
pub fn join(timeout: Duration) -> Result<Box<dyn Group>> {
    let Some(ranks) = launched_ranks() else { return Ok(Box::new(Solo::new())) };
    #[cfg(feature = "mpi")]
    {
        let _ = ranks;
        Ok(Box::new(mpi::Mpi::init(timeout)?))
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = timeout;
        if ranks == 1 {
            return Ok(Box::new(Solo::new()));
        }
        Err(input(
            "started by an MPI launcher, but this iogauge was built without MPI: rebuild with cargo build --release --features mpi (needs libopenmpi-dev and libclang-dev)",
        ))
    }
}

/// What every manager had to say at one step: all the values, or every failure (each named by
/// its manager), the same on every manager.
pub fn agree<T: Serialize + DeserializeOwned>(
    group: &dyn Group,
    mine: Result<T>,
    step: &str,
    timeout: Option<Duration>,
) -> Result<Vec<T>> {
    if group.all().len() == 1 {
        // Alone: nothing to exchange (and no document to copy through JSON).
        return mine.map(|v| vec![v]);
    }
    // An error travels as its exit status and its text.
    let wire: std::result::Result<T, (i32, String)> = mine.map_err(|e| (e.exit_code(), e.to_string()));
    let bytes = serde_json::to_vec(&wire).expect("values serialise");
    let all = group.all_gather(&bytes, step, timeout);
    let mut values = Vec::new();
    let mut failures = Vec::new();
    let mut codes = Vec::new();
    for (m, b) in group.all().iter().zip(all) {
        match serde_json::from_slice::<std::result::Result<T, (i32, String)>>(&b) {
            Ok(Ok(v)) => values.push(v),
            Ok(Err((c, text))) => {
                codes.push(c);
                failures.push(format!("{m}: {text}"));
            }
            Err(e) => {
                codes.push(1);
                failures.push(format!(
                    "{m}: unreadable answer at {step} ({e}): are all managers the same iogauge version?"
                ));
            }
        }
    }
    if failures.is_empty() {
        return Ok(values);
    }
    let text = failures.join("; ");
    // A failure while running outweighs a stop, which outweighs bad input: exit status 2
    // promises that nothing was written anywhere.
    Err(if codes.iter().all(|&c| c == 2) {
        input(text)
    } else if codes.iter().all(|&c| c == 2 || c == 130) {
        Error::Stopped
    } else {
        runtime(text)
    })
}

/// `mine` if every manager's step went well; else every failure, on every manager.
pub fn all_ok<T>(group: &dyn Group, mine: Result<T>, step: &str) -> Result<T> {
    let status = mine.as_ref().map(|_| ()).map_err(Clone::clone);
    agree(group, status, step, None)?;
    mine
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_patterns() {
        assert!(matches("node*", "node12"));
        assert!(matches("node?", "node1") && !matches("node?", "node12"));
        assert!(matches("*", "") && matches("a*b*c", "aXXbYc") && !matches("a*b*c", "aXXbY"));
        assert!(matches("stor-01", "stor-01") && !matches("stor-01", "stor-011"));
    }

    /// Two managers, the other one's answer given.
    struct Two {
        all: [Manager; 2],
        other: Vec<u8>,
    }

    impl Group for Two {
        fn me(&self) -> &Manager {
            &self.all[0]
        }
        fn all(&self) -> &[Manager] {
            &self.all
        }
        fn barrier(&self, _: &str) {}
        fn all_gather(&self, bytes: &[u8], _: &str, _: Option<Duration>) -> Vec<Vec<u8>> {
            vec![bytes.to_vec(), self.other.clone()]
        }
        fn sum(&self, values: &[u64], _: &str) -> Vec<u64> {
            values.to_vec()
        }
        fn max(&self, values: &[u64], _: &str) -> Vec<u64> {
            values.to_vec()
        }
    }

    fn two(other: &str) -> Two {
        let m = |rank, host: &str| Manager { rank, host: host.into() };
        Two { all: [m(0, "a"), m(1, "b")], other: other.as_bytes().to_vec() }
    }

    #[test]
    fn agreement_names_the_failing_manager() {
        let solo = Solo::new();
        assert_eq!(agree(&solo, Ok(7u32), "x", None).unwrap(), vec![7]);
        assert_eq!(agree(&two(r#"{"Ok":8}"#), Ok(7u32), "x", None).unwrap(), vec![7, 8]);
        // The other's mistake is every manager's, named, with its exit status.
        let e = agree(&two(r#"{"Err":[2,"target /x does not exist"]}"#), Ok(7u32), "x", None).unwrap_err();
        assert_eq!(e, input("manager 1 (b): target /x does not exist"));
        // Both fail: both named; the worse status wins (a runtime failure over bad input).
        let e = agree::<u32>(&two(r#"{"Err":[1,"engine failed"]}"#), Err(input("bad")), "x", None).unwrap_err();
        assert_eq!(e, runtime("manager 0 (a): bad; manager 1 (b): engine failed"));
        // A manager that speaks another language is named too.
        let e = agree(&two("garbage"), Ok(7u32), "the start", None).unwrap_err();
        assert!(e.to_string().starts_with("manager 1 (b): unreadable answer at the start"), "{e}");
    }
}
