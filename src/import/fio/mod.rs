//! fio's job files, a practical subset with fio's meanings (fio's HOWTO; init.c reads the
//! file, options.c the options): `[global]` sections set what later jobs inherit, each other
//! section is a job (`numjobs` copies of it), `include`, `;` and `#` comments, `${ENV}`, and
//! fio's sizes (`1m` = 1 MiB) and times (seconds unless a unit is given).
//!
//! Jobs become `[[worker]]`s, their `rw`/`bs` an inline `[[spec]]`; groups separated by
//! `stonewall` (or a `wait_for` on the only job running) run one after another when they are
//! the same workers with another specification (fio's examples/ssd-test.fio), as iogauge's
//! `run` list; `new_group` only starts a reporting group of fio's, run with the jobs before
//! it. An option outside the subset is never ignored: one line naming it and its section,
//! unless `--ignore-unknown`.

mod file;
mod job;
mod options;
mod values;

pub use values::{Pattern, pattern};

use std::path::Path;

use self::file::{Opt, sections};
use self::job::{Engine, FioJob};
use super::Import;
use crate::config::{Job, TestSettings, WorkerConfig};
use crate::engine::EngineKind;
use crate::net::TargetName;
use crate::spec::{AccessSpec, SpecLine};

/// Reads a fio job file into a job; returns it with the warnings of ignored options.
pub fn parse(text: &str, file: &Path, import: &Import) -> Result<(Job, Vec<String>), String> {
    let mut secs = Vec::new();
    sections(text, file, 0, &mut secs, &|k| options::row(k).is_some())?;
    let mut global: Vec<Opt> = Vec::new();
    let mut jobs = Vec::new();
    let (mut ignored, mut notes) = (Vec::new(), Vec::new());
    for s in &secs {
        if s.name.starts_with("global") {
            global.extend(s.opts.iter().cloned());
            continue;
        }
        let mut job = FioJob::new(s);
        let opts: Vec<Opt> = global.iter().chain(&s.opts).cloned().collect();
        let mut skipped = Vec::new();
        job.apply(&opts, import, &mut skipped, &mut notes)?;
        for (option, at) in skipped {
            match ignored.iter_mut().find(|(o, _, _): &&mut (String, String, Vec<String>)| *o == option) {
                Some((_, _, names)) if names.last() != Some(&job.name) => names.push(job.name.clone()),
                Some(_) => {}
                None => ignored.push((option, at, vec![job.name.clone()])),
            }
        }
        // fio: stonewall set in [global] applies to every job after it.
        jobs.push(job);
    }
    if jobs.is_empty() {
        return Err(format!("{}: no job section: add one, e.g. [job1]", file.display()));
    }
    waits(&mut jobs)?;
    // Each option said once: where it was first given (a [global] one reaches every job) and the
    // jobs it was skipped for.
    let mut warnings: Vec<String> = ignored
        .into_iter()
        .map(|(option, at, names)| {
            let jobs = match names.len() {
                n if n == jobs.len() && n > 1 => format!("all {n} jobs"),
                n if n > 3 => format!("[{}] and {} more jobs", names[..3].join("], ["), n - 3),
                _ => format!("[{}]", names.join("], [")),
            };
            format!("{at}: option {option} is not supported: ignored in {jobs} (--ignore-unknown)")
        })
        .collect();
    if let Some(first) = jobs.iter().find_map(|j| j.opposite_units.as_ref()) {
        warnings.push(format!(
            "{first}: fio reads kib, mib, gib, tib and pib as powers of 1000 under its default kb_base=1024 \
             (4KiB is 4000 bytes), and so does iogauge: write 4k for 4096 bytes"
        ));
    }
    if !notes.is_empty() {
        warnings.push(format!(
            "{}: {}: fio's reporting options; iogauge times every I/O and reports every percentile whatever they say",
            file.display(),
            notes.join(", ")
        ));
    }
    warnings.extend(differences(&jobs));
    to_job(&jobs, file).map(|j| (j, warnings))
}

/// A setting's value as a message shows it: `unset` for none, without Rust's `Some("...")`.
fn shown<T: std::fmt::Debug>(v: &T) -> String {
    let text = format!("{v:?}");
    match text.strip_prefix("Some(").and_then(|t| t.strip_suffix(')')) {
        Some(inner) => inner.trim_matches('"').to_string(),
        None if text == "None" => "unset".into(),
        None => text,
    }
}

/// Where the job runs otherwise than under fio, each said once (docs/interop.md): fio's
/// libaio on buffered files, fio's random map with mixed sizes, fio's read-back of a verify job.
fn differences(jobs: &[FioJob]) -> Vec<String> {
    let first = |f: &dyn Fn(&FioJob) -> bool| jobs.iter().find(|j| f(j));
    let mut said = Vec::new();
    if let Some(j) = first(&|j| !j.direct && matches!(j.engine_name.as_str(), "libaio" | "posixaio") && j.iodepth > 1) {
        said.push(format!(
            "{}: [{}]: ioengine={} on buffered I/O (direct=0): fio's submission waits for each I/O there, so fio \
             keeps about one in flight; iogauge's io_uring keeps iodepth={}: expect more I/Os per second than fio's",
            j.at, j.name, j.engine_name, j.iodepth
        ));
    }
    let mixed = |j: &FioJob| j.sizes.iter().any(|s| s.len() > 1) || j.size_max.is_some();
    if let Some(j) = first(&|j| mixed(j) && j.random_map()) {
        said.push(format!(
            "{}: [{}]: several transfer sizes with fio's random map (norandommap=0): fio keeps one map of the \
             smallest size's blocks and cuts an I/O short where the blocks after its offset are done, so its sizes \
             drift from those asked; iogauge keeps a map of each size's places, taking each once per pass at the \
             sizes asked (with norandommap both draw alike)",
            j.sizes_at, j.name
        ));
    }
    if let Some(j) = jobs.iter().skip(1).find(|j| j.new_group && !(j.stonewall || j.waits)) {
        said.push(format!(
            "{}: [{}]: new_group starts a reporting group of fio's, not a wait: iogauge runs its jobs with the ones \
             before it, as fio does, and reports them in one workload (--detail workers: a row per worker)",
            j.at, j.name
        ));
    }
    // A stonewall and new_group start a reporting group of fio's; wait_for alone does not.
    let alone = |j: &FioJob| j.waits && !j.stonewall && !j.new_group;
    if let Some((j, (name, at))) = jobs.iter().filter(|j| alone(j)).find_map(|j| Some((j, j.wait_for.as_ref()?))) {
        said.push(format!(
            "{at}: [{}]: wait_for={name}: iogauge runs it after [{name}], as fio does, and reports it as a workload of \
             its own, where fio reports the two in one group",
            j.name
        ));
    }
    if let Some(j) = first(&|j| j.verify.is_some() && j.do_verify && j.read == 0).filter(|_| !reads_back(jobs)) {
        said.push(format!(
            "{}: [{}]: with do_verify=1 (fio's default) fio reads back and checks what the job wrote once it has \
             written it; iogauge runs that read-back for one group of jobs that only write, of one size, bounded \
             by a size: here it checks the reads the test does and keeps a map of what it wrote, which `iogauge \
             verify --target TARGET` reads back (do_verify=0 runs alike in both)",
            j.verify.as_deref().unwrap_or(&j.at),
            j.name
        ));
    }
    said
}

/// Each `wait_for=NAME` as the stonewall it is where NAME is the only job still running (the
/// group before the waiting job is NAME's copies alone); any other wait is refused, since
/// iogauge starts workers together or one group after another.
fn waits(jobs: &mut [FioJob]) -> Result<(), String> {
    let mut group_start = 0;
    for i in 0..jobs.len() {
        if let Some((name, at)) = jobs[i].wait_for.clone() {
            let running = &jobs[group_start..i];
            if !jobs[..i].iter().any(|j| j.name == name) {
                return Err(format!("{at}: wait_for={name}: no job named {name} before [{}]", jobs[i].name));
            }
            if !(running.iter().all(|j| j.name == name) || jobs[i].stonewall) {
                return Err(format!(
                    "{at}: wait_for={name}: other jobs run beside [{name}] when [{}] starts: iogauge starts a job with \
                     the ones before it or after all of them, give stonewall",
                    jobs[i].name
                ));
            }
            jobs[i].waits = true;
        }
        if jobs[i].stonewall || jobs[i].waits {
            group_start = i;
        }
    }
    Ok(())
}

/// The settings all jobs must share, since iogauge's are the test's.
fn same<T: PartialEq + std::fmt::Debug>(jobs: &[FioJob], what: &str, f: impl Fn(&FioJob) -> T) -> Result<T, String> {
    let first = f(&jobs[0]);
    if let Some(j) = jobs.iter().find(|j| f(j) != first) {
        return Err(format!(
            "{}: [{}] and [{}] differ in {what} ({} and {}): iogauge runs one {what} for all jobs",
            j.at,
            jobs[0].name,
            j.name,
            shown(&first),
            shown(&f(j))
        ));
    }
    Ok(first)
}

fn to_job(jobs: &[FioJob], file: &Path) -> Result<Job, String> {
    if let Some(j) = jobs.iter().find(|j| j.engine == Engine::Nbd && j.uri.is_none()) {
        return Err(format!(
            "{}: [{}]: ioengine=nbd needs uri=nbd://HOST[:PORT]/EXPORT (the export to reach)",
            j.at, j.name
        ));
    }
    // fio's libiscsi engine takes only iSCSI URLs, its colons escaped in filename=.
    let not_iscsi = |j: &&FioJob| j.filenames.is_empty() || j.filenames.iter().any(|f| !f.starts_with("iscsi://"));
    if let Some(j) = jobs.iter().filter(|j| j.engine == Engine::Libiscsi).find(not_iscsi) {
        return Err(format!(
            "{}: [{}]: ioengine=libiscsi needs filename=iscsi\\://HOST[\\:PORT]/IQN/LUN (each LUN to reach)",
            j.at, j.name
        ));
    }
    let mut job = Job::default();
    settings(jobs, file, &mut job.test)?;
    let groups = groups(jobs);
    job.workers = workers(&groups[0], 0)?;
    let (mut specs, run) = specifications(&groups, &job.workers)?;
    if reads_back(jobs) {
        // fio's verify phase: once written, every block read back in order and checked.
        let back = read_back(&run[0][0]);
        job.test.run = vec![run[0][0].name.clone(), back.name.clone()];
        specs.push(back);
    } else if groups.len() > 1 {
        job.test.run = run.iter().map(|g| g[0].name.clone()).collect();
    } else {
        // One group: each job its own specification (workers of one job share it).
        let mut i = 0;
        for (j, spec) in groups[0].iter().zip(&run[0]) {
            let n = if j.copies_apart() { j.numjobs as usize } else { 1 };
            for w in &mut job.workers[i..i + n] {
                w.spec = Some(spec.name.clone());
            }
            i += n;
        }
    }
    job.specs = specs;
    Ok(job)
}

/// Whether iogauge runs fio's verify phase after the jobs' writes (`verify` with fio's default
/// `do_verify=1`), as a workload of sequential reads of what was written, each checked: where
/// the jobs are one group of one specification that only writes, of one transfer size, and
/// end on their size or count (a time-based job's writes are not known beforehand).
fn reads_back(jobs: &[FioJob]) -> bool {
    let writes_only = |j: &FioJob| j.verify.is_some() && j.do_verify && j.read == 0 && j.trim == 0;
    // Each job's specification made once, and only for jobs that could be read back.
    let lines = |j: &FioJob| j.spec().ok().map(|s| s.lines);
    let alike = || {
        let first = lines(&jobs[0]);
        jobs.iter().all(|j| lines(j) == first)
    };
    let one_size = jobs[0].size_max.is_none() && jobs[0].sizes[1].len() == 1;
    groups(jobs).len() == 1 && jobs.iter().all(writes_only) && one_size && !jobs[0].time_based && alike()
}

/// The read-back of `spec`'s writes: sequential reads of its size, from the working set's
/// start, as fio's verify phase reads a job's blocks in order of offset.
fn read_back(spec: &AccessSpec) -> AccessSpec {
    AccessSpec {
        name: format!("{}-verify", spec.name),
        description: format!("fio's verify phase of {}: every block written read back and checked", spec.name),
        lines: vec![SpecLine::new(spec.lines[0].size, 100, 100, 0)],
        ..Default::default()
    }
}

/// The jobs in groups: a stonewall starts one; each group after the first must be the same
/// workers with one specification of its own (a workload).
fn groups(jobs: &[FioJob]) -> Vec<Vec<&FioJob>> {
    let mut groups: Vec<Vec<&FioJob>> = Vec::new();
    for j in jobs {
        match groups.last_mut() {
            Some(g) if !(j.stonewall || j.waits) => g.push(j),
            _ => groups.push(vec![j]),
        }
    }
    groups
}

/// The `[test]` settings every job must share: direct, verify, logs, ramp, engine, and how
/// the test ends.
fn settings(jobs: &[FioJob], file: &Path, test: &mut TestSettings) -> Result<(), String> {
    data(jobs, file, test)?;
    logs(jobs, test)?;
    // fio's 0 submits as many as the job's depth.
    test.submit_batch =
        same(jobs, "iodepth_batch_submit", |j| if j.submit_batch == 0 { j.iodepth } else { j.submit_batch })?;
    test.completion_batch = same(jobs, "iodepth_batch_complete_min", |j| j.completion_batch)?;
    test.nice = same(jobs, "nice", |j| j.nice)?;
    if same(jobs, "rate_process", |j| j.poisson)? {
        test.arrivals = crate::config::Arrivals::Poisson;
    }
    test.ramp = same(jobs, "ramp_time", |j| j.ramp)?;
    if let Some(seed) = same(jobs, "randseed", |j| j.seed)? {
        test.seed = seed;
    }
    if same(jobs, "continue_on_error", |j| j.continue_on_error)? {
        test.on_error = crate::config::OnError::Continue;
    }
    test.engine = match same(jobs, "ioengine kind", |j| j.engine == Engine::Sync)? {
        true => EngineKind::Psync,
        false => EngineKind::IoUring,
    };
    ending(jobs, file, test)?;
    if let Some(s) = jobs.iter().filter_map(|j| j.size.map(|s| s / j.targets(0).len() as u64)).max() {
        test.file_size = s;
    }
    Ok(())
}

/// The last copy's start (`offset + (numjobs - 1) x offset_increment`, rounded up) within
/// the largest file offset (2^63 bytes), where the offsets are computed: refused otherwise,
/// rather than wrapped round to the file's start.
fn reach(j: &FioJob) -> Result<(), String> {
    let last = u64::from(j.numjobs.max(1) - 1);
    let start = j.offset_increment.checked_mul(last).and_then(|o| o.checked_add(j.offset));
    match start.and_then(|s| s.checked_add(j.offset_align)).filter(|&s| s <= i64::MAX as u64) {
        Some(_) => Ok(()),
        None => Err(format!(
            "{}: offset={} and offset_increment={} start copy {last} beyond 2^63 bytes, the largest file offset: \
             give smaller ones",
            j.at, j.offset, j.offset_increment
        )),
    }
}

/// What the jobs write and whether it is checked: `direct`, `verify` (a job that writes, as
/// iogauge checks the reads of a test that wrote them), the written data.
fn data(jobs: &[FioJob], file: &Path, test: &mut TestSettings) -> Result<(), String> {
    test.buffered = !same(jobs, "direct", |j| j.direct)?;
    test.verify = same(jobs, "verify", |j| j.verify.is_some())?;
    if let (true, Some(j)) = (test.verify, jobs.iter().find(|j| j.read == 100 && j.trim == 0)) {
        if jobs.iter().all(|j| j.read == 100 && j.trim == 0) {
            return Err(format!(
                "{}: [{}] only reads: fio checks the blocks an earlier fio job wrote with verify headers, iogauge \
                 checks the reads of a test that writes them: give the job writes (rw=randrw, or a writing job \
                 before it), or check what an earlier iogauge test wrote with `iogauge verify --target TARGET`",
                j.verify.as_deref().unwrap_or(&j.at),
                j.name
            ));
        }
    }
    test.data = same(
        jobs,
        "written data (buffer_compress_percentage, dedupe_percentage, buffer_pattern, zero_buffers)",
        |j| j.data,
    )?;
    if test.data.dedupe_pct > 0 && test.data.all_alike() {
        return Err(format!(
            "{}: dedupe_percentage={} with every block alike already (buffer_compress_percentage=100, \
             zero_buffers or buffer_pattern): remove one of them",
            file.display(),
            test.data.dedupe_pct
        ));
    }
    Ok(())
}

/// fio's logs: `write_*_log` (the prefix's directory; its name with `per_job_logs=0`),
/// `log_avg_msec`, `log_offset`, and `write_iolog`.
fn logs(jobs: &[FioJob], test: &mut TestSettings) -> Result<(), String> {
    test.log_dir = same(jobs, "write_*_log", |j| j.log_dir.clone())?;
    test.log_avg_ms = same(jobs, "log_avg_msec", |j| j.log_avg_ms)?;
    if test.log_dir.is_some() {
        test.log_offsets = same(jobs, "log_offset", |j| j.log_offset)?;
        if !same(jobs, "per_job_logs", |j| j.per_job_logs)? {
            test.log_name = same(jobs, "write_*_log", |j| j.log_name.clone())?;
        }
    }
    test.iolog = same(jobs, "write_iolog", |j| j.write_iolog.clone())?;
    Ok(())
}

/// How the test ends: fio runs `runtime` with time_based; without it, each job does its size
/// (or io_size / number_ios) once, ending early at runtime.
fn ending(jobs: &[FioJob], file: &Path, test: &mut TestSettings) -> Result<(), String> {
    let time_based = same(jobs, "time_based", |j| j.time_based)?;
    let runtime = same(jobs, "runtime", |j| j.runtime)?;
    if time_based {
        test.time = runtime.ok_or_else(|| format!("{}: time_based without runtime: give runtime", file.display()))?;
        return Ok(());
    }
    // Each group (between stonewalls) is a workload of its own, ending on its own jobs'
    // count: the groups' counts must agree, since iogauge's is the test's.
    let groups = groups(jobs);
    let (ios, bytes) = group_count(&groups[0]);
    if let Some(g) = groups.iter().find(|g| group_count(g) != (ios, bytes)) {
        return Err(format!(
            "{}: the group [{}] starts does other I/O than the first group's (size, io_size or number_ios): \
             iogauge ends every workload on one count; give the groups the same",
            g[0].at, g[0].name
        ));
    }
    // A runtime without time_based caps a job that ends on its size.
    match (ios, bytes, runtime) {
        (Some(n), _, t) => (test.ios, test.max_time) = (Some(n), t),
        (None, Some(b), t) => (test.bytes, test.max_time) = (Some(b), t),
        (None, None, Some(t)) => test.time = t,
        (None, None, None) => {
            let j = groups[0].iter().find(|j| j.whole().is_none()).unwrap_or(&groups[0][0]);
            return Err(format!(
                "{}: [{}] has no size, io_size, number_ios or runtime, and {} is not an existing file or device \
                 whose size fio would take: give size=",
                file.display(),
                j.name,
                files(&j.targets(0))
            ));
        }
    }
    if !test.counted() && !test.ramp.is_zero() {
        return Err(format!("{}: ramp_time needs time_based", file.display()));
    }
    Ok(())
}

/// The I/Os (`number_ios`) or bytes (`io_size`, `size`) a group of jobs does: each copy of a
/// job its count, `loops` times over.
fn group_count(g: &[&FioJob]) -> (Option<u64>, Option<u64>) {
    let times = |j: &FioJob| j.numjobs as u64 * j.loops;
    let ios = g.iter().map(|j| j.number_ios.map(|n| n * times(j))).sum::<Option<u64>>();
    // fio's trimwrite trims the size and writes it again: twice its bytes (t/jobs/t0024: 256
    // trims and 256 writes of 4 KiB on 1 MiB).
    let bytes = g.iter().map(|j| match j.io_size {
        Some(b) => Some(b * times(j)),
        None => j.size_bytes().map(|b| b * j.loops * if j.write_trimmed { 2 } else { 1 }),
    });
    (ios, bytes.sum::<Option<u64>>())
}

/// The workers of one group of jobs, whose first thread is the file's `first_thread`: a job's
/// `numjobs` copies are one entry with a `count`, or one entry each when every copy has its
/// own file, its own offset (`offset_increment`) or its own CPU (`cpus_allowed_policy=split`).
fn workers(group: &[&FioJob], first_thread: u32) -> Result<Vec<WorkerConfig>, String> {
    let mut out = Vec::new();
    let mut thread = first_thread;
    for j in group {
        let targets = j.targets(0);
        let files = targets.len() as u32;
        let outstanding = if j.engine == Engine::Sync { 1 } else { j.iodepth };
        if outstanding % files != 0 {
            return Err(format!(
                "{}: iodepth={} over {files} files: iogauge keeps the same outstanding I/Os on each target; give \
                 an iodepth that is a multiple of the files",
                j.at, j.iodepth
            ));
        }
        reach(j)?;
        let base = WorkerConfig {
            outstanding: outstanding / files,
            working_set: j.size.map(|_| j.working_set(0)),
            offset: j.offset_of(0),
            rate_iops: j.rate.iops,
            rate_mbps: j.rate.mbps,
            cpus: j.cpus_of(thread),
            ..WorkerConfig::default()
        };
        if j.offset_increment > 0 && j.size.is_none() && j.io_size.is_none() && j.number_ios.is_none() && !j.time_based
        {
            return Err(format!(
                "{}: offset_increment without size: each copy would do the rest of the file from its own offset; give size=",
                j.at
            ));
        }
        if j.copies_apart() {
            for c in 0..j.numjobs {
                let name = Some(if j.numjobs > 1 { format!("{}.{c}", j.name) } else { j.name.clone() });
                let offset = j.offset_of(c);
                let cpus = j.cpus_of(thread + c);
                // A part of each file taken as a share ends at the file's end in each copy.
                let working_set = if j.size.is_some() { Some(j.working_set(c)) } else { base.working_set };
                out.push(WorkerConfig { name, targets: j.targets(c), offset, cpus, working_set, ..base.clone() });
            }
        } else {
            out.push(WorkerConfig { name: Some(j.name.clone()), count: j.numjobs, targets, ..base });
        }
        thread += j.numjobs;
    }
    Ok(out)
}

/// A job's files as fio's `filename=` lists them.
fn files(targets: &[TargetName]) -> String {
    targets.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(":")
}

/// What first differs between a group's workers and the first group's, in fio's words.
fn how_workers_differ(these: &[WorkerConfig], first: &[WorkerConfig]) -> String {
    let threads = |w: &[WorkerConfig]| w.iter().map(|x| x.count).sum::<u32>();
    if threads(these) != threads(first) {
        return format!("{} threads (numjobs) against {}", threads(these), threads(first));
    }
    let pairs = these.iter().flat_map(|w| std::iter::repeat_n(w, w.count as usize));
    let firsts = first.iter().flat_map(|w| std::iter::repeat_n(w, w.count as usize));
    for (a, b) in pairs.zip(firsts) {
        if a.targets != b.targets {
            return format!(
                "files {} against {}: without filename=, fio names each job's files after the job; give the jobs \
                 one filename=",
                files(&a.targets),
                files(&b.targets)
            );
        }
        if a.outstanding != b.outstanding {
            return format!("iodepth={} against {}", a.outstanding, b.outstanding);
        }
        if (a.working_set, a.offset) != (b.working_set, b.offset) {
            return "another size or offset".into();
        }
        if a.rate() != b.rate() {
            return "another rate".into();
        }
        if a.cpus != b.cpus {
            return "other CPUs".into();
        }
    }
    "another job layout".into()
}

/// Every group's specifications (a group after the first must be `first`'s workers with one
/// specification), and the distinct ones in order of first use.
fn specifications(
    groups: &[Vec<&FioJob>],
    first: &[WorkerConfig],
) -> Result<(Vec<AccessSpec>, Vec<Vec<AccessSpec>>), String> {
    let unnamed = |w: &[WorkerConfig]| w.iter().map(|x| WorkerConfig { name: None, ..x.clone() }).collect::<Vec<_>>();
    let mut specs: Vec<AccessSpec> = Vec::new();
    // The names taken, so that each job's specification is found at once: linear in the jobs.
    let mut named = std::collections::HashSet::new();
    let mut run = Vec::new();
    let mut first_thread = 0;
    for (k, g) in groups.iter().enumerate() {
        let these = unnamed(&workers(g, first_thread)?);
        if k > 0 && these != unnamed(first) {
            return Err(format!(
                "{}: [{}] starts a group (stonewall) with other workers than the first group's ({}): iogauge runs \
                 groups one after another only as the same workers with another rw/bs",
                g[0].at,
                g[0].name,
                how_workers_differ(&these, &unnamed(first))
            ));
        }
        let group_specs = g.iter().map(|j| j.spec()).collect::<Result<Vec<_>, _>>()?;
        for s in &group_specs {
            if named.insert(s.name.clone()) {
                specs.push(s.clone());
            }
        }
        if groups.len() > 1 && !group_specs.iter().all(|s| s.lines == group_specs[0].lines) {
            return Err(format!(
                "{}: the jobs of a group (between stonewalls) run different rw/bs: iogauge runs one specification per \
                 group",
                g[0].at
            ));
        }
        run.push(group_specs);
        first_thread += g.iter().map(|j| j.numjobs).sum::<u32>();
    }
    Ok((specs, run))
}
