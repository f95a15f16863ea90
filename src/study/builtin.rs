//! The seeds' experiments as built-in studies: `iogauge study NAME --target ...`, with the
//! seed's own workloads, depths and cycles, on the user's targets.

use crate::config::{FsConfig, Job, WorkerConfig};
use std::time::Duration;

use crate::config::{Limit, Measure, Precondition, Steady, Steps, StudyConfig, Value};
use crate::error::{Result, input};
use crate::net::TargetName;
use crate::spec::{AccessSpec, SpecLine};

/// Name and description of every built-in study.
pub const BUILTINS: [(&str, &str); 8] = [
    (
        "baseline",
        "seed 000's JBOD baseline: one target's streaming read and write MB/s and random 4K IOPS, as [storage] drive figures",
    ),
    ("seed000-streaming", "seed 000: streaming reads and writes, 512 B to 1 MiB doubling, on 1..N targets"),
    (
        "seed001-limit",
        "seed 001: maximum IOPS at 20 ms average response time, OLTP 4K-64K, streaming, file/web server, random",
    ),
    ("seed001-stroke", "seed 001: OLTP 8K IOPS against drive stroke, 10 % to 100 %"),
    (
        "seed003-scaling",
        "seed 003: 2 workers per target x 64 outstanding, random 512 B-8 KiB reads, writes and the 70/30 mix, over 1..N targets",
    ),
    ("seed004-suite", "seed 004: its twelve access specifications, three runs each, the median"),
    (
        "snia-iops",
        "SNIA PTS IOPS test: 512 B..1 MiB x read/write mixes 100/0..0/100, random, 32 outstanding, in rounds until 4K random write IOPS are steady",
    ),
    (
        "seed002-filesystem",
        "seed 002 (IOzone): write, rewrite, read, re-read at 1, 2, 4, 8 threads, the same total size; --dir DIR [--total SIZE]",
    ),
];

/// What a built-in study runs on: block studies take targets, file-system ones a directory.
pub struct Given<'a> {
    /// `--target` paths.
    pub targets: &'a [TargetName],
    /// `--dir`.
    pub dir: Option<&'a str>,
    /// `--total`.
    pub total: Option<u64>,
}

fn unknown(name: &str) -> crate::error::Error {
    let known: Vec<&str> = BUILTINS.iter().map(|b| b.0).collect();
    let near = known.iter().map(|k| (strsim::damerau_levenshtein(name, k), *k)).filter(|(d, _)| *d <= 3).min();
    let hint = near.map_or(String::new(), |(_, k)| format!("did you mean '{k}'? "));
    input(format!(
        "unknown study '{name}' (no such job file either): {hint}the built-in studies are {} ('iogauge study' lists them)",
        known.join(", ")
    ))
}

/// The PTS IOPS test's read shares (%) and transfer sizes (bytes), in its order.
const SNIA_READ_PCT: [u32; 7] = [100, 95, 65, 50, 35, 5, 0];
const SNIA_SIZES: [u64; 8] = [1 << 20, 128 << 10, 64 << 10, 32 << 10, 16 << 10, 8 << 10, 4 << 10, 512];

/// The baseline's workloads: streaming read, streaming write, random read, random write.
const BASELINE: [&str; 4] = ["streaming-read-1m", "streaming-write-1m", "random-read-4k", "random-write-4k"];

/// A baseline study's result as a `[storage]` section's drive figures (docs/job-file.md),
/// for the model to use measured rather than datasheet figures.
pub fn drive_figures(doc: &super::doc::StudyDoc) -> Option<String> {
    let s = &doc.points.first()?.summary;
    let get = |name: &str| s.iter().find(|x| x.spec == name);
    let (r, w, rr) = (get(BASELINE[0])?, get(BASELINE[1])?, get(BASELINE[2])?);
    Some(format!(
        "# one drive, measured by iogauge study baseline (medians); for a job's [storage] section\n\
         drive_read_mbps = {:.1}\ndrive_write_mbps = {:.1}\ndrive_iops = {:.0}\n",
        r.mbps.median, w.mbps.median, rr.iops.median
    ))
}

fn range(start: f64, end: f64, step: Option<f64>, base: Option<f64>) -> Option<Steps> {
    Some(Steps::Range { start: Value(start), end: Value(end), step: step.map(Value), base })
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Seed 002's experiment: IOzone's write, rewrite, read and re-read at 1, 2, 4 and 8 threads
/// with the total size constant (8 GB in the seed; here `total`, by default twice the host's
/// memory capped by the free space, see [`FsConfig::total`]).
fn filesystem(given: &Given) -> Result<Job> {
    if !given.targets.is_empty() {
        return Err(input("study seed002-filesystem tests a directory: give --dir DIR, not --target"));
    }
    let dir = given.dir.ok_or_else(|| {
        input("study seed002-filesystem needs a directory on the file system to test: give --dir DIR")
    })?;
    let fs = FsConfig { threads: vec![1, 2, 4, 8], total: given.total, ..FsConfig::new(dir) };
    Ok(Job { fs: Some(fs), study: Some(StudyConfig::default()), ..Job::default() })
}

/// The study `name` on what `given` names, or why not.
#[allow(clippy::too_many_lines, reason = "a table: one arm per built-in study, each the seed's experiment as a job")]
pub fn builtin(name: &str, given: &Given) -> Result<Job> {
    let lower = name.to_ascii_lowercase();
    let name = lower.as_str();
    // Said before the targets are asked for.
    if !BUILTINS.iter().any(|b| b.0 == name) {
        return Err(unknown(name));
    }
    if name == "seed002-filesystem" {
        return filesystem(given);
    }
    if given.dir.is_some() || given.total.is_some() {
        return Err(input(format!("--dir and --total go with seed002-filesystem: study {name} takes --target")));
    }
    let targets = given.targets;
    if targets.is_empty() {
        return Err(input(format!("study {name} needs its targets: give --target PATH (repeatable)")));
    }
    let n = targets.len() as f64;
    let mut c = Job::default();
    let mut study = StudyConfig::default();
    let worker = |count: u32, outstanding: u32| WorkerConfig {
        count,
        outstanding,
        targets: targets.to_vec(),
        ..WorkerConfig::default()
    };
    match name {
        "baseline" => {
            if targets.len() != 1 {
                return Err(input("study baseline measures one drive: give exactly one --target"));
            }
            c.test.run = names(&BASELINE);
            c.workers = vec![worker(1, 16)];
        }
        "seed000-streaming" => {
            c.test.run = names(&["streaming-write-64k", "streaming-read-64k"]);
            c.workers = vec![worker(1, 8)];
            study.targets = range(1.0, n, Some(1.0), None);
            study.size = range(512.0, 1048576.0, None, Some(2.0));
        }
        "seed001-limit" => {
            c.test.run = names(&[
                "oltp-4k",
                "oltp-8k",
                "oltp-16k",
                "oltp-32k",
                "oltp-64k",
                "streaming-read-64k",
                "file-server",
                "web-server",
                "random-read-8k",
            ]);
            c.workers = vec![worker(1, 1)];
            study.limit = Some(Limit { ms: 20.0, of: "avg".into(), max_outstanding: 4096 });
        }
        "seed001-stroke" => {
            c.test.run = names(&["oltp-8k"]);
            c.workers = vec![worker(1, 16)];
            study.stroke = range(10.0, 100.0, Some(10.0), None);
        }
        "seed003-scaling" => {
            c.test.run = names(&[
                "random-read-512",
                "random-read-1k",
                "random-read-2k",
                "random-read-4k",
                "random-read-8k",
                "random-write-512",
                "random-write-1k",
                "random-write-2k",
                "random-write-4k",
                "random-write-8k",
                "database-mix-4k",
                "database-mix-8k",
            ]);
            c.workers = vec![worker(2, 64)];
            study.targets = range(1.0, n, Some(1.0), None);
        }
        "snia-iops" => {
            // SNIA's Solid State Storage PTS, IOPS test: every transfer size and read/write
            // mix, 1 minute each, a round of all of them repeated until 4 KiB random writes
            // are steady (5 rounds within 20 % and a slope of 10 %), after writing the device
            // twice in 128 KiB sequential writes.
            c.specs = SNIA_READ_PCT
                .iter()
                .map(|&read| AccessSpec {
                    name: format!("pts-read{read}-4k"),
                    description: format!("SNIA PTS IOPS: {read}/{} read/write, random", 100 - read),
                    lines: vec![SpecLine::new(4096, 100, read, 100)],
                    ..Default::default()
                })
                .collect();
            c.test.run = c.specs.iter().map(|s| s.name.clone()).collect();
            (c.test.time, c.test.ramp) = (Duration::from_secs(60), Duration::ZERO);
            c.workers = vec![worker(1, 32)];
            study.size = Some(Steps::List(SNIA_SIZES.iter().map(|&s| Value(s as f64)).collect()));
            study.steady = Some(Steady {
                measure: Measure::Iops,
                track: Some("pts-read0-4k".into()),
                excursion_pct: 20.0,
                slope_pct: 10.0,
                window: 5,
                max_rounds: 25,
                precondition: Precondition::Sequential,
                passes: 2,
            });
        }
        "seed004-suite" => {
            c.test.run = names(&[
                "web-file-server-4k",
                "web-file-server-8k",
                "web-file-server-64k",
                "dss-1m",
                "media-streaming-64k",
                "sql-server-log-64k",
                "os-paging-64k",
                "web-server-log-8k",
                "db-oltp-8k",
                "exchange-email-4k",
                "os-drive-8k",
                "video-on-demand-512k",
            ]);
            c.workers = vec![worker(1, 16)];
            study.repeat = 3;
        }
        _ => return Err(unknown(name)),
    }
    c.study = Some(study);
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(targets: &[TargetName]) -> Given<'_> {
        Given { targets, dir: None, total: None }
    }

    #[test]
    fn every_builtin_resolves_to_its_seeds_points() {
        let targets = vec![TargetName::from("null"), "null".into()];
        for (name, _) in BUILTINS.iter().filter(|b| b.0 != "seed002-filesystem") {
            let t = if *name == "baseline" { &targets[..1] } else { &targets[..] };
            let c = builtin(name, &on(t)).unwrap();
            crate::config::Test::from_job(&c).unwrap_or_else(|e| panic!("{name}: {}", e.message));
            let points = super::super::points(&c).unwrap();
            let expected = match *name {
                "seed000-streaming" => 2 * 12, // 2 target counts x 512 B..1 MiB
                "seed003-scaling" => 2,
                "seed001-stroke" => 10,
                "snia-iops" => 8, // transfer sizes; each runs the 7 mixes, round after round
                _ => 1,
            };
            assert_eq!(points.len(), expected, "{name}");
        }
        assert!(builtin("seed004-suite", &on(&targets)).unwrap().test.run.len() == 12);
        assert!(builtin("baseline", &on(&targets)).unwrap_err().to_string().contains("exactly one --target"));
        assert_eq!(builtin("baseline", &on(&targets[..1])).unwrap().test.run.len(), 4);
        assert!(builtin("nope", &on(&targets)).unwrap_err().to_string().contains("unknown study 'nope'"));
        let e = builtin("seed001-limt", &on(&[])).unwrap_err().to_string();
        assert!(e.contains("unknown study") && e.contains("did you mean 'seed001-limit'"), "{e}");
        assert!(builtin("Seed004-Suite", &on(&targets)).is_ok());
        assert!(builtin("seed004-suite", &on(&[])).unwrap_err().to_string().contains("--target"));
    }

    #[test]
    fn the_filesystem_study_takes_a_directory() {
        let given = Given { targets: &[], dir: Some("/mnt"), total: Some(8 << 30) };
        let fs = builtin("seed002-filesystem", &given).unwrap().fs.unwrap();
        assert_eq!((fs.threads, fs.total, fs.dir.as_str()), (vec![1, 2, 4, 8], Some(8 << 30), "/mnt"));
        assert!(builtin("seed002-filesystem", &on(&[])).unwrap_err().to_string().contains("--dir DIR"));
        let targets = vec![TargetName::from("null")];
        assert!(builtin("seed002-filesystem", &on(&targets)).unwrap_err().to_string().contains("not --target"));
        let e = builtin("seed004-suite", &Given { dir: Some("/mnt"), ..on(&targets) }).unwrap_err().to_string();
        assert!(e.contains("--dir and --total go with seed002-filesystem"), "{e}");
    }
}
