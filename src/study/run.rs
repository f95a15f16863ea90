//! Running a study: its points checked, its document begun, and the points run the way its
//! mode says (plain cycles here; the others in `search.rs`, `curve.rs`, `steady.rs`).

use super::doc::StudyDoc;
use super::runner::Runner;
use super::{Point, apply};
use crate::config::Job;
use crate::error::{Error, Result, input};
use crate::managers::Group;
use crate::plan;
use crate::verify::map::BlockMap;

pub use super::runner::StudyObserver;

/// Runs every point of `points` over `config` (the job as written, with its `[study]` section),
/// or from each a limit search or a curve; tells the observer of each point as it ends.
pub fn run_study(
    config: &Job,
    points: &[Point],
    observer: &mut dyn StudyObserver,
    group: &dyn Group,
) -> Result<Studied> {
    let study = config.study.clone().ok_or_else(|| input("the job file has no [study] section"))?;
    // Every point's targets pass their checks before the first I/O: a target cycle must not
    // write to a blank device at point 1 and then find a filesystem at point 2.
    for point in points {
        let test = apply(config, point).map_err(|e| input(e.message).context(point.at()))?;
        plan::check_for(group, &test).map_err(|e| e.context(point.at()))?;
    }
    let mode = super::mode::of(&study)?;
    let mut r = Runner::begin(config, mode.planned(config, points.len()), observer, group);
    let (interrupted, failed) = match mode.run(&mut r, points) {
        Ok(()) => (false, None),
        Err(Error::Stopped) => (true, None),
        // Every point passed its checks before the first I/O: one that cannot run after others
        // did met a change on the way (its target stopped answering). What the others measured
        // is kept, and the study fails.
        Err(e) if !r.doc().points.is_empty() => (false, Some(e.to_string())),
        Err(e) => return Err(e),
    };
    let maps = std::mem::take(&mut r.maps);
    Ok(Studied { doc: StudyDoc { failed, ..r.finish(interrupted) }, maps })
}

/// A finished (or stopped) study.
pub struct Studied {
    /// The study document.
    pub doc: StudyDoc,
    /// With `--verify`: per target, the map of the last point that wrote to it (a map names
    /// the writes of one test; blocks only earlier points wrote are left unchecked).
    pub maps: Vec<BlockMap>,
}
