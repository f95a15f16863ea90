//! The test as resolved from a [`Job`]: every worker expanded and named, every specification
//! looked up, and the workloads (one result each) in order. [`Test::from_job`] is the one
//! conversion, and it validates everything that can be checked without touching a target.
//! [`Test::to_job`] writes it back as a job that reruns it: what a result document records.

use super::{ConfigError, Job, Replay, Seg, Storage, TestSettings, Worker};
use crate::spec::{AccessSpec, find_builtin};

/// A resolved test.
#[derive(Debug, Clone, PartialEq)]
pub struct Test {
    /// Settings of the whole test.
    pub settings: TestSettings,
    /// Every worker, expanded from the job's `count`s and named.
    pub workers: Vec<Worker>,
    /// Every specification used, each once (the workloads' and the workers' own).
    pub specs: Vec<AccessSpec>,
    /// The workloads run one after another, one result each.
    pub workloads: Vec<Workload>,
    /// What is behind the targets, for a study's theoretical maximum.
    pub storage: Option<Storage>,
}

/// One phase of a test, one result: the access specification of each worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// The name of the result: the specifications that ran, each once, joined by `+`.
    pub name: String,
    /// The workload as the job names it: `name` before a study point's transfer size renamed
    /// its specifications (`streaming-read` for `streaming-read-1m`), the same otherwise. With
    /// the point's parameters, what a study's tables and charts group by.
    pub base: String,
    /// Access specification of each worker, in worker order.
    pub specs: Vec<AccessSpec>,
}

pub(super) fn at(path: Vec<Seg>, message: impl std::fmt::Display) -> ConfigError {
    ConfigError { path, message: message.to_string() }
}

/// The name of a workload: its specifications in order of first use, each once.
fn workload_name(specs: &[AccessSpec]) -> String {
    joined(specs.iter().map(|s| s.name.as_str()))
}

/// Names in order of first use, each once, joined by `+` (those seen kept in a set: a test
/// of many workers, each its own specification, is named in linear time).
fn joined<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let mut seen = std::collections::HashSet::new();
    names.filter(|n| seen.insert(*n)).collect::<Vec<_>>().join("+")
}

impl Test {
    /// Resolves `job`: checks its settings and workers, expands counts, names workers, fills
    /// default targets, looks up every specification and builds the workloads.
    pub fn from_job(job: &Job) -> Result<Test, ConfigError> {
        if job.fs.is_some() {
            return Err(at(
                vec![Seg::Key("fs")],
                "a file-system test ([fs]) runs with iogauge study FILE (or iogauge fs), not as a test of workers",
            ));
        }
        printable_names(job)?;
        check_settings(&job.test)?;
        // Each name's first place: a library of many specifications is read in linear time.
        let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (i, s) in job.specs.iter().enumerate() {
            s.validate().map_err(|m| at(vec![Seg::Key("spec"), Seg::Index(i)], m))?;
            if let Some(&j) = first.get(s.name.as_str()) {
                return Err(at(
                    vec![Seg::Key("spec"), Seg::Index(i), Seg::Key("name")],
                    format!(
                        "a second [[spec]] named '{}' (the first is [[spec]] {}): give each its own name",
                        s.name,
                        j + 1
                    ),
                ));
            }
            first.insert(&s.name, i);
        }
        if let Some(s) = &job.storage {
            s.validate().map_err(|m| at(vec![Seg::Key("storage")], m))?;
        }
        if job.workers.is_empty() {
            return Err(at(vec![Seg::Key("worker")], "no workers: add a [[worker]] section (or --workers N)"));
        }
        let workers = expand(job)?;
        let (specs, workloads, longest_trace) = workloads(job, &workers)?;
        let mut settings = job.test.clone();
        if workers.iter().all(|(_, w)| w.replay.is_some()) && settings.ios.is_none() && settings.bytes.is_none() {
            // A test of replays runs to the traces' ends (each worker stops at its own), no
            // longer than a `time` the job gives.
            settings.ios = Some(longest_trace * workers.len() as u64);
            if settings.time != TestSettings::default().time && settings.max_time.is_none() {
                settings.max_time = Some(settings.time);
            }
        }
        Ok(Test {
            settings,
            workers: workers.into_iter().map(|(_, w)| w).collect(),
            specs,
            workloads,
            storage: job.storage.clone(),
        })
    }
    /// The job that reruns this test: workers one per entry and named, every specification
    /// used written out. Result documents record it as `config`.
    pub fn to_job(&self) -> Job {
        Job {
            test: self.settings.clone(),
            specs: self.specs.clone(),
            workers: self.workers.iter().map(Worker::as_written).collect(),
            study: None,
            storage: self.storage.clone(),
            fs: None,
        }
    }

    /// Sets the transfer size of every line of every specification (a study's size cycle),
    /// each renamed for its size ([`AccessSpec::at_size`]) wherever the test names it.
    pub fn set_transfer_size(&mut self, size: u64) -> Result<(), ConfigError> {
        let renamed: Vec<(String, String)> =
            self.specs.iter().map(|s| (s.name.clone(), s.at_size(size).name)).collect();
        let rename = |name: &mut String| {
            if let Some((_, new)) = renamed.iter().find(|(old, _)| old == name) {
                *name = new.clone();
            }
        };
        self.specs.iter_mut().for_each(|s| *s = s.at_size(size));
        for w in &mut self.workloads {
            // The series the sizes make: each specification without the size it is named for.
            w.base = joined(w.specs.iter().map(AccessSpec::stem));
            w.specs.iter_mut().for_each(|s| *s = s.at_size(size));
            w.name = workload_name(&w.specs);
        }
        self.workers.iter_mut().filter_map(|w| w.spec.as_mut()).for_each(rename);
        self.settings.run.iter_mut().for_each(rename);
        for (i, s) in self.specs.iter().enumerate() {
            s.validate().map_err(|m| at(vec![Seg::Key("spec"), Seg::Index(i)], m))?;
        }
        Ok(())
    }
}

/// The names a job gives (its workers', specifications' and targets'), which tables and
/// messages print, without control characters: a terminal would act on an escape sequence in
/// one (retitle the window, clear the screen), so it is refused where the job is read.
pub fn printable_names(job: &Job) -> Result<(), ConfigError> {
    let check = |path: Vec<Seg>, key: &str, text: &str| {
        crate::format::printable(text)
            .map_err(|c| at(path, format!("{key} holds the control character {c}: give it without")))
    };
    for (i, s) in job.specs.iter().enumerate() {
        check(vec![Seg::Key("spec"), Seg::Index(i), Seg::Key("name")], "a [[spec]]'s name", &s.name)?;
    }
    for (i, w) in job.workers.iter().enumerate() {
        let p = |k| vec![Seg::Key("worker"), Seg::Index(i), Seg::Key(k)];
        check(p("name"), "a [[worker]]'s name", w.name.as_deref().unwrap_or(""))?;
        check(p("spec"), "a [[worker]]'s spec", w.spec.as_deref().unwrap_or(""))?;
        for t in &w.targets {
            check(p("targets"), "a [[worker]]'s target", t.as_str())?;
        }
    }
    Ok(())
}

/// The most workers a test may have over all its managers (each manager also stays within the
/// threads its system can make: `plan`).
pub const MAX_WORKERS: u64 = 65_536;

/// The job's `[[worker]]` entries checked and expanded by their counts, each worker with the
/// index of its entry (for error locations).
fn expand(job: &Job) -> Result<Vec<(usize, Worker)>, ConfigError> {
    // Counted before anything is made: a count of 4 billion must not become 4 billion workers.
    let total: u64 = job.workers.iter().map(|w| w.count as u64).sum();
    if total > MAX_WORKERS {
        let i = job.workers.iter().position(|w| w.count as u64 > MAX_WORKERS / 64).unwrap_or(0);
        return Err(at(
            vec![Seg::Key("worker"), Seg::Index(i), Seg::Key("count")],
            format!("{total} workers in all: a test has at most {MAX_WORKERS} (each is a thread; give fewer)"),
        ));
    }
    // (index of the [[worker]] entry, the worker)
    let mut workers: Vec<(usize, Worker)> = Vec::new();
    for (i, w) in job.workers.iter().enumerate() {
        w.check(&[Seg::Key("worker"), Seg::Index(i)])?;
        for n in 0..w.count {
            let name = match (&w.name, w.count) {
                (Some(name), 1) => name.clone(),
                (Some(name), _) => format!("{name} {}", n + 1),
                (None, _) => format!("worker {}", workers.len() + 1),
            };
            workers.push((i, Worker::expanded(w, name, n)));
        }
    }
    Ok(workers)
}

/// The specification a replay plans as ([`crate::trace::replay::spec_of`]),
/// named for its trace: `replay:NAME`; and the trace's I/Os.
fn replay_spec(r: &Replay) -> crate::error::Result<(AccessSpec, u64)> {
    let name = format!("replay:{}", r.trace.file_name().map_or_else(String::new, |n| n.to_string_lossy().into()));
    let summary = crate::trace::Summary::of(&r.trace)?;
    let spec = crate::trace::replay::spec_of(&name, &summary).map_err(|e| e.context(r.trace.display()))?;
    Ok((spec, summary.total()))
}

/// Every specification used (each once: the run list's, then the workers' own), the
/// workloads (one per spec of the run list, or one of the workers' own specifications), and
/// the I/Os of the longest trace a worker replays.
fn workloads(job: &Job, workers: &[(usize, Worker)]) -> Result<(Vec<AccessSpec>, Vec<Workload>, u64), ConfigError> {
    // Every spec name used must be built in or defined inline. Each looked up in a map and the
    // names used kept in a set: a job of many workers, each its own spec, resolves in linear time.
    let inline: std::collections::HashMap<&str, &AccessSpec> =
        job.specs.iter().rev().map(|s| (s.name.as_str(), s)).collect();
    let mut used: Vec<AccessSpec> = Vec::new();
    let mut used_names = std::collections::HashSet::new();
    let mut longest = 0;
    let mut lookup = |name: Result<&str, &Replay>, path: Vec<Seg>| -> Result<AccessSpec, ConfigError> {
        let spec = match name {
            Ok(name) => match inline.get(name) {
                Some(s) => (*s).clone(),
                None => find_builtin(name).map_err(|m| at(path, m.to_string()))?,
            },
            Err(replay) => {
                let (spec, ios) = replay_spec(replay).map_err(|m| at(path, m))?;
                longest = longest.max(ios);
                spec
            }
        };
        if used_names.insert(spec.name.clone()) {
            used.push(spec.clone());
        }
        Ok(spec)
    };
    let mut listed = Vec::new();
    for (k, name) in job.test.run.iter().enumerate() {
        listed.push(lookup(Ok(name), vec![Seg::Key("test"), Seg::Key("run"), Seg::Index(k)])?);
    }
    let mut own = Vec::new();
    for (i, w) in workers {
        own.push(match (&w.spec, &w.replay) {
            (Some(name), _) => Some(lookup(Ok(name), vec![Seg::Key("worker"), Seg::Index(*i), Seg::Key("spec")])?),
            (None, Some(r)) => Some(lookup(Err(r), vec![Seg::Key("worker"), Seg::Index(*i), Seg::Key("replay")])?),
            (None, None) => None,
        });
    }
    let workloads = if listed.is_empty() {
        if let Some(k) = own.iter().position(Option::is_none) {
            return Err(at(
                vec![Seg::Key("worker"), Seg::Index(workers[k].0)],
                "worker has no access specification: set spec = \"NAME\" or list specs in test.run (or --spec NAME)",
            ));
        }
        let specs: Vec<AccessSpec> = own.into_iter().flatten().collect();
        let name = workload_name(&specs);
        vec![Workload { base: name.clone(), name, specs }]
    } else {
        if own.iter().all(Option::is_some) {
            let names: Vec<&str> = job.test.run.iter().map(String::as_str).collect();
            return Err(at(
                vec![Seg::Key("test"), Seg::Key("run")],
                format!(
                    "every worker names its own spec, so run = [{}] (or --spec) would run nothing of its own: \
                     remove it, or remove spec from the workers that should run it",
                    names.join(", ")
                ),
            ));
        }
        // A workload is named by what ran: the listed spec, then the workers' own.
        listed
            .iter()
            .map(|l| {
                let mut specs = vec![l.clone()];
                specs.extend(own.iter().map(|o| o.clone().unwrap_or_else(|| l.clone())));
                let name = workload_name(&specs);
                specs.remove(0);
                Workload { base: name.clone(), name, specs }
            })
            .collect()
    };
    Ok((used, workloads, longest))
}

/// The keys' own checks ([`TestSettings::check_keys`]), then those of keys together.
fn check_settings(t: &TestSettings) -> Result<(), ConfigError> {
    t.check_keys(&[Seg::Key("test")])?;
    let err = |k, m: &str| Err(at(vec![Seg::Key("test"), Seg::Key(k)], m));
    if !t.counted() && t.time.is_zero() {
        return err("time", "time = 0: give a run time such as 10s");
    }
    if t.max_time.is_some() && !t.counted() {
        return err(
            "max_time",
            "max_time goes with ios or bytes (a timed test ends at its time): give one, or drop max_time",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(text: &str) -> Job {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn resolves_counts_names_and_workloads() {
        let j = job(r#"
            [test]
            run = ["oltp-8k", "mine"]
            [[spec]]
            name = "mine"
            lines = [{ size = "4K", share = 50, read = 100, random = 100 },
                     { size = "64K", share = 50, read = 0, random = 0 }]
            [[worker]]
            count = 2
            outstanding = 4
            targets = ["null"]
            [[worker]]
            name = "logger"
            spec = "sql-server-log-64k"
            targets = ["null"]
            "#);
        let t = Test::from_job(&j).unwrap();
        assert_eq!(t.workers.len(), 3);
        assert_eq!(t.workers[1].name, "worker 2");
        assert_eq!(t.workloads.len(), 2);
        // Named by what ran: the logger ran its own specification beside "mine".
        assert_eq!(t.workloads[1].name, "mine+sql-server-log-64k");
        assert_eq!(t.workloads[1].specs[2].name, "sql-server-log-64k");
        let names: Vec<_> = t.specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["oltp-8k", "mine", "sql-server-log-64k"]);
        // The job it writes back is a job file that resolves to the same test.
        let again: Job = toml::from_str(&toml::to_string(&t.to_job()).unwrap()).unwrap();
        assert_eq!(Test::from_job(&again).unwrap(), t);
        // Resolving does not change the job as written.
        assert_eq!(j.workers[0].count, 2);
    }

    #[test]
    fn a_run_list_no_worker_uses_is_refused() {
        let e = Test::from_job(&job(
            "[test]\nrun = [\"oltp-8k\"]\n[[worker]]\nspec = \"random-read-4k\"\n[[worker]]\nspec = \"file-server\"\n",
        ))
        .unwrap_err();
        assert_eq!(e.path, [Seg::Key("test"), Seg::Key("run")]);
        assert!(e.message.contains("run = [oltp-8k]"), "{}", e.message);
        // Without a run list the workload is named by the workers' own specifications.
        let t = Test::from_job(&job("[[worker]]\nspec = \"random-read-4k\"\n[[worker]]\nspec = \"file-server\"\n"))
            .unwrap();
        assert_eq!(t.workloads[0].name, "random-read-4k+file-server");
    }

    #[test]
    fn mistakes_are_located() {
        let e = Test::from_job(&job("[[worker]]\nspec = \"nope\"\n")).unwrap_err();
        assert_eq!(e.path, vec![Seg::Key("worker"), Seg::Index(0), Seg::Key("spec")]);
        assert!(e.message.contains("unknown access specification 'nope'"));
        let e = Test::from_job(&job("[test]\nrun=[\"oltp-8k\"]\n[[worker]]\noutstanding = 0\n")).unwrap_err();
        assert!(e.message.contains("outstanding = 0"));
        let e = Test::from_job(&job("[test]\nrun=[\"oltp-8k\"]\n")).unwrap_err();
        assert!(e.message.contains("no workers"));
    }
}
