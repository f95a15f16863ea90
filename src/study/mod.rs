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
//! The points are the cartesian product, in that order. [`run`] runs them; [`stats`] sums up
//! the repeats. With `limit = { ms = 20 }` each point instead [`search`]es the outstanding
//! I/Os for the highest load whose response time stays at or under the limit.

pub mod builtin;
pub mod run;
pub mod search;
pub mod stats;

use serde::{Deserialize, Deserializer, Serialize};

use crate::config::{ConfigError, Run, Seg, TestConfig};
use crate::units::{format_size, parse_size};

/// The `[study]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyConfig {
    /// Runs of each point; the headline is their median (seed 004 ran everything three times).
    #[serde(default = "one")]
    pub repeat: u32,
    /// Managers (MPI ranks) that run workers: the first N.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managers: Option<Steps>,
    /// Targets: each worker's first N (`parallel`), or the first N of all workers' targets
    /// taken worker by worker (`series`, see [`StudyConfig::targets_in`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Steps>,
    /// How a `targets` cycle adds targets: `parallel` (to every worker at once, the default)
    /// or `series` (one at a time: worker 1's, then worker 2's...; workers without one idle).
    #[serde(default, skip_serializing_if = "TargetsIn::is_parallel")]
    pub targets_in: TargetsIn,
    /// Workers: the count of every `[[worker]]` entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<Steps>,
    /// Transfer size of every line of every access specification (bytes; "4K" and the like).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Steps>,
    /// Drive stroke: working set as % of each target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stroke: Option<Steps>,
    /// Outstanding I/Os per target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outstanding: Option<Steps>,
    /// Search for the most outstanding I/Os whose response time stays at or under a limit
    /// (seed 001's maximum IOPS at 20 ms), instead of cycling them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    /// vdbench's curve: the uncontrolled maximum, then open-loop runs at these % of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<Curve>,
}

/// The `curve` of a study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Curve {
    /// % of the uncontrolled maximum to run at, in order.
    #[serde(default = "fractions")]
    pub fractions: Vec<f64>,
}

fn fractions() -> Vec<f64> {
    vec![10.0, 50.0, 70.0, 80.0, 90.0, 100.0]
}

fn one() -> u32 {
    1
}

/// How a cycle over targets adds them (Iometer's "parallel" and "serial" target cycling).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetsIn {
    /// Every worker gets its next target at each step.
    #[default]
    Parallel,
    /// One target more at each step, filling worker 1's list, then worker 2's...
    Series,
}

impl TargetsIn {
    fn is_parallel(&self) -> bool {
        *self == TargetsIn::Parallel
    }
}

/// A response-time limit for [`search`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limit {
    /// The limit (ms).
    #[serde(default = "twenty")]
    pub ms: f64,
    /// What must stay under it: `avg` (the mean response time) or a percentile such as `p99`.
    #[serde(default = "avg")]
    pub of: String,
    /// The search stops doubling here.
    #[serde(default = "max_outstanding")]
    pub max_outstanding: u32,
}

fn twenty() -> f64 {
    20.0
}
fn avg() -> String {
    "avg".into()
}
fn max_outstanding() -> u32 {
    4096
}

/// A cycle: the values listed, or a range stepped linearly (`step`) or exponentially (`base`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Steps {
    /// These values, in this order.
    List(Vec<Value>),
    /// From `start` up to `end` inclusive.
    Range {
        /// First value.
        start: Value,
        /// Last value at most.
        end: Value,
        /// Added at each step (linear).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<Value>,
        /// Multiplied at each step (exponential).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base: Option<f64>,
    },
}

/// A number in a cycle: written as a number, or as a size such as "4K".
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Value(pub f64);

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(i64),
            Float(f64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(i) => Ok(Value(i as f64)),
            Raw::Float(f) => Ok(Value(f)),
            Raw::Text(s) => parse_size(&s).map(|v| Value(v as f64)).map_err(serde::de::Error::custom),
        }
    }
}

/// No cycle may have more steps than this (a typo such as base = 1.0001 would never end).
const MAX_STEPS: usize = 10_000;

impl Steps {
    /// The values of the cycle, in order.
    pub fn values(&self) -> Result<Vec<f64>, String> {
        let v = match self {
            Steps::List(v) if v.is_empty() => return Err("empty list: give at least one value".into()),
            Steps::List(v) => v.iter().map(|x| x.0).collect(),
            Steps::Range { start, end, step, base } => {
                let (start, end) = (start.0, end.0);
                if start > end {
                    return Err(format!("start {start} is above end {end}"));
                }
                let next: Box<dyn Fn(f64) -> f64> = match (step, base) {
                    (Some(_), Some(_)) => return Err("give step (linear) or base (exponential), not both".into()),
                    (None, None) => return Err("give step = N (linear) or base = N (exponential)".into()),
                    (Some(s), None) if s.0 <= 0.0 => return Err(format!("step = {}: give a positive step", s.0)),
                    (Some(s), None) => Box::new(move |x| x + s.0),
                    (None, Some(b)) if *b <= 1.0 => return Err(format!("base = {b}: give a base above 1")),
                    (None, Some(b)) => Box::new(move |x| x * b),
                };
                let mut v = vec![start];
                while let Some(&last) = v.last() {
                    let x = next(last);
                    // A relative tolerance, so 0.1 steps do not stop short of their end.
                    if x > end * (1.0 + 1e-9) || x <= last {
                        break;
                    }
                    v.push(x);
                    if v.len() > MAX_STEPS {
                        return Err(format!("more than {MAX_STEPS} steps: use a larger step or base"));
                    }
                }
                v
            }
        };
        if v.iter().any(|x| !x.is_finite()) {
            return Err("values must be finite numbers".into());
        }
        Ok(v)
    }
}

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
    /// A curve's open-loop rate: % of the maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_pct: Option<f64>,
    /// A curve's open-loop rate over all workers (I/Os per second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<f64>,
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
        if let Some(v) = self.rate_pct {
            parts.push(format!("rate={v}%"));
        }
        if parts.is_empty() { "as configured".into() } else { parts.join(" ") }
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
pub fn points(config: &TestConfig) -> Result<Vec<Point>, ConfigError> {
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
        TargetsIn::Series => config.workers.iter().map(|w| w.targets.len().max(1)).sum(),
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
    if let Some(l) = &s.limit {
        let lerr = |m: String| ConfigError { path: vec![Seg::Key("study"), Seg::Key("limit")], message: m };
        if s.outstanding.is_some() {
            return Err(err("outstanding", "a limit search sets outstanding I/Os itself: remove outstanding".into()));
        }
        if !(l.ms > 0.0 && l.ms.is_finite()) {
            return Err(lerr(format!("ms = {}: give a positive response time in ms", l.ms)));
        }
        if l.of != "avg" && !crate::result::PERCENTILES.iter().any(|(k, _)| *k == l.of) {
            let names: Vec<&str> = crate::result::PERCENTILES.iter().map(|(k, _)| *k).collect();
            return Err(lerr(format!("of = \"{}\": give avg or one of {}", l.of, names.join(", "))));
        }
        if l.max_outstanding == 0 || l.max_outstanding > 65536 {
            return Err(lerr(format!("max_outstanding = {}: give 1 to 65536", l.max_outstanding)));
        }
    }
    if let Some(c) = &s.curve {
        if s.limit.is_some() {
            return Err(err("curve", "give curve or limit, not both".into()));
        }
        if c.fractions.is_empty() || c.fractions.iter().any(|f| !(*f > 0.0 && *f <= 1000.0)) {
            return Err(err("curve", "fractions: give % of the maximum above 0 (and at most 1000)".into()));
        }
    }
    let stroke = values("stroke", &s.stroke)?;
    if let Some(bad) = stroke.iter().flatten().find(|&&v| !(v > 0.0 && v <= 100.0)) {
        return Err(err("stroke", format!("stroke = {bad}: give % of the target above 0 and at most 100")));
    }
    // The cartesian product, outer to inner; an absent cycle contributes one "as configured".
    let mut out = vec![Point::default()];
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
    out = cross(out, managers, |p, v| p.managers = Some(v));
    out = cross(out, targets, |p, v| p.targets = Some(v));
    out = cross(out, workers, |p, v| p.workers = Some(v));
    out = cross(out, size, |p, v| p.size = Some(v));
    out = cross(out, stroke, |p, v| p.stroke = Some(v));
    out = cross(out, outstanding, |p, v| p.outstanding = Some(v));
    Ok(out)
}

/// The test of one point: `base` (the job, study removed) with the point's values set, resolved.
pub fn apply(base: &TestConfig, point: &Point) -> Result<(TestConfig, Vec<Run>), ConfigError> {
    let mut c = base.clone();
    let series = base.study.as_ref().is_some_and(|s| s.targets_in == TargetsIn::Series);
    c.study = None;
    if point.managers.is_some() {
        c.test.managers = point.managers;
    }
    if let (Some(n), true) = (point.targets, series) {
        // The first n targets of all workers, worker by worker; a worker left without any
        // does not run.
        let mut left = n as usize;
        for w in &mut c.workers {
            w.targets.truncate(left);
            left -= w.targets.len();
        }
        c.workers.retain(|w| !w.targets.is_empty());
    }
    for w in &mut c.workers {
        if let (Some(n), false) = (point.targets, series) {
            w.targets.truncate(n as usize);
        }
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
    }
    let mut runs = c.resolve()?;
    if let Some(total) = point.rate_iops {
        let n = c.workers.len() as f64;
        c.workers.iter_mut().for_each(|w| w.rate_iops = Some(total / n));
    }
    if let Some(size) = point.size {
        // The resolved config lists every specification used; both it and the runs change,
        // so the point's result document reruns exactly this test.
        let resize = |s: &mut crate::spec::AccessSpec| s.lines.iter_mut().for_each(|l| l.size = size);
        c.specs.iter_mut().for_each(resize);
        runs.iter_mut().flat_map(|r| r.specs.iter_mut()).for_each(resize);
        for (i, s) in c.specs.iter().enumerate() {
            s.validate().map_err(|m| ConfigError { path: vec![Seg::Key("spec"), Seg::Index(i)], message: m })?;
        }
    }
    Ok((c, runs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(text: &str) -> Result<Vec<f64>, String> {
        #[derive(Deserialize)]
        struct W {
            s: Steps,
        }
        toml::from_str::<W>(&format!("s = {text}")).unwrap().s.values()
    }

    #[test]
    fn cycles_step_as_iometer_does() {
        assert_eq!(steps("{ start = 1, end = 64, base = 2 }").unwrap(), [1., 2., 4., 8., 16., 32., 64.]);
        assert_eq!(steps("{ start = 1, end = 10, step = 3 }").unwrap(), [1., 4., 7., 10.]);
        assert_eq!(steps("{ start = 1, end = 9, step = 3 }").unwrap(), [1., 4., 7.]);
        assert_eq!(steps("{ start = \"512\", end = \"4K\", base = 2 }").unwrap(), [512., 1024., 2048., 4096.]);
        assert_eq!(steps("{ start = 10, end = 30, step = 10 }").unwrap(), [10., 20., 30.]);
        assert_eq!(steps("{ start = 0.1, end = 0.3, step = 0.1 }").unwrap().len(), 3);
        assert_eq!(steps("[\"4K\", 8192, 16]").unwrap(), [4096., 8192., 16.]);
        assert_eq!(steps("{ start = 5, end = 5, step = 1 }").unwrap(), [5.]);
    }

    #[test]
    fn bad_cycles_say_why() {
        for (text, says) in [
            ("[]", "empty list"),
            ("{ start = 8, end = 1, step = 1 }", "above end"),
            ("{ start = 1, end = 8 }", "give step"),
            ("{ start = 1, end = 8, step = 1, base = 2 }", "not both"),
            ("{ start = 1, end = 8, base = 1 }", "base above 1"),
            ("{ start = 1, end = 8, step = 0 }", "positive step"),
            ("{ start = 1, end = 1e9, step = 1 }", "more than"),
        ] {
            let e = steps(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    fn config(study: &str) -> TestConfig {
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
        let base: TestConfig = toml::from_str(
            "[test]\nrun = [\"random-read-4k\"]\n[[worker]]\ntargets = [\"a\", \"b\"]\n[[worker]]\ntargets = [\"c\", \"d\"]\n\
             [study]\ntargets_in = \"series\"\ntargets = { start = 1, end = 4, step = 1 }\n",
        )
        .unwrap();
        let p = points(&base).unwrap();
        assert_eq!(p.len(), 4);
        let lists = |n: usize| -> Vec<Vec<String>> {
            apply(&base, &p[n]).unwrap().0.workers.into_iter().map(|w| w.targets).collect()
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
        };
        let (c, runs) = apply(&base, &point).unwrap();
        assert_eq!(c.test.managers, Some(2));
        assert_eq!(c.workers.len(), 3);
        assert!(c.workers.iter().all(|w| w.targets.len() == 2 && w.outstanding == 8 && w.stroke == Some(50.0)));
        assert!(runs[0].specs.iter().all(|s| s.lines.iter().all(|l| l.size == 65536)));
        assert!(c.specs.iter().all(|s| s.lines.iter().all(|l| l.size == 65536)));
        assert!(c.study.is_none());
        assert!(c.workers.iter().all(|w| w.rate_iops == Some(100.0)), "the rate is shared by the workers");
    }
}
