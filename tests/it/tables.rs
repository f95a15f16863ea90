//! The tables a user reads (issue 20): read and write apart, a row per worker or target on
//! request, within 80 columns, iogauge's own CPU beside the host's, and the notes that keep
//! numbers from misleading (a busy host, a rate not reached, I/Os not in flight).

use crate::common;

use common::*;
use serde_json::Value;

/// The figures of the table row whose label (trimmed) is `label`, after the row `after`.
fn row<'a>(table: &'a str, after: &str, label: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = table.lines().collect();
    let start =
        lines.iter().position(|l| l.trim_start().starts_with(after)).unwrap_or_else(|| panic!("{after}: {table}"));
    let line = lines[start..]
        .iter()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no row {label} after {after}:\n{table}"));
    line.trim_start().strip_prefix(label).unwrap().split_whitespace().collect()
}

fn two_workers(dir: &std::path::Path) -> std::path::PathBuf {
    let job = dir.join("two.toml");
    std::fs::write(
        &job,
        r#"
[test]
ramp = "0s"
time = "1s"
[[worker]]
name = "reader"
spec = "random-read-4k"
targets = ["null"]
rate_iops = 2000
[[worker]]
name = "writer"
spec = "streaming-write-64k"
targets = ["null"]
rate_iops = 500
"#,
    )
    .unwrap();
    job
}

#[test]
fn reads_and_writes_apart_and_a_row_per_worker_or_target() {
    let dir = scratch("tables");
    let job = two_workers(&dir);
    let out = ok_in(&dir, &["run", job.to_str().unwrap(), "--detail", "workers", "--json", "doc.json", "--no-history"]);
    let table = String::from_utf8(out.stdout).unwrap();
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("doc.json")).unwrap()).unwrap();
    let r = &doc["results"][0];
    let name = r["spec"].as_str().unwrap();
    assert_eq!(name, "random-read-4k+streaming-write-64k");
    let iops = |v: &Value, k: &str| iogauge::format::thousands(v[k].as_f64().unwrap());
    assert_eq!(row(&table, name, "read")[0], iops(&r["totals"], "read_iops"), "{table}");
    assert_eq!(row(&table, name, "write")[0], iops(&r["totals"], "write_iops"), "{table}");
    // The reader's and the writer's own figures, not one blend of both.
    for (k, w) in ["reader", "writer"].iter().enumerate() {
        let cells = row(&table, name, w);
        assert_eq!(cells[0], iops(&r["workers"][k], "iops"), "{table}");
        assert_eq!(cells[3], iogauge::format::opt_ms(r["workers"][k]["percentiles_ms"]["p99"].as_f64()));
    }
    // Paced to 500 per second (a loaded machine may start a few late, past the window).
    assert!((num(&r["workers"][1], "iops") - 500.0).abs() < 50.0);
    // The rate asked and achieved is said under the table.
    assert!(table.contains(&format!("{name}: rate asked 2,500 IOPS, achieved")), "{table}");
    assert!(table.lines().all(|l| l.chars().count() <= 80), "wider than 80 columns:\n{table}");
    // show and compare take --detail too; targets give a row per target.
    let args = "run --target a.dat --target b.dat --file-size 8M --rw read --ios 4000 --detail targets --no-history";
    let out = ok_in(&dir, &args.split(' ').collect::<Vec<_>>());
    let table = String::from_utf8(out.stdout).unwrap();
    for t in ["a.dat", "b.dat"] {
        assert_eq!(row(&table, "streaming-read-4k", t)[0].replace(',', "").parse::<f64>().map(|v| v > 0.0), Ok(true));
    }
}

#[test]
fn show_compare_and_report_take_detail() {
    let dir = scratch("detail");
    let job = two_workers(&dir);
    let db = dir.join("h.sqlite");
    let d = db.to_str().unwrap();
    for _ in 0..2 {
        ok_in(&dir, &["run", job.to_str().unwrap(), "--db", d, "-q"]);
    }
    let shown = String::from_utf8(ok_in(&dir, &["show", "1", "--db", d, "--detail", "workers"]).stdout).unwrap();
    assert!(shown.lines().any(|l| l.trim_start().starts_with("reader")), "{shown}");
    let compared =
        String::from_utf8(ok_in(&dir, &["compare", "1", "2", "--db", d, "--detail", "workers"]).stdout).unwrap();
    assert!(compared.contains("random-read-4k+streaming-write-64k / writer"), "{compared}");
    assert!(!compared.contains("warning:"), "same set-up, no warning: {compared}");
    ok_in(&dir, &["report", "1", "--db", d, "--detail", "targets", "-o", "r.html"]);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    assert!(html.contains("random-read-4k+streaming-write-64k: reads"), "read and write rows in the report");
    assert!(html.contains("random-read-4k+streaming-write-64k: null"), "a row per target");
}

#[test]
fn own_cpu_is_on_the_hosts_scale() {
    let doc = json(&["run", "--target", "null", "--qd", "8", "--time", "2s", "--ramp", "0s", "--no-history"]);
    let cpu = &doc["results"][0]["totals"]["cpu"];
    let ncpu = cpu["per_cpu"].as_array().unwrap().len() as f64;
    let secs = num(&doc["results"][0], "duration_s");
    let own = num(cpu, "own_pct");
    // Of the time the CPU counters span: the recorded window, and the workers' drain after it
    // before the end is read (a few ms idle; the margin is for a loaded host).
    let over_window = num(cpu, "own_cpu_s") / (secs * ncpu) * 100.0;
    assert!(own <= over_window + 1e-9 && own > 0.8 * over_window, "{cpu}");
    // iogauge's part of the host's figure (both counted over the same window; /proc/stat in
    // 10 ms ticks, hence the margin).
    assert!(own > 0.0 && own <= num(cpu, "utilization_pct") + 2.0, "{cpu}");
}

/// /proc/stat's line for all CPUs: (every field's ticks summed, idle + iowait ticks).
fn host_ticks() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap();
    let f: Vec<f64> =
        stat.lines().next().unwrap().split_whitespace().skip(1).take(8).map(|v| v.parse().unwrap()).collect();
    (f.iter().sum(), f[3] + f[4])
}

/// The host's CPU % is the host's, as /proc/stat counts it around the run (read here, before
/// the command starts and after it ends), not iogauge's own: a thread of this test spins on
/// every CPU, so the CPUs are never idle and the host is busy while iogauge (a paced run) takes
/// a few % of them. The document's busy share over its window W (all CPUs, in ticks) is what
/// was not idle: 1 - idle_W / max(ticked_W, W x HZ x CPUs). The window lies inside the span this
/// test reads, so idle_W <= idle_around, and the share is at least 1 - idle_around / (W x HZ x
/// CPUs), whatever else runs on the host; the slack is /proc/stat's rounding, a tick of the
/// idle and iowait fields at each of the four readings. W is the span the document's counters
/// cover: its own CPU seconds over its own share of the CPUs.
#[test]
fn the_hosts_cpu_is_what_proc_stat_counts_around_the_run() {
    // SAFETY: sysconf reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let cpus = online_cpus();
    let burners = Burners::start(cpus);
    let (started, before) = (std::time::Instant::now(), host_ticks());
    let doc = json(&["run", "--target", "null", "--rate-iops", "1000", "--time", "2s", "--ramp", "0s", "--no-history"]);
    let (after, around_s) = (host_ticks(), started.elapsed().as_secs_f64());
    drop(burners);
    let cpu = &doc["results"][0]["totals"]["cpu"];
    let (host, own) = (num(cpu, "utilization_pct"), num(cpu, "own_pct"));
    let window_ticks = num(cpu, "own_cpu_s") / (own / 100.0 * cpus as f64) * hz * cpus as f64;
    let idle_around = after.1 - before.1;
    let lowest = 100.0 * (1.0 - (idle_around + 8.0) / window_ticks);
    let said = format!(
        "host {host} %, own {own} %; around the run ({around_s:.3} s): {idle_around} idle ticks of {}",
        after.0 - before.0
    );
    assert!(lowest > own, "the CPUs were idle although a thread spun on each: {said}");
    assert!(host >= lowest && host <= 100.0, "the host's busy share is at least {lowest} %: {said}");
}

/// On a bursty load (a file at 16 outstanding: the worker sleeps and wakes for every few
/// completions) a tickless kernel's ticks miss busy time between idle periods, and a share of
/// /proc/stat's fields put the host at 17.5 % where iogauge alone used 20.6 % (2-CPU VM). The
/// host's busy time is what was not idle against the wall clock: never less than iogauge's own
/// and the kernel's threads' exact times, to /proc/stat's 10 ms ticks (one per CPU at each end
/// of a 2 s window: 1 %).
#[test]
fn the_hosts_busy_time_holds_iogauges_own_on_a_bursty_load() {
    let file = scratch("bursty").join("t.dat");
    let file = file.to_str().unwrap();
    let doc = json(&[
        "run",
        "--target",
        file,
        "--file-size",
        "64M",
        "--qd",
        "16",
        "--time",
        "2s",
        "--ramp",
        "0s",
        "--no-history",
    ]);
    let cpu = &doc["results"][0]["totals"]["cpu"];
    let parts = num(cpu, "own_pct") + num(cpu, "kernel_threads_pct");
    assert!(parts > 0.0 && parts <= num(cpu, "utilization_pct") + 1.0, "{cpu}");
}

/// CPU seconds so far of the kernel's threads, read as this test's own truth: the children of
/// kthreadd (pid 2) and kthreadd, each its scheduler's runtime (/proc/PID/schedstat, ns), where
/// iogauge selects them by flag and reads their ticks.
fn kernel_thread_s() -> f64 {
    let mut ns = 0u64;
    for pid in std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok()) {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let ppid: u32 = stat.rsplit_once(')').unwrap().1.split_whitespace().nth(1).unwrap().parse().unwrap();
        if pid == 2 || ppid == 2 {
            let run = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).unwrap_or_default();
            ns += run.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        }
    }
    ns as f64 / 1e9
}

/// The kernel's own threads' CPU time (a loop device's kworkers copying each read, ksoftirqd
/// completing them) is the storage path's, not other work on the host: the document counts it
/// apart (`kernel_threads_pct`), over the recorded window, within what this test reads of the
/// same threads around the whole command. On zram, whose I/Os run in iogauge's own io-wq
/// threads, nothing is counted twice: iogauge's and the kernel threads' parts never exceed the
/// host's busy time (a tick of /proc/stat is 0.25 % of 2 s on 2 CPUs).
#[test]
fn the_kernels_threads_are_counted_apart_from_other_work() {
    let parts_fit = |cpu: &Value| {
        let parts = num(cpu, "own_pct") + num(cpu, "kernel_threads_pct");
        assert!(parts <= num(cpu, "utilization_pct") + 3.0, "parts over the whole: {cpu}");
    };
    let lo = LoopDev::new(256 << 20);
    let before = kernel_thread_s();
    let doc = json(&["run", "--target", &lo.dev, "--qd", "32", "--time", "2s", "--ramp", "0s", "--no-history"]);
    let around = kernel_thread_s() - before;
    let (r, cpu) = (&doc["results"][0], &doc["results"][0]["totals"]["cpu"]);
    let cpus = cpu["per_cpu"].as_array().unwrap().len() as f64;
    let kernel_s = num(cpu, "kernel_threads_pct") / 100.0 * num(r, "duration_s") * cpus;
    // Ticks, rounded for each thread that ran (a few kworkers and ksoftirqds): 0.1 s.
    assert!(kernel_s > 0.0 && kernel_s <= around + 0.1, "{kernel_s} s in the document, {around} s around it: {cpu}");
    parts_fit(cpu);
    let _zram = zram();
    let doc = json(&["run", "--target", ZRAM, "--qd", "32", "--time", "2s", "--ramp", "0s", "--no-history"]);
    parts_fit(&doc["results"][0]["totals"]["cpu"]);
    // A run shorter than /proc/stat's tick has the field too (0), as its other shares.
    let doc = json(&["run", "--target", "null", "--ios", "1000", "--no-history"]);
    assert!(doc["results"][0]["totals"]["cpu"]["kernel_threads_pct"].is_number(), "{}", doc["results"][0]["totals"]);
}

/// Two CPU burners beside paced runs: the host's CPU % is theirs, not the storage path's. Said
/// once per run and once per study, naming the workloads (issue 48: profile said it 7 times,
/// a study 35).
#[test]
fn a_busy_host_is_said_once() {
    let burners = Burners::start(2);
    let paced = ["--target", "null", "--rate-iops", "1000", "--time", "2s", "--ramp", "0s", "--no-history"];
    let specs = ["--spec", "random-read-4k", "--spec", "oltp-8k", "--spec", "web-server"];
    let doc = json(&[&["run"][..], &paced, &specs].concat());
    let dir = scratch("busy-study");
    std::fs::write(
        dir.join("s.toml"),
        "[test]\nramp = \"0s\"\ntime = \"2s\"\nrun = [\"random-read-4k\"]\n[[worker]]\ntargets = [\"null\"]\n\
         rate_iops = 1000\n[study]\noutstanding = [1, 2]\n",
    )
    .unwrap();
    let study = ok_in(&dir, &["study", "s.toml", "--json", "-", "--no-history", "-q"]);
    let mut kept = command_in(&scratch("busy-kept"), &[&["run"][..], &paced, &["--json", "-"]].concat());
    let kept = kept.env("IOGAUGE_SESSION", "shared").output().unwrap();
    drop(burners);
    let warned = doc["warnings"].as_array().unwrap();
    let busy: Vec<&str> =
        warned.iter().filter_map(|w| w.as_str()).filter(|w| w.contains("other work on the host")).collect();
    assert_eq!(busy.len(), 1, "{warned:?}");
    assert!(busy[0].contains("all 3 workloads") && busy[0].contains("measures the host"), "{}", busy[0]);
    assert!(busy[0].contains("held back"), "what it means for the I/O rates: {}", busy[0]);
    // The burners are in this test's session. Where sessions group CPU time, the run's test
    // has one of its own by default, as fio's jobs; kept in this one (IOGAUGE_SESSION=shared),
    // and its workers in no CPU groups of their own, the warning says so.
    let told = |w: &str| w.contains("IOGAUGE_SESSION=shared");
    let shared = |d: &serde_json::Value| d["host"]["autogroup"] == "shared" && d["host"]["worker_cgroups"] == false;
    assert_eq!(told(busy[0]), shared(&doc), "{}", busy[0]);
    let kept: serde_json::Value = serde_json::from_slice(&kept.stdout).unwrap();
    let said = kept["warnings"].to_string();
    assert_eq!(told(&said), shared(&kept), "{said}");
    let study: serde_json::Value = serde_json::from_slice(&study.stdout).unwrap();
    let said = study["warnings"].to_string();
    assert_eq!(said.matches("other work on the host").count(), 1, "{said}");
}

/// A worker that shares its CPU with a process that burns it (each in a session of its own,
/// so the kernel gives each half): the result says how long the worker waited for the CPU
/// (the kernel's run delay), about half the recorded time and never less than a quarter
/// (other work on a loaded host only adds to it), and the warnings say it was held off.
#[test]
fn a_worker_held_off_its_cpu_says_how_long() {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills it.
    let cpu = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set), 0);
        (0..libc::CPU_SETSIZE as usize).find(|&c| libc::CPU_ISSET(c, &set)).unwrap()
    };
    let mut burner = std::process::Command::new("taskset");
    burner.args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"]);
    let mut burner = in_own_session(&mut burner).spawn().unwrap();
    let cpus = cpu.to_string();
    let doc = json(&["run", "--target", "null", "--cpus", &cpus, "--time", "2s", "--ramp", "0s", "--no-history"]);
    burner.kill().unwrap();
    burner.wait().unwrap();
    let r = &doc["results"][0];
    let (recorded_ms, w) = (num(r, "duration_s") * 1e3, &r["workers"][0]);
    let waited = num(w, "waited_for_cpu_ms");
    // Read at the end of recording, by a monitor a loaded host may wake a little late.
    assert!(waited >= 0.25 * recorded_ms && waited <= recorded_ms + 500.0, "waited {waited} ms of {recorded_ms}");
    assert!(num(w, "cpu_waits") >= 1.0, "{w}");
    let warned = doc["warnings"].to_string();
    assert!(warned.contains("worker 1 waited") && warned.contains("for a CPU while recording"), "{warned}");
}

#[test]
fn a_rate_not_reached_and_io_not_in_flight_are_said() {
    let doc =
        json(&["run", "--target", "null", "--rate-iops", "1000000000", "--time", "1s", "--ramp", "0s", "--no-history"]);
    let warned = doc["warnings"].to_string();
    assert!(warned.contains("rate asked 1,000,000,000 IOPS") && warned.contains("below the asked rate"), "{warned}");
    // psync keeps one I/O in flight whatever the depth: the footer says how many really were.
    let dir = scratch("psync");
    let out = ok_in(
        &dir,
        &["run", "--engine", "psync", "--qd", "8", "--file-size", "8M", "--time", "1s", "--ramp", "0s", "--no-history"],
    );
    let table = String::from_utf8(out.stdout).unwrap();
    // The warning before it says the depth asked as asked: per target, not summed over them.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("worker 1: psync does one I/O at a time, so 1 is in flight, not the 8 outstanding I/Os asked"),
        "{err}"
    );
    let line = table.lines().find(|l| l.contains("I/Os in flight on average")).unwrap_or_else(|| panic!("{table}"));
    assert!(line.contains("of 8 I/Os") && line.contains("psync does one I/O at a time"), "{line}");
    let mean: f64 = line.split(": ").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    assert!(mean <= 1.01, "{line}");
}

#[test]
fn compare_warns_when_the_set_ups_differ() {
    let dir = scratch("cmpdiff");
    ok_in(&dir, &["run", "--target", "null", "--time", "1s", "--ramp", "0s", "--json", "a.json", "-q", "--no-history"]);
    ok_in(
        &dir,
        &[
            "run",
            "--file-size",
            "8M",
            "--qd",
            "4",
            "--time",
            "1s",
            "--ramp",
            "0s",
            "--json",
            "b.json",
            "-q",
            "--no-history",
        ],
    );
    let out = String::from_utf8(ok_in(&dir, &["compare", "a.json", "b.json"]).stdout).unwrap();
    assert!(out.contains("warning: A and B differ in targets: null vs iogauge.tst"), "{out}");
    assert!(out.contains("warning: A and B differ in outstanding I/Os: 1 vs 4"), "{out}");
    // The engine is the engine, not what the kernel offers each target (issue 48: a device's
    // discard command read as another engine); psync against io_uring still is one.
    let dev = LoopDev::new(16 << 20);
    let trims = ["--rw", "randtrim", "--ios", "500", "-q", "--no-history", "--json"];
    ok_in(&dir, &[&["run", "--target", &dev.dev, "--allow-write", &dev.dev][..], &trims, &["c.json"]].concat());
    ok_in(&dir, &[&["run", "--target", "t.img", "--file-size", "8M"][..], &trims, &["d.json"]].concat());
    let engine = |f: &str| -> String {
        let doc: Value = serde_json::from_slice(&std::fs::read(dir.join(f)).unwrap()).unwrap();
        doc["results"][0]["workers"][0]["engine"].as_str().unwrap_or_default().to_string()
    };
    assert_ne!(engine("c.json"), engine("d.json"), "the two targets offer different features");
    let out = String::from_utf8(ok_in(&dir, &["compare", "c.json", "d.json"]).stdout).unwrap();
    assert!(!out.contains("differ in engine"), "{out}");
    ok_in(&dir, &[&["run", "--target", "t.img", "--engine", "psync"][..], &trims, &["e.json"]].concat());
    let out = String::from_utf8(ok_in(&dir, &["compare", "d.json", "e.json"]).stdout).unwrap();
    assert!(out.contains("differ in engine"), "{out}");
}

#[test]
fn a_study_of_single_runs_shows_no_spread_and_names_points_by_size() {
    let dir = scratch("studytable");
    let job = dir.join("s.toml");
    std::fs::write(
        &job,
        "[test]\nramp = \"0s\"\ntime = \"200ms\"\nrun = [\"streaming-read-64k\"]\n[[worker]]\ntargets = [\"null\"]\n\
         rate_iops = 1000\n[study]\nsize = [\"4K\", \"1M\"]\n",
    )
    .unwrap();
    let out = ok_in(&dir, &["study", job.to_str().unwrap(), "--no-history", "--json", "s.json"]);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(!table.contains("CV"), "one run per point: no CV column\n{table}");
    assert!(table.contains("streaming-read-4k") && table.contains("streaming-read-1m"), "{table}");
    assert!(!table.contains("streaming-read-64k"), "the template's size is not any point's:\n{table}");
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("s.json")).unwrap()).unwrap();
    assert_eq!(doc["points"][1]["runs"][0]["config"]["spec"][0]["name"], "streaming-read-1m");
    assert_eq!(doc["points"][1]["runs"][0]["config"]["test"]["run"][0], "streaming-read-1m");
    let out = ok_in(&dir, &["study", job.to_str().unwrap(), "--no-history", "--csv", "-"]);
    let csv = String::from_utf8(out.stdout).unwrap();
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let cv = head.iter().position(|h| *h == "iops_cv").unwrap();
    assert!(csv.lines().skip(1).all(|l| l.split(',').nth(cv) == Some("")), "no CV of one run in the CSV:\n{csv}");
    let out = ok_in(&dir, &["study", job.to_str().unwrap(), "--no-history", "--repeat", "2"]);
    assert!(String::from_utf8(out.stdout).unwrap().contains("IOPS CV %"));
}

#[test]
fn a_target_in_memory_is_named_as_such() {
    // A file on tmpfs, a loop device over one, and the zram RAM disk: memory's numbers.
    let dir = std::path::Path::new("/dev/shm").join(format!("iogauge-ram-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let says = |doc: &Value, what: &str| {
        let w = doc["warnings"].to_string();
        assert!(w.contains(&format!("is in memory ({what}")) && w.contains("not a storage device's"), "{what}: {w}");
    };
    // The default test file, made in a directory on tmpfs (no file under /dev is created).
    let out = ok_in(&dir, &["run", "--file-size", "8M", "--ios", "100", "--no-history", "--json", "-"]);
    says(&serde_json::from_slice(&out.stdout).unwrap(), "tmpfs");
    let img = dir.join("l.img");
    std::fs::File::create(&img).unwrap().set_len(16 << 20).unwrap();
    let dev = attach_loop(&img, &[]);
    let doc = json(&["run", "--target", &dev, "--ios", "100", "--no-history"]);
    let _ = std::process::Command::new("losetup").args(["-d", &dev]).status();
    says(&doc, "a loop device over a file on tmpfs");
    {
        let _z = zram();
        says(&json(&["run", "--target", ZRAM, "--ios", "100", "--no-history"]), "zram");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    // A file on the disk is not.
    let doc = json(&[
        "run",
        "--target",
        scratch("disk").join("d.dat").to_str().unwrap(),
        "--file-size",
        "8M",
        "--ios",
        "100",
        "--no-history",
    ]);
    assert!(!doc["warnings"].to_string().contains("in memory"), "{}", doc["warnings"]);
}

#[test]
fn compare_names_the_points_a_stopped_study_lacks() {
    let dir = scratch("cmpstop");
    let job = dir.join("s.toml");
    std::fs::write(
        &job,
        "[test]\nramp = \"0s\"\ntime = \"200ms\"\nrun = [\"random-read-4k\"]\n[[worker]]\ntargets = [\"null\"]\n\
         [study]\noutstanding = [1, 2, 4]\n",
    )
    .unwrap();
    ok_in(&dir, &["study", job.to_str().unwrap(), "--no-history", "--json", "full.json", "-q"]);
    // The document a study stopped after its first point leaves: that point, marked interrupted.
    let mut doc: Value = serde_json::from_slice(&std::fs::read(dir.join("full.json")).unwrap()).unwrap();
    doc["points"].as_array_mut().unwrap().truncate(1);
    doc["interrupted"] = Value::Bool(true);
    std::fs::write(dir.join("stopped.json"), serde_json::to_vec(&doc).unwrap()).unwrap();
    let out = String::from_utf8(ok_in(&dir, &["compare", "full.json", "stopped.json"]).stdout).unwrap();
    assert!(
        out.contains(
            "warning: B is a study stopped before its end: 2 of 3 points missing (outstanding=2; outstanding=4)"
        ),
        "{out}"
    );
}

/// The footer says how the numbers were taken (issue 48): the ramp-up, direct or buffered I/O,
/// and on the null target iogauge's own CPU per I/O, the figure it is there to measure.
#[test]
fn the_footer_says_ramp_io_mode_and_the_null_targets_cost() {
    let dir = scratch("footer");
    let out = ok_in(
        &dir,
        &["run", "--target", "null", "--time", "1s", "--ramp", "500ms", "--no-history", "--json", "r.json"],
    );
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("\n0.5 s of ramp-up before each, not recorded;"), "{table}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    let ns = num(&doc, "results/0/totals/cpu/own_us_per_io") * 1000.0;
    assert!(
        table.contains(&format!("not recorded; iogauge's CPU per I/O {ns:.0} ns (null target)")),
        "{ns:.0}: {table}"
    );
    for (flag, says) in
        [(None, "; direct I/O (O_DIRECT"), (Some("--buffered"), "; buffered I/O (through the page cache)")]
    {
        let mut args = vec!["run", "--file-size", "8M", "--time", "300ms", "--ramp", "0s", "--no-history"];
        args.extend(flag);
        let table = String::from_utf8(ok_in(&dir, &args).stdout).unwrap();
        assert!(table.contains(&format!("no ramp-up{says}")), "{table}");
        let fits = table.lines().filter(|l| !l.starts_with("warning:")).all(|l| l.chars().count() <= 80);
        assert!(fits, "wider than 80 columns:\n{table}");
    }
}

#[test]
fn reads_of_a_sparse_loop_device_are_said_to_be_zeros_from_memory() {
    let dir = scratch("sparse");
    let img = dir.join("sparse.img");
    std::fs::File::create(&img).unwrap().set_len(32 << 20).unwrap();
    let dev = attach_loop(&img, &[]);
    let warned = |args: &[&str]| {
        let mut all = vec!["run", "--target", dev.as_str(), "--ios", "200", "--no-history"];
        all.extend(args);
        json(&all)["warnings"].to_string().contains("never written or was discarded")
    };
    let said = warned(&["--spec", "random-read-4k"]);
    // Written in full (through the device), the backing file holds blocks: nothing to say.
    let wrote = std::process::Command::new("dd")
        .args([&format!("of={dev}"), "if=/dev/urandom", "bs=1M", "count=32", "oflag=direct", "status=none"])
        .status()
        .unwrap();
    let after = warned(&["--spec", "random-read-4k"]);
    std::process::Command::new("losetup").args(["-d", &dev]).status().unwrap();
    assert!(wrote.success());
    assert!(said, "reads of a sparse loop device are said to come back without reaching storage");
    assert!(!after, "a loop device written in full is not called sparse");
}

#[test]
fn a_studys_table_splits_reads_and_writes_from_the_median_run() {
    let dir = scratch("study-split");
    std::fs::write(
        dir.join("s.toml"),
        "[test]\nramp = \"0s\"\ntime = \"200ms\"\nrun = [\"oltp-8k\"]\n[[worker]]\ntargets = [\"null\"]\n\
         [study]\noutstanding = [1, 2]\nrepeat = 3\n",
    )
    .unwrap();
    let out = ok_in(&dir, &["study", "s.toml", "--no-history", "--json", "s.json"]);
    let table = String::from_utf8(out.stdout).unwrap();
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("s.json")).unwrap()).unwrap();
    let iops = |cells: &[&str]| cells[0].replace(',', "").parse::<f64>().unwrap();
    for (k, point) in ["1 outstanding=1", "2 outstanding=2"].iter().enumerate() {
        let p = &doc["points"][k];
        let median = num(&p["summary"][0], "iops/median");
        // The repeat whose IOPS is the median's (of three, the median itself).
        let run = p["runs"].as_array().unwrap().iter().find(|r| num(&r["results"][0], "totals/iops") == median);
        let totals = &run.expect("a repeat at the median")["results"][0]["totals"];
        let (reads, writes) = (iops(&row(&table, point, "reads")), iops(&row(&table, point, "writes")));
        assert_eq!(reads, num(totals, "read_iops").round(), "{table}");
        assert_eq!(writes, num(totals, "write_iops").round(), "{table}");
    }
}

/// A run too short for the kernel's 10 ms CPU ticks gives no CPU figures rather than noise,
/// and one of 1 µs (over before the worker starts) says it measured nothing; iogauge's own
/// share is of the time its CPU counters span, never over all the CPUs (a 1 µs window once
/// made it 69,250 %).
#[test]
fn a_run_too_short_to_measure_says_so() {
    let dir = scratch("tables-short");
    // A counted run of 1,000 I/Os on null ends in ms and always completes them, however loaded
    // the host (a timed one might see its worker held off its CPU for the whole window).
    for (time, completes) in [("1us", false), ("1000 I/Os", true)] {
        let length = if completes { vec!["--ios", "1000"] } else { vec!["--time", time, "--ramp", "0s"] };
        let mut args = vec!["run", "--target", "null", "--json", "doc.json", "--no-history"];
        args.extend(length);
        let out = ok_in(&dir, &args);
        let table = String::from_utf8(out.stdout).unwrap();
        let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("doc.json")).unwrap()).unwrap();
        let cpu = &doc["results"][0]["totals"]["cpu"];
        let own = cpu["own_pct"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&own), "{time}: own_pct {own}");
        let figures = row(&table, "workload", "random-read-4k");
        assert_eq!(figures[figures.len() - 3..], ["-", "-", "-"], "{time}:\n{table}");
        assert!(table.contains("-: a window under 0.5 s"), "{table}");
        let said = table.contains("warning: random-read-4k: no I/O completed");
        assert_eq!(said, !completes, "{time}: {table}");
        assert!(completes || table.contains("no I/O completed in the 1us recorded"), "{table}");
        assert_eq!(doc["results"][0]["totals"]["ios"].as_u64().unwrap() > 0, completes, "{time}");
    }
}
