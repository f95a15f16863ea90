//! A study's mode: how it runs its points, chosen once from its `[study]` section. Plain
//! cycles measure each point; a `limit` searches each point's outstanding I/Os (search.rs), a
//! `curve` runs fractions of each point's maximum (curve.rs), `steady` repeats every point
//! until a measure settles (steady.rs). Each is one implementation of [`StudyMode`]: a new
//! mode is a file and a line of [`of`].

use super::Point;
use super::runner::Runner;
use crate::config::{ConfigError, Job, Seg, StudyConfig};
use crate::error::Result;

/// A way of running a study's points.
pub(super) trait StudyMode {
    /// Checks it against the rest of the `[study]` section: what is wrong, at its key.
    fn check(&self, study: &StudyConfig) -> std::result::Result<(), ConfigError>;

    /// How many runs it makes over `points` points, when that is known before it starts (the
    /// time left is estimated from it).
    fn planned(&self, job: &Job, points: usize) -> Option<usize>;

    /// Runs the points, adding each run and its own findings to the runner's document.
    fn run(&self, r: &mut Runner, points: &[Point]) -> Result<()>;
}

/// The study's mode; an error names the keys that do not go together.
pub(super) fn of(s: &StudyConfig) -> std::result::Result<&dyn StudyMode, ConfigError> {
    match (&s.limit, &s.curve, &s.steady) {
        (None, None, None) => Ok(&Cycle),
        (Some(l), None, None) => Ok(l),
        (None, Some(c), None) => Ok(c),
        (None, None, Some(st)) => Ok(st),
        _ => Err(mistake(
            if s.steady.is_some() { "steady" } else { "curve" },
            None,
            "limit, curve and steady are ways of running a study's points: give one of them",
        )),
    }
}

/// A mistake in `[study]`'s `mode` key (`limit`, `curve`, `steady`), at its `field` if one.
pub(super) fn mistake(mode: &'static str, field: Option<&'static str>, message: impl Into<String>) -> ConfigError {
    let mut path = vec![Seg::Key("study"), Seg::Key(mode)];
    path.extend(field.map(Seg::Key));
    ConfigError { path, message: message.into() }
}

/// Plain cycles: each point measured (`repeat` times).
struct Cycle;

impl StudyMode for Cycle {
    fn check(&self, _: &StudyConfig) -> std::result::Result<(), ConfigError> {
        Ok(())
    }

    fn planned(&self, _: &Job, points: usize) -> Option<usize> {
        Some(points)
    }

    fn run(&self, r: &mut Runner, points: &[Point]) -> Result<()> {
        for (i, point) in points.iter().enumerate() {
            let label = format!("point {} of {}: {}", i + 1, points.len(), point.label());
            r.measure(point, None, &label)?;
        }
        Ok(())
    }
}
