//! `iogauge verify`: re-reads targets and checks every block against the last write a
//! verified test made there (from the map the test left, or from its journal); and saving
//! those maps after a verified run.

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::error::{Result, input, runtime};
use crate::format::thousands;
use crate::net::TargetName;
use crate::verify::map::{self, BlockMap};
use crate::verify::{self, TargetCheck, journal};

/// `iogauge verify` flags.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The target to re-read (a block device, file or network target's URL a test with
    /// --verify wrote).
    #[arg(long, value_name = "PATH")]
    pub target: Option<TargetName>,
    /// The map to check against (default: the one the last verified test on the target left).
    #[arg(long, value_name = "FILE", conflicts_with = "journal")]
    pub map: Option<PathBuf>,
    /// Check against the journal a test kept with --journal DIR (after a crash: writes in
    /// flight may or may not be there; completed ones must be). Every target in it, or --target.
    #[arg(long, value_name = "DIR")]
    pub journal: Option<PathBuf>,
    /// Print the report as JSON (schema iogauge.verify/1) on stdout.
    #[arg(long)]
    pub json: bool,
    /// How long a network target's server may take to answer a read (default: a test's).
    #[arg(long, value_parser = crate::units::parse_duration, value_name = "DURATION")]
    pub io_timeout: Option<std::time::Duration>,
}

/// The JSON report.
#[derive(Serialize)]
struct Report<'a> {
    schema: &'static str,
    /// Mismatches over every target.
    mismatches: usize,
    targets: &'a [TargetCheck],
}

/// Runs `iogauge verify`; exit status 1 if any block does not match.
pub fn verify(a: &VerifyArgs) -> Result<i32> {
    // The target as named, a URL's password taken out as the flag was read (the map is saved
    // under the name without it, as every test's targets are).
    let target = a.target.as_ref();
    let timeout = a.io_timeout.unwrap_or(crate::config::TestSettings::default().io_timeout);
    let checks = match &a.journal {
        Some(dir) => {
            let all = journal::replay(dir)?;
            let mut checks = Vec::new();
            for r in all.iter().filter(|r| target.is_none_or(|t| *t == r.map.path)) {
                let name = target.cloned().unwrap_or_else(|| r.map.path.as_str().into());
                let read = crate::targets::read_for_check(&name, timeout)?;
                checks.push(verify::check_target(&r.map, Some(&r.in_flight), read)?);
            }
            if let (Some(t), true) = (target, checks.is_empty()) {
                let names: Vec<&str> = all.iter().map(|r| r.map.path.as_str()).collect();
                return Err(input(format!(
                    "{t} is not in the journal {} (it has {})",
                    dir.display(),
                    names.join(", ")
                )));
            }
            checks
        }
        None => {
            let file = match (&a.map, target) {
                (Some(f), _) => f.clone(),
                (None, Some(t)) => map::default_file(&data_dir()?, t),
                (None, None) => return Err(input("iogauge verify needs --target PATH, --map FILE or --journal DIR")),
            };
            if !file.exists() {
                return Err(input(format!(
                    "no verify map {}: run a test that writes {} with --verify first, or give --map FILE",
                    file.display(),
                    target.map_or("the target", |t| t.as_str())
                )));
            }
            let mut m = BlockMap::load(&file)?;
            // The target as named now (the map holds the name the test used).
            let name = target.cloned().unwrap_or_else(|| m.path.as_str().into());
            m.path = name.to_string();
            same_target(&m, &file, timeout, &name)?;
            vec![verify::check_target(&m, None, crate::targets::read_for_check(&name, timeout)?)?]
        }
    };
    let mismatches: usize = checks.iter().map(|c| c.mismatches.len()).sum();
    if a.json {
        let r = Report { schema: "iogauge.verify/1", mismatches, targets: &checks };
        println!("{}", serde_json::to_string_pretty(&r).expect("a report serialises"));
    } else {
        for c in &checks {
            // The first few, and counts by kind: a damaged target has millions of blocks.
            for m in c.mismatches.iter().take(SHOWN) {
                println!("{m}");
            }
            if c.mismatches.len() > SHOWN {
                let mut kinds: Vec<(&str, usize)> = Vec::new();
                for m in &c.mismatches {
                    match kinds.iter_mut().find(|(k, _)| *k == m.kind.name()) {
                        Some((_, n)) => *n += 1,
                        None => kinds.push((m.kind.name(), 1)),
                    }
                }
                let counts: Vec<String> = kinds.iter().map(|(k, n)| format!("{} {k}", thousands(*n as f64))).collect();
                println!(
                    "{}: ... {} more; in all {} (iogauge verify --json lists every one)",
                    c.path,
                    thousands((c.mismatches.len() - SHOWN) as f64),
                    counts.join(", ")
                );
            }
            let uncertain = if c.uncertain_blocks > 0 {
                format!(", {} uncertain (a failed write, or one in flight at the end)", c.uncertain_blocks)
            } else {
                String::new()
            };
            println!(
                "{}: {} blocks of {} bytes checked, {} mismatches{uncertain}",
                c.path,
                c.checked_blocks,
                c.block_bytes,
                c.mismatches.len()
            );
        }
    }
    Ok(i32::from(mismatches > 0))
}

/// Mismatches printed one per line; the rest are counted (`--json` has them all).
const SHOWN: usize = 10;

/// Refuses to check a target that is not the one the map describes (another file behind the
/// same loop device, another disk under the same name): its every block would read as lost.
fn same_target(m: &BlockMap, file: &std::path::Path, timeout: std::time::Duration, name: &TargetName) -> Result<()> {
    let Some(then) = &m.target else { return Ok(()) };
    let now = crate::targets::facts_now(name, timeout)?;
    match then.differs(&now) {
        Some(why) => Err(input(format!(
            "{} is not the target the verify map {} was made on: {why}; nothing checked",
            m.path,
            file.display()
        ))),
        None => Ok(()),
    }
}

fn data_dir() -> Result<PathBuf> {
    crate::host::dirs::data().ok_or_else(|| input("neither XDG_DATA_HOME nor HOME is set: give --map FILE"))
}

/// Saves the maps a verified test left, each where `iogauge verify --target` looks for it. A
/// map that cannot be saved fails the command (exit 1), after its results are written.
pub fn save_maps(maps: &[BlockMap]) -> Result<()> {
    if maps.is_empty() {
        return Ok(());
    }
    let dir = crate::host::dirs::data()
        .ok_or_else(|| runtime("verify maps not saved: neither XDG_DATA_HOME nor HOME is set"))?;
    for m in maps {
        let file = map::default_file(&dir, &m.path);
        m.save(&file).map_err(|e| runtime(format!("verify map of {} not saved to {}: {e}", m.path, file.display())))?;
        say!("verify map of {} saved; re-read it with: iogauge verify --target {}", m.path, m.path);
    }
    Ok(())
}
