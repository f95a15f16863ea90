//! Iometer's saved configurations (`.icf`), as Iometer 1.1 and its 2006-2008 versions write
//! them (PageSetup.cpp, AccessSpecList.cpp, ManagerList.cpp, Manager.cpp, Worker.cpp; read as
//! ICF_ifstream reads them): the test setup, the access specifications, and the managers'
//! workers with their outstanding I/Os, disk settings, assigned specifications and targets.
//!
//! A file becomes a [`Job`]: each disk worker a `[[worker]]` (its manager's rank under MPI
//! when there are several managers), each specification an inline `[[spec]]`, the run time
//! and ramp-up the `[test]`'s, and a cycling test type the `[study]` that cycles the same.

use std::path::Path;
use std::time::Duration;

use super::Import;
use crate::config::{Content, Job, Steps, StudyConfig, TargetsIn, Value, WorkerConfig};
use crate::error::{Error, Result, input};
use crate::spec::{AccessSpec, SpecLine};

/// The oldest version whose access specifications are written as today (AccessSpecList.cpp
/// reads older ones another way).
const OLDEST: u64 = 19980521;

/// A file whose first line is not Iometer's: said without quoting it (it may be anything).
const NOT_ICF: &str = "the first line is not Iometer's version line (Version 1.1.0): not an Iometer configuration";

/// Iometer's name of the specification that does nothing.
const IDLE: &str = "Idle";

/// Whether `text` is an Iometer configuration: its first line is Iometer's version line and a
/// section of Iometer's follows.
pub fn looks_like(text: &str) -> bool {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    first.trim_start().starts_with("Version ")
        && ["'TEST SETUP", "'ACCESS SPECIFICATIONS", "'MANAGER LIST"].iter().any(|s| text.contains(s))
}

/// A cycle of the test setup: start, end (queue depth only), step, and linear or exponential.
#[derive(Debug, Default, Clone, Copy)]
struct Cycling {
    start: u32,
    end: u32,
    step: u32,
    exponential: bool,
}

#[derive(Debug, Default)]
struct Setup {
    run_time: Duration,
    ramp: Duration,
    workers: Cycling,
    disks: Cycling,
    queue: Cycling,
    test_type: String,
}

#[derive(Debug)]
struct IcfWorker {
    name: String,
    manager: usize,
    manager_name: String,
    outstanding: u32,
    seed: Option<u64>,
    max_sectors: u64,
    start_sector: u64,
    pattern: u32,
    specs: Vec<String>,
    targets: Vec<String>,
    /// Iometer's "test connection rate": the target closed and opened again after this many
    /// transactions (None: off).
    reconnect_every: Option<u64>,
}

/// Lines with their numbers, read one at a time as ICF_ifstream reads them (trimmed). Blank
/// lines are passed over: a file copied between Windows and Linux can have one after each of
/// its CRLF lines, and Iometer writes an empty value (no description) as a line of a tab alone.
struct Lines<'a> {
    name: &'a str,
    lines: Vec<&'a str>,
    at: usize,
}

impl<'a> Lines<'a> {
    fn err(&self, msg: impl std::fmt::Display) -> Error {
        input(format!("{}:{}: {msg}", self.name, self.at.min(self.lines.len())))
    }

    /// Where the next line that is not blank is, from the line at `at`.
    fn filled(&self) -> usize {
        let blank = |i: usize| self.lines.get(i).is_some_and(|l| l.trim().is_empty());
        (self.at..).find(|&i| !blank(i)).unwrap_or(self.at)
    }

    fn next(&mut self) -> Option<&'a str> {
        self.at = self.filled();
        let l = self.lines.get(self.at).map(|l| l.trim());
        self.at += 1;
        l
    }

    fn peek(&self) -> Option<&'a str> {
        self.lines.get(self.filled()).map(|l| l.trim())
    }

    /// The next key (a line beginning with `'`), or an error naming what was expected.
    fn key(&mut self, expected: &str) -> Result<&'a str> {
        match self.next() {
            Some(k) if k.starts_with('\'') => Ok(k),
            Some(k) => Err(self.err(format!("expected {expected}, found \"{k}\""))),
            None => Err(self.err(format!("the file ends where {expected} was expected"))),
        }
    }

    /// The value under a key: comment lines (column headings such as `'\thours minutes
    /// seconds`) are skipped, as ICF_ifstream::GetPair does; where the next key follows at
    /// once, the value is empty (a test without a description, a worker without a network
    /// interface).
    fn value(&mut self) -> Result<&'a str> {
        let comment = |l: &str| l.strip_prefix('\'').is_some_and(|rest| rest.starts_with(char::is_whitespace));
        while self.peek().is_some_and(comment) {
            self.next();
        }
        match self.peek() {
            None => Err(self.err("the file ends where a value was expected")),
            Some(l) if l.starts_with('\'') => Ok(""),
            Some(_) => Ok(self.next().unwrap_or_default()),
        }
    }

    /// Skips to the line beginning with `marker` (case-insensitive); false at the end.
    fn skip_to(&mut self, marker: &str) -> bool {
        while let Some(l) = self.next() {
            if l.len() >= marker.len() && l[..marker.len()].eq_ignore_ascii_case(marker) {
                return true;
            }
        }
        false
    }
}

fn is(key: &str, name: &str) -> bool {
    key.eq_ignore_ascii_case(name)
}

/// Whole numbers of a value line, whatever separates them (spaces, tabs, commas).
fn ints(lines: &Lines, v: &str, n: usize, what: &str) -> Result<Vec<u64>> {
    let nums: Vec<u64> = v.split([' ', '\t', ',']).filter(|s| !s.is_empty()).map_while(|s| s.parse().ok()).collect();
    if nums.len() < n {
        return Err(lines.err(format!("{what}: expected {n} whole numbers, found \"{v}\"")));
    }
    Ok(nums)
}

/// Iometer's version as a number to compare (ICF_ifstream::GetVersion): 2006.07.27 is
/// 20060727; 1.1.0 is 1 x 10^10 + 1 x 10^5 + 0, later than every dated version.
fn version(line: &str) -> Option<u64> {
    let mut nums = line.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).map(|s| s.parse::<u64>());
    let (major, middle, minor) = (nums.next()?.ok()?, nums.next()?.ok()?, nums.next()?.ok()?);
    Some(if major > 1900 {
        major * 10000 + middle * 100 + minor
    } else {
        major * 10_000_000_000 + middle * 100_000 + minor
    })
}

/// A number that fits iogauge's 32 bits (4294967295): refused as written above it, rather than
/// cut down to another number than the file's.
fn fits_u32(lines: &Lines, x: u64, what: &str) -> Result<u32> {
    u32::try_from(x).map_err(|_| lines.err(format!("{what}: {x} is out of range: give at most {}", u32::MAX)))
}

fn cycling(lines: &Lines, v: &str, with_end: bool, what: &str) -> Result<Cycling> {
    let n = if with_end { 3 } else { 2 };
    let nums = ints(lines, v, n, what)?;
    let kind = v.split_whitespace().last().unwrap_or("");
    let exponential = match kind.to_ascii_uppercase().as_str() {
        "LINEAR" => false,
        "EXPONENTIAL" => true,
        _ => return Err(lines.err(format!("{what}: step type \"{kind}\": expected LINEAR or EXPONENTIAL"))),
    };
    let u = |x: u64| fits_u32(lines, x, what);
    let (start, end, step) = if with_end { (nums[0], nums[1], nums[2]) } else { (nums[0], 0, nums[1]) };
    Ok(Cycling { start: u(start)?, end: u(end)?, step: u(step)?, exponential })
}

fn test_setup(lines: &mut Lines) -> Result<Setup> {
    let mut s = Setup { test_type: "NORMAL".into(), ..Setup::default() };
    loop {
        let key = lines.key("a test setup key or 'END test setup")?;
        if is(key, "'END test setup") {
            return Ok(s);
        }
        if is(key, "'Test Description") {
            lines.value()?;
        } else if is(key, "'Run Time") {
            let v = lines.value()?;
            let t = ints(lines, v, 3, "run time (hours minutes seconds)")?;
            s.run_time = Duration::from_secs(t[0] * 3600 + t[1] * 60 + t[2]);
        } else if key.to_ascii_lowercase().starts_with("'ramp up time") {
            let v = lines.value()?;
            s.ramp = Duration::from_secs(ints(lines, v, 1, "ramp up time")?[0]);
        } else if is(key, "'Worker Cycling") {
            let v = lines.value()?;
            s.workers = cycling(lines, v, false, "worker cycling")?;
        } else if is(key, "'Disk Cycling") {
            let v = lines.value()?;
            s.disks = cycling(lines, v, false, "disk cycling")?;
        } else if is(key, "'Queue Depth Cycling") {
            let v = lines.value()?;
            s.queue = cycling(lines, v, true, "queue depth cycling")?;
        } else if is(key, "'Test Type") {
            s.test_type = lines.value()?.to_ascii_uppercase();
        } else if [
            "'Default Workers to Spawn",
            "'Default Disk Workers to Spawn",
            "'Default Network Workers to Spawn",
            "'Record Results",
        ]
        .iter()
        .any(|k| is(key, k))
        {
            // How Iometer's GUI spawns workers and which rows it saves: no bearing on a run.
            lines.value()?;
        } else {
            return Err(lines.err(format!("unknown test setup key {key}")));
        }
    }
}

/// The access specifications; a name given twice is the later one's, in its place (each
/// name's slot found at once: linear in the file).
fn access_specs(lines: &mut Lines) -> Result<Vec<AccessSpec>> {
    let mut specs: Vec<Option<AccessSpec>> = Vec::new();
    let mut slot: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    loop {
        let key = lines.key("an access specification or 'END access specifications")?;
        if is(key, "'END access specifications") {
            return Ok(specs.into_iter().flatten().collect());
        }
        if !is(key, "'Access specification name,default assignment") {
            return Err(lines.err(format!("unknown key {key} among the access specifications")));
        }
        let v = lines.next().unwrap_or("");
        // The name runs to the last comma: the default assignment (NONE, ALL, DISK, NET) follows.
        let name = v.rsplit_once(',').map_or(v, |(n, _)| n).trim().to_string();
        lines.key("the 'size,% of size,... heading")?;
        let mut spec = AccessSpec { name, description: "from an Iometer configuration".into(), ..Default::default() };
        while lines.peek().is_some_and(|l| !l.starts_with('\'')) {
            let l = lines.next().unwrap_or("");
            let at = format!("access specification \"{}\" line {}", spec.name, spec.lines.len() + 1);
            let n = ints(lines, l, 8, &at)?;
            let pct = |x: u64, what: &str| {
                if x > 100 { Err(lines.err(format!("{at}: {what} {x} is over 100"))) } else { Ok(x as u32) }
            };
            if n[7] != 0 {
                return Err(lines.err(format!(
                    "{at}: reply size {} (a reply after each I/O, for network workers): iogauge runs disk \
                     workers; set reply to 0",
                    n[7]
                )));
            }
            spec.lines.push(SpecLine {
                // Iometer's 0 is "sector boundaries"; iogauge's default aligns random offsets to
                // the transfer size rounded up to the block size (docs/interop.md).
                align: (n[6] != 0).then_some(n[6]),
                delay_ms: fits_u32(lines, n[4], &format!("{at}: delay (ms)"))?,
                burst: fits_u32(lines, n[5], &format!("{at}: burst length"))?.max(1),
                ..SpecLine::new(n[0], pct(n[1], "% of size")?, pct(n[2], "% reads")?, pct(n[3], "% random")?)
            });
        }
        spec.validate().map_err(|e| lines.err(e))?;
        if let Some(earlier) = slot.insert(spec.name.clone(), specs.len()) {
            specs[earlier] = None;
        }
        specs.push(Some(spec));
    }
}

fn worker(lines: &mut Lines, manager: usize, manager_name: &str) -> Result<IcfWorker> {
    let mut w = IcfWorker {
        name: lines.next().unwrap_or("").to_string(),
        manager,
        manager_name: manager_name.to_string(),
        outstanding: 1,
        seed: None,
        max_sectors: 0,
        start_sector: 0,
        // Iometer 1.1's default, also for files from before it saved a pattern (Worker.cpp).
        pattern: 0,
        specs: Vec::new(),
        targets: Vec::new(),
        reconnect_every: None,
    };
    loop {
        let key = lines.key("a worker key or 'End worker")?;
        if is(key, "'End worker") {
            return Ok(w);
        }
        if is(key, "'Worker type") {
            let kind = lines.next().unwrap_or("");
            if !is(kind, "DISK") {
                return Err(lines.err(format!(
                    "worker \"{}\" of manager \"{manager_name}\" is a network worker ({kind}): iogauge runs disk \
                     workers; remove it from the configuration",
                    w.name
                )));
            }
        } else if is(key, "'Default target settings for worker") {
            default_settings(lines, &mut w)?;
        } else if is(key, "'Assigned access specs") {
            while let Some(l) = lines.next() {
                if is(l, "'End assigned access specs") {
                    break;
                }
                w.specs.push(l.to_string());
            }
        } else if is(key, "'Target assignments") {
            targets(lines, &mut w)?;
        } else {
            return Err(lines.err(format!("unknown key {key} in worker \"{}\"", w.name)));
        }
    }
}

fn default_settings(lines: &mut Lines, w: &mut IcfWorker) -> Result<()> {
    loop {
        let key = lines.key("a target setting or 'End default target settings for worker")?;
        let lower = key.to_ascii_lowercase();
        if is(key, "'End default target settings for worker") {
            return Ok(());
        } else if lower.starts_with("'number of outstanding ios") {
            // outstanding, connection rate, transactions per connection[, fixed seed, seed]
            let v = lines.next().unwrap_or("");
            let fields: Vec<&str> = v.split(',').map(str::trim).collect();
            w.outstanding = fields[0].parse().map_err(|_| lines.err(format!("outstanding I/Os \"{}\"", fields[0])))?;
            if fields.get(3).is_some_and(|f| f.eq_ignore_ascii_case("ENABLED")) {
                let seed = fields.get(4).copied().unwrap_or("");
                w.seed =
                    Some(seed.parse().map_err(|_| {
                        lines.err(format!("fixed seed \"{seed}\": give a whole number to {}", u64::MAX))
                    })?);
            }
            if fields.get(1).is_some_and(|f| f.eq_ignore_ascii_case("ENABLED")) {
                let every = fields.get(2).copied().unwrap_or("1");
                let every = every.parse().map_err(|_| {
                    lines.err(format!("transactions per connection \"{every}\": give a whole number to {}", u64::MAX))
                })?;
                w.reconnect_every = Some(every);
            }
        } else if lower.starts_with("'disk maximum size,starting sector") {
            let v = lines.next().unwrap_or("");
            let n = ints(lines, v, 2, "disk maximum size, starting sector")?;
            (w.max_sectors, w.start_sector) = (n[0], n[1]);
            w.pattern = fits_u32(lines, n.get(2).copied().unwrap_or(0), "data pattern")?;
        } else if is(key, "'Local network interface") || is(key, "'VI outstanding IOs") {
            lines.value()?;
        } else {
            return Err(lines.err(format!("unknown target setting {key} of worker \"{}\"", w.name)));
        }
    }
}

fn targets(lines: &mut Lines, w: &mut IcfWorker) -> Result<()> {
    loop {
        let key = lines.key("'Target or 'End target assignments")?;
        if is(key, "'End target assignments") {
            return Ok(());
        }
        if !is(key, "'Target") {
            return Err(lines.err(format!("unknown key {key} among worker \"{}\"'s targets", w.name)));
        }
        let name = lines.next().unwrap_or("").to_string();
        while let Some(l) = lines.next() {
            if is(l, "'End target") {
                break;
            }
            if l.to_ascii_uppercase().starts_with("NETWORK") {
                return Err(lines.err(format!("target \"{name}\" of worker \"{}\" is a network target", w.name)));
            }
        }
        w.targets.push(name);
    }
}

fn managers(lines: &mut Lines) -> Result<Vec<IcfWorker>> {
    let mut workers = Vec::new();
    let mut manager = 0;
    loop {
        let key = lines.key("a manager or 'END manager list")?;
        if is(key, "'END manager list") {
            return Ok(workers);
        }
        if !is(key, "'Manager ID, manager name") {
            return Err(lines.err(format!("unknown key {key} in the manager list")));
        }
        let v = lines.next().unwrap_or("");
        let name = v.split_once(',').map_or(v, |(_, n)| n).trim().to_string();
        loop {
            let key = lines.key("'Worker or 'End manager")?;
            if is(key, "'End manager") {
                break;
            } else if is(key, "'Manager network address") {
                lines.value()?;
            } else if is(key, "'Worker") {
                workers.push(worker(lines, manager, &name)?);
            } else {
                return Err(lines.err(format!("unknown key {key} in manager \"{name}\"")));
            }
        }
        manager += 1;
    }
}

/// The Linux path of an Iometer target name: a `--map-target` for it (a drive letter matches
/// by its first two characters, as Iometer matches them), else the name itself when it is a
/// path already (a configuration saved with Linux's dynamo).
fn map_target(name: &str, map: &[(String, String)]) -> Option<String> {
    let drive =
        |s: &str| if s.as_bytes().get(1) == Some(&b':') { s[..2].to_ascii_uppercase() } else { s.to_ascii_uppercase() };
    let found = map.iter().find(|(k, _)| k.eq_ignore_ascii_case(name) || drive(k) == drive(name));
    match found {
        // A drive letter is a file system: Iometer tests the file iobw.tst at its root.
        Some((_, p)) if Path::new(p).is_dir() => Some(Path::new(p).join("iobw.tst").display().to_string()),
        Some((_, p)) => Some(p.clone()),
        None if name.starts_with('/') => Some(name.to_string()),
        None => None,
    }
}

fn steps(c: Cycling, end: u32, what: &str) -> Result<Steps> {
    if c.start == 0 || c.step == 0 {
        return Err(input(format!(
            "{what} cycling starts at {} with step {}: both must be at least 1",
            c.start, c.step
        )));
    }
    let (start, end) = (Value(c.start as f64), Value(end.max(c.start) as f64));
    Ok(if c.exponential {
        if c.step < 2 {
            return Err(input(format!(
                "{what} cycling is exponential with step {}: give a step of at least 2",
                c.step
            )));
        }
        Steps::Range { start, end, step: None, base: Some(c.step as f64) }
    } else {
        Steps::Range { start, end, step: Some(Value(c.step as f64)), base: None }
    })
}

/// Reads an Iometer configuration into a job; errors are one line, `FILE:LINE: what`.
/// The access specifications of an Iometer configuration, such as a file saved with only its
/// Access Specifications tab filled (a library of specifications).
pub fn spec_library(text: &str, name: &str) -> Result<Vec<AccessSpec>> {
    let mut lines = Lines { name, lines: text.lines().collect(), at: 0 };
    let first = lines.next().unwrap_or("");
    version(first).ok_or_else(|| lines.err(NOT_ICF))?;
    while let Some(l) = lines.next() {
        if l.to_ascii_uppercase().starts_with("'ACCESS SPECIFICATIONS") {
            return access_specs(&mut lines);
        }
    }
    Err(input(format!(
        "{name}: no 'ACCESS SPECIFICATIONS section: save the specifications from Iometer's Access Specifications tab"
    )))
}

/// Returns the job and what it leaves out with `--ignore-unknown` (Iometer's connection rate).
pub fn parse(text: &str, name: &str, import: &Import) -> Result<(Job, Vec<String>)> {
    let mut lines = Lines { name, lines: text.lines().collect(), at: 0 };
    let first = lines.next().unwrap_or("");
    let v = version(first).ok_or_else(|| lines.err(NOT_ICF))?;
    if v < OLDEST {
        return Err(lines.err(format!("{first}: Iometer configurations older than 1998.05.21 are not read")));
    }
    let (mut setup, mut specs, mut workers) = (None, Vec::new(), Vec::new());
    while let Some(l) = lines.next() {
        let upper = l.to_ascii_uppercase();
        if upper.starts_with("'TEST SETUP") {
            setup = Some(test_setup(&mut lines)?);
        } else if upper.starts_with("'RESULTS DISPLAY") {
            if !lines.skip_to("'END results display") {
                return Err(lines.err("'RESULTS DISPLAY has no 'END results display"));
            }
        } else if upper.starts_with("'ACCESS SPECIFICATIONS") {
            specs = access_specs(&mut lines)?;
        } else if upper.starts_with("'MANAGER LIST") {
            workers = managers(&mut lines)?;
        }
    }
    let mut warnings = Vec::new();
    // Iometer's "test connection rate" closes and opens each target again every N
    // transactions: iogauge keeps its targets open, so a file that asks for it is refused, or
    // run without it, said once, with --ignore-unknown.
    if let Some((w, n)) = workers.iter().find_map(|w| Some((w, w.reconnect_every?))) {
        let what = format!(
            "worker \"{}\" has Iometer's test connection rate on (its targets closed and opened again every {n} \
             transactions), which iogauge does not do: it keeps targets open",
            w.name
        );
        if !import.ignore_unknown {
            return Err(input(format!(
                "{name}: {what}; turn it off in Iometer's Disk Targets tab, or give --ignore-unknown"
            )));
        }
        warnings.push(format!("{name}: {what}: run without it (--ignore-unknown)"));
    }
    to_job(setup.unwrap_or_default(), specs, workers, name, import).map(|j| (j, warnings))
}

fn to_job(setup: Setup, specs: Vec<AccessSpec>, all: Vec<IcfWorker>, name: &str, import: &Import) -> Result<Job> {
    let mut job = Job::default();
    let err = |msg: String| input(format!("{name}: {msg}"));
    let workers: Vec<&IcfWorker> = all.iter().filter(|w| w.runs()).collect();
    if workers.is_empty() {
        return Err(err("no worker has both a target and an access specification: nothing would run".into()));
    }
    check_names(&workers, &specs, import).map_err(|e| e.context(name))?;

    job.test.time = match (setup.run_time, import.time) {
        (_, Some(t)) => t,
        (t, None) if t.is_zero() => {
            return Err(err("its run time is 0 (Iometer runs until stopped): give --time (e.g. --time 60s)".into()));
        }
        (t, None) => t,
    };
    job.test.ramp = setup.ramp;
    if let Some(seed) = workers.iter().find_map(|w| w.seed) {
        job.test.seed = seed;
    }
    // Iometer's data patterns: 0 repeating bytes (a byte per I/O, A then B...; iogauge
    // repeats one), 1 pseudo-random, 2 full random.
    if workers[0].pattern == 0 {
        job.test.data = Content::Repeat(b'A').into();
    }

    // Every worker steps through its own list of specifications together (access_index):
    // a common list is [test] run; one each is each worker's spec.
    let lists: Vec<Vec<&String>> = workers.iter().map(|w| w.specs.iter().filter(|s| *s != IDLE).collect()).collect();
    let common = lists.iter().all(|l| *l == lists[0]);
    if common {
        job.test.run = lists[0].iter().map(|s| s.to_string()).collect();
    } else if lists.iter().any(|l| l.len() != 1) {
        return Err(err(format!(
            "workers run different lists of access specifications (\"{}\": {}; \"{}\": {}): iogauge runs one list \
             for all workers, or one specification per worker",
            workers[0].name,
            lists[0].len(),
            workers.iter().zip(&lists).find(|(_, l)| *l != &lists[0]).map_or("", |(w, _)| w.name.as_str()),
            lists.iter().find(|l| **l != lists[0]).map_or(0, |l| l.len())
        )));
    }
    let managers = workers.iter().map(|w| w.manager).max().unwrap_or(0) + 1;
    let names: Vec<String> = workers
        .iter()
        .map(|w| {
            let clash = workers.iter().filter(|x| x.name == w.name).count() > 1;
            if clash { format!("{}/{}", w.manager_name, w.name) } else { w.name.clone() }
        })
        .collect();
    for (i, w) in workers.iter().enumerate() {
        job.workers.push(WorkerConfig {
            name: Some(names[i].clone()),
            spec: (!common).then(|| lists[i][0].to_string()),
            outstanding: w.outstanding.max(1),
            targets: w.targets.iter().filter_map(|t| map_target(t, &import.map_target)).map(Into::into).collect(),
            ranks: if managers > 1 { vec![w.manager as u32] } else { Vec::new() },
            working_set: (w.max_sectors > 0).then_some(w.max_sectors * 512),
            offset: w.start_sector * 512,
            ..WorkerConfig::default()
        });
    }
    job.specs = specs;
    job.study = study(&setup, &mut job, &workers).map_err(|e| e.context(name))?;
    Ok(job)
}

impl IcfWorker {
    /// Whether it runs: workers without a target or a specification are idle in Iometer too.
    fn runs(&self) -> bool {
        !self.targets.is_empty() && self.specs.iter().any(|s| s != IDLE)
    }
}

/// The target names of `workers` that `import` gives no Linux path, each once, in order.
fn unmapped_of<'a>(workers: impl IntoIterator<Item = &'a IcfWorker>, import: &Import) -> Vec<&'a str> {
    let mut unmapped: Vec<&str> = Vec::new();
    for t in workers.into_iter().flat_map(|w| &w.targets) {
        if map_target(t, &import.map_target).is_none() && !unmapped.contains(&t.as_str()) {
            unmapped.push(t);
        }
    }
    unmapped
}

/// The target names of an Iometer configuration's running workers that `import` gives no
/// Linux path: those `--map-target` (the workbench's form) must be given for.
pub fn unmapped(text: &str, name: &str, import: &Import) -> Result<Vec<String>> {
    let mut lines = Lines { name, lines: text.lines().collect(), at: 0 };
    while let Some(l) = lines.next() {
        if l.to_ascii_uppercase().starts_with("'MANAGER LIST") {
            let workers = managers(&mut lines)?;
            let running = workers.iter().filter(|w| w.runs());
            return Ok(unmapped_of(running, import).into_iter().map(String::from).collect());
        }
    }
    Ok(Vec::new())
}

/// Every target has a Linux path and every assigned specification is defined.
fn check_names(workers: &[&IcfWorker], specs: &[AccessSpec], import: &Import) -> Result<()> {
    let unmapped = unmapped_of(workers.iter().copied(), import);
    if !unmapped.is_empty() {
        return Err(input(format!(
            "targets need a Linux path: {}; give --map-target NAME=PATH for each (e.g. --map-target '{}=/dev/sdb')",
            unmapped.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(", "),
            unmapped[0]
        )));
    }
    for w in workers {
        for s in w.specs.iter().filter(|s| *s != IDLE) {
            if !specs.iter().any(|x| &x.name == s) {
                return Err(input(format!(
                    "worker \"{}\" is assigned \"{s}\", which the file does not define",
                    w.name
                )));
            }
        }
    }
    Ok(())
}

/// The `[study]` of a cycling test type; none for NORMAL.
fn study(setup: &Setup, job: &mut Job, workers: &[&IcfWorker]) -> Result<Option<StudyConfig>> {
    let most_targets = workers.iter().map(|w| w.targets.len() as u32).max().unwrap_or(1);
    let all_targets = workers.iter().map(|w| w.targets.len() as u32).sum();
    let mut s = StudyConfig::default();
    let t = setup.test_type.as_str();
    match t {
        "NORMAL" => return Ok(None),
        "CYCLE_TARGETS" => s.targets = Some(steps(setup.disks, most_targets, "disk")?),
        "INCREMENT_TARGETS_PARALLEL" | "INCREMENT_TARGETS_SERIAL" => {
            s.targets = Some(steps(setup.disks, all_targets, "disk")?);
            s.targets_in = TargetsIn::Series;
        }
        "CYCLE_WORKERS" | "CYCLE_WORKERS_AND_TARGETS" => {
            let count = collapse_workers(job, t)?;
            s.workers = Some(steps(setup.workers, count, "worker")?);
            if t == "CYCLE_WORKERS_AND_TARGETS" {
                s.targets = Some(steps(setup.disks, most_targets, "disk")?);
            }
        }
        "CYCLE_OUTSTANDING_IOS" | "CYCLE_OUTSTANDING_IOS_AND_TARGETS" => {
            s.outstanding = Some(steps(setup.queue, setup.queue.end, "queue depth")?);
            if t == "CYCLE_OUTSTANDING_IOS_AND_TARGETS" {
                s.targets = Some(steps(setup.disks, most_targets, "disk")?);
            }
        }
        other => return Err(input(format!("test type {other}: expected NORMAL or one of Iometer's cycling types"))),
    }
    Ok(Some(s))
}

/// Iometer cycles workers by making the first N of each manager's workers run; iogauge's cycle
/// counts copies of each `[[worker]]`. The two agree when a manager's workers are alike: they
/// become one entry per manager, and the cycle runs up to the most workers a manager has.
fn collapse_workers(job: &mut Job, test_type: &str) -> Result<u32> {
    let mut entries: Vec<WorkerConfig> = Vec::new();
    let mut most = 0;
    for w in &job.workers {
        let alike = |e: &WorkerConfig| WorkerConfig { name: None, count: 1, ..e.clone() };
        match entries.iter_mut().find(|e| e.ranks == w.ranks) {
            Some(e) if alike(e) == alike(w) => {
                e.count += 1;
                most = most.max(e.count);
            }
            Some(e) => {
                return Err(input(format!(
                    "{test_type}: workers \"{}\" and \"{}\" differ (targets, outstanding I/Os, disk settings or \
                     specification); iogauge cycles copies of one worker: make a manager's workers alike",
                    e.name.as_deref().unwrap_or(""),
                    w.name.as_deref().unwrap_or("")
                )));
            }
            None => {
                most = most.max(1);
                entries.push(WorkerConfig { name: None, ..w.clone() });
            }
        }
    }
    job.workers = entries;
    Ok(most)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_iometer_compares_them() {
        assert_eq!(version("Version 2006.07.27 "), Some(20060727));
        assert_eq!(version("Version 1998.10.08"), Some(19981008));
        assert!(version("Version 1.1.0 ").unwrap() > version("Version 2008.06.18-RC2").unwrap());
        assert_eq!(version("Version"), None);
    }

    #[test]
    fn targets_map_by_name_or_drive_letter() {
        let map =
            vec![("PHYSICALDRIVE:1".to_string(), "/dev/sdb".to_string()), ("e:".to_string(), "/dev/sdc".to_string())];
        assert_eq!(map_target("PHYSICALDRIVE:1", &map).as_deref(), Some("/dev/sdb"));
        assert_eq!(map_target("E: \"DATA\"", &map).as_deref(), Some("/dev/sdc"));
        assert_eq!(map_target("/dev/sdd", &map).as_deref(), Some("/dev/sdd"));
        assert_eq!(map_target("PHYSICALDRIVE:2", &map), None);
    }

    /// A configuration whose CRLF lines each have a blank line after them (copied between
    /// Windows and Linux) reads as the file itself, an error naming the file's own line; a
    /// test without a description too (its value a tab alone, the next key at once).
    #[test]
    fn blank_lines_between_crlf_lines_are_passed_over() {
        let text = include_str!("../../tests/fixtures/iometer-1.1.icf");
        let import = Import { map_target: vec![("PHYSICALDRIVE:1".into(), "null".into())], ..Import::default() };
        let want = crate::job::to_toml(&parse(text, "a.icf", &import).unwrap().0).unwrap();
        let doubled = text.replace("\r\n", "\r\n\r\n");
        assert_eq!(crate::job::to_toml(&parse(&doubled, "a.icf", &import).unwrap().0).unwrap(), want);
        let undescribed = text.replace("\tqueue depth sweep\r\n", "\t\r\n");
        assert_eq!(crate::job::to_toml(&parse(&undescribed, "a.icf", &import).unwrap().0).unwrap(), want);
        // The ramp-up's value, line 9 of the file, is line 17 of the doubled one, as an editor
        // numbers it.
        let bad = doubled.replacen("\t0\r\n", "\tzero\r\n", 1);
        let e = parse(&bad, "a.icf", &import).unwrap_err().to_string();
        assert!(e.starts_with("a.icf:17: "), "{e}");
    }
}
