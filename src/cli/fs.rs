//! `iogauge fs` (its flags: `args::FsArgs`): a file-system test as IOzone's throughput mode
//! runs one (seed 002), and the study it makes: one point per thread count and test.

use super::args::Destinations;
use super::exports::Outputs;
use super::interrupt;
use crate::config::Job;
use crate::error::Result;
use crate::managers::Solo;

/// Runs the file-system study of `job` and writes its outputs; returns the exit status (1 if
/// a test failed, 130 if stopped).
pub(super) fn run(job: &Job, to: Destinations) -> Result<i32> {
    // A file-system test runs on this host alone.
    let group = Solo::new();
    let mut exports = Outputs::open(&group, to, None)?;
    interrupt::stop_on_interrupt();
    let doc = crate::fs::run_study(job, &mut exports)?;
    exports.write_study(&doc, None)?;
    for e in doc.points.iter().flat_map(|p| &p.runs).flat_map(|r| &r.results).filter_map(|r| r.first_error.as_ref()) {
        say!("{e}");
    }
    Ok(doc.exit_status())
}
