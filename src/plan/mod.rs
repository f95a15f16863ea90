//! From a resolved test to what each worker will do: this manager's [`Share`] of the test,
//! its targets inspected, every workload checked against them, writes checked for safety, and
//! only then missing test files created and every workload's [`WorkerPlan`]s built.

mod replay;
mod verified_blocks;

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;

use crate::config::{Rate, Replay, Test, TestSettings, Worker, Workload};
use crate::engine::EngineKind;
use crate::error::{Result, input};
use crate::host;
use crate::host::cpu_groups::WorkerGroups;
use crate::host::cpu_latency;
use crate::host::placement;
use crate::managers::{self, Group, Manager};
use crate::net::TargetName;
use crate::result::ManagerInfo;
use crate::spec::AccessSpec;
use crate::targets::{self, TargetInfo, TargetKind, fit, safety};
use crate::trace::Summary;
use crate::units::human_size;

pub use verified_blocks::check_test;

/// Most I/Os one worker may keep in flight (io_uring's completion-queue limit).
pub const MAX_SLOTS_PER_WORKER: u64 = 65536;

/// One manager's share of a test: the workers whose `hosts`, `ranks` and `test.managers` take
/// it in, with `{host}` and `{rank}` filled in their targets and in `allow_write` and `journal`.
#[derive(Debug, Clone)]
pub struct Share {
    /// The test's settings, paths filled for this manager.
    pub settings: TestSettings,
    /// This manager's workers.
    pub workers: Vec<Worker>,
    /// Each workload, with the specifications of this manager's workers.
    pub workloads: Vec<Workload>,
    /// The index of this manager's first worker among every manager's workers...
    pub first_worker: usize,
    /// ...and how many those are (a count-limited test shares its count among them all).
    pub all_workers: usize,
}

/// Whether `w` runs on manager `m` (with only the first `managers` taking part).
fn runs_on(w: &Worker, m: &Manager, managers: Option<u32>) -> bool {
    managers.is_none_or(|n| m.rank < n)
        && (w.hosts.is_empty() || w.hosts.iter().any(|p| managers::matches(p, &m.host)))
        && (w.ranks.is_empty() || w.ranks.contains(&m.rank))
}

impl Share {
    /// Manager `me`'s share of `test`, run by the managers `all`.
    pub fn of(test: &Test, me: &Manager, all: &[Manager]) -> Share {
        let mine = |m: &Manager| -> Vec<usize> {
            (0..test.workers.len()).filter(|&i| runs_on(&test.workers[i], m, test.settings.managers)).collect()
        };
        let first_worker = all.iter().take_while(|m| m.rank != me.rank).map(|m| mine(m).len()).sum();
        let all_workers = all.iter().map(|m| mine(m).len()).sum();
        let fill = |path: &str| {
            // Several managers on one host must not share the default test file.
            let path = if all.len() > 1 && path == crate::config::DEFAULT_TARGET { "iogauge.{rank}.tst" } else { path };
            path.replace("{host}", &me.host).replace("{rank}", &me.rank.to_string())
        };
        let keep = mine(me);
        let workers = keep
            .iter()
            .map(|&i| {
                let mut w = test.workers[i].clone();
                w.targets = w.targets.iter().map(|t| t.map(fill)).collect();
                w
            })
            .collect();
        let mut settings = test.settings.clone();
        settings.allow_write = settings.allow_write.iter().map(|t| t.map(fill)).collect();
        settings.allow_mounted_write = settings.allow_mounted_write.iter().map(|t| t.map(fill)).collect();
        settings.journal = settings.journal.as_ref().map(|j| fill(&j.to_string_lossy()).into());
        let workloads = test
            .workloads
            .iter()
            .map(|r| Workload {
                name: r.name.clone(),
                base: r.base.clone(),
                specs: keep.iter().map(|&i| r.specs[i].clone()).collect(),
            })
            .collect();
        Share { settings, workers, workloads, first_worker, all_workers }
    }

    /// Whether any workload writes to target `path` (decides which safety checks apply).
    pub fn writes_to(&self, path: &str) -> bool {
        self.does(path, AccessSpec::writes)
    }

    /// Whether any workload has a worker on target `path` whose specification does `what`.
    fn does(&self, path: &str, what: fn(&AccessSpec) -> bool) -> bool {
        self.workloads
            .iter()
            .any(|r| self.workers.iter().zip(&r.specs).any(|(w, s)| what(s) && w.targets.iter().any(|t| t == path)))
    }
}

/// A checked test, ready to run: read-only once planned, so what runs is what the plan
/// checked and what the result document records (a change is a new test, planned again).
#[derive(Debug, Clone)]
pub struct Prepared {
    share: Share,
    targets: Vec<TargetInfo>,
    plans: Vec<Vec<WorkerPlan>>,
    warnings: Vec<String>,
    test: Test,
    managers: Vec<ManagerInfo>,
    verify_block: Option<u64>,
    /// With `cpu_latency`: the CPUs held awake, from preparation until the test is dropped.
    _cpus_awake: Option<Arc<cpu_latency::Hold>>,
    /// A CPU cgroup for each worker, where the host lets the test make them.
    worker_groups: Option<Arc<WorkerGroups>>,
}

impl Prepared {
    /// This manager's share of the test.
    pub fn share(&self) -> &Share {
        &self.share
    }

    /// Every distinct target of this manager.
    pub fn targets(&self) -> &[TargetInfo] {
        &self.targets
    }

    /// Each workload's worker plans, in workload order.
    pub fn plans(&self) -> &[Vec<WorkerPlan>] {
        &self.plans
    }

    /// Things the user should know (buffered I/O, psync depth), of every manager.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The whole test: what result documents record.
    pub fn test(&self) -> &Test {
        &self.test
    }

    /// Every manager: its host, targets and number of workers.
    pub fn managers(&self) -> &[ManagerInfo] {
        &self.managers
    }

    /// With `--verify`: the bytes per verified block.
    pub fn verify_block(&self) -> Option<u64> {
        self.verify_block
    }

    /// A CPU cgroup for each worker of this manager, where they could be made (cpu_groups.rs).
    pub(crate) fn worker_groups(&self) -> Option<&WorkerGroups> {
        self.worker_groups.as_deref()
    }
}

/// Checks a test as `prepare_for` does, creating nothing: a study checks every point's
/// targets before its first I/O.
pub fn check_for(group: &dyn Group, test: &Test) -> Result<()> {
    checked_share(group, test, Ok(())).map(drop)
}

/// This manager's share of `test`, checked against its targets, once every manager's share
/// has passed its checks and every manager's `mine` is Ok (see [`prepare_with`]).
fn checked_share<T>(group: &dyn Group, test: &Test, mine: Result<T>) -> Result<(Checked, T)> {
    if let Some(n) = test.settings.managers.filter(|&n| n as usize > group.all().len()) {
        return Err(input(format!(
            "managers = {n}, but {} manager(s) are running: start {n} MPI ranks (mpirun -np {n}) or ask for fewer",
            group.all().len()
        )));
    }
    // A worker on a rank that is not running would silently not run (an Iometer
    // configuration's second manager run without mpirun).
    let running = group.all().len();
    if let Some(w) = test.workers.iter().find(|w| w.ranks.iter().any(|&r| r as usize >= running)) {
        let most = w.ranks.iter().max().map_or(0, |&r| r + 1);
        return Err(input(format!(
            "worker '{}' runs on rank(s) {:?}, but {running} manager(s) are running: start {most} MPI ranks \
             (mpirun -np {most}; docs/many-hosts.md)",
            w.name, w.ranks
        )));
    }
    if test.settings.verifying() {
        check_test(test, running)?;
    }
    let share = Share::of(test, group.me(), group.all());
    if share.all_workers == 0 {
        let names: Vec<String> = group.all().iter().map(|m| format!("{} {}", m.rank, m.host)).collect();
        return Err(input(format!(
            "no manager runs a worker: the workers' hosts, ranks and test.managers match none of the managers ({})",
            names.join(", ")
        )));
    }
    // No manager creates anything until every manager's test has passed its checks.
    managers::all_ok(group, mine.and_then(|m| Ok((check(share)?, m))), "checking the targets")
}

/// Prepares this manager's share of the test and agrees with the others that every share is
/// ready: any manager's mistake (a missing target, an unsafe write) stops them all, each
/// mistake named with its manager, before any I/O.
pub fn prepare_for(group: &dyn Group, test: Test) -> Result<Prepared> {
    prepare_with(group, test, Ok(())).map(|(prep, ())| prep)
}

/// [`prepare_for`], with what this manager readied beside the test (a command's outputs, which
/// the lead opens): a manager whose `mine` failed probes nothing and stops every manager in
/// the same agreement as a failed check, before any file is created. Returns `mine`'s value.
pub fn prepare_with<T>(group: &dyn Group, test: Test, mine: Result<T>) -> Result<(Prepared, T)> {
    let (checked, value) = checked_share(group, &test, mine)?;
    let local = create(checked);
    let me = group.me();
    let info = local.as_ref().map_err(Clone::clone).map(|p| {
        let devices = p.targets.iter().map(|t| host::DeviceModel { target: t.path.clone(), model: t.model.clone() });
        let info = ManagerInfo {
            rank: me.rank,
            host: host::HostInfo { worker_cgroups: p.worker_groups.is_some(), ..host::current(devices.collect()) },
            target_info: p.targets.clone(),
            workers: p.share.workers.len(),
        };
        (info, p.warnings.clone())
    });
    let all = managers::agree(group, info, "preparation", None)?;
    let Checked { share, targets, verify_block, replays, cpus_awake, worker_groups, .. } = local?;
    let mut warnings = Vec::new();
    for (m, said) in &all {
        for w in said {
            warnings.push(if all.len() > 1 { format!("manager {} ({}): {w}", m.rank, m.host.name) } else { w.clone() });
        }
    }
    let managers = all.into_iter().map(|(m, _)| m).collect();
    let plans =
        (0..share.workloads.len()).map(|r| plan_workload(&share, &targets, &replays, verify_block, r)).collect();
    let (_cpus_awake, worker_groups) = (cpus_awake.map(Arc::new), worker_groups.map(Arc::new));
    Ok((Prepared { share, targets, plans, warnings, test, managers, verify_block, _cpus_awake, worker_groups }, value))
}

/// One manager's share of the test, checked against its targets.
struct Checked {
    share: Share,
    targets: Vec<TargetInfo>,
    warnings: Vec<String>,
    verify_block: Option<u64>,
    /// Each worker's trace, if it replays one.
    replays: Vec<Option<Summary>>,
    /// With `cpu_latency`, held from before anything is created.
    cpus_awake: Option<cpu_latency::Hold>,
    /// A CPU cgroup for each worker, made before anything is created.
    worker_groups: Option<WorkerGroups>,
}

/// Creates a test file, saying so: on a slow disk writing it takes minutes.
fn create_file(t: &TargetInfo, data: crate::config::DataPattern, buffered: bool) -> Result<TargetInfo> {
    use std::io::Write as _;
    let size = human_size(t.size);
    let live = std::io::stderr().is_terminal();
    // Written as say! writes: a stderr nobody reads loses the words, not the test.
    let mut err = std::io::stderr();
    let _ = write!(err, "iogauge: creating test file {} ({size}, written in full before any read)", t.path);
    let started = std::time::Instant::now();
    let created = targets::prepare(t, data, buffered, &mut |done| {
        if live {
            let percent = done as f64 * 100.0 / t.size as f64;
            let _ =
                write!(std::io::stderr(), "\r\x1b[Kiogauge: creating test file {} ({size}): {percent:.0} %", t.path);
        }
    });
    let how =
        if created.is_ok() { format!("done in {:.1} s", started.elapsed().as_secs_f64()) } else { "failed".into() };
    let _ = match live {
        true => writeln!(err, "\r\x1b[Kiogauge: creating test file {} ({size}): {how}", t.path),
        false => writeln!(err, ": {how}"),
    };
    created
}

/// Readies this manager's targets for a checked test (and only then: everything is checked):
/// creates the missing test files, and forgets the saved verify map of each target it writes
/// (a run, a study's point, a preconditioning pass).
fn create(mut p: Checked) -> Result<Checked> {
    // First: a host that refuses the hold is refused before anything is created.
    p.cpus_awake = p.share.settings.cpu_latency.map(cpu_latency::Hold::new).transpose()?;
    // Before the workers start: they take this thread's nice value with them.
    p.share.settings.nice.map(crate::host::session::nice).transpose()?;
    // Where the kernel groups the test's CPU time, each worker in a group of its own: in one,
    // workers on io-wq keep other groups off the CPUs (cpu_groups.rs).
    if crate::host::session::autogroup() != "off" {
        p.worker_groups = WorkerGroups::make(p.share.workers.len(), p.share.settings.nice.unwrap_or(0));
    }
    let s = &p.share.settings;
    if let Some(dir) = &s.journal {
        crate::verify::journal::start(dir)?;
    }
    if let Some(dir) = &s.log_dir {
        targets::output_dir(dir, "--log-dir")?;
    }
    for t in &mut p.targets {
        if !t.exists {
            let name = Path::new(&t.path).file_name().map_or(String::new(), |n| n.to_string_lossy().to_lowercase());
            // (The null target itself is never a file to create: this is a near miss, or ./null.)
            if strsim::damerau_levenshtein(&name, targets::NULL) <= 1 {
                // A bare word is a typo of `null` more likely than a file wanted: refused
                // before a gigabyte is written under its name; a path says it means a file.
                if !t.path.contains('/') {
                    return Err(crate::error::input(format!(
                        "target {}: no such file, and one letter from the null target: did you mean null? (give \
                         ./{0} for a test file of that name)",
                        t.path
                    )));
                }
                // Said before the file is made, not with the other warnings after it.
                say!("warning: {} is not the null target (null): it is created as a test file", t.path);
            }
            let created = create_file(t, s.data, s.buffered)?;
            for run in &p.share.workloads {
                for (wc, spec) in p.share.workers.iter().zip(&run.specs) {
                    if wc.targets.iter().any(|n| *n == t.path) {
                        fit::check_spec(&created, wc, spec).map_err(|e| e.context(&wc.name))?;
                    }
                }
            }
            *t = created;
        }
        let does = |what| p.share.does(&t.path, what);
        let (trims, reads, writes) = (does(AccessSpec::trims), does(AccessSpec::reads), does(AccessSpec::writes));
        if trims {
            targets::check_trim(t)?;
        }
        if t.kind != TargetKind::Null && !t.direct {
            p.warnings.push(format!(
                "{} is accessed through the page cache (buffered): numbers may come from memory, not the storage",
                t.path
            ));
        }
        if let Some(what) = targets::in_memory(t) {
            p.warnings
                .push(format!("{} is in memory ({what}): the numbers are memory's, not a storage device's", t.path));
        } else if let Some((pct, file)) = targets::unwritten(t).filter(|_| reads) {
            p.warnings.push(format!(
                "{}: {pct:.0} % of {file} was never written or was discarded (sparse): reads there return zeros \
                 without reaching the storage, at memory's speed; write it in full first for the storage's numbers",
                t.path
            ));
        }
        if writes {
            crate::verify::map::forget(&t.path)?;
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

/// What one worker does in one workload.
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
    /// Its open loop's pace: its own, or its share of the test's, whichever is slower.
    pub rate: Rate,
    /// The CPUs its thread may run on (empty: the process's).
    pub cpus: Vec<u32>,
    /// The trace it replays instead of drawing I/Os, and what one pass over it learnt.
    pub replay: Option<(Replay, Summary)>,
}

/// Inspects targets, checks every workload against them and checks safety; writes nothing.
fn check(share: Share) -> Result<Checked> {
    let s = &share.settings;
    let mut paths: Vec<&TargetName> = Vec::new();
    for w in &share.workers {
        for t in &w.targets {
            if !paths.iter().any(|p| p.as_str() == t.as_str()) {
                paths.push(t);
            }
        }
    }
    let mut targets: Vec<TargetInfo> = Vec::new();
    for p in &paths {
        targets.push(targets::inspect(p, s)?);
    }
    let mut warnings = fit::warnings(&targets, s.verifying(), s.file_size)?;
    for wc in &share.workers {
        check_worker(wc, &targets, s.engine, &mut warnings)?;
    }
    let local = targets.iter().any(|t| matches!(t.kind, TargetKind::Block | TargetKind::File));
    if s.engine == EngineKind::IoUring && local {
        if let Some(why) = crate::engine::io_uring::unavailable() {
            return Err(input(why));
        }
    }
    warnings.extend(launcher_binding(&share));
    for run in &share.workloads {
        for (wc, spec) in share.workers.iter().zip(&run.specs) {
            for t in &wc.targets {
                fit::check_spec(find(&targets, t), wc, spec).map_err(|e| e.context(&wc.name))?;
            }
        }
    }
    check_resources(&share, &targets)?;
    let replays = share
        .workers
        .iter()
        .map(|wc| wc.replay.as_ref().map(|r| replay::check(wc, r, &targets, s, &mut warnings)).transpose())
        .collect::<Result<Vec<_>>>()?;
    let verify_block = match s.verifying() {
        true => verified_blocks::block_size(&share, &targets)?.map(|(block, said)| {
            warnings.extend(said);
            block
        }),
        false => None,
    };
    // Last: whether a target may be written reads it (a device's signatures, a server's
    // export), so it is asked only of a test that is otherwise sound.
    for t in &targets {
        if share.writes_to(&t.path) {
            safety::check_write(t, &s.allow_write, &s.allow_mounted_write, s.io_timeout)?;
        }
    }
    Ok(Checked { share, targets, warnings, verify_block, replays, cpus_awake: None, worker_groups: None })
}

/// A worker's targets and depth: the null target alone, at most MAX_SLOTS_PER_WORKER I/Os in
/// flight, and a warning when psync cannot keep what was asked in flight.
fn check_worker(wc: &Worker, targets: &[TargetInfo], engine: EngineKind, warnings: &mut Vec<String>) -> Result<()> {
    let kinds: Vec<TargetKind> = wc.targets.iter().map(|t| find(targets, t).kind).collect();
    if kinds.contains(&TargetKind::Null) && kinds.iter().any(|k| *k != TargetKind::Null) {
        return Err(input(format!(
            "{}: the null target cannot share a worker with real targets; give it a worker of its own",
            wc.name
        )));
    }
    // One engine drives a worker's targets: each network protocol and local targets need
    // different ones.
    let network = wc.targets.iter().map(|t| find(targets, t)).find(|i| i.kind.network());
    if let Some(net) = network {
        if kinds.iter().any(|k| *k != net.kind) {
            // The protocol as the inspection named it, whichever it is.
            let protocol = net.network.as_ref().map_or("network", |r| r.protocol.as_str());
            return Err(input(format!(
                "{}: an {protocol}:// target cannot share a worker with targets of another kind; give each its own worker",
                wc.name,
            )));
        }
    }
    let slots = wc.outstanding as u64 * wc.targets.len() as u64;
    if slots > MAX_SLOTS_PER_WORKER {
        return Err(input(format!(
            "{}: {} targets x {} outstanding = {slots} I/Os in flight; one worker can keep at most {MAX_SLOTS_PER_WORKER}: use more workers",
            wc.name,
            wc.targets.len(),
            wc.outstanding
        )));
    }
    let usable = placement::usable_cpus();
    if let Some(c) = wc.cpus.iter().find(|c| !usable.contains(c)) {
        return Err(input(format!(
            "{}: CPU {c} of its cpus is not one this process may use on {} (CPUs {}); give CPUs of that list",
            wc.name,
            host::name(),
            placement::cpu_list(&usable)
        )));
    }
    if engine == EngineKind::Psync && slots > 1 && matches!(kinds[0], TargetKind::Block | TargetKind::File) {
        // Said per target: "asked for 2" of a worker of 1 outstanding I/O on 2 targets read as
        // a depth nobody asked for.
        let asked = match wc.targets.len() {
            1 => format!("{} outstanding I/Os", wc.outstanding),
            n => format!("{} outstanding I/Os on each of {n} targets", wc.outstanding),
        };
        let msg = format!(
            "{}: psync does one I/O at a time, so 1 is in flight, not the {asked} asked; the io_uring engine (the \
             default) keeps them all in flight",
            wc.name
        );
        if !warnings.contains(&msg) {
            warnings.push(msg);
        }
    }
    Ok(())
}

/// Workers squeezed by the launcher's binding: Open MPI binds each rank to one core by default
/// (to a socket above two ranks), and a manager's workers (and their io-wq threads) then share
/// those CPUs, which the result would show as the storage's limit.
fn launcher_binding(share: &Share) -> Option<String> {
    managers::launched_rank()?;
    let (usable, online) = (placement::usable_cpus(), placement::online_cpus());
    let free = share.workers.iter().filter(|w| w.cpus.is_empty()).count();
    (usable.len() < online.len() && free > usable.len()).then(|| {
        format!(
            "the MPI launcher bound this manager to CPU(s) {} ({} of the host's {}), which its {free} workers share \
             (Open MPI binds each rank to a core by default): start mpirun with --bind-to none, or give the workers cpus",
            placement::cpu_list(&usable),
            usable.len(),
            online.len()
        )
    })
}

/// Checks that this manager can make its workers' threads, their I/O buffers and random maps
/// before it tries: a test too large for the machine is one clear line, not a failed
/// allocation.
fn check_resources(share: &Share, targets: &[TargetInfo]) -> Result<()> {
    let n = share.workers.len() as u64;
    // Half of what is left: io_uring's kernel workers count against the same limits.
    if let Some(left) = host::threads_left().map(|t| t / 2).filter(|&t| n > t) {
        return Err(input(format!(
            "{n} workers: this system lets iogauge start about {left} more threads; give fewer workers"
        )));
    }
    // Per worker on real targets, as the worker allocates them: a buffer per slot for reads
    // (and verified writes), and one write buffer with its 1 MiB window.
    let (mut bytes, mut maps) = (0u64, 0u64);
    for run in &share.workloads {
        let need: u64 = share
            .workers
            .iter()
            .zip(&run.specs)
            .filter(|(w, _)| w.targets.iter().any(|t| t != targets::NULL))
            .map(|(w, spec)| {
                let slots = w.outstanding as u64 * w.targets.len() as u64;
                slots.saturating_mul(spec.max_transfer()).saturating_add(spec.max_transfer() + (1 << 20))
            })
            .fold(0, u64::saturating_add);
        let mapped = share.workers.iter().zip(&run.specs).map(|(w, spec)| random_maps(w, spec, targets));
        let mapped = mapped.fold(0, u64::saturating_add);
        (bytes, maps) = (bytes.max(need.saturating_add(mapped)), maps.max(mapped));
    }
    if let Some(free) = host::memory_available().filter(|&m| bytes > m / 10 * 8) {
        let what = if maps > 0 { "I/O buffers and random maps" } else { "I/O buffers" };
        let maps = match maps {
            0 => String::new(),
            m => format!(" (the random maps {}: leave random_map out, or give smaller working sets)", human_size(m)),
        };
        return Err(input(format!(
            "the workers' {what} need {}, more than the {} of memory available{maps}: give fewer outstanding I/Os, \
             targets or workers",
            human_size(bytes),
            human_size(free)
        )));
    }
    Ok(())
}

/// The bytes of a worker's random maps for `spec` over its targets (none without
/// `random_map`).
fn random_maps(w: &Worker, spec: &AccessSpec, targets: &[TargetInfo]) -> u64 {
    let map = |t: &TargetName| {
        let info = find(targets, t);
        let size = fit::working_set(info, w).map_or(0, |(_, size)| size);
        crate::spec::random_map::random_map_bytes(spec, size, info.logical_block)
    };
    if spec.random_map { w.targets.iter().map(map).fold(0, u64::saturating_add) } else { 0 }
}

fn find<'a>(targets: &'a [TargetInfo], path: &str) -> &'a TargetInfo {
    targets.iter().find(|t| t.path == path).expect("every worker target was inspected")
}

/// Each worker's plan for workload `r` of a checked share.
fn plan_workload(
    share: &Share,
    targets: &[TargetInfo],
    replays: &[Option<Summary>],
    verify_block: Option<u64>,
    r: usize,
) -> Vec<WorkerPlan> {
    let mut plans = share
        .workers
        .iter()
        .zip(&share.workloads[r].specs)
        .zip(replays)
        .map(|((wc, spec), summary)| WorkerPlan {
            name: wc.name.clone(),
            spec: spec.clone(),
            outstanding: wc.outstanding,
            rate: wc.rate().within_share(share.settings.rate(), share.all_workers),
            cpus: wc.cpus.clone(),
            replay: wc.replay.clone().zip(summary.clone()),
            targets: wc
                .targets
                .iter()
                .map(|p| {
                    let target = targets.iter().position(|t| *p == t.path).expect("inspected");
                    let (start, size) = fit::working_set(&targets[target], wc).expect("checked in prepare");
                    WorkingSet { target, start, size }
                })
                .collect(),
        })
        .collect::<Vec<_>>();
    if share.workers.iter().all(|w| w.cpus.is_empty()) {
        split_outnumbered(&mut plans, &placement::usable_cpus());
    }
    if let Some(block) = verify_block {
        verified_blocks::split_shared(&mut plans, block);
    }
    plans
}

/// Where the workers outnumber the CPUs they may run on (`usable`) and none was given any,
/// each keeps one of them, in turn, as `cpus_policy = "split"` does: free, they and the io-wq
/// threads serving them moved between the CPUs, and a CPU a worker's group held for itself
/// (its thread and its io-wq thread handing over to each other) kept another session's task
/// that the kernel's load balancing moved there waiting up to 0.85 s (2 CPUs, four workers
/// reading 128 KiB on zram; 3.3 ms at most split, at 1.18x the IOPS; docs/performance.md,
/// issue 45, entry 27).
fn split_outnumbered(plans: &mut [WorkerPlan], usable: &[u32]) {
    if usable.is_empty() || plans.len() <= usable.len() {
        return;
    }
    for (i, plan) in plans.iter_mut().enumerate() {
        plan.cpus = vec![usable[i % usable.len()]];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_that_outnumber_their_cpus_keep_one_each_in_turn() {
        let plan = |cpus: Vec<u32>| WorkerPlan {
            name: "w".into(),
            spec: crate::spec::find_builtin("random-read-4k").unwrap(),
            outstanding: 1,
            rate: Rate::default(),
            cpus,
            replay: None,
            targets: Vec::new(),
        };
        let cpus = |plans: &[WorkerPlan]| plans.iter().map(|p| p.cpus.clone()).collect::<Vec<_>>();
        let mut three = vec![plan(vec![]), plan(vec![]), plan(vec![])];
        split_outnumbered(&mut three, &[2, 5]);
        assert_eq!(cpus(&three), [vec![2], vec![5], vec![2]]);
        // As many workers as CPUs, or an affinity unknown: free.
        let mut two = vec![plan(vec![]), plan(vec![])];
        split_outnumbered(&mut two, &[2, 5]);
        split_outnumbered(&mut two, &[]);
        assert_eq!(cpus(&two), [Vec::<u32>::new(), vec![]]);
    }

    #[test]
    fn each_manager_runs_its_workers_on_its_own_targets() {
        let job: crate::config::Job = toml::from_str(
            r#"
            [test]
            run = ["oltp-8k"]
            [[worker]]
            targets = ["/data/{host}/f{rank}"]
            [[worker]]
            count = 2
            hosts = ["stor*"]
            targets = ["null"]
            [[worker]]
            ranks = [0]
            "#,
        )
        .unwrap();
        let mut test = Test::from_job(&job).unwrap();
        let m = |rank, host: &str| Manager { rank, host: host.into() };
        let all = [m(0, "app1"), m(1, "stor1"), m(2, "stor2")];
        let s0 = Share::of(&test, &all[0], &all);
        // Rank 0: the first worker and the rank-0 one, whose default file is its own.
        assert_eq!(s0.workers.len(), 2);
        assert_eq!(s0.workers[0].targets, ["/data/app1/f0"]);
        assert_eq!(s0.workers[1].targets, ["iogauge.0.tst"]);
        assert_eq!(s0.workloads[0].specs.len(), 2);
        let s2 = Share::of(&test, &all[2], &all);
        assert_eq!(s2.workers.len(), 3);
        assert_eq!(s2.workers[0].targets, ["/data/stor2/f2"]);
        // 2 + 3 + 3 workers; rank 2's come after ranks 0 and 1.
        assert_eq!((s0.first_worker, s2.first_worker, s0.all_workers), (0, 5, 8));
        // Only the first manager takes part.
        test.settings.managers = Some(1);
        assert_eq!(Share::of(&test, &all[1], &all).workers.len(), 0);
    }
}
