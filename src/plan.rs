//! From a resolved configuration to what each worker will do: targets inspected, every run
//! checked against them, writes checked for safety, and only then missing test files created.

use crate::config::{EngineKind, Run, TestConfig, WorkerConfig};
use crate::error::{Result, input};
use crate::host;
use crate::managers::{self, Group};
use crate::result::ManagerInfo;
use crate::spec::AccessSpec;
use crate::targets::{self, TargetInfo, TargetKind, safety};
use crate::verify;

/// Most I/Os one worker may keep in flight (io_uring's completion-queue limit).
pub const MAX_SLOTS_PER_WORKER: u64 = 65536;

/// A checked test, ready to run.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// This manager's part of the test: its workers, their targets' paths filled in.
    pub config: TestConfig,
    /// The runs, one result each (specifications of this manager's workers).
    pub runs: Vec<Run>,
    /// Every distinct target of this manager.
    pub targets: Vec<TargetInfo>,
    /// Things the user should know (buffered I/O, psync depth), of every manager.
    pub warnings: Vec<String>,
    /// The whole test, as resolved: what result documents record.
    pub job: TestConfig,
    /// Every manager: its host, targets and number of workers.
    pub managers: Vec<ManagerInfo>,
    /// The index of this manager's first worker among every manager's workers...
    pub first_worker: usize,
    /// ...and how many those are (a count-limited test shares its count among them all).
    pub all_workers: usize,
    /// With `--verify`: the bytes per verified block.
    pub verify_block: Option<u64>,
}

/// Prepares this manager's part of the test and agrees with the others that every part is
/// ready: any manager's mistake (a missing target, an unsafe write) stops them all, each
/// mistake named with its manager, before any I/O.
pub fn prepare_for(group: &dyn Group, job: TestConfig, runs: Vec<Run>) -> Result<Prepared> {
    if let Some(n) = job.test.managers.filter(|&n| n as usize > group.all().len()) {
        return Err(input(format!(
            "managers = {n}, but {} manager(s) are running: start {n} MPI ranks (mpirun -np {n}) or ask for fewer",
            group.all().len()
        )));
    }
    if job.test.verifying() {
        verify::check_test(&job, &runs, group.all().len()).map_err(input)?;
    }
    let (mine, my_runs, first_worker, all_workers) = job.for_manager(&runs, group.me(), group.all());
    if all_workers == 0 {
        let names: Vec<String> = group.all().iter().map(|m| format!("{} {}", m.rank, m.host)).collect();
        return Err(input(format!(
            "no manager runs a worker: the workers' hosts, ranks and test.managers match none of the managers ({})",
            names.join(", ")
        )));
    }
    // No manager creates anything until every manager's test has passed its checks.
    let checked = managers::all_ok(group, check(mine, my_runs), "checking the targets")?;
    let local = create(checked);
    let me = group.me();
    let info = local.as_ref().map_err(Clone::clone).map(|p| {
        let devices = p.targets.iter().map(|t| host::DeviceModel { target: t.path.clone(), model: t.model.clone() });
        let info = ManagerInfo {
            rank: me.rank,
            host: host::current(devices.collect()),
            target_info: p.targets.clone(),
            workers: p.config.workers.len(),
        };
        (info, p.warnings.clone())
    });
    let all = managers::agree(group, info, "preparation", None)?;
    let Checked { config, runs, targets, verify_block, .. } = local?;
    let mut warnings = Vec::new();
    for (m, said) in &all {
        for w in said {
            warnings.push(if all.len() > 1 { format!("manager {} ({}): {w}", m.rank, m.host.name) } else { w.clone() });
        }
    }
    let managers = all.into_iter().map(|(m, _)| m).collect();
    Ok(Prepared { config, runs, targets, warnings, job, managers, first_worker, all_workers, verify_block })
}

/// One manager's part of the test, checked against its targets.
struct Checked {
    config: TestConfig,
    runs: Vec<Run>,
    targets: Vec<TargetInfo>,
    warnings: Vec<String>,
    verify_block: Option<u64>,
}

/// Creates the missing test files of a checked test (and only then: everything is checked).
fn create(mut p: Checked) -> Result<Checked> {
    let s = &p.config.test;
    if let Some(dir) = &s.journal {
        verify::journal::start(dir).map_err(|e| input(format!("--journal {}: {e}", dir.display())))?;
    }
    for t in &mut p.targets {
        if !t.exists {
            let created = targets::prepare(t, s.data, s.buffered)?;
            for run in &p.runs {
                for (wc, spec) in p.config.workers.iter().zip(&run.specs) {
                    if wc.targets.contains(&t.path) {
                        check_spec(&created, wc, spec).map_err(input)?;
                    }
                }
            }
            *t = created;
        }
        if t.kind == TargetKind::File && !t.direct {
            p.warnings.push(format!(
                "{} is accessed through the page cache (buffered): numbers may come from memory, not the storage",
                t.path
            ));
        }
    }
    Ok(p)
}

/// The part of one target a worker uses.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkingSet {
    /// Index into [`Prepared::targets`].
    pub target: usize,
    /// First byte.
    pub start: u64,
    /// Length in bytes (a multiple of the logical block size).
    pub size: u64,
}

/// What one worker does in one run.
#[derive(Debug, Clone)]
pub struct WorkerPlan {
    /// Worker name.
    pub name: String,
    /// Its access specification.
    pub spec: AccessSpec,
    /// Outstanding I/Os per target.
    pub outstanding: u32,
    /// Its targets.
    pub targets: Vec<WorkingSet>,
    /// Open-loop arrival rate (I/Os per second), if any.
    pub rate_iops: Option<f64>,
}

/// Inspects targets, checks every run against them and checks safety; writes nothing.
fn check(config: TestConfig, runs: Vec<Run>) -> Result<Checked> {
    let s = &config.test;
    let mut paths: Vec<&str> = Vec::new();
    for w in &config.workers {
        for t in &w.targets {
            if !paths.contains(&t.as_str()) {
                paths.push(t);
            }
        }
    }
    let mut targets = Vec::new();
    for p in &paths {
        targets.push(targets::inspect(p, s.file_size, s.buffered)?);
    }
    let mut warnings = Vec::new();
    for (w, wc) in config.workers.iter().enumerate() {
        let kinds: Vec<TargetKind> = wc.targets.iter().map(|t| find(&targets, t).kind).collect();
        if kinds.contains(&TargetKind::Null) && kinds.iter().any(|k| *k != TargetKind::Null) {
            return Err(input(format!(
                "{}: the null target cannot share a worker with real targets; give it a worker of its own",
                name_of(wc, w)
            )));
        }
        let slots = wc.outstanding as u64 * wc.targets.len() as u64;
        if slots > MAX_SLOTS_PER_WORKER {
            return Err(input(format!(
                "{}: {} targets x {} outstanding = {slots} I/Os in flight; one worker can keep at most {MAX_SLOTS_PER_WORKER}: use more workers",
                name_of(wc, w),
                wc.targets.len(),
                wc.outstanding
            )));
        }
        if s.engine == EngineKind::Psync && slots > 1 && kinds[0] != TargetKind::Null {
            let msg = format!(
                "psync keeps 1 I/O in flight per worker: {} asked for {slots}; use the io_uring engine for more",
                name_of(wc, w)
            );
            if !warnings.contains(&msg) {
                warnings.push(msg);
            }
        }
    }
    for run in &runs {
        for (w, (wc, spec)) in config.workers.iter().zip(&run.specs).enumerate() {
            for t in &wc.targets {
                check_spec(find(&targets, t), wc, spec).map_err(|m| input(format!("{}: {m}", name_of(wc, w))))?;
            }
        }
    }
    for t in &targets {
        if config.writes_to(&runs, &t.path) {
            safety::check_write(t, &s.allow_write).map_err(input)?;
        }
    }
    let verify_block = match s.verifying() {
        true => verify::block_size(&config, &runs, &targets).map_err(input)?.map(|(block, said)| {
            warnings.extend(said);
            block
        }),
        false => None,
    };
    Ok(Checked { config, runs, targets, warnings, verify_block })
}

fn name_of(wc: &WorkerConfig, i: usize) -> String {
    wc.name.clone().unwrap_or_else(|| format!("worker {}", i + 1))
}

fn find<'a>(targets: &'a [TargetInfo], path: &str) -> &'a TargetInfo {
    targets.iter().find(|t| t.path == path).expect("every worker target was inspected")
}

/// The working set a worker uses on a target, by its stroke, size and offset.
pub fn working_set(info: &TargetInfo, wc: &WorkerConfig) -> std::result::Result<(u64, u64), String> {
    let lbs = info.logical_block;
    // The null target has no size of its own: give it 1 TiB so strokes mean something.
    let size = if info.kind == TargetKind::Null { 1 << 40 } else { info.size };
    if wc.offset % lbs != 0 {
        return Err(format!("offset {} is not a multiple of {}'s logical block size {lbs}", wc.offset, info.path));
    }
    if wc.offset >= size {
        return Err(format!("offset {} is beyond the end of {} ({size} bytes)", wc.offset, info.path));
    }
    let avail = size - wc.offset;
    let ws = match (wc.working_set, wc.stroke) {
        (Some(n), _) => n,
        (None, Some(pct)) => (size as f64 * pct / 100.0) as u64,
        (None, None) => avail,
    };
    if ws > avail {
        return Err(format!(
            "working set of {ws} bytes from offset {} does not fit in {} ({size} bytes)",
            wc.offset, info.path
        ));
    }
    Ok((wc.offset, ws / lbs * lbs))
}

/// Checks a spec's sizes and alignments against a target's block size and working set.
fn check_spec(info: &TargetInfo, wc: &WorkerConfig, spec: &AccessSpec) -> std::result::Result<(), String> {
    let (_, ws) = working_set(info, wc)?;
    let lbs = info.logical_block;
    for (i, l) in spec.lines.iter().enumerate() {
        let at = format!("access specification '{}' line {}", spec.name, i + 1);
        if info.direct && l.size % lbs != 0 {
            return Err(format!(
                "{at}: transfer size {} is not a multiple of {}'s logical block size {lbs} (O_DIRECT); use a multiple of {lbs}",
                l.size, info.path
            ));
        }
        if let Some(a) = l.align {
            if info.direct && a % lbs != 0 {
                return Err(format!("{at}: align {a} is not a multiple of {}'s logical block size {lbs}", info.path));
            }
        }
        if l.size > ws {
            return Err(format!(
                "{at}: transfer size {} is larger than the working set of {} ({ws} bytes); enlarge the working set or the target",
                l.size, info.path
            ));
        }
    }
    Ok(())
}

impl Prepared {
    /// Each worker's plan for run `r`.
    pub fn plan_run(&self, r: usize) -> Vec<WorkerPlan> {
        let mut plans = self
            .config
            .workers
            .iter()
            .zip(&self.runs[r].specs)
            .enumerate()
            .map(|(i, (wc, spec))| WorkerPlan {
                name: name_of(wc, i),
                spec: spec.clone(),
                outstanding: wc.outstanding,
                rate_iops: wc.rate_iops,
                targets: wc
                    .targets
                    .iter()
                    .map(|p| {
                        let target = self.targets.iter().position(|t| &t.path == p).expect("inspected");
                        let (start, size) = working_set(&self.targets[target], wc).expect("checked in prepare");
                        WorkingSet { target, start, size }
                    })
                    .collect(),
            })
            .collect::<Vec<_>>();
        if let Some(block) = self.verify_block {
            verify::split_shared(&mut plans, block);
        }
        plans
    }
}
