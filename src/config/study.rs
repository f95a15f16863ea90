//! The `[study]` section as written: which parameters a study cycles, and how.

use serde::{Deserialize, Deserializer, Serialize};

use crate::units::parse_size;

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
    /// The speed of every worker's trace replay (1: its own times, 2: twice as fast).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<Steps>,
    /// Search for the most outstanding I/Os whose response time stays at or under a limit
    /// (seed 001's maximum IOPS at 20 ms), instead of cycling them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    /// vdbench's curve: the uncontrolled maximum, then open-loop runs at these % of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<Curve>,
    /// Steady state (SNIA PTS, fio's `ss`): every point again, round after round, until a
    /// measure settles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<Steady>,
}

/// The `steady` of a study: rounds of every point until the tracked measure stays within an
/// excursion and a slope over a window of rounds (SNIA's Solid State Storage Performance Test
/// Specification), after a preconditioning of the targets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Steady {
    /// What must settle: `iops`, `mbps` or `avg_ms` (the mean response time).
    #[serde(default)]
    pub measure: Measure,
    /// The workload tracked, by name as the results give it (`pts-read0-4k`); none: every
    /// workload of every point must settle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub track: Option<String>,
    /// Over the window, the largest value less the smallest stays within this % of their mean.
    #[serde(default = "twenty")]
    pub excursion_pct: f64,
    /// And the least-squares line through them rises or falls across the window by at most
    /// this % of their mean.
    #[serde(default = "ten")]
    pub slope_pct: f64,
    /// Rounds in the window.
    #[serde(default = "five")]
    pub window: u32,
    /// The rounds run at most, steady or not.
    #[serde(default = "twenty_five")]
    pub max_rounds: u32,
    /// What writes the targets before the first round.
    #[serde(default)]
    pub precondition: Precondition,
    /// How many times preconditioning writes each working set.
    #[serde(default = "two")]
    pub passes: u32,
}

fn ten() -> f64 {
    10.0
}
fn five() -> u32 {
    5
}
fn twenty_five() -> u32 {
    25
}
fn two() -> u32 {
    2
}

/// What a steady-state study tracks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// I/Os per second.
    #[default]
    Iops,
    /// MB/s.
    Mbps,
    /// The mean response time (ms).
    AvgMs,
}

impl Measure {
    /// As job files and documents write it.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Iops => "iops",
            Measure::Mbps => "mbps",
            Measure::AvgMs => "avg_ms",
        }
    }
}

/// How a steady-state study writes its targets before the first round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precondition {
    /// Each working set `passes` times in 128 KiB sequential writes (the PTS's
    /// workload-independent preconditioning).
    #[default]
    Sequential,
    /// The tracked workload (or the first that writes) for as many bytes.
    Workload,
    /// Not at all.
    #[serde(rename = "none")]
    Off,
}

impl Default for StudyConfig {
    /// Each point once, nothing cycled.
    fn default() -> Self {
        StudyConfig {
            repeat: 1,
            managers: None,
            targets: None,
            targets_in: TargetsIn::default(),
            workers: None,
            size: None,
            stroke: None,
            outstanding: None,
            speed: None,
            limit: None,
            curve: None,
            steady: None,
        }
    }
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

/// A response-time limit for `study::search`.
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
        #[serde(untagged, expecting = "a number, or a size such as \"4K\"")]
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
}
