//! `iogauge compare`: the % differences are those of the documents' own numbers.

use crate::common;

use common::*;

/// 1234567.0 -> "1,234,567", as the tables print.
fn thousands(v: f64) -> String {
    iogauge::format::thousands(v)
}

#[test]
fn compare_shows_each_workloads_difference() {
    let dir = scratch("compare");
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    let run = |path: &std::path::Path, qd: &str| {
        ok(&[
            "run",
            "--target",
            "null",
            "--qd",
            qd,
            "--spec",
            "oltp-8k",
            "--spec",
            "random-read-4k",
            "--ios",
            "2000000",
            "--json",
            path.to_str().unwrap(),
            "-q",
        ]);
        serde_json::from_slice::<serde_json::Value>(&std::fs::read(path).unwrap()).unwrap()
    };
    let (da, db) = (run(&a, "1"), run(&b, "16"));
    let out = ok(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    let table = text.lines().filter(|l| !l.starts_with("A = ") && !l.starts_with("B = "));
    assert!(table.into_iter().all(|l| l.chars().count() <= 80), "wider than 80 columns:\n{text}");
    let lines: Vec<&str> = text.lines().collect();
    for (k, spec) in ["oltp-8k", "random-read-4k"].iter().enumerate() {
        // Three rows per workload: A's figures, B's, and B's % difference from A.
        let at = lines.iter().position(|l| l.starts_with(spec)).unwrap_or_else(|| panic!("no row for {spec}: {text}"));
        let cells = |i: usize| -> Vec<&str> { lines[at + i].split_whitespace().collect() };
        let (a, b, d) = (cells(0), cells(1), cells(2));
        assert_eq!((a[1], b[0], d[0]), ("A", "B", "%"), "{text}");
        let r = (&da["results"][k], &db["results"][k]);
        let (ia, ib) = (num(r.0, "totals/iops"), num(r.1, "totals/iops"));
        assert_eq!(b[1], format!("{}", thousands(ib)), "{text}");
        assert_eq!(d[1], format!("{:+.1}", (ib - ia) / ia * 100.0), "{text}");
        let (ma, mb) = (num(r.0, "totals/mbps"), num(r.1, "totals/mbps"));
        assert_eq!(d[2], format!("{:+.1}", (mb - ma) / ma * 100.0), "{text}");
        for (col, p) in [(4, "p50"), (5, "p99")] {
            let (pa, pb) =
                (num(r.0, &format!("totals/percentiles_ms/{p}")), num(r.1, &format!("totals/percentiles_ms/{p}")));
            assert_eq!(d[col], format!("{:+.1}", (pb - pa) / pa * 100.0), "{p} column: {text}");
        }
    }
    // Same set-up (null target, engine, workers, time): no warning; another depth: one.
    assert_eq!(text.lines().filter(|l| l.starts_with("warning:")).count(), 1, "{text}");
    assert!(text.contains("warning: A and B differ in outstanding I/Os: 1 vs 16"), "{text}");
    // Bad input: one line, exit 2.
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "{\"schema\": \"other/9\"}").unwrap();
    let out = iogauge(&["compare", junk.to_str().unwrap(), a.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("unknown schema 'other/9'") && err.trim_end().lines().count() == 1, "{err}");
}

/// The row of `workload` and side `side` (A or B) in `compare`'s table: its cells after the
/// side (IOPS, MB/s, avg ms, p50 ms, p99 ms, CPU %, IOPS/CPU%).
fn side_row<'a>(text: &'a str, workload: &str, side: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.starts_with(workload)).unwrap_or_else(|| panic!("no {workload}:\n{text}"));
    let line = lines[at..].iter().find(|l| l.split_whitespace().any(|c| c == side)).unwrap();
    let cells: Vec<&str> = line.split_whitespace().collect();
    cells[cells.iter().position(|c| *c == side).unwrap() + 1..].to_vec()
}

fn parse_thousands(cell: &str) -> f64 {
    cell.replace(',', "").parse().unwrap()
}

/// The q-quantile (ns) of json+'s histograms merged (each `bins` maps a bin's value in ns to
/// its count): the value of the sample of rank ceil(q x total), computed here on its own.
fn quantile_of_bins(bins: &[&serde_json::Value], q: f64) -> f64 {
    let mut all: Vec<(u64, u64)> = bins
        .iter()
        .flat_map(|b| b.as_object().unwrap().iter().map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap())))
        .collect();
    all.sort();
    let total: u64 = all.iter().map(|x| x.1).sum();
    let rank = (q * total as f64).ceil() as u64;
    let mut seen = 0;
    for (v, n) in all {
        seen += n;
        if seen >= rank {
            return v as f64;
        }
    }
    unreachable!()
}

#[test]
fn compare_sets_fios_own_json_beside_iogauges_run() {
    let dir = scratch("compare-fio");
    let file = dir.join("data");
    std::fs::write(&file, vec![7u8; 32 << 20]).unwrap();
    // The same workload in both tools: 70 % random reads of 8 KiB, two jobs, 1 s.
    let fio = |format: &str, out: &str| {
        let o = std::process::Command::new("fio")
            .args(["--name=oltp-8k", "--rw=randrw", "--rwmixread=70", "--bs=8k", "--numjobs=2", "--time_based"])
            .args(["--runtime=1", "--norandommap", "--size=32m", &format!("--output-format={format}")])
            .arg(format!("--filename={}", file.display()))
            .output()
            .expect("fio is installed (scripts/test installs it)");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::write(dir.join(out), &o.stdout).unwrap();
        let text = String::from_utf8(o.stdout).unwrap();
        // The JSON, whatever fio prints before it (notes) or after it (`json,normal`'s text).
        let mut values = serde_json::Deserializer::from_str(&text[text.find('{').unwrap()..]).into_iter();
        values.next().unwrap().unwrap()
    };
    let (plus, plain) = (fio("json+", "plus.json"), fio("json", "plain.json"));
    let both: serde_json::Value = fio("json,normal", "both.json");
    let f = file.to_str().unwrap();
    ok_in(
        &dir,
        &[
            "run",
            "--target",
            f,
            "--spec",
            "oltp-8k",
            "--workers",
            "2",
            "--time",
            "1s",
            "--json",
            "run.json",
            "-q",
            "--allow-write",
            f,
        ],
    );
    let compare = |a: &str| String::from_utf8(ok_in(&dir, &["compare", a, "run.json"]).stdout).unwrap();

    // json+: fio's own IOPS (summed over its jobs) and the percentiles of its histograms.
    let text = compare("plus.json");
    let a = side_row(&text, "oltp-8k", "A");
    let jobs = plus["jobs"].as_array().unwrap();
    let fio_iops: f64 = jobs.iter().map(|j| num(j, "read/iops") + num(j, "write/iops")).sum();
    assert!((parse_thousands(a[0]) - fio_iops).abs() <= 0.5, "IOPS {} vs fio's {fio_iops}:\n{text}", a[0]);
    let fio_mbps: f64 = jobs.iter().map(|j| num(j, "read/bw_bytes") + num(j, "write/bw_bytes")).sum::<f64>() / 1e6;
    assert!((a[1].parse::<f64>().unwrap() - fio_mbps).abs() <= 0.05, "MB/s {} vs {fio_mbps}:\n{text}", a[1]);
    let bins: Vec<&serde_json::Value> =
        jobs.iter().flat_map(|j| [&j["read"]["clat_ns"]["bins"], &j["write"]["clat_ns"]["bins"]]).collect();
    for (cell, q) in [(a[3], 0.5), (a[4], 0.99)] {
        let want = quantile_of_bins(&bins, q) / 1e6;
        let got: f64 = cell.parse().unwrap();
        // Both are histogram values: fio's bins and iogauge's buckets are each 1/64 of a
        // power of two wide; the printed value has 3 significant digits.
        assert!((got - want).abs() <= 0.04 * want + 0.0005, "p{} {got} vs {want}:\n{text}", q * 100.0);
    }
    assert_eq!(a[5], "-", "fio does not measure the host's CPU:\n{text}");
    let b = side_row(&text, "oltp-8k", "B");
    assert_ne!(b[0], "-");

    // Plain JSON: a mix of reads and writes over two jobs has no percentile of its own.
    let text = compare("plain.json");
    let a = side_row(&text, "oltp-8k", "A");
    assert_eq!((a[3], a[4]), ("-", "-"), "{text}");
    let fio_iops: f64 =
        plain["jobs"].as_array().unwrap().iter().map(|j| num(j, "read/iops") + num(j, "write/iops")).sum();
    assert!((parse_thousands(a[0]) - fio_iops).abs() <= 0.5, "{text}");

    // JSON with fio's text after it (`--output-format=json,normal`) is read as well.
    let a = side_row(&compare("both.json"), "oltp-8k", "A").iter().map(|c| c.to_string()).collect::<Vec<_>>();
    let fio_iops: f64 =
        both["jobs"].as_array().unwrap().iter().map(|j| num(j, "read/iops") + num(j, "write/iops")).sum();
    assert!((parse_thousands(&a[0]) - fio_iops).abs() <= 0.5);

    // The report sets them side by side too, and says where A came from.
    ok_in(&dir, &["report", "plus.json", "run.json", "-o", "r.html"]);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    assert!(
        html.contains("Read from fio&#39;s JSON output plus.json")
            || html.contains("Read from fio's JSON output plus.json"),
        "{html}"
    );
    assert!(html.contains("<td>oltp-8k</td>"), "no side-by-side row for oltp-8k");
}

#[test]
fn compare_reads_iometers_results_file() {
    let dir = scratch("compare-iometer");
    ok_in(
        &dir,
        &[
            "run",
            "--target",
            "null",
            "--spec",
            "oltp-8k",
            "--time",
            "1s",
            "--json",
            "r.json",
            "--iometer-csv",
            "r.csv",
            "-q",
        ],
    );
    // The same run as Iometer's file and as iogauge's document: the same figures.
    let text = String::from_utf8(ok_in(&dir, &["compare", "r.csv", "r.json"]).stdout).unwrap();
    let d = side_row(&text, "oltp-8k", "%");
    assert_eq!((d[0], d[1], d[5]), ("+0.0", "+0.0", "+0.0"), "IOPS, MB/s and CPU % from the file:\n{text}");
    assert!(!text.contains("warning: A and B differ"), "{text}");
    // Iometer's own layout: a cycling test's steps are workloads of their own.
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/iometer-1.1-cycling.csv");
    let out = iogauge_in(&dir, &["compare", fixture, fixture]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(side_row(&text, "Default step 1", "A")[0], "1,000", "{text}");
    assert_eq!(side_row(&text, "Default step 2", "A")[0], "1,700", "{text}");
    // Neither a document nor another tool's results: one line, exit 2.
    std::fs::write(dir.join("x.json"), "{\"jobs\": []}").unwrap();
    let out = iogauge_in(&dir, &["compare", "x.json", "r.json"]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("fio's JSON output or Iometer's results file"), "{err}");
}

#[test]
fn a_study_of_one_point_compares_with_a_run_by_workload() {
    let dir = scratch("compare-one-point");
    std::fs::write(
        dir.join("s.toml"),
        "[test]\nios = 20000\nrun = [\"oltp-8k\", \"random-read-4k\"]\n[[worker]]\ntargets = [\"null\"]\n[study]\n",
    )
    .unwrap();
    ok_in(&dir, &["study", "s.toml", "--json", "s.json", "-q"]);
    ok_in(&dir, &["run", "--target", "null", "--spec", "random-read-4k", "--ios", "20000", "--json", "r.json", "-q"]);
    // Nothing cycled: its workloads are named as a run's, so random-read-4k meets its twin.
    let text = String::from_utf8(ok_in(&dir, &["compare", "s.json", "r.json"]).stdout).unwrap();
    assert!(text.lines().any(|l| l.starts_with("random-read-4k ") && l.contains(" A ")), "{text}");
    assert!(!text.contains("nothing cycled") && !text.contains("oltp-8k"), "{text}");
}

#[test]
fn compare_names_each_setting_that_changes_the_figures() {
    let dir = scratch("compare-settings");
    let run = |json: &str, flags: &[&str]| {
        let base = ["run", "--target", "null", "--spec", "random-read-4k", "--ios", "20000", "-q"];
        ok_in(&dir, &[&base[..], flags, &["--no-history", "--json", json]].concat());
    };
    let warnings = |a: &str, b: &str| -> Vec<String> {
        let text = String::from_utf8(ok_in(&dir, &["compare", a, b]).stdout).unwrap();
        text.lines().filter_map(|l| l.strip_prefix("warning: ")).map(str::to_string).collect()
    };
    run("a.json", &[]);
    // How the worker waits and spreads, its rate, working set and CPUs, and a log of each I/O.
    let b = [
        &["--completion-batch", "8", "--io-wq-threads", "2", "--cpus", "0"][..],
        &["--rate-iops", "200000", "--stroke", "10", "--log-dir", "logs-b"],
    ]
    .concat();
    run("b.json", &b);
    let mut said = warnings("a.json", "b.json");
    said.sort();
    let mut want = vec![
        "A and B differ in completion_batch: 1 vs 8".to_string(),
        "A and B differ in io_wq_threads: none vs 2".to_string(),
        "A and B differ in log_dir: none vs given".to_string(),
        "A and B differ in workers' CPUs: any vs 0".to_string(),
        "A and B differ in workers' rates: none (closed loop) vs 200,000 IOPS".to_string(),
        "A and B differ in working sets: each whole target vs 10 % of each target".to_string(),
    ];
    want.sort();
    assert_eq!(said, want);
    // The same settings again (the logs elsewhere): nothing to say.
    run("c.json", &[&b[..b.len() - 1], &["logs-c"]].concat());
    assert_eq!(warnings("b.json", "c.json"), Vec::<String>::new());
    // The same CPUs, shared by two workers or split between them.
    run("d.json", &["--workers", "2", "--cpus", "0,1"]);
    run("e.json", &["--workers", "2", "--cpus", "0,1", "--cpus-policy", "split"]);
    assert_eq!(warnings("d.json", "e.json"), ["A and B differ in workers' CPUs: 0-1 (each of 2) vs 0; 1"]);

    // The machine: another kernel and another device behind the target are said; what an
    // older document does not record (where CPU time was grouped) is not compared.
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("a.json")).unwrap()).unwrap();
    let kernel = doc["host"]["kernel"].as_str().unwrap().to_string();
    let model = doc["host"]["devices"][0]["model"].as_str().unwrap().to_string();
    doc["host"]["kernel"] = "6.1.0-99-amd64 #1 SMP".into();
    doc["host"]["devices"][0]["model"] = "another device".into();
    doc["host"]["autogroup"] = "".into();
    std::fs::write(dir.join("k.json"), serde_json::to_vec(&doc).unwrap()).unwrap();
    let mut said = warnings("a.json", "k.json");
    said.sort();
    assert_eq!(
        said,
        [
            format!("A and B differ in kernel: {kernel} vs 6.1.0-99-amd64 #1 SMP"),
            format!("A and B differ in the device behind null: {model} vs another device"),
        ]
    );

    // A job file's own specification, edited between two runs under the same name.
    for read in [67, 70] {
        std::fs::write(
            dir.join(format!("j{read}.toml")),
            format!(
                "[test]\nios = 20000\nrun = [\"mine\"]\n[[spec]]\nname = \"mine\"\n\
                 lines = [{{ size = 8192, share = 100, read = {read}, random = 100 }}]\n\
                 [[worker]]\ntargets = [\"null\"]\n"
            ),
        )
        .unwrap();
        ok_in(&dir, &["run", &format!("j{read}.toml"), "-q", "--no-history", "--json", &format!("j{read}.json")]);
    }
    assert_eq!(
        warnings("j67.json", "j70.json"),
        ["A and B differ in mine's line 1: size = 8192, share = 100, read = 67, random = 100 \
          vs size = 8192, share = 100, read = 70, random = 100"]
    );
}

/// A fio result's start is when fio started, not when it wrote its output (its `timestamp_ms`
/// is the end: `report` showed that as the start).
#[test]
fn a_fio_results_start_is_when_fio_started() {
    let dir = scratch("fio-start");
    let before = std::time::SystemTime::now();
    let o = std::process::Command::new("fio")
        .args(["--name=null", "--ioengine=null", "--size=1m", "--time_based", "--runtime=3", "--output-format=json"])
        .output()
        .expect("fio is installed (scripts/test installs it)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    std::fs::write(dir.join("fio.json"), &text[text.find('{').unwrap()..]).unwrap();
    ok_in(&dir, &["report", "fio.json", "-o", "r.html"]);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    let time = regex_lite::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z").unwrap();
    let column = html.find("started (UTC)").expect("the report has its start");
    let shown = time.find(&html[column..]).expect("the report shows when it started").as_str();
    let started = humantime::parse_rfc3339(shown).unwrap();
    // fio's elapsed is whole seconds, rounded up (under 1 s early; 1.5 s allowed), and fio
    // takes a moment to start (1.5 s allowed under load); its end is 3 s after its start.
    let after_start = |t: std::time::SystemTime| t.duration_since(before).map_or(-1.0, |d| d.as_secs_f64());
    let late = after_start(started);
    let early = before.duration_since(started).map_or(0.0, |d| d.as_secs_f64());
    assert!(early <= 1.5 && late <= 1.5, "started {shown}: {early} s early, {late} s late");
}
