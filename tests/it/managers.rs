//! Many managers: real Open MPI jobs (`mpirun`) of 2 and 4 ranks on this machine, each rank on
//! its own targets. Built only with `--features mpi` (scripts/test does).

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;
use iogauge::result::{Metrics, ResultDoc};
use iogauge::stats::IoStats;

/// `mpirun -np N iogauge ARGS` in `dir`, as root, more ranks than cores allowed.
fn mpirun(dir: &Path, ranks: usize, args: &[&str]) -> Command {
    let mut c = common::mpirun();
    c.args(["--allow-run-as-root", "--oversubscribe", "-np", &ranks.to_string(), bin()])
        .args(args)
        .current_dir(dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .stdin(Stdio::null());
    c
}

fn output(mut c: Command) -> Output {
    c.output().expect("run mpirun")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn read_doc(path: &Path) -> ResultDoc {
    serde_json::from_slice(&std::fs::read(path).expect("the JSON document")).expect("a result document")
}

/// Four ranks, each on its own kind of target: the null target, a file, a loop device, and a
/// file again. A count-limited test records every I/O, so the counts are exact.
#[test]
fn four_ranks_add_up_to_one_document() {
    let dir = scratch("mpi4");
    let dev = LoopDev::new(64 << 20);
    let job = format!(
        r#"
[test]
ios = 40000
run = ["random-read-4k"]
file_size = "16M"

[[worker]]
ranks = [0]
outstanding = 8
targets = ["null"]

[[worker]]
ranks = [1, 3]
outstanding = 4
targets = ["{dir}/file{{rank}}.tst"]

[[worker]]
ranks = [2]
outstanding = 4
targets = ["{dev}"]
"#,
        dir = dir.display(),
        dev = dev.dev
    );
    std::fs::write(dir.join("job.toml"), job).unwrap();
    let before = kernel_ios(dev.name());
    let out = output(mpirun(&dir, 4, &["run", "job.toml", "--json", "out.json", "--iometer-csv", "out.csv", "-q"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let after = kernel_ios(dev.name());
    validate_result(&dir.join("out.json")).unwrap();
    let doc = read_doc(&dir.join("out.json"));
    let r = &doc.results[0];

    // One document, every manager in it, each with its own workers and targets.
    let ranks: Vec<u32> = r.managers.iter().map(|m| m.rank).collect();
    assert_eq!(ranks, [0, 1, 2, 3]);
    assert_eq!(doc.managers.len(), 4);
    assert_eq!(r.workers.len(), 4);
    let paths: Vec<(u32, &str)> = r.targets.iter().map(|t| (t.manager, t.path.as_str())).collect();
    let file = |rank| format!("{}/file{rank}.tst", dir.display());
    assert_eq!(paths, [(0, "null"), (1, file(1).as_str()), (2, dev.dev.as_str()), (3, file(3).as_str())]);

    // The count is shared among every manager's workers, and every I/O is counted once.
    assert_eq!(r.totals.metrics.ios, 40000);
    for m in &r.managers {
        assert_eq!(m.totals.metrics.ios, 10000, "manager {}", m.rank);
    }
    let sum: u64 = r.managers.iter().map(|m| m.totals.metrics.read_bytes).sum();
    assert_eq!(r.totals.metrics.read_bytes, sum);
    // The kernel saw the loop device's manager's reads (4 KiB random reads do not merge).
    assert_eq!(after.0 + after.1 - before.0 - before.1, 10000, "kernel reads on {}", dev.dev);

    // Percentiles are those of one histogram holding every I/O of every manager, not a mix
    // of the managers' percentiles.
    let mut all = IoStats::default();
    for m in &r.managers {
        all += &m.totals.metrics.raw;
    }
    assert_eq!(all.all().histogram.total(), 40000);
    let merged = Metrics::new(&all, r.duration_s);
    assert_eq!(r.totals.metrics.percentiles_ms, merged.percentiles_ms);
    assert_eq!(r.totals.metrics.max_response_ms, merged.max_response_ms);
    let null_p50 = r.managers[0].totals.metrics.percentiles_ms["p50"];
    let dev_p50 = r.managers[2].totals.metrics.percentiles_ms["p50"];
    assert!(null_p50 < dev_p50, "the null target answers faster than a loop device");

    // Iometer's CSV: ALL, then each manager with its CPUs, workers and disks.
    let csv = std::fs::read_to_string(dir.join("out.csv")).unwrap();
    let kinds: Vec<(&str, &str)> = csv
        .lines()
        .filter(|l| !l.starts_with('\''))
        .filter_map(|l| {
            let mut f = l.split(',');
            Some((f.next()?, f.next()?))
        })
        .filter(|(k, _)| ["ALL", "MANAGER", "WORKER", "DISK"].contains(k))
        .collect();
    assert_eq!(kinds.iter().filter(|(k, _)| *k == "MANAGER").count(), 4);
    assert_eq!(kinds[0], ("ALL", "All"));
    let disks: Vec<&str> = kinds.iter().filter(|(k, _)| *k == "DISK").map(|(_, n)| *n).collect();
    assert_eq!(disks, ["null", file(1).as_str(), dev.dev.as_str(), file(3).as_str()]);
    let processors = csv.lines().filter(|l| l.starts_with("PROCESSOR,")).count();
    let cpus: usize = r.managers.iter().map(|m| m.totals.cpu.per_cpu.len()).sum();
    assert_eq!(processors, cpus);
    assert!(cpus >= 4, "each manager lists its CPUs");

    // The report lists every manager's machine and targets.
    ok_in(&dir, &["report", "out.json", "-o", "r.html"]);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    for rank in 0..4 {
        assert!(html.contains(&format!("manager {rank}: host")), "manager {rank} missing from the report");
    }
    assert!(html.contains(&format!("manager 2: target {}", dev.dev)));

    // One history entry, written by rank 0.
    let list = ok_in(&dir, &["history", "--json", "--db", dir.join("data/iogauge/history.sqlite").to_str().unwrap()]);
    let entries: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(entries.as_array().map(Vec::len), Some(1), "{entries}");
}

/// Two ranks record over the same window: the starts differ by the reported skew, and every
/// manager records the whole time. The workers are paced (8000 IOPS over both, an open loop) as on a real
/// device, where they wait for I/O: a null worker unpaced keeps a CPU busy, and two of them
/// beside the suite's other test on this 2-CPU machine delay a rank's main thread by a
/// scheduler slice (up to 37 ms seen), which the skew would then measure instead of iogauge.
#[test]
fn two_ranks_record_over_the_same_window() {
    let dir = scratch("mpi2");
    let job = r#"
        [test]
        ramp = "1s"
        time = "2s"
        interval = "500ms"
        rate_iops = 8000
        [[worker]]
        targets = ["null"]
        spec = "random-read-4k"
        outstanding = 8
    "#;
    std::fs::write(dir.join("paced.toml"), job).unwrap();
    let mut c = mpirun(&dir, 2, &["run", "paced.toml"]);
    c.args(["--json", "out.json", "--no-history"]);
    let out = output(c);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_doc(&dir.join("out.json"));
    let r = &doc.results[0];
    assert_eq!(r.managers.len(), 2);
    let starts: Vec<u64> = r.managers.iter().map(|m| m.record_start_unix_ns).collect();
    let ends: Vec<u64> = r.managers.iter().map(|m| m.record_end_unix_ns).collect();
    let skew_ns = starts.iter().max().unwrap() - starts.iter().min().unwrap();
    assert!((r.start_skew_ms - skew_ns as f64 / 1e6).abs() < 1e-6);
    for (s, e) in starts.iter().zip(&ends) {
        let recorded = (e - s) as f64 / 1e9;
        assert!((recorded - 2.0).abs() < 0.05, "each manager records 2 s, not {recorded}");
    }
    let overlap = (ends.iter().min().unwrap() - starts.iter().max().unwrap()) as f64 / 1e9;
    assert!(overlap >= 2.0 - r.start_skew_ms / 1e3 - 0.05, "windows overlap {overlap} s");
    // On one host the ranks share the clock and record from the instant they agreed on: the
    // same nanosecond, unless a rank was held off its CPU for the whole ramp-up (1 s) between
    // the meeting and its start: four times the longest wait for a CPU measured beside the
    // suite's load (243 ms, docs/performance.md). A barrier at the ramp-up's end, before, left
    // the ranks 20.9 ms apart once.
    assert_eq!(r.start_skew_ms, 0.0, "both ranks record from the agreed instant");
    // The time series adds both managers up: its I/Os are the recorded ones.
    let from_series: f64 = r.intervals.iter().map(|i| i.iops * i.duration_s).sum();
    let ios = r.totals.metrics.ios as f64;
    assert!((from_series - ios).abs() / ios < 0.05, "series {from_series} vs totals {ios}");
    assert_eq!(r.intervals.len(), 4);
    // Each interval's histogram is both managers' I/Os of it, merged: 4,000 of them, where one
    // manager's part is 2,000. Not exactly the interval's count: a rank's monitor reads its
    // workers' histograms, then their counts, a few microseconds apart, and an I/O completing
    // in between is timed in one interval and counted in the next (4000 against 4001, three
    // tests at a time). At 4 I/Os per ms per rank, more than 200 apart needs a monitor
    // descheduled for 50 ms inside those microseconds at one of the interval's marks (a tick
    // falls there about once in 1,000 marks, and a wait of 50 ms with two CPU burners beside
    // the suite far less often than once in 1,000: under one run in a million). A rank whose
    // monitor reads late has a longer interval than the other's: the merged one's length is
    // theirs weighted by rate, so rate x length still counts both (when it kept rank 0's, a
    // loaded pass found 412 I/Os missing).
    for iv in &r.intervals[..3] {
        let h = iv.histogram.as_ref().expect("an interval keeps its histogram");
        assert!(
            (h.total() as f64 - iv.iops * iv.duration_s).abs() <= 200.5,
            "{} vs {}",
            h.total(),
            iv.iops * iv.duration_s
        );
        assert!(iv.percentiles_ms.contains_key("p99"));
    }
    // The test's cap is over all managers' workers: each rank takes half, 4,000 arrivals a
    // second, due evenly over the window. The null target completes an I/O as it is issued,
    // and one issued late is timed from when it was due and counted: an arrival goes uncounted
    // only when its worker did not run from its due time to the window's end. It was waiting
    // for a CPU (the kernel's run delay, workers[].waited_for_cpu_ms, counted to when the
    // worker stopped issuing, a wait across the end included) or its CPU was the hypervisor's
    // (at most the host's steal time over all its CPUs). So a rank counts at most 4,000 x the
    // window, one more at its edge, and at least 4,000 x (the window - that held time), one
    // less at each edge. A loaded pass counted a rank's share short by more than a fixed 3 %
    // (issue 82); a worker held past the end, its arrivals never issued, has no long response
    // to say so, and the kernel counts a wait only once it ends: read at the end, the wait
    // across it was left out.
    let window = r.duration_s;
    let steal_s = r.totals.cpu.all.steal_pct / 100.0 * window * r.totals.cpu.per_cpu.len() as f64;
    let ranks: Vec<String> = r
        .workers
        .iter()
        .map(|w| format!("rank {}: {} I/Os, {:?} ms waiting for a CPU", w.manager, w.metrics.ios, w.waited_for_cpu_ms))
        .collect();
    for w in &r.workers {
        let held_s = w.waited_for_cpu_ms.expect("the kernel counts each thread's run delay") / 1e3 + steal_s;
        let ios = w.metrics.ios as f64;
        let (lo, hi) = (4000.0 * (window - held_s) - 2.0, 4000.0 * window + 1.0);
        assert!(
            lo <= ios && ios <= hi,
            "rank {}: {ios} I/Os, not in [{lo}, {hi}] (held off its CPU {held_s:.3} s of {window} s); {ranks:?}",
            w.manager
        );
    }
}

/// A rank whose target is missing stops every rank before any I/O, and rank 0 says which.
#[test]
fn a_missing_target_on_one_rank_stops_them_all() {
    let dir = scratch("mpimissing");
    for r in 0..3 {
        std::fs::create_dir(dir.join(format!("d{r}"))).unwrap();
    }
    let target = format!("{}/d{{rank}}/f.tst", dir.display());
    let t0 = Instant::now();
    let out = output(mpirun(&dir, 4, &["run", "--target", &target, "--file-size", "8M", "--time", "2s", "-q"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(t0.elapsed() < Duration::from_secs(30));
    let err = stderr(&out);
    let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("iogauge:")).collect();
    assert_eq!(ours.len(), 1, "one line from rank 0: {err}");
    assert!(ours[0].contains("manager 3 (") && ours[0].contains("d3"), "{}", ours[0]);
    // Nothing was created on the other ranks' targets.
    for r in 0..3 {
        assert!(!dir.join(format!("d{r}/f.tst")).exists(), "rank {r} created its file");
    }
}

/// The output file was opened before the run (so a bad path fails at once) and left empty:
/// nothing reports the partial run as complete.
fn assert_no_document(path: &Path) {
    let bytes = std::fs::read(path).unwrap_or_default();
    assert!(bytes.is_empty(), "a partial run was written as a result: {}", String::from_utf8_lossy(&bytes));
    let dir = path.parent().unwrap();
    let db = dir.join("data/iogauge/history.sqlite");
    let list = ok_in(dir, &["history", "--json", "--db", db.to_str().unwrap()]);
    assert_eq!(String::from_utf8_lossy(&list.stdout).trim(), "[]", "nothing saved in the history");
}

/// The pid of rank `rank` among mpirun's children.
fn rank_pid(mpirun: u32, rank: u32) -> Option<u32> {
    let children = std::fs::read_to_string(format!("/proc/{mpirun}/task/{mpirun}/children")).ok()?;
    children.split_whitespace().filter_map(|p| p.parse().ok()).find(|p: &u32| {
        let env = std::fs::read(format!("/proc/{p}/environ")).unwrap_or_default();
        env.split(|&b| b == 0).any(|v| v == format!("OMPI_COMM_WORLD_RANK={rank}").as_bytes())
    })
}

/// Starts a 30 s run on 2 ranks, waits until both run their workers, and does `act` to rank 1;
/// returns the output and how long the run went on after `act`. (Rank 1 running is not enough:
/// on a loaded host rank 0 may still be starting, and a rank 1 stopped before rank 0's
/// `MPI_Init` holds it there, where no watchdog is yet.)
fn disturb_rank_1(tag: &str, extra: &[&str], act: impl Fn(u32)) -> (Output, Duration, std::path::PathBuf) {
    let dir = scratch(tag);
    let mut c = mpirun(&dir, 2, &["run", "--target", "null", "--ramp", "0s", "--time", "30s", "--json", "out.json"]);
    c.args(extra).stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let pid = loop {
        let ranks: Option<Vec<u32>> = (0..2).map(|r| rank_pid(child.id(), r)).collect();
        if let Some(r) = ranks.filter(|r| r.iter().all(|&p| !worker_stats(p).is_empty())) {
            break r[1];
        }
        assert!(Instant::now() < deadline, "the ranks did not start their workers");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_secs(2));
    act(pid);
    let t0 = Instant::now();
    let out = output_of(child);
    (out, t0.elapsed(), dir)
}

/// A rank killed mid-run stops the whole run within seconds; the launcher names it; no result
/// is written as if the run were complete.
#[test]
fn a_killed_rank_stops_the_run() {
    let (out, after, dir) = disturb_rank_1("mpikill", &[], |pid| {
        // SAFETY: kill(2) on a process this test started.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    });
    assert!(!out.status.success());
    assert!(after < Duration::from_secs(15), "the run went on {after:?} after the kill");
    assert!(stderr(&out).contains("rank 1") && stderr(&out).contains("signal 9"), "{}", stderr(&out));
    assert_no_document(&dir.join("out.json"));
}

/// A rank that stops answering (SIGSTOP) is caught by the others' watchdog at the next
/// meeting point: the run ends within the sync timeout, naming the step.
#[test]
fn a_hung_rank_stops_the_run_in_bounded_time() {
    let (out, after, dir) = disturb_rank_1("mpihang", &["--sync-timeout", "3s"], |pid| {
        // SAFETY: kill(2) on a process this test started.
        unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
    });
    assert!(!out.status.success());
    assert!(after < Duration::from_secs(20), "the run went on {after:?} after the hang");
    assert!(stderr(&out).contains("no answer from the other managers within 3s"), "{}", stderr(&out));
    assert_no_document(&dir.join("out.json"));
}

/// A rank that never starts (here it stops itself before it runs iogauge) holds the others in
/// MPI's start-up, where every rank waits for all: they give up after the sync timeout too,
/// naming the step, and the launcher stops the job.
#[test]
fn a_rank_that_never_starts_stops_the_run_in_bounded_time() {
    let dir = scratch("mpinostart");
    let stop_rank_1 = format!("[ \"$OMPI_COMM_WORLD_RANK\" = 1 ] && kill -STOP $$; exec {} \"$@\"", bin());
    let mut c = common::mpirun();
    c.args(["--allow-run-as-root", "--oversubscribe", "-np", "2", "sh", "-c", &stop_rank_1, "sh"])
        .args(["run", "--target", "null", "--time", "2s", "--sync-timeout", "3s", "--json", "out.json"])
        .current_dir(&dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let t0 = Instant::now();
    let out = output_of(c.spawn().unwrap());
    assert!(!out.status.success());
    assert!(t0.elapsed() < Duration::from_secs(30), "the run took {:?} with a rank that never started", t0.elapsed());
    assert!(stderr(&out).contains("within 3s at start-up"), "{}", stderr(&out));
    assert!(!dir.join("out.json").exists());
}

/// Seed 000's host scaling as a study: the first 1, then 2 managers run workers.
#[test]
fn a_study_cycles_the_number_of_managers() {
    let dir = scratch("mpistudy");
    std::fs::write(
        dir.join("hosts.toml"),
        "[test]\nramp = \"0s\"\ntime = \"1s\"\nrun = [\"random-read-4k\"]\n\
         [[worker]]\noutstanding = 4\ntargets = [\"null\"]\n\
         [study]\nmanagers = { start = 1, end = 2, step = 1 }\n",
    )
    .unwrap();
    let out = output(mpirun(&dir, 2, &["study", "hosts.toml", "--json", "study.json", "-q"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("study.json")).unwrap()).unwrap();
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (i, p) in points.iter().enumerate() {
        assert_eq!(p["params"]["managers"], i + 1);
        let managers = p["runs"][0]["results"][0]["managers"].as_array().unwrap();
        assert_eq!(managers.len(), i + 1, "point {}: managers that ran workers", i + 1);
    }
    assert!(num(&doc, "points/1/summary/0/scaling") > 0.0);
    // The report draws the host scaling.
    ok_in(&dir, &["report", "study.json", "-o", "r.html"]);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    for title in ["IOPS by number of hosts (managers)", "Scaling factor by number of hosts (managers)"] {
        assert!(html.contains(title), "no chart {title:?}");
    }
    // Asking for more managers than ranks is refused before any I/O.
    let out = output(mpirun(&dir, 1, &["study", "hosts.toml", "-q"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("managers = 2, but 1 manager(s) are running"), "{}", stderr(&out));
}

/// Two test hosts on this machine: network namespaces on a bridge, each with its own host
/// name, reached by Open MPI's launcher through an agent that enters the namespace instead of
/// ssh. Ranks talk over TCP, as across real hosts. Removed on drop.
struct NetnsHosts {
    tag: String,
    agent: std::path::PathBuf,
    subnet: String,
}

impl NetnsHosts {
    const HOSTS: [&'static str; 2] = ["node1", "node2"];

    fn new() -> NetnsHosts {
        let tag = format!("iog{}", std::process::id() % 10_000_000);
        let subnet = format!("10.77.{}", std::process::id() % 250);
        let hosts = NetnsHosts { agent: scratch("netns").join("agent"), tag, subnet };
        let sh = |cmd: String| {
            let out = Command::new("sh").arg("-c").arg(&cmd).output().unwrap();
            assert!(out.status.success(), "{cmd}: {}", String::from_utf8_lossy(&out.stderr));
        };
        let (t, s) = (&hosts.tag, &hosts.subnet);
        sh(format!("ip link add {t}br type bridge && ip addr add {s}.1/24 dev {t}br && ip link set {t}br up"));
        for (i, h) in Self::HOSTS.iter().enumerate() {
            let i = i + 1;
            sh(format!(
                "ip netns add {t}-{h} && ip link add {t}v{i} type veth peer name eth0 netns {t}-{h} && \
                 ip link set {t}v{i} master {t}br up && ip -n {t}-{h} addr add {s}.1{i}/24 dev eth0 && \
                 ip -n {t}-{h} link set eth0 up && ip -n {t}-{h} link set lo up"
            ));
        }
        // Open MPI calls the agent as `AGENT HOST COMMAND...`.
        std::fs::write(
            &hosts.agent,
            format!(
                "#!/bin/sh\nhost=$1; shift\nexec ip netns exec \"{t}-$host\" unshare --uts sh -c 'hostname \"$0\"; exec sh -c \"$*\"' \"$host\" \"$@\"\n"
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hosts.agent, std::fs::Permissions::from_mode(0o755)).unwrap();
        hosts
    }

    /// mpirun with one rank on each test host.
    fn mpirun(&self, dir: &Path, args: &[&str]) -> Command {
        let net = format!("{}.0/24", self.subnet);
        let mut c = common::mpirun();
        c.args(["--allow-run-as-root", "-np", "2", "--host", &Self::HOSTS.join(",")])
            .args(["--mca", "plm_rsh_agent", self.agent.to_str().unwrap(), "--mca", "plm_rsh_no_tree_spawn", "1"])
            .args([
                "--mca",
                "oob_tcp_if_include",
                &net,
                "--mca",
                "btl_tcp_if_include",
                &net,
                "--mca",
                "btl",
                "self,tcp",
            ])
            .arg(bin())
            .args(args)
            .current_dir(dir)
            .env("XDG_DATA_HOME", dir.join("data"))
            .stdin(Stdio::null());
        c
    }
}

impl Drop for NetnsHosts {
    fn drop(&mut self) {
        for h in Self::HOSTS {
            let _ = Command::new("ip").args(["netns", "del", &format!("{}-{h}", self.tag)]).status();
        }
        let _ = Command::new("ip").args(["link", "del", &format!("{}br", self.tag)]).status();
    }
}

/// The multi-host path for real: two hosts (network namespaces, own host names, TCP between
/// them), workers placed by host-name pattern, targets named by `{host}`.
#[test]
fn two_hosts_over_the_network() {
    let hosts = NetnsHosts::new();
    let dir = scratch("netnsrun");
    let job = format!(
        "[test]\nramp = \"1s\"\ntime = \"2s\"\nrun = [\"random-read-4k\"]\nfile_size = \"8M\"\n\
         [[worker]]\nhosts = [\"node1\"]\noutstanding = 4\ntargets = [\"null\"]\n\
         [[worker]]\nhosts = [\"node?\"]\ntargets = [\"{}/{{host}}.tst\"]\n",
        dir.display()
    );
    std::fs::write(dir.join("job.toml"), job).unwrap();
    let job = dir.join("job.toml");
    let out = output(
        hosts.mpirun(&dir, &["run", job.to_str().unwrap(), "--json", "out.json", "--iometer-csv", "out.csv", "-q"]),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_doc(&dir.join("out.json"));
    let r = &doc.results[0];
    let managers: Vec<(u32, &str, usize)> = r.managers.iter().map(|m| (m.rank, m.host.as_str(), m.workers)).collect();
    assert_eq!(managers, [(0, "node1", 2), (1, "node2", 1)]);
    let hosts_seen: Vec<&str> = doc.managers.iter().map(|m| m.host.name.as_str()).collect();
    assert_eq!(hosts_seen, ["node1", "node2"]);
    let file = |h: &str| format!("{}/{h}.tst", dir.display());
    let targets: Vec<(u32, String)> = r.targets.iter().map(|t| (t.manager, t.path.clone())).collect();
    assert_eq!(targets, [(0, "null".into()), (0, file("node1")), (1, file("node2"))]);
    let ios: u64 = r.managers.iter().map(|m| m.totals.metrics.ios).sum();
    assert_eq!(r.totals.metrics.ios, ios);
    eprintln!("start skew between 2 hosts over TCP: {:.3} ms", r.start_skew_ms);
    let csv = std::fs::read_to_string(dir.join("out.csv")).unwrap();
    let names: Vec<&str> =
        csv.lines().filter(|l| l.starts_with("MANAGER,")).map(|l| l.split(',').nth(1).unwrap()).collect();
    assert_eq!(names, ["node1", "node2"]);

    // A target missing on one host: every host stops, rank 0 names the other host.
    let out = output(hosts.mpirun(&dir, &["run", "--target", "/nonexistent-{host}/f", "-q"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("manager 1 (node2): target /nonexistent-node2/f"), "{}", stderr(&out));

    // The lead cannot write its --json: every host stops before any creates its test file.
    let new = format!("{}/new-{{host}}.tst", dir.display());
    let out = output(hosts.mpirun(&dir, &["run", "--target", &new, "--json", "/nonexistent/out.json", "-q"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("manager 0 (node1): cannot write /nonexistent/out.json"), "{}", stderr(&out));
    for h in ["node1", "node2"] {
        assert!(!dir.join(format!("new-{h}.tst")).exists(), "{h} created its test file");
    }
}

/// A rank whose I/O fails mid-run stops every rank at the next interval (the default
/// `on_error = "stop"`): the run ends in seconds, and the document names the manager and where.
#[test]
fn an_io_error_on_one_rank_stops_every_rank() {
    let fs = FaultFs::new(&["--eio", &format!("{}-{}", 1 << 20, 2 << 20)]);
    let dir = scratch("mpieio");
    let job = format!(
        "[test]\nramp = \"0s\"\ntime = \"30s\"\nrun = [\"random-read-4k\"]\n\
         [[worker]]\nranks = [0]\ntargets = [\"null\"]\n[[worker]]\nranks = [1]\ntargets = [\"{}\"]\n",
        fs.disk()
    );
    std::fs::write(dir.join("job.toml"), job).unwrap();
    let t0 = Instant::now();
    let out = output(mpirun(&dir, 2, &["run", "job.toml", "--json", "out.json", "-q"]));
    assert!(t0.elapsed() < Duration::from_secs(10), "took {:?}", t0.elapsed());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = read_doc(&dir.join("out.json"));
    let r = &doc.results[0];
    let f = r.first_error.as_ref().expect("the first failed I/O");
    assert_eq!((f.manager, f.errno, f.path.as_str()), (1, 5, fs.disk().as_str()));
    assert!(r.duration_s < 5.0, "both managers stopped: {} s recorded", r.duration_s);
    assert!(r.managers.iter().all(|m| m.totals.metrics.ios > 0));
}

/// A Slurm cluster of this one machine, all of it in a scratch directory: munged on its own
/// socket, slurmctld and slurmd on ports of this test's own, stopped on drop.
struct Slurm {
    dir: std::path::PathBuf,
}

impl Slurm {
    fn new() -> Slurm {
        let dir = scratch("slurm");
        let d = dir.display().to_string();
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string();
        // Two ports of this process's own below the kernel's ephemeral range (32768 up: a
        // fresh clone's run once found slurmctld's taken there by some connection's local
        // end), where nothing else in the suite binds (its servers take ephemeral ports).
        let port = 20000 + 2 * (std::process::id() % 6000);
        let cpus = std::thread::available_parallelism().unwrap().get();
        std::fs::create_dir_all(dir.join("state")).unwrap();
        std::fs::create_dir_all(dir.join("spool")).unwrap();
        let key: Vec<u8> = (0..1024u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        std::fs::write(dir.join("munge.key"), key).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.join("munge.key"), std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(
            dir.join("slurm.conf"),
            format!(
                "ClusterName=iogauge\nSlurmctldHost={host}\nSlurmctldPort={port}\nSlurmdPort={}\n\
                 AuthType=auth/munge\nAuthInfo=socket={d}/munge.sock\nCredType=cred/munge\n\
                 ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSlurmUser=root\nSlurmdUser=root\n\
                 StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\nSlurmctldPidFile={d}/slurmctld.pid\n\
                 SlurmdPidFile={d}/slurmd.pid\nSlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd.log\n\
                 SchedulerType=sched/builtin\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
                 ReturnToService=2\nMpiDefault=none\nNodeName={host} CPUs={cpus} State=UNKNOWN\n\
                 PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4\n",
                port + 1
            ),
        )
        .unwrap();
        let slurm = Slurm { dir };
        let run = |cmd: &str| {
            let out = Command::new("sh").arg("-c").arg(cmd).env("SLURM_CONF", slurm.conf()).output().unwrap();
            assert!(out.status.success(), "{cmd}: {}", String::from_utf8_lossy(&out.stderr));
        };
        run(&format!(
            "/usr/sbin/munged --force --socket={d}/munge.sock --key-file={d}/munge.key --pid-file={d}/munged.pid \
             --log-file={d}/munged.log --seed-file={d}/munge.seed"
        ));
        run("slurmctld -f \"$SLURM_CONF\" && slurmd -f \"$SLURM_CONF\"");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let out = Command::new("sinfo").args(["-h", "-o", "%t"]).env("SLURM_CONF", slurm.conf()).output().unwrap();
            if String::from_utf8_lossy(&out.stdout).trim() == "idle" {
                break slurm;
            }
            assert!(Instant::now() < deadline, "slurm did not come up: {}", String::from_utf8_lossy(&out.stderr));
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn conf(&self) -> std::path::PathBuf {
        self.dir.join("slurm.conf")
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        for daemon in ["slurmd", "slurmctld", "munged"] {
            if let Ok(pid) = std::fs::read_to_string(self.dir.join(format!("{daemon}.pid"))) {
                let _ = Command::new("kill").arg(pid.trim()).status();
            }
        }
    }
}

/// The same test under Slurm's srun (PMIx): each task a manager, one merged document.
#[test]
fn srun_runs_the_managers_too() {
    let slurm = Slurm::new();
    let dir = scratch("srun");
    let out = Command::new("srun")
        .args(["-n", "2", "--mpi=pmix", bin(), "run", "--target", "null", "--ramp", "0s", "--time", "1s"])
        .args(["--json", "out.json", "--no-history", "-q"])
        .current_dir(&dir)
        .env("SLURM_CONF", slurm.conf())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_doc(&dir.join("out.json"));
    let r = &doc.results[0];
    let ranks: Vec<u32> = r.managers.iter().map(|m| m.rank).collect();
    assert_eq!(ranks, [0, 1]);
    let ios: u64 = r.managers.iter().map(|m| m.totals.metrics.ios).sum();
    assert_eq!(r.totals.metrics.ios, ios);
}

/// `--verify` and `--journal` under MPI: each manager verifies its own targets, keeps their
/// maps on its own host and its own journal (`{rank}` in the path); the document sums what
/// every manager checked; each target verifies clean afterwards, from its map and its journal.
#[test]
fn each_manager_verifies_its_own_targets() {
    let dir = scratch("mpi-verify");
    let file = format!("{}/file{{rank}}.tst", dir.display());
    let journal = format!("{}/journal.{{rank}}", dir.display());
    let args = ["run", "--spec", "oltp-4k", "--target", &file, "--file-size", "16M", "--working-set", "4M"];
    let mut a = args.to_vec();
    // A count, not a time: a loaded machine's 2 s wrote 93 blocks where the check wants 100.
    a.extend(["--ios", "3000", "--journal", &journal, "--json", "out.json", "-q"]);
    let out = output(mpirun(&dir, 2, &a));
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_doc(&dir.join("out.json"));
    let v = doc.results[0].verify.as_ref().expect("verification in the result");
    assert_eq!(v.mismatches, 0);
    assert!(v.checked_blocks > 100, "{v:?}");
    for rank in 0..2 {
        let target = format!("{}/file{rank}.tst", dir.display());
        let j = format!("{}/journal.{rank}", dir.display());
        for how in [["--target", target.as_str()], ["--journal", j.as_str()]] {
            let mut c = Command::new(bin());
            c.args(["verify", how[0], how[1]]).env("XDG_DATA_HOME", dir.join("data"));
            let out = c.output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{how:?}: {text} {}", stderr(&out));
            assert!(text.contains(&format!("{target}: ")) && text.contains(" 0 mismatches"), "{text}");
        }
    }
    // One journal directory for two managers would mix them: refused before any I/O.
    let out = output(mpirun(&dir, 2, &["run", "--target", &file, "--spec", "oltp-4k", "--journal", "j", "-q"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("put {rank} in the path"), "{}", stderr(&out));
}

/// An Iometer configuration with two managers runs each manager's workers on its own rank.
#[test]
fn an_iometer_configuration_with_two_managers_runs_on_two_ranks() {
    let dir = scratch("icf-managers");
    let icf = include_str!("../fixtures/iometer-1.1.icf")
        .replace("\tCYCLE_OUTSTANDING_IOS\r\n", "\tNORMAL\r\n")
        .replace("\t0          0          2\r\n", "\t0          0          1\r\n");
    // A second manager, HOST2, with the same two workers.
    let at = icf.find("'End manager\r\n").unwrap();
    let workers = &icf[icf.find("'Worker\r\n").unwrap()..at];
    let second = format!(
        "'End manager\r\n'Manager ID, manager name\r\n\t2,HOST2\r\n'Manager network address\r\n\t\r\n{workers}"
    );
    let icf = format!("{}{second}{}", &icf[..at], &icf[at..]);
    std::fs::write(dir.join("two.icf"), icf).unwrap();
    let args = ["run", "two.icf", "--map-target", "PHYSICALDRIVE:1=null", "--json", "out.json", "-q"];
    // Without its second manager, it says so rather than run half the test.
    let alone = output(mpirun(&dir, 1, &args));
    assert_eq!(alone.status.code(), Some(2), "{}", stderr(&alone));
    assert!(stderr(&alone).contains("start 2 MPI ranks"), "{}", stderr(&alone));
    let out = output(mpirun(&dir, 2, &args));
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_doc(&dir.join("out.json"));
    let r = &doc.results[0];
    let placed: Vec<(&str, u32)> = r.workers.iter().map(|w| (w.name.as_str(), w.manager)).collect();
    assert_eq!(placed, [("HOST1/Worker 1", 0), ("HOST1/Worker 2", 0), ("HOST2/Worker 1", 1), ("HOST2/Worker 2", 1)]);
    assert_eq!(r.managers.len(), 2);
}

/// Two ranks on one iSCSI LUN behind CHAP, the password in the environment mpirun hands each
/// rank: each rank logs in its own sessions, and the LUN's device counts every read of both.
#[test]
fn each_rank_logs_in_its_own_iscsi_sessions() {
    let dir = scratch("mpi-iscsi");
    let dev = LoopDev::new(16 << 20);
    let target = crate::iscsi::Tgtd::start();
    target.lun(1, &dev.dev, true);
    let password = "Mpi-7d1e-secret";
    assert!(target.admin(&["--op", "new", "--mode", "account", "--user", "bob", "--password", password]));
    assert!(target.admin(&["--op", "bind", "--mode", "account", "--tid", "1", "--user", "bob"]));
    let url = target.url(1).replace("iscsi://", "iscsi://bob@");
    let before = crate::iscsi::served(dev.name());
    let json = dir.join("out.json");
    let mut c = mpirun(
        &dir,
        2,
        &[
            "run",
            "--target",
            &url,
            "--rw",
            "randread",
            "--ios",
            "4000",
            "--connections",
            "2",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    // Open MPI's -x hands a variable to every rank; here the environment mpirun itself has.
    c.env("LIBISCSI_CHAP_PASSWORD", password).env("OMPI_MCA_mca_base_env_list", "LIBISCSI_CHAP_PASSWORD");
    let out = output(c);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_doc(&json);
    let r = &doc.results[0];
    assert_eq!(r.managers.len(), 2);
    assert_eq!(r.totals.metrics.read_ios, 4000);
    assert_eq!(
        crate::iscsi::served(dev.name())[0] - before[0],
        4000,
        "the LUN's device counted every read of both ranks"
    );
    for w in &r.workers {
        assert_eq!(w.engine.as_deref(), Some("iscsi (libiscsi; 2 connections per target)"));
    }
}

/// Rank 0 serves every manager's counts: while the run goes, /metrics has series of both
/// ranks; at its end (during --linger) they add up to the document's count exactly, and the
/// JSON lines hold both ranks' I/Os.
#[test]
fn rank_0_serves_every_managers_metrics() {
    let dir = scratch("mpi-live");
    let job = r#"
        [test]
        ramp = "0s"
        time = "3s"
        interval = "500ms"
        rate_iops = 8000
        [[worker]]
        targets = ["null"]
        spec = "random-read-4k"
        outstanding = 8
    "#;
    std::fs::write(dir.join("paced.toml"), job).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut c = mpirun(&dir, 2, &["run", "paced.toml"]);
    c.args(["--json", "out.json", "--no-history", "-q", "--metrics", &port.to_string(), "--linger", "2s"]);
    c.args(["--live-json", "live.jsonl"]).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let url = format!("http://127.0.0.1:{port}/metrics");
    let (mut both_while_running, mut last) = (false, String::new());
    while child.try_wait().unwrap().is_none() {
        let out = Command::new("curl").args(["-s", "-m", "2", &url]).output().unwrap();
        let body = String::from_utf8_lossy(&out.stdout).into_owned();
        if body.contains("iogauge_state{state=\"recording\"} 1") {
            both_while_running |= body.contains("manager=\"0\"") && body.contains("manager=\"1\"");
        }
        if !body.is_empty() {
            last = body;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let out = output_of(child);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(both_while_running, "no scrape during recording had both ranks' series");
    assert!(last.contains("iogauge_state{state=\"ended\"} 1"), "{last}");
    let doc = read_doc(&dir.join("out.json"));
    let served: u64 = last
        .lines()
        .filter(|l| l.starts_with("iogauge_ios_total{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(served, doc.results[0].totals.metrics.ios);
    let lines = std::fs::read_to_string(dir.join("live.jsonl")).unwrap();
    let ios: u64 =
        lines.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["ios"].as_u64().unwrap()).sum();
    // Both ranks' I/Os, each worker at most its 8 outstanding away at the end of recording.
    assert!(ios.abs_diff(served) <= 2 * 8, "{ios} in the lines, {served} recorded");
}

/// Open MPI binds each rank to a core by default (at two ranks or fewer): a manager whose
/// workers outnumber the CPUs it was bound to says so in the result, as the workers' own
/// `cpus` show it; started with `--bind-to none`, its workers have the host's CPUs and nothing
/// is said.
#[test]
fn a_launchers_binding_narrower_than_the_workers_is_said() {
    let online = online_cpus();
    let dir = scratch("mpibind");
    std::fs::write(
        dir.join("job.toml"),
        "[test]\nramp = \"0s\"\ntime = \"300ms\"\nrun = [\"oltp-8k\"]\n[[worker]]\ncount = 2\ntargets = [\"null\"]\n",
    )
    .unwrap();
    for binding in [None, Some("none")] {
        let mut c = common::mpirun();
        c.args(["--allow-run-as-root", "--oversubscribe", "-np", "2"]);
        if let Some(b) = binding {
            c.args(["--bind-to", b]);
        }
        c.arg(bin()).args(["run", "job.toml", "--json", "out.json", "--no-history", "-q"]);
        c.current_dir(&dir).env("XDG_DATA_HOME", dir.join("data")).stdin(Stdio::null());
        let out = output(c);
        assert!(out.status.success(), "{}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap();
        let warnings = doc["warnings"].to_string();
        for rank in 0..2 {
            let workers: Vec<&serde_json::Value> =
                doc["results"][0]["workers"].as_array().unwrap().iter().filter(|w| w["manager"] == rank).collect();
            let cpus = workers[0]["cpus"].as_array().unwrap().len();
            let said = warnings.contains(&format!("manager {rank} (")) && warnings.contains("--bind-to none");
            assert_eq!(said, cpus < online && workers.len() > cpus, "rank {rank}: {cpus} of {online} CPUs: {warnings}");
            if binding.is_some() {
                assert_eq!(cpus, online, "--bind-to none leaves rank {rank} the host's CPUs");
            }
        }
    }
}
