//! What a worker that replays a trace must be: one target, paced by the trace alone, not
//! verified, and a working set the trace fits in (or a fit that maps it there).

use super::find;
use crate::config::{Fit, Replay, TestSettings, Worker};
use crate::error::{Result, input};
use crate::targets::fit::working_set;
use crate::trace::Summary;
use crate::units::human_size;
use std::time::Duration;

/// `lasts` in the largest unit that keeps it readable (years of 365.25 days).
fn human_duration(lasts: Duration) -> String {
    let s = lasts.as_secs_f64();
    match s {
        s if s >= 365.25 * 86_400.0 => format!("{:.0} years", s / (365.25 * 86_400.0)),
        s if s >= 86_400.0 => format!("{:.1} days", s / 86_400.0),
        s => format!("{s:.0} s"),
    }
}

/// Reads the trace once (its reach, sizes, alignment) and checks the worker against it; a
/// trace whose times go back is said in `warnings`.
pub(super) fn check(
    wc: &Worker,
    r: &Replay,
    targets: &[crate::targets::TargetInfo],
    s: &TestSettings,
    warnings: &mut Vec<String>,
) -> Result<Summary> {
    let name = &wc.name;
    let [target] = wc.targets.as_slice() else {
        return Err(input(format!(
            "{name}: a replay has one target; give the worker one (it has {})",
            wc.targets.len()
        )));
    };
    if wc.rate().is_open_loop() || s.rate().is_open_loop() {
        return Err(input(format!(
            "{name}: a replay is paced by its trace's own times: give speed (2: twice as fast, max) instead of a rate"
        )));
    }
    if s.verifying() {
        return Err(input(format!(
            "{name}: --verify checks what a test's own writes left, and a replay writes where its trace did: \
             verify with a specification instead"
        )));
    }
    let summary = Summary::of(&r.trace)?;
    let info = find(targets, target);
    let (_, ws) = working_set(info, wc).map_err(|e| e.context(name))?;
    if summary.end > ws && r.fit == Fit::None {
        return Err(input(format!(
            "{name}: trace {} reaches {} but the working set of {} is {}: replay onto a larger target, \
             or map its offsets with --fit wrap (modulo the working set) or --fit scale",
            r.trace.display(),
            human_size(summary.end),
            info.path,
            human_size(ws)
        )));
    }
    // A trace's times are taken as they are: one that spans years is replayed over years.
    if let crate::trace::replay::Speed::Times(v) = r.speed {
        let lasts = Duration::from_secs_f64(summary.span_ns() as f64 / 1e9 / v);
        if lasts > Duration::from_secs(86_400) && s.max_time.is_none_or(|m| m > Duration::from_secs(86_400)) {
            warnings.push(format!(
                "{name}: trace {} spans {} at speed {v}: the replay lasts as long unless --time ends it sooner \
                 (--speed max issues its I/Os without their times)",
                r.trace.display(),
                human_duration(lasts)
            ));
        }
    }
    if summary.unordered > 0 {
        warnings.push(format!(
            "{name}: trace {} goes back in time {} times (an I/O listed after a later one): it is replayed in \
             the order listed, an I/O due in the past issued at once",
            r.trace.display(),
            summary.unordered
        ));
    }
    Ok(summary)
}
