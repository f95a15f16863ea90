//! Studies: many tests, each a point, every point's full result kept (the seeds' experiments).
//!
//! A job file's `[study]` section cycles parameters as Iometer's test types do, outer to inner:
//! managers (under MPI, the first N ranks run workers: seed 000's host scaling), targets (each worker's first N, added in parallel), workers (the count of every `[[worker]]`
//! entry), transfer size (every line of every specification), drive stroke (% of each
//! target), outstanding I/Os (per target). Each cycle is a list or a range:
//!
//! ```toml
//! [study]
//! repeat = 3                                   # each point 3 times; the headline is the median
//! targets = { start = 1, end = 4, step = 1 }   # linear
//! outstanding = { start = 1, end = 64, base = 2 }  # exponential: 1, 2, 4 ... 64
//! size = ["4K", "64K", "1M"]                   # a list
//! ```
//!
//! The points are the cartesian product, in that order. `run` runs them; `stats` sums up
//! the repeats. With `limit = { ms = 20 }` each point instead [`search`]es the outstanding
//! I/Os for the highest load whose response time stays at or under the limit.

pub(crate) mod builtin;
mod curve;
pub(crate) mod doc;
mod mode;
pub(crate) mod run;
pub(crate) mod runner;
pub mod search;
pub(crate) mod stats;
pub(crate) mod steady;

use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, Job, Seg, Steps, StudyConfig, TargetsIn, Test};
use crate::units::format_size;

/// One point of a study: the value of each cycled parameter (absent: as the job says).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Managers that run workers (the first N ranks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managers: Option<u32>,
    /// Targets per worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<u32>,
    /// Count of every `[[worker]]` entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u32>,
    /// Transfer size (bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Drive stroke (%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stroke: Option<f64>,
    /// Outstanding I/Os per target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outstanding: Option<u32>,
    /// A replay's speed (a factor of its trace's times).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
    /// A curve's open-loop rate: % of the maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_pct: Option<f64>,
    /// A curve's open-loop rate over all workers (I/Os per second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<f64>,
    /// A file-system study's thread count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// A file-system study's test (`write`, `read`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// A steady-state study's round (from 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
}

impl Point {
    /// "targets=2 outstanding=16": the cycled parameters, for tables and the live line.
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        if let Some(v) = self.managers {
            parts.push(format!("managers={v}"));
        }
        if let Some(v) = self.targets {
            parts.push(format!("targets={v}"));
        }
        if let Some(v) = self.workers {
            parts.push(format!("workers={v}"));
        }
        if let Some(v) = self.size {
            parts.push(format!("size={}", format_size(v)));
        }
        if let Some(v) = self.stroke {
            parts.push(format!("stroke={v}%"));
        }
        if let Some(v) = self.outstanding {
            parts.push(format!("outstanding={v}"));
        }
        if let Some(v) = self.speed {
            parts.push(format!("speed={v}"));
        }
        if let Some(v) = self.rate_pct {
            parts.push(format!("rate={v}%"));
        }
        if let Some(v) = self.threads {
            parts.push(format!("threads={v}"));
        }
        if let Some(v) = self.round {
            parts.push(format!("round={v}"));
        }
        // A file-system point's test is its workload's name, so the label leaves it out.
        if parts.is_empty() { "nothing cycled".into() } else { parts.join(" ") }
    }

    /// What an error of this point's test is said after: `study point outstanding=4`.
    pub fn at(&self) -> String {
        format!("study point {}", self.label())
    }
}

fn whole(values: Vec<f64>, lo: f64, hi: f64, what: &str) -> Result<Vec<u32>, String> {
    values
        .into_iter()
        .map(|v| {
            if v.fract() != 0.0 || v < lo || v > hi {
                Err(format!("{what} = {v}: give whole numbers from {lo} to {hi}"))
            } else {
                Ok(v as u32)
            }
        })
        .collect()
}

/// Every point of the study in `config`, outer cycle first; errors name the `[study]` key.
pub fn points(config: &Job) -> Result<Vec<Point>, ConfigError> {
    let Some(s) = &config.study else { return Ok(vec![Point::default()]) };
    let err =
        |key: &'static str, message: String| ConfigError { path: vec![Seg::Key("study"), Seg::Key(key)], message };
    if s.repeat == 0 || s.repeat > 1000 {
        return Err(err("repeat", format!("repeat = {}: give 1 to 1000 runs per point", s.repeat)));
    }
    let values = |key: &'static str, steps: &Option<Steps>| -> Result<Option<Vec<f64>>, ConfigError> {
        steps.as_ref().map(|st| st.values().map_err(|m| err(key, m))).transpose()
    };
    let most_targets = match s.targets_in {
        TargetsIn::Parallel => config.workers.iter().map(|w| w.targets.len().max(1)).min().unwrap_or(1),
        TargetsIn::Series => config.workers.iter().map(|w| w.count as usize * w.targets.len().max(1)).sum(),
    } as f64;
    let targets = values("targets", &s.targets)?
        .map(|v| whole(v, 1.0, most_targets, "targets").map_err(|m| err("targets", m)))
        .transpose()?;
    let managers = values("managers", &s.managers)?
        .map(|v| whole(v, 1.0, 4096.0, "managers").map_err(|m| err("managers", m)))
        .transpose()?;
    let workers = values("workers", &s.workers)?
        .map(|v| whole(v, 1.0, 1024.0, "workers").map_err(|m| err("workers", m)))
        .transpose()?;
    let outstanding = values("outstanding", &s.outstanding)?
        .map(|v| whole(v, 1.0, 65536.0, "outstanding").map_err(|m| err("outstanding", m)))
        .transpose()?;
    let size = values("size", &s.size)?
        .map(|v| {
            v.into_iter()
                .map(|x| {
                    if x.fract() != 0.0 || x < 512.0 || x as u64 % 512 != 0 || x > (1u64 << 30) as f64 {
                        Err(format!("size = {x}: give multiples of 512 bytes up to 1G"))
                    } else {
                        Ok(x as u64)
                    }
                })
                .collect::<Result<Vec<u64>, String>>()
                .map_err(|m| err("size", m))
        })
        .transpose()?;
    check_mode(s)?;
    let speed = values("speed", &s.speed)?;
    if let Some(bad) = speed.iter().flatten().find(|&&v| !(v > 0.0 && v.is_finite())) {
        return Err(err("speed", format!("speed = {bad}: give factors above 0 (1: the trace's own times)")));
    }
    if speed.is_some() && !config.workers.iter().any(|w| w.replay.is_some()) {
        return Err(err("speed", "speed cycles the speed of a trace's replay, and no worker replays one".into()));
    }
    let stroke = values("stroke", &s.stroke)?;
    if let Some(bad) = stroke.iter().flatten().find(|&&v| !(v > 0.0 && v <= 100.0)) {
        return Err(err("stroke", format!("stroke = {bad}: give % of the target above 0 and at most 100")));
    }
    // The cartesian product, outer to inner; an absent cycle contributes one point as written.
    let mut out = vec![Point::default()];
    out = cross(out, managers, |p, v| p.managers = Some(v));
    out = cross(out, targets, |p, v| p.targets = Some(v));
    out = cross(out, workers, |p, v| p.workers = Some(v));
    out = cross(out, size, |p, v| p.size = Some(v));
    out = cross(out, stroke, |p, v| p.stroke = Some(v));
    out = cross(out, outstanding, |p, v| p.outstanding = Some(v));
    out = cross(out, speed, |p, v| p.speed = Some(v));
    Ok(out)
}

/// Checks the study's mode (a limit search, a curve, steady state) against the rest of its
/// `[study]` section.
fn check_mode(s: &StudyConfig) -> Result<(), ConfigError> {
    mode::of(s)?.check(s)
}

/// Every point of `out` once per value, in order: one more cycle of the cartesian product.
fn cross<T: Copy>(out: Vec<Point>, values: Option<Vec<T>>, set: fn(&mut Point, T)) -> Vec<Point> {
    let Some(values) = values else { return out };
    out.into_iter()
        .flat_map(|p| {
            values.iter().map(move |&v| {
                let mut q = p.clone();
                set(&mut q, v);
                q
            })
        })
        .collect()
}

/// The test of one point: `base` (the job as written) with the point's values set, resolved.
/// Counts, strokes and outstanding I/Os are set on the job's `[[worker]]` entries before it is
/// resolved, so `workers = 2` means two workers of each entry, as the job's `count` does.
pub fn apply(base: &Job, point: &Point) -> Result<Test, ConfigError> {
    let mut job = base.clone();
    let series = base.study.as_ref().is_some_and(|s| s.targets_in == TargetsIn::Series);
    job.study = None;
    if point.managers.is_some() {
        job.test.managers = point.managers;
    }
    for w in &mut job.workers {
        if let Some(n) = point.workers {
            w.count = n;
        }
        if let Some(s) = point.stroke {
            w.stroke = Some(s);
            w.working_set = None;
        }
        if let Some(n) = point.outstanding {
            w.outstanding = n;
        }
        if let (Some(v), Some(r)) = (point.speed, &mut w.replay) {
            r.speed = crate::config::Speed::Times(v);
        }
    }
    let mut test = Test::from_job(&job)?;
    if let Some(n) = point.targets {
        if series {
            // The first n targets of all workers, worker by worker; a worker left without any
            // does not run.
            let mut left = n as usize;
            for w in &mut test.workers {
                w.targets.truncate(left);
                left -= w.targets.len();
            }
            let keep: Vec<bool> = test.workers.iter().map(|w| !w.targets.is_empty()).collect();
            test.workers.retain(|w| !w.targets.is_empty());
            for wl in &mut test.workloads {
                let mut k = keep.iter();
                wl.specs.retain(|_| *k.next().expect("one spec per worker"));
            }
        } else {
            test.workers.iter_mut().for_each(|w| w.targets.truncate(n as usize));
        }
    }
    if let Some(total) = point.rate_iops {
        let n = test.workers.len() as f64;
        test.workers.iter_mut().for_each(|w| w.rate_iops = Some(total / n));
    }
    if let Some(size) = point.size {
        // The test lists every specification used; the point's result document reruns exactly
        // this test.
        test.set_transfer_size(size)?;
    }
    Ok(test)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(study: &str) -> Job {
        toml::from_str(&format!(
            "[test]\nrun = [\"random-read-4k\"]\n[[worker]]\ntargets = [\"null\", \"null\", \"null\"]\n[study]\n{study}"
        ))
        .unwrap()
    }

    #[test]
    fn points_are_the_product_outer_first() {
        let p = points(&config("targets = [1, 3]\noutstanding = { start = 1, end = 4, base = 2 }")).unwrap();
        let got: Vec<(u32, u32)> = p.iter().map(|p| (p.targets.unwrap(), p.outstanding.unwrap())).collect();
        assert_eq!(got, [(1, 1), (1, 2), (1, 4), (3, 1), (3, 2), (3, 4)]);
        assert_eq!(p[4].label(), "targets=3 outstanding=2");
        assert_eq!(points(&config("")).unwrap(), [Point::default()]);
    }

    #[test]
    fn points_are_checked_against_the_job() {
        let e = points(&config("targets = [4]")).unwrap_err();
        assert_eq!(e.path, [Seg::Key("study"), Seg::Key("targets")]);
        assert!(e.message.contains("from 1 to 3"), "{}", e.message);
        assert!(points(&config("outstanding = [1.5]")).unwrap_err().message.contains("whole numbers"));
        assert!(points(&config("size = [1000]")).unwrap_err().message.contains("multiples of 512"));
        assert!(points(&config("stroke = [0]")).unwrap_err().message.contains("above 0"));
        assert!(points(&config("repeat = 0")).unwrap_err().message.contains("repeat = 0"));
    }

    #[test]
    fn targets_in_series_fill_one_worker_after_another() {
        let base: Job = toml::from_str(
            "[test]\nrun = [\"random-read-4k\"]\n[[worker]]\ntargets = [\"a\", \"b\"]\n[[worker]]\ntargets = [\"c\", \"d\"]\n\
             [study]\ntargets_in = \"series\"\ntargets = { start = 1, end = 4, step = 1 }\n",
        )
        .unwrap();
        let p = points(&base).unwrap();
        assert_eq!(p.len(), 4);
        let lists = |n: usize| -> Vec<Vec<String>> {
            apply(&base, &p[n])
                .unwrap()
                .workers
                .iter()
                .map(|w| w.targets.iter().map(|t| t.to_string()).collect())
                .collect()
        };
        assert_eq!(lists(0), [vec!["a"]]);
        assert_eq!(lists(2), [vec!["a", "b"], vec!["c"]]);
        assert_eq!(lists(3), [vec!["a", "b"], vec!["c", "d"]]);
        let mut parallel = base.clone();
        parallel.study.as_mut().unwrap().targets_in = TargetsIn::Parallel;
        assert!(points(&parallel).unwrap_err().message.contains("from 1 to 2"));
    }

    #[test]
    fn a_point_sets_its_values() {
        let base = config("");
        let point = Point {
            managers: Some(2),
            targets: Some(2),
            workers: Some(3),
            size: Some(65536),
            stroke: Some(50.0),
            outstanding: Some(8),
            rate_pct: Some(50.0),
            rate_iops: Some(300.0),
            ..Point::default()
        };
        let c = apply(&base, &point).unwrap();
        assert_eq!(c.settings.managers, Some(2));
        assert_eq!(c.workers.len(), 3);
        assert!(c.workers.iter().all(|w| w.targets.len() == 2 && w.outstanding == 8 && w.stroke == Some(50.0)));
        assert!(c.workloads[0].specs.iter().all(|s| s.lines.iter().all(|l| l.size == 65536)));
        assert!(c.specs.iter().all(|s| s.lines.iter().all(|l| l.size == 65536)));
        // Each specification is named for the size it runs at, wherever the test names it.
        assert!(c.specs.iter().all(|s| s.name.ends_with("64k")), "{:?}", c.specs);
        // ...and keeps the name it had without it, for the series the sizes make.
        assert_eq!((c.workloads[0].name.as_str(), c.workloads[0].base.as_str()), ("random-read-64k", "random-read"));
        assert!(c.workloads.iter().all(|w| w.specs.iter().all(|s| w.name.contains(&s.name))));
        assert!(c.to_job().study.is_none());
        assert!(c.workers.iter().all(|w| w.rate_iops == Some(100.0)), "the rate is shared by the workers");
    }

    #[test]
    fn a_workers_point_sets_each_entrys_count_as_written() {
        let mut base = config("workers = [1, 2]");
        base.workers[0].count = 2;
        let p = points(&base).unwrap();
        let names =
            |k: usize| -> Vec<String> { apply(&base, &p[k]).unwrap().workers.into_iter().map(|w| w.name).collect() };
        assert_eq!(names(0), ["worker 1"]);
        assert_eq!(names(1), ["worker 1", "worker 2"]);
    }
}
