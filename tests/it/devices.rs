//! Real block devices: iogauge's counts reconcile with the kernel's, and a closed loop obeys
//! Little's law (IOPS x mean response time = I/Os in flight).

use crate::common;

use common::*;

/// Runs a count-limited test on `dev` and checks the kernel saw exactly those I/Os.
/// `--allow-write` names the device so the safety probe (libblkid reads the device before
/// any write test) adds no I/O of its own.
fn reconcile(dev: &str, name: &str, spec: &str, qd: &str, ios: u64, extra: &[&str]) {
    let before = kernel_ios(name);
    let mut args = vec!["run", "--target", dev, "--allow-write", dev, "--spec", spec, "--qd", qd, "--ios"];
    let n = ios.to_string();
    args.push(&n);
    args.extend(extra);
    let doc = json(&args);
    let after = kernel_ios(name);
    let t = &doc["results"][0]["totals"];
    let (reads, writes) = (num(t, "read_ios") as u64, num(t, "write_ios") as u64);
    assert_eq!(reads + writes, ios);
    assert_eq!(num(t, "errors"), 0.0);
    // Merged requests count once in "completed": add them back.
    assert_eq!((after.0 - before.0) + (after.1 - before.1), reads, "reads on {dev}");
    assert_eq!((after.2 - before.2) + (after.3 - before.3), writes, "writes on {dev}");
}

/// Little's law (`common::assert_littles_law_over_kernel`) on closed loops of random 4 KiB
/// reads on `dev` (block device `name`): per case, (outstanding I/Os, workers, I/Os).
/// `--allow-write` names the device so that no safety probe adds reads of its own.
fn assert_littles_law_on(dev: &str, name: &str, cases: &[(u32, u32, u64)]) {
    for &(qd, workers, ios) in cases {
        let (q, w, n) = (qd.to_string(), workers.to_string(), ios.to_string());
        let args = ["run", "--target", dev, "--allow-write", dev, "--spec", "random-read-4k", "--qd", &q];
        let busy = kernel_busy_ms(name);
        let doc = json(&[&args[..], &["--workers", &w, "--ios", &n, "--no-history"]].concat());
        assert_eq!(num(&doc["results"][0]["totals"], "ios") as u64, ios);
        assert_littles_law_over_kernel(&doc, name, busy, qd);
    }
}

#[test]
fn loop_device_counts_match_the_kernel() {
    let l = LoopDev::new(256 << 20);
    reconcile(&l.dev, l.name(), "random-read-4k", "8", 20_000, &[]);
    reconcile(&l.dev, l.name(), "oltp-8k", "8", 20_000, &[]);
    reconcile(&l.dev, l.name(), "random-read-4k", "8", 5_000, &["--engine", "psync"]);
}

#[test]
fn zram_counts_match_the_kernel() {
    let _z = zram();
    reconcile(ZRAM, "zram0", "random-read-4k", "8", 200_000, &[]);
    reconcile(ZRAM, "zram0", "database-mix-8k", "8", 200_000, &["--workers", "2"]);
}

#[test]
fn littles_law_holds_on_a_loop_device() {
    let l = LoopDev::new(256 << 20);
    assert_littles_law_on(&l.dev, l.name(), &[(4, 1, 40_000), (16, 2, 80_000)]);
}

#[test]
fn littles_law_holds_on_zram() {
    let _z = zram();
    assert_littles_law_on(ZRAM, "zram0", &[(1, 1, 50_000), (32, 1, 100_000), (16, 2, 100_000)]);
}

/// The threads of a running iogauge (pid) whose name starts with `prefix`, with the CPUs
/// each may run on (its `Cpus_allowed_list`).
fn threads_of(pid: u32, prefix: &str) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{}/task", test_process(pid)))
        .unwrap()
        .filter_map(|t| {
            let dir = t.unwrap().path();
            std::fs::read_to_string(dir.join("comm")).ok().filter(|c| c.starts_with(prefix))?;
            let status = std::fs::read_to_string(dir.join("status")).ok()?;
            let cpus = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
            Some(cpus.trim().to_string())
        })
        .collect()
}

/// Runs iogauge with `args` (plus `--json -`) and, half way through a 2 s test after a 1 s
/// ramp, looks at the kernel's io-wq threads serving it (`iou-wrk-*`) and at the worker's
/// thread. Returns (the io-wq threads' CPU lists, the worker's, document).
fn io_wq_threads_during(args: &[&str]) -> (Vec<String>, String, serde_json::Value) {
    let mut a = args.to_vec();
    a.extend(["--ramp", "1s", "--time", "2s", "--json", "-"]);
    let mut child = command_in(&scratch("cwd"), &a).stdout(std::process::Stdio::piped()).spawn().unwrap();
    wait_for_workers(&mut child);
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let (io_wq, worker) = (threads_of(child.id(), "iou-wrk-"), threads_of(child.id(), "iogauge-w0"));
    let out = output_of(child);
    assert!(out.status.success(), "iogauge {args:?} failed");
    (io_wq, worker.concat(), serde_json::from_slice(&out.stdout).unwrap())
}

/// A worker is one thread's worth of work (issue 45): zram cannot take non-blocking I/O, so
/// its I/Os go to the kernel's io-wq threads, and a worker gets one at a time, as fio's jobs
/// do (sent straight to io-wq, 32 outstanding I/Os had io-wq start a thread for nearly every
/// one; an earlier iogauge held them to one per CPU of the host: 16 for one worker on 16
/// cores). `--io-wq-threads` spreads a worker wider, said in the document; `--cpus` keeps its
/// io-wq threads on its CPUs. A loop device takes non-blocking I/O: issued on the worker's own
/// thread. From 8 outstanding on, the I/Os of a round reach io-wq in one call, as the
/// document says.
#[test]
fn a_worker_on_zram_gets_one_io_wq_thread_at_a_time() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    let run = ["run", "--target", ZRAM, "--spec", "random-read-4k", "--qd", "32"];
    {
        let _z = zram();
        let (threads, worker, doc) = io_wq_threads_during(&run);
        let engine = doc["results"][0]["workers"][0]["engine"].as_str().unwrap();
        assert!(engine.contains("io-wq: one thread at a time"), "{engine}");
        // Sent to io-wq after a failed try, the I/Os of a round go to the kernel together from
        // 8 outstanding on (io_uring.rs, SUBMIT_AT_WAIT_FROM), each at once below.
        assert!(engine.contains("I/Os of a round handed to the kernel together, before its wait"), "{engine}");
        let few = json(&["run", "--target", ZRAM, "--spec", "random-read-4k", "--qd", "4", "--ios", "20000"]);
        let few = few["results"][0]["workers"][0]["engine"].as_str().unwrap();
        assert!(few.contains("io-wq: one thread at a time") && !few.contains("handed to the kernel"), "{few}");
        // Another thread only while one sleeps (zram's locks, a page fault): a few at most.
        assert!((1..=3).contains(&threads.len()), "io-wq threads of one worker at 32 outstanding: {threads:?}");
        assert_eq!(worker, format!("0-{}", cpus - 1));
        assert_eq!(num(&doc["results"][0]["totals"], "errors"), 0.0);
        assert!(doc["config"]["test"].get("io_wq_threads").is_none(), "{}", doc["config"]["test"]);

        let mut pinned = run.to_vec();
        pinned.extend(["--cpus", "0"]);
        let (threads, worker, _) = io_wq_threads_during(&pinned);
        assert_eq!(worker, "0");
        assert!(!threads.is_empty() && threads.iter().all(|t| t == "0"), "io-wq threads' CPUs: {threads:?}");

        let mut wider = run.to_vec();
        wider.extend(["--io-wq-threads", "2"]);
        let (threads, _, doc) = io_wq_threads_during(&wider);
        let engine = doc["results"][0]["workers"][0]["engine"].as_str().unwrap();
        assert!(engine.contains("io-wq: up to 2 threads at once"), "{engine}");
        assert!((1..=2).contains(&threads.len()), "{threads:?}");
        assert_eq!(doc["config"]["test"]["io_wq_threads"], 2, "the wider spread is recorded");
    }
    let l = LoopDev::new(64 << 20);
    let doc = json(&["run", "--target", &l.dev, "--spec", "random-read-4k", "--qd", "32", "--time", "1s"]);
    let engine = doc["results"][0]["workers"][0]["engine"].as_str().unwrap();
    assert!(!engine.contains("io-wq"), "{engine}");
}

/// Each worker's CPU time is a group of its own (cpu_groups.rs): two workers on zram, threads
/// of one group, kept another session's processes off both CPUs for seconds. During a run of
/// two workers each worker's thread has a CPU cgroup of its own, the io-wq threads it started
/// are in its group, the test's other threads are not, and each group weighs as a thread of
/// the test's `nice`; after it, the groups are gone, and the document says they were made.
/// Groups left by a process that was killed are removed by the next test; another running
/// process's are not touched.
/// Where there is no such hierarchy (cgroup v2 alone), the document says the workers had none.
#[test]
fn each_worker_runs_in_a_cpu_cgroup_of_its_own() {
    let Some(hierarchy) = cgroup_mount("cgroup", Some("cpu")) else {
        let doc = json(&["run", "--target", "null", "--workers", "2", "--time", "200ms", "--ramp", "0s"]);
        assert_eq!(doc["host"]["worker_cgroups"], false, "no cgroup v1 CPU hierarchy here");
        eprintln!("no cgroup v1 CPU hierarchy: the workers' own groups were not tried");
        return;
    };
    let cgroup_of = |task: &std::path::Path| {
        let text = std::fs::read_to_string(task.join("cgroup")).ok()?;
        text.lines()
            .find_map(|l| l.split_once(":cpu:").or_else(|| l.split_once(":cpu,cpuacct:")).map(|x| x.1.to_string()))
    };
    let home = cgroup_of(std::path::Path::new("/proc/self")).unwrap();
    let home = hierarchy.join(home.trim_start_matches('/'));
    // A killed test's groups (a process that is gone), and those of one that runs (this one).
    let gone = std::process::Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    let _ = { gone }.wait();
    let (left, running) =
        (home.join(format!("iogauge-{gone_pid}-0-w0")), home.join(format!("iogauge-{}-7-w0", std::process::id())));
    for g in [&left, &running] {
        std::fs::create_dir_all(g).unwrap();
    }
    {
        let _z = zram();
        let args =
            ["run", "--target", ZRAM, "--workers", "2", "--qd", "32", "--nice", "5", "--ramp", "1s", "--time", "2s"];
        let mut a = args.to_vec();
        a.extend(["--json", "-"]);
        let mut child = command_in(&scratch("cwd"), &a).stdout(std::process::Stdio::piped()).spawn().unwrap();
        wait_for_workers(&mut child);
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let test = test_process(child.id());
        let mut threads: Vec<(u32, String, String)> = std::fs::read_dir(format!("/proc/{test}/task"))
            .unwrap()
            .filter_map(|t| {
                let dir = t.ok()?.path();
                let comm = std::fs::read_to_string(dir.join("comm")).ok()?.trim().to_string();
                Some((dir.file_name()?.to_str()?.parse().ok()?, comm, cgroup_of(&dir)?))
            })
            .collect();
        threads.sort();
        let group_of = |name: &str| threads.iter().find(|t| t.1 == name).map(|t| t.2.clone()).unwrap();
        let (w0, w1) = (group_of("iogauge-w0"), group_of("iogauge-w1"));
        // Directly below the process's own group (this test's): one holding both would weigh
        // them as one. The test's own thread, which keeps its clock, has one too.
        let made = w0.strip_suffix("-w0").unwrap_or_else(|| panic!("{w0}")).to_string();
        assert_eq!(hierarchy.join(made.trim_start_matches('/')).parent(), Some(home.as_path()), "{w0}");
        assert!(made.rsplit('/').next().unwrap().starts_with(&format!("iogauge-{test}-")), "{w0}");
        assert_eq!(w1, format!("{made}-w1"));
        assert_eq!(group_of("iogauge"), format!("{made}-main"), "the test's own thread");
        let shares: Vec<String> = [&w0, &w1]
            .iter()
            .map(|g| std::fs::read_to_string(hierarchy.join(g.trim_start_matches('/')).join("cpu.shares")).unwrap())
            .collect();
        // A thread of nice 5 weighs 335 (the kernel's sched_prio_to_weight), one of nice 0 1024.
        assert_eq!(shares, ["335\n", "335\n"], "each group weighs as the test's nice");
        let out = output_of(child);
        assert!(out.status.success(), "iogauge {args:?} failed");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["host"]["worker_cgroups"], true, "{}", doc["host"]);
        for (tid, comm, group) in &threads {
            match comm.strip_prefix("iou-wrk-") {
                // Named for the thread that started it: its worker.
                Some(owner) => {
                    let worker = threads.iter().find(|t| t.0.to_string() == owner).unwrap();
                    assert_eq!(group, &worker.2, "io-wq thread {tid} of {}", worker.1);
                }
                None if comm.starts_with("iogauge-w") => {}
                // Threads the test's own thread started after it moved, or none.
                None => assert!(!group.starts_with(&format!("{made}-w")), "{comm} ({tid}) in {group}"),
            }
        }
        assert!(threads.iter().any(|t| t.1.starts_with("iou-wrk-")), "zram's I/Os go to io-wq: {threads:?}");
        for w in [&w0, &w1, &format!("{made}-main")] {
            let dir = hierarchy.join(w.trim_start_matches('/'));
            assert!(!dir.exists(), "{} left after the run", dir.display());
        }
    }
    assert!(!left.exists(), "a killed test's groups are removed by the next test");
    assert!(running.exists(), "a running process's groups are its own");
    std::fs::remove_dir(&running).unwrap();
}

/// A worker of one outstanding I/O on zram does it on its own thread (engine/mod.rs): through
/// io-wq, each I/O would wake a thread to copy memory and then wake the worker. No io-wq
/// thread runs, the worker's `engine` says so, and its reads and writes all reach the kernel's
/// counters (Little's law with the one in flight: `littles_law_holds_on_zram`). Two
/// outstanding I/Os, or io-wq asked for by name, go through io-wq.
#[test]
fn one_outstanding_io_on_zram_is_done_on_the_workers_thread() {
    let _z = zram();
    let (threads, _, doc) = io_wq_threads_during(&["run", "--target", ZRAM, "--spec", "random-read-4k", "--qd", "1"]);
    let engine = doc["results"][0]["workers"][0]["engine"].as_str().unwrap();
    assert!(engine.starts_with("psync: one outstanding I/O on zram"), "{engine}");
    assert!(threads.is_empty(), "io-wq threads: {threads:?}");
    reconcile(ZRAM, "zram0", "database-mix-8k", "1", 50_000, &[]);
    for extra in [&["--qd", "2"][..], &["--qd", "1", "--io-wq-threads", "1"]] {
        let args = ["run", "--target", ZRAM, "--spec", "random-read-4k", "--ios", "5000"];
        let doc = json(&[&args[..], extra].concat());
        let engine = doc["results"][0]["workers"][0]["engine"].as_str().unwrap();
        assert!(engine.starts_with("io_uring") && engine.contains("io-wq"), "{extra:?}: {engine}");
    }
}

/// A block device's `device` in the document is the kernel's own count over the recorded
/// window, as iostat reads it: read here from /sys/block before and after counted runs (no
/// other I/O on the device), its I/Os are exactly the run's, merged ones included, and its
/// mean time per I/O is the kernel's (the same sums over the same I/Os). That time lies within
/// each response time, so the measured mean is at least it. The requests it held at once on
/// average (iostat's aqu-sz) are the same sums over the window, which lies between the run's
/// recorded time and the command's: never more than the outstanding I/Os. A file's entry has
/// none, nor has a worker's.
#[test]
fn the_document_holds_the_block_layers_own_count() {
    let l = LoopDev::new(64 << 20);
    for (spec, qd) in [("random-read-4k", "16"), ("oltp-8k", "4"), ("streaming-read-64k", "8")] {
        let (ios, busy) = (kernel_ios(l.name()), kernel_busy_ms(l.name()));
        let args = ["run", "--target", &l.dev, "--allow-write", &l.dev, "--spec", spec, "--qd", qd];
        let started = std::time::Instant::now();
        let doc = json(&[&args[..], &["--ios", "20000", "--no-history"]].concat());
        let command_ms = started.elapsed().as_secs_f64() * 1e3;
        let (ios_after, busy_after) = (kernel_ios(l.name()), kernel_busy_ms(l.name()));
        let t = &doc["results"][0]["targets"][0];
        let requests = (ios_after.0 - ios.0) + (ios_after.2 - ios.2);
        let merged = (ios_after.1 - ios.1) + (ios_after.3 - ios.3);
        assert_eq!(num(t, "device/ios"), (requests + merged) as f64, "{spec}: the kernel's I/Os");
        assert_eq!(num(t, "device/ios"), 20_000.0, "{spec}: the run's I/Os");
        let kernel_ms = (busy_after - busy) as f64 / requests as f64;
        assert!((num(t, "device/avg_ms") - kernel_ms).abs() < 1e-9, "{spec}: {} against {kernel_ms}", t["device"]);
        assert!(num(t, "avg_response_ms") >= num(t, "device/avg_ms"), "{spec}: {t}");
        let (held, ticks_ms) = (num(t, "device/avg_in_flight"), (busy_after - busy) as f64);
        let recorded_ms = num(&doc["results"][0], "duration_s") * 1e3;
        assert!(held <= ticks_ms / recorded_ms + 1e-9 && held >= ticks_ms / command_ms, "{spec}: {held} held: {t}");
        // At most `qd` in flight at any instant; the kernel shows each of its two sums (reads,
        // writes) in whole ms, so their difference over the run may exceed it by under 2 ms.
        assert!(held <= qd.parse::<f64>().unwrap() + 2.0 / recorded_ms, "{spec}: {held} held of {qd}");
        assert!(doc["results"][0]["workers"][0]["targets"][0].get("device").is_none());
    }
    let file = scratch("device-count").join("f");
    let doc = json(&["run", "--target", file.to_str().unwrap(), "--file-size", "16M", "--ios", "1000", "--no-history"]);
    assert!(doc["results"][0]["targets"][0].get("device").is_none(), "{}", doc["results"][0]["targets"][0]);
}

/// A device that sleeps (here a FUSE file whose every read takes 20 ms, served in parallel)
/// must have every outstanding I/O at the device, not one queued behind one io-wq thread: its
/// response time is the device's 20 ms and IOPS reach outstanding / 20 ms. So too when the
/// worker's io-wq is held to 2 threads: the watch finds both asleep inside an I/O and lifts it.
#[test]
fn a_device_that_sleeps_has_every_outstanding_io_at_the_device() {
    let fs = FaultFs::new(&["--delay", "20"]);
    let disk = fs.disk();
    for spread in [None, Some("2")] {
        let mut args = vec!["run", "--target", &disk, "--spec", "random-read-4k", "--qd", "16"];
        args.extend(spread.iter().flat_map(|n| ["--io-wq-threads", n]));
        let (threads, _, doc) = io_wq_threads_during(&args);
        let engine = doc["results"][0]["workers"][0]["engine"].as_str().unwrap();
        if spread.is_some() {
            assert!(engine.contains("io-wq: up to 16 threads, one per outstanding I/O"), "{engine}");
        }
        assert!(threads.len() >= 12, "{} io-wq threads for 16 outstanding I/Os on a sleeping device", threads.len());
        let t = &doc["results"][0]["totals"];
        let (iops, ms) = (num(t, "iops"), num(t, "avg_response_ms"));
        assert!(ms < 30.0, "mean response {ms} ms on a 20 ms device: I/Os waited for an io-wq thread");
        assert!(iops > 0.6 * 16.0 / 0.020, "{iops} IOPS at 16 outstanding on a 20 ms device");
    }
}

/// Each I/O's response time is its own (issue 45). A worker that waited for a quarter of its
/// 32 I/Os issued them 8 at a time and reaped them 8 at a time, one clock read for each: the
/// I/Os of such a batch share one response time, so histogram buckets' counts came out
/// multiples of 8 (all of them on one loop device, 40 % on another where 1 in 8 is chance). By
/// default a wait ends at the first completion: batches are whatever completed together, of
/// no fixed size. A batched wait stays an option, and the document says what it costs.
#[test]
fn each_io_is_stamped_when_the_worker_sees_it() {
    let l = LoopDev::new(64 << 20);
    let run = |extra: &[&str]| {
        let args = ["run", "--target", &l.dev, "--spec", "random-read-4k", "--qd", "32", "--ios", "100000"];
        json(&[&args[..], &["--no-history"], extra].concat())
    };
    let doc = run(&[]);
    let buckets = doc["results"][0]["totals"]["raw"]["read"]["histogram"]["buckets"].as_array().unwrap().clone();
    let counts: Vec<u64> = buckets.iter().map(|b| b[1].as_u64().unwrap()).collect();
    let n = counts.len() as f64;
    assert!(n >= 50.0, "response times over {n} buckets only");
    // Counts of I/Os timed one by one are multiples of 8 by chance, 1 in 8 (fewer where a
    // count is below 8): binomial over the buckets, bounded at one false failure in a million.
    let eighths = counts.iter().filter(|&&c| c % 8 == 0).count() as f64 / n;
    let bound = 1.0 / 8.0 + share_bound(1.0 / 8.0, n);
    assert!(eighths <= bound, "{eighths:.2} of {n} buckets hold a multiple of 8 I/Os (at most {bound:.2} by chance)");
    let warned = |doc: &serde_json::Value| {
        doc["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("completion_batch"))
    };
    assert!(!warned(&doc), "{}", doc["warnings"]);
    let doc = run(&["--completion-batch", "8"]);
    assert_eq!(doc["config"]["test"]["completion_batch"], 8);
    assert!(warned(&doc), "a batched wait is said: {}", doc["warnings"]);
    // What is said is what a wait could gather: never more completions than the worker has
    // in flight, and none in an open loop, whose waits end at the first completion.
    let on_null = |extra: &[&str]| {
        let doc = json(&[&["run", "--target", "null", "--ios", "20000", "--no-history"][..], extra].concat());
        let said = doc["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string());
        said.filter(|w| w.contains("completion_batch")).collect::<Vec<_>>()
    };
    let said = on_null(&["--qd", "8", "--completion-batch", "64"]);
    assert!(said.len() == 1 && said[0].contains("up to 8 completions"), "{said:?}");
    assert_eq!(on_null(&["--qd", "1", "--completion-batch", "8"]), Vec::<String>::new());
    assert_eq!(on_null(&["--qd", "8", "--completion-batch", "8", "--rate-iops", "100000"]), Vec::<String>::new());
}

/// Each I/O goes to the kernel as soon as it is drawn, as fio's by default (issue 45): every
/// system call that hands the kernel I/Os hands it one, and each I/O is handed over once.
/// Batched submission stays an option, never more than it asks for per call. (Before, every
/// I/O ready went in one call, and a loop device at 32 outstanding did 0.85x the IOPS.)
#[test]
fn each_io_goes_to_the_kernel_as_soon_as_it_is_drawn() {
    let l = LoopDev::new(64 << 20);
    let dir = scratch("submit-batch");
    let ios = 20_000;
    let submitted = |extra: &[&str]| -> Vec<u64> {
        let trace = dir.join("enter.trace");
        let n = ios.to_string();
        let args = ["run", "--target", &l.dev, "--spec", "random-read-4k", "--qd", "32", "--ios", &n, "--no-history"];
        let out = std::process::Command::new("strace")
            .args(["-f", "-qq", "-e", "trace=io_uring_enter", "-o", trace.to_str().unwrap(), common::bin()])
            .args(args)
            .args(extra)
            .args(["-q"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // `PID io_uring_enter(FD, TO_SUBMIT, MIN_COMPLETE, FLAGS, ...) = N`: I/Os handed over.
        let text = std::fs::read_to_string(&trace).unwrap();
        text.lines()
            .filter_map(|line| line.split("io_uring_enter(").nth(1))
            .map(|call| call.split(", ").nth(1).and_then(|n| n.parse().ok()).expect("to_submit"))
            .collect()
    };
    let each = submitted(&[]);
    // Beside the test's I/Os, the ring's probe of the device's discard command.
    let total: u64 = each.iter().sum();
    assert_eq!(total, ios + 1, "I/Os handed to the kernel for {ios} and the probe");
    assert_eq!(each.iter().max(), Some(&1), "more than one I/O in one call by default");
    let batched = submitted(&["--submit-batch", "8"]);
    let total: u64 = batched.iter().sum();
    assert_eq!(total, ios + 1, "I/Os handed to the kernel for {ios} and the probe, in batches");
    // The first 32 drawn go in 4 calls of 8.
    assert_eq!(batched.iter().max(), Some(&8), "--submit-batch 8 handed over at most {:?}", batched.iter().max());
}

#[test]
fn files_are_created_full_and_reused() {
    let dir = scratch("file");
    ok_in(&dir, &["run", "--file-size", "8M", "--ios", "1000", "--spec", "oltp-4k", "-q"]);
    let f = dir.join("iogauge.tst");
    let meta = std::fs::metadata(&f).unwrap();
    assert_eq!(meta.len(), 8 << 20);
    // Written in full: no holes (allocated blocks cover the size).
    use std::os::unix::fs::MetadataExt;
    assert!(meta.blocks() * 512 >= 8 << 20, "{} blocks", meta.blocks());
    // Reused, not recreated, and still writable by iogauge (it carries iogauge's mark).
    ok_in(&dir, &["run", "--file-size", "16M", "--ios", "1000", "--spec", "oltp-4k", "-q"]);
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 8 << 20);
}

/// The target file's access time, in seconds.
fn atime(f: &std::path::Path) -> i64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(f).unwrap().atime()
}

/// Sets the file's access time two days back: under relatime (this machine's root mount)
/// the next read that may update it does.
fn age_atime(f: &std::path::Path) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86_400);
    let file = std::fs::File::options().write(true).open(f).unwrap();
    file.set_times(std::fs::FileTimes::new().set_accessed(old)).unwrap();
}

/// Reading a target must not write to it behind the user's back, as an access-time update
/// does (and costs CPU per I/O): targets are opened O_NOATIME, as fio does. Only the file's
/// owner (or CAP_FOWNER) may ask for that; anyone else still runs, and the kernel updates
/// the access time as for any reader.
#[test]
fn reads_leave_the_access_time_alone() {
    let dir = scratch("atime");
    ok_in(&dir, &["run", "--file-size", "8M", "--ios", "10", "-q"]);
    let f = dir.join("iogauge.tst");
    let read = ["run", "--spec", "random-read-4k", "--ios", "1000", "-q"];
    for direct in [true, false] {
        age_atime(&f);
        let before = atime(&f);
        let args: Vec<&str> = read.iter().copied().chain((!direct).then_some("--buffered")).collect();
        ok_in(&dir, &args);
        assert_eq!(atime(&f), before, "{args:?} updated the target's access time");
    }
    // Not the owner, and without CAP_FOWNER: O_NOATIME is refused (EPERM), the run goes on.
    std::os::unix::fs::chown(&f, Some(65534), Some(65534)).unwrap();
    age_atime(&f);
    let before = atime(&f);
    let out = std::process::Command::new("setpriv")
        .args(["--bounding-set=-fowner", "--inh-caps=-fowner", bin()])
        .args(read)
        .current_dir(&dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .output()
        .unwrap();
    assert!(out.status.success(), "without CAP_FOWNER: {}", String::from_utf8_lossy(&out.stderr));
    assert!(atime(&f) > before, "the reads ran: the kernel updates the access time");
}

#[test]
fn io_errors_are_counted_and_exit_1() {
    // A real fault: the file target shrinks under the run, so reads past its new end come back
    // short (0 bytes), once the run has recorded I/Os.
    let dir = scratch("shrink");
    ok_in(&dir, &["run", "--file-size", "64M", "--ios", "10", "-q"]);
    let run = ["run", "--spec", "random-read-4k", "--qd", "4", "--ramp", "0s", "--time", "4s", "--json", "-"];
    let child = spawn_recording(&dir, &run);
    std::fs::OpenOptions::new().write(true).open(dir.join("iogauge.tst")).unwrap().set_len(1 << 20).unwrap();
    let out = output_of(child);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &doc["results"][0]["totals"];
    assert!(num(t, "errors") > 0.0 && num(t, "read_errors") == num(t, "errors"));
    assert_eq!(t["error_kinds"][0]["text"], "short transfer");
    assert!(num(t, "ios") > 0.0, "I/Os before the fault still count");
}

/// Right after iogauge exits, its targets are free: the filesystem of a file target unmounts
/// at once (the kernel tears a closed io_uring ring down in the background, holding its
/// registered files for 100-200 ms, unless they are unregistered first).
#[test]
fn targets_are_free_when_iogauge_exits() {
    let dev = LoopDev::new(128 << 20);
    let mnt = scratch("free-at-exit");
    let sh = |c: &str| std::process::Command::new("sh").args(["-c", c]).output().unwrap();
    assert!(sh(&format!("mkfs.ext4 -q -F {}", dev.dev)).status.success());
    let target = mnt.join("t.dat");
    for i in 0..5 {
        assert!(sh(&format!("mount {} {}", dev.dev, mnt.display())).status.success());
        let t = target.to_str().unwrap();
        let out = iogauge(&[
            "run",
            "--target",
            t,
            "--file-size",
            "8M",
            "--spec",
            "oltp-4k",
            "--ios",
            "2000",
            "-q",
            "--no-history",
        ]);
        let umount = sh(&format!("umount {}", mnt.display()));
        if !umount.status.success() {
            std::thread::sleep(std::time::Duration::from_millis(500));
            sh(&format!("umount {}", mnt.display()));
        }
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(umount.status.success(), "run {i}: busy right after exit: {}", String::from_utf8_lossy(&umount.stderr));
    }
}
