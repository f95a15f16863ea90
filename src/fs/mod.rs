//! File-system tests: seed 002's IOzone experiment. At each thread count every thread writes
//! files of its own in one directory, then each test (rewrite, read, reread...) runs on them
//! with all threads at once; the files are removed before the next thread count. Each
//! (thread count, test) is a point of a study document, so history, compare, report and the
//! CSV read it as any study.
//!
//! Unlike a test of workers, the page cache is part of what is measured (buffered I/O unless
//! `direct`), and so are fsync and close when asked (IOzone's `-e`, `-c`).

mod phase;
mod thread;

use std::path::{Path, PathBuf};

use crate::config::{FsConfig, FsTest, Job};
use crate::error::{Error, Result, input, runtime};
use crate::host::{self, DeviceModel, HostInfo};
use crate::managers::Solo;
use crate::result::ManagerInfo;
use crate::result::{self, ResultDoc};
use crate::run::Observer;
use crate::study::Point;
use crate::study::doc::StudyDoc;
use crate::study::run::StudyObserver;
use crate::study::runner::Runner;
use crate::units::human_size;
use thread::Work;

/// The prefix of every file a file-system test makes: `iogauge-fs.THREAD.FILE`.
const PREFIX: &str = "iogauge-fs.";

fn file_path(dir: &Path, thread: usize, file: u32) -> PathBuf {
    dir.join(format!("{PREFIX}{}.{file}", thread + 1))
}

/// The directory's file system, host and what to say beside the numbers, learned before any
/// file is made.
struct Checked {
    /// The configuration with its default total filled in.
    c: FsConfig,
    filesystem: String,
    host: HostInfo,
    warnings: Vec<String>,
}

/// Bytes free for us in `dir` (statvfs), and whether the mount is read-only.
fn statvfs(dir: &Path) -> std::io::Result<(u64, bool)> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())?;
    // SAFETY: statvfs is plain data (all zeroes is valid); the call only writes into it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: NUL-terminated path, a struct we own.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((st.f_bavail as u64 * st.f_frsize as u64, st.f_flag & libc::ST_RDONLY != 0))
}

/// iogauge's files already in `dir` (a kept earlier test) and their bytes; a file of ours by
/// name that iogauge did not make is refused.
fn ours_in(dir: &Path) -> Result<u64> {
    let mut bytes = 0;
    let list = std::fs::read_dir(dir).map_err(|e| input(format!("cannot list {}: {e}", dir.display())))?;
    for e in list.flatten() {
        if !e.file_name().to_string_lossy().starts_with(PREFIX) {
            continue;
        }
        let path = e.path();
        if !crate::targets::has_created_mark(&path.to_string_lossy()) {
            return Err(input(format!(
                "{} exists and iogauge did not make it: move it away or give another --dir",
                path.display()
            )));
        }
        bytes += e.metadata().map_or(0, |m| m.len());
    }
    Ok(bytes)
}

/// Everything that can refuse the test before a file is made: one line each, nothing written.
fn check(c: &FsConfig) -> Result<Checked> {
    let dir = Path::new(&c.dir);
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(input(format!("--dir {}: no such directory: make it, or give another", c.dir)));
        }
        Err(e) => return Err(input(format!("--dir {}: {e}", c.dir))),
        Ok(m) if !m.is_dir() => {
            return Err(input(format!("--dir {} is not a directory: give the directory to make the files in", c.dir)));
        }
        Ok(_) => {}
    }
    let (free, read_only) = statvfs(dir).map_err(|e| input(format!("--dir {}: {e}", c.dir)))?;
    if read_only {
        return Err(input(format!(
            "{} is on a read-only mount: give a directory on a file system iogauge may write",
            c.dir
        )));
    }
    let host = host::current(Vec::new());
    let kept = ours_in(dir)?;
    let c = &with_default_total(c, host.memory_bytes, free + kept);
    c.check()?;
    let path = std::ffi::CString::new(c.dir.as_str()).map_err(|_| input("--dir holds a NUL byte"))?;
    // SAFETY: a NUL-terminated path; access only reads it.
    if unsafe { libc::access(path.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(input(format!("cannot make files in {}: {e}: give a directory you may write", c.dir)));
    }
    // SAFETY: geteuid has no preconditions.
    if c.drop_caches && unsafe { libc::geteuid() } != 0 {
        return Err(input(
            "--drop-caches needs root (it writes /proc/sys/vm/drop_caches): run as root or leave it out",
        ));
    }
    let most = c.threads.iter().copied().max().unwrap_or(1);
    if host::threads_left().is_some_and(|left| left < u64::from(most) + 8) {
        return Err(input(format!("{most} threads are more than this system lets iogauge start: give fewer")));
    }
    let mut need = 0;
    for &n in &c.threads {
        let each = c.file_size(n)?;
        need = need.max(u64::from(n) * u64::from(c.files_per_thread) * each);
    }
    if need > free + kept {
        return Err(input(format!(
            "the files need {} and {} has {} free: give a smaller --total or --size",
            human_size(need),
            c.dir,
            human_size(free + kept)
        )));
    }
    if c.direct {
        if let Err(e) = crate::targets::probe_dir(dir, libc::O_DIRECT) {
            return Err(input(format!("{} does not take O_DIRECT ({e}): leave out --direct", c.dir)));
        }
    }
    let filesystem = crate::targets::filesystem_of(dir);
    let host = HostInfo { devices: vec![DeviceModel { target: c.dir.clone(), model: filesystem.clone() }], ..host };
    let mut warnings = Vec::new();
    if let Some(fs) = crate::targets::memory_filesystem(dir) {
        warnings.push(format!("{} is on {fs}: the files are in memory, not on a storage device", c.dir));
    }
    let reads = c.tests.iter().any(|t| !t.writes());
    if !c.direct && reads && need <= host.memory_bytes {
        warnings.push(format!(
            "the files ({}) fit in this host's memory ({}) and reads are buffered: they may come from the page cache, not the device; give --total above the memory (seed 002's 8 GB were), --direct or --drop-caches",
            human_size(need),
            human_size(host.memory_bytes)
        ));
    }
    Ok(Checked { c: c.clone(), filesystem, host, warnings })
}

/// `c` with `total` filled in when neither it nor `size` is given: twice the host's memory
/// (files the page cache cannot hold, as seed 002's 8 GB were), capped by 90 % of `free`.
fn with_default_total(c: &FsConfig, memory: u64, free: u64) -> FsConfig {
    match (c.size, c.total) {
        (None, None) => FsConfig { total: Some((2 * memory).min(free / 10 * 9)), ..c.clone() },
        _ => c.clone(),
    }
}

/// Writes back dirty pages and empties the page cache, so the next test reads the device.
fn drop_caches() -> Result<()> {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| runtime(format!("dropping the page cache: {e}")))
}

/// Removes the files of `works`: the write test made (or emptied) every one of them, after
/// [`check`] refused any of their names that iogauge had not made.
fn remove(works: &[Work]) {
    for p in works.iter().flat_map(|w| &w.files) {
        let _ = std::fs::remove_file(p);
    }
}

/// Runs the file-system study of `job` (its `[fs]` section, repeated as its `[study]` says).
/// The document is handed to `observer` after every point; a test that fails (a full file
/// system) ends the study with the points so far, its own included, and says why.
pub fn run_study(job: &Job, observer: &mut dyn StudyObserver) -> Result<StudyDoc> {
    crate::config::check_fs_job(job)?;
    let written = job.fs.as_ref().ok_or_else(|| input("the job has no [fs] section"))?;
    let checked = check(written)?;
    let c = &checked.c;
    // The document records the configuration with its default total filled in.
    let job = &Job { fs: Some(c.clone()), ..job.clone() };
    let recorded = c.phases().iter().filter(|(_, recorded)| *recorded).count();
    let solo = Solo::new();
    let mut runner = Runner::begin(job, Some(c.threads.len() * recorded), observer, &solo);
    checked.warnings.iter().for_each(|w| runner.warn(w.clone()));
    let mut run = FsRun { job, c, checked: &checked, runner };
    for &n in &c.threads {
        for r in 0..run.runner.doc().study.repeat {
            let mut works = run.works(n, r)?;
            let ended = run.tests(n, r, &mut works);
            if !c.keep {
                remove(&works);
            }
            match ended {
                Ok(true) => {}
                // A test failed: its point says how; the rest cannot run.
                Ok(false) => return Ok(run.runner.finish(false)),
                Err(Error::Stopped) => return Ok(run.runner.finish(true)),
                Err(e) => return Err(e),
            }
        }
    }
    Ok(run.runner.finish(false))
}

/// A file-system study under way.
struct FsRun<'a> {
    job: &'a Job,
    c: &'a FsConfig,
    checked: &'a Checked,
    /// The study document, built as any study's.
    runner: Runner<'a>,
}

impl FsRun<'_> {
    /// Each thread's files at `n` threads (repeat `r` seeds its data and random order).
    fn works(&self, n: u32, r: u32) -> Result<Vec<Work>> {
        let file_bytes = self.c.file_size(n)?;
        Ok((0..n as usize)
            .map(|i| Work {
                test: FsTest::Write,
                files: (0..self.c.files_per_thread).map(|f| file_path(Path::new(&self.c.dir), i, f)).collect(),
                file_bytes,
                record: self.c.record,
                stride: u64::from(self.c.stride),
                direct: self.c.direct,
                fsync: self.c.fsync,
                close: self.c.close,
                seed: (u64::from(n) << 40) ^ (u64::from(r) << 20) ^ i as u64,
            })
            .collect())
    }

    /// Runs every test at `n` threads, repeat `r`. False when one failed.
    fn tests(&mut self, n: u32, r: u32, works: &mut [Work]) -> Result<bool> {
        let repeat = self.runner.doc().study.repeat;
        for (test, recorded) in self.c.phases() {
            if self.runner.stop_requested() {
                return Err(Error::Stopped);
            }
            if self.c.drop_caches {
                drop_caches()?;
            }
            works.iter_mut().for_each(|w| w.test = test);
            let point = Point { threads: Some(n), test: Some(test.name().into()), ..Point::default() };
            let mut label = format!("threads={n} {}", test.name());
            if !recorded {
                label += " (making the files)";
            }
            if repeat > 1 {
                label += &format!(" run {}/{}", r + 1, repeat);
            }
            let mut observer =
                self.runner.point_observer(&point, if recorded { r } else { 0 }, label, None).stopping_at_once();
            let ran = phase::run(works, &self.c.dir, self.job.test.interval, &mut observer);
            let setting = phase::Setting {
                works,
                filesystem: self.checked.filesystem.clone(),
                caches_dropped: self.c.drop_caches,
                host_memory_bytes: self.checked.host.memory_bytes,
                host: self.checked.host.name.clone(),
            };
            let result = ran.result(&setting);
            observer.run_done(&result);
            // Asked during the test: it stopped at once, and its result is cut short.
            let stopped = observer.stop_requested();
            let failed = result.first_error.clone();
            if !recorded {
                if let Some(e) = failed {
                    return Err(runtime(format!("threads={n}: writing the files: {e}")));
                }
                if stopped {
                    return Err(Error::Stopped);
                }
                continue;
            }
            let mut run_doc = self.result_doc(n, test, result);
            run_doc.interrupted = stopped;
            self.runner.add_run(&point, r, run_doc, &[])?;
            if let Some(e) = failed {
                self.runner.warn(format!(
                    "threads={n} {}: {e}; the tests after it did not run{}",
                    test.name(),
                    if e.errno == libc::ENOSPC { " (the file system is full)" } else { "" }
                ));
                self.runner.tell()?;
                return Ok(false);
            }
            if stopped {
                return Err(Error::Stopped);
            }
        }
        Ok(true)
    }

    /// The result document of one test: a run of its own, as `iogauge run` would write it.
    fn result_doc(&self, n: u32, test: FsTest, w: result::WorkloadResult) -> ResultDoc {
        let mut config = self.job.clone();
        config.study = None;
        config.fs = Some(FsConfig { threads: vec![n], tests: vec![test], ..self.c.clone() });
        ResultDoc {
            schema: result::SCHEMA.into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            started_at: w.started_at.clone(),
            duration_s: w.duration_s,
            host: self.checked.host.clone(),
            config,
            target_info: Vec::new(),
            results: vec![w],
            warnings: self.checked.warnings.clone(),
            interrupted: false,
            failed: None,
            managers: vec![ManagerInfo {
                rank: 0,
                host: self.checked.host.clone(),
                target_info: Vec::new(),
                workers: n as usize,
            }],
            read_from: None,
        }
    }
}
