//! Whether an access fits a target: a worker's working set on it (stroke, size, offset, in
//! whole logical blocks), a specification's transfers and alignments against its block size
//! and O_DIRECT, the operations its protocol takes, and what the targets of one test say about
//! one another. The plan asks these of every worker and target before anything is written.

use super::{TargetInfo, TargetKind};
use crate::config::Worker;
use crate::error::{Result, input};
use crate::spec::AccessSpec;
use crate::units::{format_size, human_size};

/// The working set a worker uses on a target, by its stroke, size and offset.
pub fn working_set(info: &TargetInfo, wc: &Worker) -> Result<(u64, u64)> {
    let lbs = info.logical_block;
    // The null target has no size of its own: give it 1 TiB so strokes mean something.
    let size = if info.kind == TargetKind::Null { 1 << 40 } else { info.size };
    if wc.offset % lbs != 0 {
        return Err(input(format!(
            "offset {} is not a multiple of {}'s logical block size, {}",
            human_size(wc.offset),
            info.path,
            human_size(lbs)
        )));
    }
    if wc.offset >= size {
        return Err(input(format!(
            "offset {} is beyond the end of {} ({})",
            human_size(wc.offset),
            info.path,
            human_size(size)
        )));
    }
    let avail = size - wc.offset;
    let ws = match (wc.working_set, wc.stroke) {
        (Some(n), _) => n,
        (None, Some(pct)) => (size as f64 * pct / 100.0) as u64,
        (None, None) => avail,
    };
    if ws > avail {
        return Err(input(format!(
            "working set of {} from offset {} does not fit in {} ({})",
            human_size(ws),
            human_size(wc.offset),
            info.path,
            human_size(size)
        )));
    }
    Ok((wc.offset, ws / lbs * lbs))
}

/// Checks a spec's sizes and alignments against a target's block size and working set.
pub fn check_spec(info: &TargetInfo, wc: &Worker, spec: &AccessSpec) -> Result<()> {
    super::network::check_ops(info, spec)?;
    let (_, ws) = working_set(info, wc)?;
    let lbs = info.logical_block;
    for (i, l) in spec.lines.iter().enumerate() {
        let at = format!("access specification '{}' line {}", spec.name, i + 1);
        if let Some(size) = [l.size, l.largest()].into_iter().find(|s| info.direct && s % lbs != 0) {
            return Err(input(format!(
                "{at}: transfer size {} is not a multiple of {}'s logical block size {lbs} (O_DIRECT); use a multiple of {}",
                human_size(size),
                info.path,
                human_size(lbs)
            )));
        }
        if let Some(a) = l.align {
            if info.direct && a % lbs != 0 {
                return Err(input(format!(
                    "{at}: align {} is not a multiple of {}'s logical block size {lbs}",
                    human_size(a),
                    info.path
                )));
            }
        }
        if info.direct && l.skip.unsigned_abs() % lbs != 0 {
            return Err(input(format!(
                "{at}: skip {} is not a multiple of {}'s logical block size {lbs} (O_DIRECT)",
                human_size(l.skip.unsigned_abs()),
                info.path
            )));
        }
        if l.size > ws {
            return Err(input(format!(
                "{at}: transfer size {} is larger than the working set of {} ({}); enlarge the working set or the target",
                human_size(l.size),
                info.path,
                human_size(ws)
            )));
        }
    }
    Ok(())
}

/// Warnings about a test's targets themselves: one target under two names (refused when verifying),
/// a test file of an earlier run reused at another size.
pub fn warnings(targets: &[TargetInfo], verifying: bool, file_size: u64) -> Result<Vec<String>> {
    let mut warnings = Vec::new();
    // Two names for one device or file are one target (identity, not names): a verified test
    // would check each name's writes apart and call the other's corruption.
    for (i, t) in targets.iter().enumerate() {
        if let Some(o) = targets[..i].iter().find(|o| o.identity.is_some() && o.identity == t.identity) {
            if verifying {
                return Err(input(format!(
                    "--verify: {} and {} are the same {}: name it once",
                    o.path,
                    t.path,
                    if t.kind == TargetKind::Block { "device" } else { "file" }
                )));
            }
            warnings.push(format!("{} and {} are the same target: their I/Os land on one device", o.path, t.path));
        }
    }
    for t in targets.iter().filter(|t| t.exists && t.created_by_iogauge && t.size != file_size) {
        // An earlier run made it; it is reused as it is, and the result must not read as if
        // the test ran on a file of file_size.
        warnings.push(format!(
            "{} is {}, not the {} file_size asks: iogauge made it in an earlier run and reuses it as it is \
             (delete it to have it made at {})",
            t.path,
            format_size(t.size),
            format_size(file_size),
            format_size(file_size)
        ));
    }
    Ok(warnings)
}
