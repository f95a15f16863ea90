//! `iogauge verify`: re-reads targets and checks every block against the last write a
//! verified test made there (from the map the test left, or from its journal); and saving
//! those maps after a verified run.

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::error::{Result, input};
use crate::history;
use crate::verify::map::{self, BlockMap};
use crate::verify::{self, TargetCheck, journal};

/// `iogauge verify` flags.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The target to re-read (a block device or file a test with --verify wrote).
    #[arg(long, value_name = "PATH")]
    pub target: Option<String>,
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
    let checks = match &a.journal {
        Some(dir) => {
            let all = journal::replay(dir)?;
            let mut checks = Vec::new();
            for r in all.iter().filter(|r| a.target.as_ref().is_none_or(|t| *t == r.map.path)) {
                checks.push(verify::check_target(&r.map, Some(&r.in_flight))?);
            }
            if let (Some(t), true) = (&a.target, checks.is_empty()) {
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
            let file = match (&a.map, &a.target) {
                (Some(f), _) => f.clone(),
                (None, Some(t)) => map::default_file(&data_dir()?, t),
                (None, None) => return Err(input("iogauge verify needs --target PATH, --map FILE or --journal DIR")),
            };
            if !file.exists() {
                return Err(input(format!(
                    "no verify map {}: run a test that writes {} with --verify first, or give --map FILE",
                    file.display(),
                    a.target.as_deref().unwrap_or("the target")
                )));
            }
            let mut m = BlockMap::load(&file)?;
            if let Some(t) = &a.target {
                // The target as named now (the map holds the name the test used).
                m.path = t.clone();
            }
            vec![verify::check_target(&m, None)?]
        }
    };
    let mismatches: usize = checks.iter().map(|c| c.mismatches.len()).sum();
    if a.json {
        let r = Report { schema: "iogauge.verify/1", mismatches, targets: &checks };
        println!("{}", serde_json::to_string_pretty(&r).expect("a report serialises"));
    } else {
        for c in &checks {
            for m in &c.mismatches {
                println!("{m}");
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

fn data_dir() -> Result<PathBuf> {
    history::data_dir().ok_or_else(|| input("neither XDG_DATA_HOME nor HOME is set: give --map FILE"))
}

/// Saves the maps a verified test left, each where `iogauge verify --target` looks for it. A
/// map that cannot be saved is a warning: the test's results are written all the same.
pub fn save_maps(maps: &[BlockMap]) {
    let Some(dir) = history::data_dir().filter(|_| !maps.is_empty()) else {
        if !maps.is_empty() {
            eprintln!("iogauge: warning: verify maps not saved: neither XDG_DATA_HOME nor HOME is set");
        }
        return;
    };
    for m in maps {
        let file = map::default_file(&dir, &m.path);
        match m.save(&file) {
            Ok(()) => {
                eprintln!(
                    "iogauge: verify map of {} saved; re-read it with: iogauge verify --target {}",
                    m.path, m.path
                )
            }
            Err(e) => eprintln!("iogauge: warning: verify map of {} not saved to {}: {e}", m.path, file.display()),
        }
    }
}
