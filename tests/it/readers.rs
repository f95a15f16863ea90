//! Every reader bounded (issue 82): a document, another tool's results or configuration, a
//! spec file, a trace, a map or a request that cannot hold is refused in one line naming the
//! file and the field, exit 2, never a panic, an abort or memory out of proportion to it;
//! reading is linear in the file's size; nothing a reader does not recognise is quoted back,
//! and nothing read reaches the terminal as an escape sequence. The real binary, on the hostile
//! files the issue found (cases 5, 6 and 9 as written) and on others of their kind.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::common::{bin, iogauge_in, scratch};

/// A file of tests/fixtures.
fn fixture(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)).unwrap()
}

/// Runs iogauge in `dir` under /usr/bin/time: its output, CPU seconds (user + system) and peak
/// memory (KiB).
fn measured(dir: &Path, args: &[&str]) -> (Output, f64, u64) {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%U %S %M", "-o", "time.txt", bin()])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let t = std::fs::read_to_string(dir.join("time.txt")).unwrap();
    let f: Vec<&str> = t.lines().last().unwrap().split(' ').collect();
    let cpu = f[0].parse::<f64>().unwrap() + f[1].parse::<f64>().unwrap();
    (out, cpu, f[2].parse().unwrap())
}

/// A refusal: exit 2, one line on stderr, naming the file and saying `says`; no panic.
fn refused(out: &Output, file: &str, says: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("iogauge: ") && err.contains(file) && err.contains(says), "{says}: {err}");
}

/// The result document of an iogauge run with `change` made to its JSON.
fn result_with(change: impl Fn(&mut Value)) -> String {
    let mut doc: Value = serde_json::from_str(&fixture("result-1-null.json")).unwrap();
    change(&mut doc);
    doc.to_string()
}

/// Case 5: a bucket index past the histogram's layout made compare and report allocate
/// 32 GiB (`[4294967295, 5]`, an abort) or 800 MB (`[99999999, 1]`); a bucket just past the
/// last is refused as well, and many one-bucket histograms far out are bounded together.
#[test]
fn histogram_buckets_past_the_layout_are_refused() {
    let dir = scratch("readers-histogram");
    for bucket in [json!([4294967295u64, 5]), json!([99999999, 1]), json!([3776, 1])] {
        let doc = result_with(|d| {
            d["results"][0]["totals"]["raw"]["read"]["histogram"]["buckets"]
                .as_array_mut()
                .unwrap()
                .push(bucket.clone())
        });
        std::fs::write(dir.join("h.json"), doc).unwrap();
        for args in [vec!["compare", "h.json", "h.json"], vec!["report", "h.json", "-o", "r.html"]] {
            let (out, _, peak_kib) = measured(&dir, &args);
            refused(&out, "h.json", &format!("histogram bucket {}", bucket[0]));
            assert!(out.stderr.windows(17).any(|w| w == b"results[0].totals"), "names the field");
            // iogauge's own size is 10 to 15 MiB (a refusal of the file above, 0.01 s).
            assert!(peak_kib < 64 << 10, "{args:?}: {peak_kib} KiB");
        }
    }
    // 10,000 intervals each with one bucket at the layout's end: 2 MB of JSON asking for
    // 302 MB of buckets (30 KiB each), more than 64 MiB + 32 x its size.
    let doc = result_with(|d| {
        let iv = json!({ "t_s": 1.0, "duration_s": 1.0, "iops": 1.0, "mbps": 0.0, "avg_response_ms": 1.0,
                         "cpu_pct": 0.0, "histogram": { "layout": "log-linear-ns-64", "buckets": [[3775, 1]] } });
        d["results"][0]["intervals"] = Value::Array(vec![iv; 10_000]);
    });
    std::fs::write(dir.join("far.json"), &doc).unwrap();
    let (out, _, peak_kib) = measured(&dir, &["compare", "far.json", "far.json"]);
    refused(&out, "far.json", "histograms would take over");
    // The room (64 MiB + 32 x 2 MB) at most, beside iogauge's own 15 MiB and the document's.
    assert!(peak_kib < (64 + 32 * 2 + 15 + 32) << 10, "{peak_kib} KiB for a {} byte file", doc.len());
}

/// Case 6: fio's JSON with `timestamp_ms` past the year 9999 (a Display error in the date) and
/// `lat_ns.min` above `lat_ns.max` (`clamp` in src/result/metrics.rs) panicked compare and
/// report (exit 101).
#[test]
fn hostile_fio_json_is_refused() {
    let dir = scratch("readers-fio");
    let fio: Value = serde_json::from_str(&fixture("fio-3.33-two-groups+.json")).unwrap();
    /// A file's name, the change that makes it hostile, and what its refusal says.
    type Case = (&'static str, fn(&mut Value), &'static str);
    let cases: [Case; 4] = [
        ("late.json", |v| v["timestamp_ms"] = json!(253402300801000u64), "timestamp_ms 253402300801000"),
        ("minmax.json", |v| v["jobs"][0]["read"]["lat_ns"]["min"] = json!(99999999), "read.lat_ns: min 99999999"),
        ("mean.json", |v| v["jobs"][1]["write"]["lat_ns"]["mean"] = json!(1e300), "write.lat_ns"),
        ("bins.json", |v| v["jobs"][0]["read"]["clat_ns"]["bins"]["x"] = json!(1), "read.clat_ns.bins"),
    ];
    for (name, change, says) in cases {
        let mut v = fio.clone();
        change(&mut v);
        std::fs::write(dir.join(name), v.to_string()).unwrap();
        refused(&iogauge_in(&dir, &["compare", name, name]), name, says);
        refused(&iogauge_in(&dir, &["report", name, "-o", "r.html"]), name, says);
    }
}

/// Figures that cannot hold in iogauge's own documents and Iometer's file, each refused
/// naming its field: a smallest response time above the largest, a negative rate, a mean
/// outside its extremes, a percentile above the largest, a date past 9000, a steady-state
/// window past the rounds (an index into them), Iometer's NaN.
#[test]
fn figures_that_cannot_hold_are_refused_naming_the_field() {
    let dir = scratch("readers-figures");
    let results: Vec<(Value, &str)> = vec![
        (
            serde_json::from_str(&result_with(|d| {
                d["results"][0]["totals"]["raw"]["read"]["response_min_ns"] = json!(1u64 << 40)
            }))
            .unwrap(),
            "results[0].totals.raw.read: response_min_ns",
        ),
        (
            serde_json::from_str(&result_with(|d| d["results"][0]["workers"][0]["iops"] = json!(-1))).unwrap(),
            "results[0].workers[0].iops: -1 is negative",
        ),
        (
            serde_json::from_str(&result_with(|d| {
                d["results"][0]["totals"]["raw"]["read"]["response_sum_ns"] = json!(1)
            }))
            .unwrap(),
            "the mean lies outside",
        ),
        (
            serde_json::from_str(&result_with(|d| d["results"][0]["totals"]["percentiles_ms"]["p99"] = json!(5.0)))
                .unwrap(),
            "results[0].totals.percentiles_ms: p99 5 above",
        ),
        (
            serde_json::from_str(&result_with(|d| d["started_at"] = json!("9999-12-31T23:59:59Z"))).unwrap(),
            "started_at: not a date between 1970 and 9000",
        ),
        (
            serde_json::from_str(&result_with(|d| d["results"][0]["duration_s"] = json!(1e300))).unwrap(),
            "results[0].duration_s: 1e300 s is no duration",
        ),
    ];
    for (i, (doc, says)) in results.iter().enumerate() {
        let name = format!("r{i}.json");
        std::fs::write(dir.join(&name), doc.to_string()).unwrap();
        refused(&iogauge_in(&dir, &["compare", &name, &name]), &name, says);
    }
    // A study whose steady-state window starts at round 0 (`values[a - 1]` in the report).
    let mut study: Value = serde_json::from_str(&fixture("study-1-fs.json")).unwrap();
    study["study"]["steady"] = json!({});
    study["steady"] = json!({ "measure": "iops", "rounds": [[0]], "reached": true, "window": [0, 3],
        "tracked": [{ "params": {}, "spec": "x", "values": [1.0, 2.0] }], "table": [], "answer": "" });
    std::fs::write(dir.join("s.json"), study.to_string()).unwrap();
    refused(&iogauge_in(&dir, &["report", "s.json", "-o", "r.html"]), "s.json", "steady.window [0, 3]");
    // Iometer's NaN, a negative count, an average above the maximum.
    let csv = fixture("iometer-1.1-cycling.csv");
    let all = csv.lines().find(|l| l.starts_with("ALL,")).unwrap();
    let mut cells: Vec<&str> = all.split(',').collect();
    cells[6] = "nan";
    std::fs::write(dir.join("i.csv"), csv.replacen(all, &cells.join(","), 1)).unwrap();
    refused(&iogauge_in(&dir, &["compare", "i.csv", "i.csv"]), "i.csv", "IOps \"nan\" is not a figure");
}

/// The secret every file below holds; no message may show it.
const SECRET: &str = "S3CR3T-91ab";

/// Case 9: a fio `include` of a file that is not a job file quoted its first line
/// (`include /etc/shadow`: `option "root:*:20228:..." outside of a [section]`), on the command
/// line and through the workbench (`POST /api/job/read`). The class: no reader quotes a file it
/// does not recognise, whatever the user points it at.
#[test]
fn no_reader_quotes_a_file_it_does_not_read() {
    let dir = scratch("readers-secrets");
    let shadow = format!("root:$6${SECRET}:20228:0:99999:7:::\ndaemon:*:20228:0:99999:7:::\n");
    let files = [
        ("shadow", shadow.clone()),
        ("my.cnf", format!("[client]\nuser=root\npassword={SECRET}\n")),
        ("env", format!("PASSWORD={SECRET}\n")),
        ("netrc", format!("machine example.com login me password {SECRET}\n")),
        ("credentials.toml", format!("[registry]\ntoken = \"{SECRET}\"\n")),
        ("token.json", format!("\"{SECRET}\"")),
        ("schema.json", format!("{{\"schema\": \"{SECRET}\"}}")),
        ("key.json", format!("{{\"token\": \"{SECRET}\", \"schema\": 5}}")),
    ];
    for (name, text) in &files {
        std::fs::write(dir.join(name), text).unwrap();
        std::fs::write(dir.join(format!("{name}.icf")), text).unwrap();
        std::fs::write(dir.join(format!("{name}.fio")), format!("include {name}\n[job]\ninclude {name}\n")).unwrap();
        std::fs::create_dir_all(dir.join(format!("j-{name}"))).unwrap();
        std::fs::write(dir.join(format!("j-{name}/journal.json")), text).unwrap();
    }
    std::fs::write(dir.join("t.dat"), vec![0u8; 4096]).unwrap();
    for (name, _) in &files {
        let (icf, fio, journal) = (format!("{name}.icf"), format!("{name}.fio"), format!("j-{name}"));
        let commands: Vec<Vec<&str>> = vec![
            vec!["run", name],
            vec!["convert", name],
            vec!["study", name],
            vec!["convert", &icf],
            vec!["convert", &fio],
            vec!["run", "--spec-file", name, "--target", "null"],
            vec!["run", "--spec-file", &icf, "--target", "null"],
            vec!["compare", name, name],
            vec!["report", name, "-o", "r.html"],
            vec!["distil", name],
            vec!["replay", name, "--target", "null"],
            vec!["verify", "--target", "t.dat", "--map", name],
            vec!["verify", "--journal", &journal],
        ];
        for args in commands {
            let out = iogauge_in(&dir, &args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(!err.contains(SECRET) && !err.contains("root:"), "{args:?} quotes what it read: {err}");
        }
    }
    // As written: the include of /etc/shadow itself, by the command line and the workbench.
    std::fs::write(dir.join("inc.fio"), "include /etc/shadow\n[j]\nrw=read\n").unwrap();
    let out = iogauge_in(&dir, &["convert", "inc.fio"]);
    refused(&out, "/etc/shadow:1", "not a fio option");
    let wb = crate::fuzz::workbench::Workbench::start();
    for text in
        ["include /etc/shadow\n[j]\nrw=read\n".to_string(), format!("[j]\ninclude {}\n", dir.join("shadow").display())]
    {
        let body = json!({ "name": "inc.fio", "text": text }).to_string();
        let (status, answer) = wb.post("/api/job/read", body.as_bytes());
        let answer = String::from_utf8_lossy(&answer);
        assert_eq!(status, 400, "{answer}");
        assert!(!answer.contains(SECRET) && !answer.contains("root:"), "{answer}");
    }
}

/// Names and labels from other tools' files and documents (a job's name in fio's JSON, a
/// worker's in Iometer's file, a specification's in a result document) reach the terminal
/// written out (`\u{1b}`), never as the escape sequence they hold.
#[test]
fn escapes_in_what_is_read_never_reach_the_terminal() {
    let dir = scratch("readers-escapes");
    let esc = "\u{1b}]0;owned\u{7}\u{1b}[2J";
    let mut fio: Value = serde_json::from_str(&fixture("fio-3.33-two-groups.json")).unwrap();
    fio["jobs"][0]["jobname"] = json!(esc);
    std::fs::write(dir.join("f.json"), fio.to_string()).unwrap();
    let doc = result_with(|d| {
        d["results"][0]["spec"] = json!(esc);
        d["results"][0]["workers"][0]["spec"] = json!(esc);
    });
    std::fs::write(dir.join("r.json"), doc).unwrap();
    let csv = fixture("iometer-1.1-cycling.csv").replace("Worker 1", esc).replace(",Default,", &format!(",{esc},"));
    std::fs::write(dir.join("i.csv"), csv).unwrap();
    for f in ["f.json", "r.json", "i.csv"] {
        let out = iogauge_in(&dir, &["compare", f, f, "--detail", "workers"]);
        assert!(out.status.success(), "{f}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(r"\u{1b}]0;owned\u{7}"), "{f}: the name written out: {text}");
        assert!(!out.stdout.contains(&0x1b) && !out.stderr.contains(&0x1b), "{f}: an escape reached the terminal");
    }
    // A refusal that quotes a line or a value of a file (a trace's, a fio job's) writes it out too.
    std::fs::write(dir.join("t.iolog"), format!("fio version 3 iolog\n0 f read 0 {esc}\n")).unwrap();
    std::fs::write(dir.join("j.fio"), format!("[j]\nbs={esc}\n")).unwrap();
    for args in [["distil", "t.iolog"], ["convert", "j.fio"]] {
        let out = iogauge_in(&dir, &args);
        assert_eq!(out.status.code(), Some(2));
        assert!(!out.stderr.contains(&0x1b), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// A journal's head says how many blocks each target has, and 16 bytes a block are held
/// while it is read: a 200-byte journal.json saying 99,999,999 blocks asked for 1.6 GB. The
/// blocks must fit in the target (and all together within one map's 2^27).
#[test]
fn a_journal_is_read_within_its_targets() {
    let dir = scratch("readers-journal");
    let t = dir.join("t.dat");
    std::fs::write(&t, vec![0u8; 1 << 20]).unwrap();
    std::fs::create_dir(dir.join("j")).unwrap();
    let head = json!({ "schema": "iogauge.journal/1", "block_bytes": 4096, "targets": [[t, 99_999_999]], "runs": [7] });
    std::fs::write(dir.join("j/journal.json"), head.to_string()).unwrap();
    let (out, _, peak_kib) = measured(&dir, &["verify", "--journal", "j"]);
    refused(&out, "journal j", "99999999 blocks of 4096 bytes, and it holds 1048576 bytes");
    assert!(peak_kib < 64 << 10, "{peak_kib} KiB");
}

/// A huge `offset_increment` made `convert` wrap copies' offsets past 2^64 silently; a
/// workbench asked for manager `rank=4294967296` answered for rank 0.
#[test]
fn values_that_would_wrap_are_refused() {
    let dir = scratch("readers-wrap");
    std::fs::write(
        dir.join("o.fio"),
        "[j]\nfilename=/tmp/x\nsize=1m\nnumjobs=3\noffset_increment=9223372036854775807\nrw=read\n",
    )
    .unwrap();
    refused(&iogauge_in(&dir, &["convert", "o.fio"]), "o.fio", "beyond 2^63 bytes");
    let wb = crate::fuzz::workbench::Workbench::start();
    for rank in ["4294967296", "-1"] {
        let (status, answer) = wb.get(&format!("/api/targets?rank={rank}"));
        assert_eq!(status, 400, "{}", String::from_utf8_lossy(&answer));
    }
}

/// Iometer's file of `disks` DISK rows, each a target of its own, in one `'Results` group.
fn iometer_of(disks: usize) -> String {
    let csv = fixture("iometer-1.1-cycling.csv");
    let lines: Vec<&str> = csv.lines().collect();
    let at = lines.iter().position(|l| *l == "'Results").unwrap();
    let disk = lines[at..].iter().find(|l| l.starts_with("DISK,")).unwrap();
    let mut out: String = lines[..at + 2]
        .iter()
        .chain(lines[at + 2..].iter().take_while(|l| !l.starts_with('\'')))
        .map(|l| format!("{l}\n"))
        .collect();
    let cells: Vec<&str> = disk.split(',').collect();
    for k in 0..disks {
        let name = format!("disk{k}");
        out.push_str(&[&cells[..1], &[name.as_str()], &cells[2..]].concat().join(","));
        out.push('\n');
    }
    out
}

/// fio's JSON of `jobs` jobs, each named apart, in one group.
fn fio_of(jobs: usize) -> String {
    let mut v: Value = serde_json::from_str(&fixture("fio-3.33-two-groups.json")).unwrap();
    let job = v["jobs"][0].clone();
    v["jobs"] = (0..jobs)
        .map(|k| {
            let mut j = job.clone();
            j["jobname"] = json!(format!("job{k}"));
            j["job options"]["filename"] = json!(format!("/tmp/f{k}"));
            j
        })
        .collect();
    v.to_string()
}

/// A spec file of `n` specifications.
fn specs_of(n: usize) -> String {
    (0..n)
        .map(|k| format!("[[spec]]\nname = \"s{k}\"\nlines = [{{ size = \"4K\", read = 100, random = 100 }}]\n"))
        .collect()
}

/// A fio job file of `jobs` job sections after a `[global]` one.
fn fio_jobs_of(jobs: usize) -> String {
    let each = (0..jobs).map(|k| format!("[j{k}]\nrw=randread\nbs=4k\n"));
    std::iter::once("[global]\nsize=1m\n".to_string()).chain(each).collect()
}

/// Iometer's file and fio's JSON read by compare, a spec file by run and a fio job file by
/// convert, in time linear in their size (each was quadratic: 42 MB of Iometer's CSV took
/// 108 s, 20,000 fio jobs 34 s, 100,000 specifications over 30 s, a job file of 32,000 job
/// sections 19 s, writing its TOML and looking up its workers' specifications) and memory a
/// multiple of it. Each is read at two sizes,
/// the second 4 times the first: linear reading takes 4 times the CPU, quadratic 16 times.
/// The bound between, 9, holds a measurement's noise either way: CPU time (not wall time,
/// which a loaded machine stretches) of 0.12 s or more at the first size, in 10 ms steps,
/// came within 4.2 to 4.7 times in three runs here with the machine's load average at 12 to 17
/// (other builds and tests beside). The memory bounds are this machine's peaks with half again
/// as margin: compare holds two documents, each 8 to 11 times its text (fio's JSON tree,
/// Iometer's rows); the toml crate's parse of a spec file takes 60 times its text, convert
/// 83 times a fio job file's (a specification and a worker for each 27-byte job, and the TOML).
#[test]
fn reading_is_linear_in_the_files_size() {
    let dir = scratch("readers-linear");
    /// A file's name, what makes it of a size, the first size, its bytes of memory per byte
    /// of text at most, and the command that reads it.
    type Case = (&'static str, fn(usize) -> String, usize, u64, &'static [&'static str]);
    let cases: [Case; 4] = [
        ("j.fio", fio_jobs_of, 6_000, 125, &["convert", "j.fio"]),
        ("i.csv", iometer_of, 12_000, 2 * 16, &["compare", "i.csv", "i.csv"]),
        ("f.json", fio_of, 1_500, 2 * 16, &["compare", "f.json", "f.json"]),
        (
            "s.toml",
            specs_of,
            20_000,
            90,
            &["run", "--spec-file", "s.toml", "--target", "null", "--ios", "1", "--no-history", "-q"],
        ),
    ];
    for (file, make, n, per_byte, args) in cases {
        let mut seen = Vec::new();
        for n in [n, 4 * n] {
            let text = make(n);
            std::fs::write(dir.join(file), &text).unwrap();
            let (out, cpu, peak_kib) = measured(&dir, args);
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
            // iogauge's own 15 MiB beside what it holds of the file.
            assert!(
                peak_kib << 10 < (32 << 20) + per_byte * text.len() as u64,
                "{args:?}: {peak_kib} KiB for {} bytes",
                text.len()
            );
            seen.push((text.len(), cpu));
        }
        let [(small, a), (large, b)] = seen[..] else { unreachable!("two sizes") };
        assert!(b < 9.0 * a.max(0.01), "{args:?}: {small} bytes in {a} s of CPU, {large} in {b} s: not linear");
    }
}

/// Words a token file holds (issue 82, F3): `include /etc/machine-id` said `/etc/machine-id:1:
/// option 3d1219c7... in [r] is not one of fio's options`, and a job file whose first line
/// was a token quoted it; an access key, API tokens, base64 alike.
const TOKENS: [&str; 6] = [
    "3d1219c7a4b84e0e9f2b6c1d5e7a9b0c",
    "AKIAIOSFODNN7EXAMPLE",
    "sk-live-4eC39HqLyjWDarjtT1zdp7dc",
    "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy",
    "Zm9vYmFy==",
    "ghp_R3alT0kenValue123456",
];

/// A fio job file, or a file it includes, is quoted only once it has shown itself one (a
/// `[section]`, or an option fio has): before that a word fio does not know is said to be no
/// job file, unquoted, by `convert` and by the workbench; a typo in a real job is quoted.
#[test]
fn a_file_that_is_no_fio_job_is_not_quoted() {
    let dir = scratch("readers-tokens");
    let wb = crate::fuzz::workbench::Workbench::start();
    for (k, token) in TOKENS.iter().enumerate() {
        std::fs::write(dir.join(format!("tok{k}")), format!("{token}\n")).unwrap();
        let inc = dir.join(format!("tok{k}")).display().to_string();
        let jobs = [
            (format!("inc{k}.fio"), format!("[r]\nrw=randread\ninclude {inc}\n"), inc.clone()),
            (format!("first{k}.fio"), format!("{token}\n[r]\nrw=randread\n"), format!("first{k}.fio:1")),
        ];
        for (name, text, at) in jobs {
            std::fs::write(dir.join(&name), &text).unwrap();
            let out = iogauge_in(&dir, &["convert", &name]);
            refused(&out, &at, "not a fio job file (neither a [section] nor a fio option)");
            let err = String::from_utf8_lossy(&out.stderr).to_ascii_lowercase();
            let word = token.trim_end_matches('=').to_ascii_lowercase();
            assert!(!err.contains(&word), "{name} quotes {token}: {err}");
            let body = json!({ "name": name, "text": text }).to_string();
            let (status, answer) = wb.post("/api/job/read", body.as_bytes());
            let answer = String::from_utf8_lossy(&answer).to_ascii_lowercase();
            assert_eq!(status, 400, "{answer}");
            assert!(!answer.contains(&word) && answer.contains("not a fio job file"), "{answer}");
        }
    }
    // /proc/self/environ: a variable's name and value (iogauge's own environment, here one).
    std::fs::write(dir.join("env.fio"), "[r]\nrw=randread\ninclude /proc/self/environ\n").unwrap();
    let out = Command::new(bin())
        .args(["convert", "env.fio"])
        .current_dir(&dir)
        .env_clear()
        .env("GH_TOKEN", TOKENS[5])
        .output()
        .unwrap();
    refused(&out, "/proc/self/environ:1", "not a fio job file");
    assert!(!String::from_utf8_lossy(&out.stderr).to_ascii_lowercase().contains("gh_token"));
    // A real job file's typo is quoted, as its user needs.
    std::fs::write(dir.join("typo.fio"), "[r]\nrw=randrw\nrw_mix=50\n").unwrap();
    refused(
        &iogauge_in(&dir, &["convert", "typo.fio"]),
        "typo.fio:3",
        "option rw_mix in [r] is not one of fio's options",
    );
}

/// A job's names reach the terminal in tables and messages (issue 82, F5: a worker named
/// `w\u{1b}]0;PWNED\u{7}\u{1b}[2J` retitled the window and cleared the screen in `run`'s
/// "creating test file" and table): a control character (C0, DEL, C1) in a worker's,
/// specification's or target's name is refused where the job is read, in TOML, fio's job files
/// and Iometer's, naming the key and writing the character out; nothing is created.
#[test]
fn control_characters_in_a_jobs_names_are_refused() {
    let dir = scratch("readers-control");
    let t = dir.join("t").display().to_string();
    let spec = "[[spec]]\nname = \"s\"\nlines = [{ size = \"4K\", read = 100, random = 100 }]\n";
    let worker = |name: &str, target: &str| {
        format!("{spec}[[worker]]\nname = \"{name}\"\nspec = \"s\"\ntargets = [\"{target}\"]\n")
    };
    let icf = include_str!("../fixtures/iometer-1.1.icf");
    let cases = [
        ("w.toml", worker("w\\u001b]0;PWNED\\u0007\\u001b[2J", &t), "name holds the control character \\u{1b}"),
        ("t.toml", worker("w", &format!("{t}\\u001b[31mred")), "target holds the control character \\u{1b}"),
        ("d.toml", worker("w\\u007f", &t), "name holds the control character \\u{7f}"),
        ("c1.toml", worker("w\\u009b2J", &t), "name holds the control character \\u{9b}"),
        (
            "s.toml",
            format!("{}[[worker]]\nspec = \"s\\u001b\"\ntargets = [\"{t}\"]\n", spec.replace("\"s\"", "\"s\\u001b\"")),
            "[[spec]]'s name holds the control character \\u{1b}",
        ),
        (
            "f.fio",
            format!("[j]\nrw=read\nsize=1m\nfilename={t}\u{1b}[32mgreen\n"),
            "f.fio:4: filename= holds the control character \\u{1b}",
        ),
        (
            "j.fio",
            format!("[j\u{1b}[2J\u{7}]\nrw=read\nsize=1m\nfilename={t}\n"),
            "j.fio:1: a [section]'s name holds the control character \\u{1b}",
        ),
        ("w.icf", icf.replace("\tWorker 1", "\tWorker\u{1b}[2J"), "name holds the control character \\u{1b}"),
        (
            "a.icf",
            icf.replace("\t4K; 75% Read; 100% random", "\t4K\u{1b}[2J"),
            "name holds the control character \\u{1b}",
        ),
    ];
    for (file, text, says) in cases {
        std::fs::write(dir.join(file), text).unwrap();
        let map = format!("PHYSICALDRIVE:1={t}");
        for mut args in
            [vec!["convert", file], vec!["run", file, "--no-history", "--time", "1s", "--detail", "workers"]]
        {
            if file.ends_with(".icf") {
                args.extend(["--map-target", &map]);
            }
            let out = iogauge_in(&dir, &args);
            refused(&out, file, says);
            assert!(
                !out.stdout.contains(&0x1b) && !out.stderr.contains(&0x1b),
                "{args:?}: an escape reached the terminal"
            );
            let made = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned());
            assert!(made.filter(|n| n.starts_with('t') && n != "t.toml").count() == 0, "{args:?} created a target");
        }
    }
}

/// Numbers out of a reader's range are refused as written (issue 82, F6), never cut down to
/// the range's end: fio's `rwmixread=300` ran as 100 % reads (fio refuses it), 4294967296
/// blocks of thinktime as 4294967295, an `iodepth=4294967297` was refused as `outstanding =
/// 4294967295`, a thinktime past 4294967295 ms wrapped round (4295000s ran as 32704 ms), and
/// Iometer's delay and burst were cut to 4294967295.
#[test]
fn numbers_out_of_range_are_refused_as_written() {
    let dir = scratch("readers-range");
    let job = |opt: &str| format!("[j]\nrw=randrw\nsize=1m\nfilename=/tmp/x\n{opt}\n");
    let icf = include_str!("../fixtures/iometer-1.1.icf");
    let cases = [
        ("m.fio", job("rwmixread=300"), "m.fio:5: rwmixread=300: give 0 to 100 (% of the I/Os that read)"),
        ("w.fio", job("rwmixwrite=101"), "w.fio:5: rwmixwrite=101: give 0 to 100 (% of the I/Os that write)"),
        ("b.fio", job("thinktime_blocks=4294967296"), "b.fio:5: thinktime_blocks=4294967296: give at most 4294967295"),
        ("d.fio", job("iodepth=4294967297"), "d.fio:5: iodepth=4294967297: give at most 4294967295"),
        ("s.fio", job("fsync=4294967296"), "s.fio:5: fsync=4294967296: give at most 4294967295"),
        ("t.fio", job("thinktime=4295000s"), "t.fio:1: thinktime 4295000000 ms is out of range"),
        (
            "l.icf",
            icf.replace("4096,100,75,100,0,1,0,0", "4096,100,75,100,99999999999999,1,0,0"),
            "delay (ms): 99999999999999 is out of range",
        ),
        (
            "u.icf",
            icf.replace("4096,100,75,100,0,1,0,0", "4096,100,75,100,0,4294967296,0,0"),
            "burst length: 4294967296 is out of range",
        ),
    ];
    for (file, text, says) in cases {
        std::fs::write(dir.join(file), text).unwrap();
        refused(&iogauge_in(&dir, &["convert", file]), file, says);
    }
}
