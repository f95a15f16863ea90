//! Iometer's results file: iogauge's `--iometer-csv` (a run, a study) against a
//! file laid out as Iometer 1.1 writes one (tests/fixtures/iometer-1.1-cycling.csv, written by
//! us from Iometer's source: ManagerList.cpp, Manager.cpp, Worker.cpp), and read the way the
//! scripts people run on Iometer's files read them.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use common::*;
use regex_lite::Regex;
use serde_json::Value;

const FIXTURE: &str = include_str!("../fixtures/iometer-1.1-cycling.csv");

/// What a cell holds, as far as a consumer of the file can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Empty,
    /// Iometer's fixed decimals: six places.
    Decimal,
    Integer,
    /// Iometer's "ambiguous" and transactions per connection of a disk worker.
    MinusOne,
    Text,
}

fn class(cell: &str) -> Class {
    // Compiled once: a file has thousands of cells.
    static DECIMAL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\d+\.\d{6}$").unwrap());
    match cell {
        "" => Class::Empty,
        "-1" => Class::MinusOne,
        c if c.bytes().all(|b| b.is_ascii_digit()) => Class::Integer,
        c if DECIMAL.is_match(c) => Class::Decimal,
        _ => Class::Text,
    }
}

/// One `'Results` group: its rows split into cells.
type Group = Vec<Vec<String>>;

/// Reads the file as the converters do: a header is the line after `'Results`; rows run to
/// the next line starting with `'`.
fn groups(text: &str) -> Vec<Group> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if *l != "'Results" {
            continue;
        }
        assert!(lines[i + 1].starts_with("'Target Type,Target Name,"), "header after 'Results");
        let rows = lines[i + 2..].iter().take_while(|l| !l.starts_with('\''));
        out.push(rows.map(|r| r.split(',').map(String::from).collect()).collect());
    }
    out
}

/// For each row type and column, the classes of cell seen.
fn classes(text: &str) -> BTreeMap<(String, usize), BTreeSet<Class>> {
    let mut out: BTreeMap<(String, usize), BTreeSet<Class>> = BTreeMap::new();
    for row in groups(text).into_iter().flatten() {
        for (col, cell) in row.iter().enumerate() {
            let c = if col <= 2 && !cell.is_empty() { Class::Text } else { class(cell) };
            out.entry((row[0].clone(), col)).or_default().insert(c);
        }
    }
    out
}

/// The widely used converter's reading: an ALL row is the type, "All", the specification,
/// three counts, then 17 decimals from IOps to Maximum Connection Time; an access
/// specification line is 8 integers after the `'size,% of size,...` header.
fn converter(text: &str) -> (Vec<Vec<f64>>, Vec<[u64; 8]>) {
    let all = Regex::new(r"^ALL,All,[^,]*,(\d+),(\d+),(\d+),((?:\d+\.\d+,){17})").unwrap();
    let spec = Regex::new(r"^(\d+),(\d+),(\d+),(\d+),(\d+),(\d+),(\d+),(\d+)").unwrap();
    let (mut rows, mut specs) = (Vec::new(), Vec::new());
    let mut in_specs = false;
    for l in text.lines() {
        if let Some(c) = all.captures(l) {
            rows.push(c[4].trim_end_matches(',').split(',').map(|v| v.parse().unwrap()).collect());
        }
        if l.starts_with("'size,% of size,% reads,% random,delay,burst,align,reply") {
            in_specs = true;
        } else if l.starts_with('\'') {
            in_specs = false;
        } else if in_specs {
            let c = spec.captures(l).unwrap_or_else(|| panic!("access specification line {l:?}"));
            specs.push(std::array::from_fn(|i| c[i + 1].parse().unwrap()));
        }
    }
    (rows, specs)
}

/// Every cell of iogauge's file is of a class Iometer writes in that row type and column, and
/// every row is as long as Iometer's of its type.
fn assert_laid_out_as_iometer(ours: &str) {
    let mut theirs = classes(FIXTURE);
    // Starting Sector, Maximum Size and Queue Depth are -1 (AMBIGUOUS_VALUE) where a row's parts
    // differ; the fixture's parts agree.
    for ((_, col), set) in theirs.iter_mut() {
        if (45..=47).contains(col) && set.contains(&Class::Integer) {
            set.insert(Class::MinusOne);
        }
    }
    let mine = classes(ours);
    for ((kind, col), seen) in &mine {
        let Some(expected) = theirs.get(&(kind.clone(), *col)) else {
            panic!("{kind} row has a column {col} Iometer does not write");
        };
        assert!(seen.is_subset(expected), "{kind} column {col}: iogauge writes {seen:?}, Iometer {expected:?}");
    }
    for kind in ["ALL", "MANAGER", "PROCESSOR", "WORKER", "DISK"] {
        let width = |c: &BTreeMap<(String, usize), BTreeSet<Class>>| c.keys().filter(|k| k.0 == kind).count();
        assert_eq!(width(&mine), width(&theirs), "{kind} row length");
    }
}

#[test]
fn the_fixture_reads_as_iometers_files_do() {
    // The reader and the rules above, on the file in Iometer's own layout.
    let (rows, specs) = converter(FIXTURE);
    assert_eq!(rows.len(), 2, "one ALL row per step of the cycle");
    assert_eq!(specs, vec![[2048, 100, 67, 100, 0, 1, 0, 0]]);
    assert_eq!(groups(FIXTURE).len(), 2);
}

#[test]
fn a_run_is_laid_out_as_iometer_lays_out_a_test() {
    let dir = scratch("iometer-run");
    // Two files of different sizes: the worker's Maximum Size is Iometer's "ambiguous" -1.
    for (f, mib) in [("a.dat", 8), ("b.dat", 16)] {
        std::fs::write(dir.join(f), vec![7u8; mib << 20]).unwrap();
    }
    let args = [
        "run",
        "--target",
        "a.dat",
        "--target",
        "b.dat",
        "--outstanding",
        "4",
        "--spec",
        "random-read-4k",
        "--spec",
        "random-write-4k",
        "--ios",
        "40000",
        "--allow-write",
        "a.dat",
        "--allow-write",
        "b.dat",
        "--iometer-csv",
        "r.csv",
        "--json",
        "r.json",
        "-q",
    ];
    ok_in(&dir, &args);
    let text = std::fs::read_to_string(dir.join("r.csv")).unwrap();
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    assert_laid_out_as_iometer(&text);

    // One test: its opening once, each specification's block before its results, one end.
    let count = |m: &str| text.lines().filter(|l| *l == m).count();
    assert_eq!(text.lines().next(), Some("'Test Type,Test Description"));
    assert_eq!(text.lines().nth(1).map(|l| l.split(',').next()), Some(Some("0")), "a run is a normal test");
    assert_eq!((count("'Test Type,Test Description"), count("'Access specifications")), (1, 2));
    assert_eq!((count("'Results"), count("'End Test")), (2, 1));
    assert_eq!(text.lines().last(), Some("'End Test"));

    let (all, specs) = converter(&text);
    assert_eq!(specs, vec![[4096, 100, 100, 100, 0, 1, 0, 0], [4096, 100, 0, 100, 0, 1, 0, 0]]);
    for (k, group) in groups(&text).iter().enumerate() {
        let json = &doc["results"][k]["totals"];
        // IOps in the file is the document's to six places; exact counts are exact.
        assert!((all[k][0] - json["iops"].as_f64().unwrap()).abs() < 1e-6);
        let cell = |row: &Vec<String>, col: usize| row[col].parse::<f64>().unwrap();
        let all_row = &group[0];
        assert_eq!(cell(all_row, 32) + cell(all_row, 33), 40_000.0, "every I/O counted");
        assert_eq!((1..=21).map(|b| cell(all_row, 58 + b)).sum::<f64>(), 40_000.0, "the bins hold every I/O");
        let rows = |kind: &'static str| group.iter().filter(move |r| r[0] == kind);
        // Raw times are timer ticks at Processor Speed per second: they give back the averages
        // and the recorded window.
        let manager = rows("MANAGER").next().unwrap();
        let speed = cell(manager, 53);
        let ios = cell(manager, 32) + cell(manager, 33);
        let avg_ms = cell(manager, 38) / ios / speed * 1e3;
        assert!((avg_ms - cell(manager, 20)).abs() < 1e-6 + 1e-6 * avg_ms, "raw {avg_ms} ms vs {}", manager[20]);
        let window = doc["results"][k]["duration_s"].as_f64().unwrap();
        assert!((cell(manager, 44) / speed - window).abs() < 1e-6, "Total Raw Run Time is the window");
        // Sectors: each DISK its own, the WORKER's -1 where they differ; queue depth 4.
        let disks: Vec<_> = rows("DISK").map(|r| (r[1].clone(), r[46].clone(), r[47].clone())).collect();
        assert_eq!(disks.len(), 2);
        for (name, sectors, qd) in &disks {
            let mib = if name.ends_with("a.dat") { 8 } else { 16 };
            assert_eq!((sectors.as_str(), qd.as_str()), (((mib << 20) / 512).to_string().as_str(), "4"));
        }
        let worker = rows("WORKER").next().unwrap();
        assert_eq!((worker[45].as_str(), worker[46].as_str(), worker[47].as_str()), ("0", "-1", "4"));
        assert_eq!(rows("PROCESSOR").count(), std::thread::available_parallelism().unwrap().get());
    }
}

#[test]
fn a_study_is_one_cycling_test() {
    let dir = scratch("iometer-study");
    let job = dir.join("qd.toml");
    std::fs::write(
        &job,
        r#"
[test]
ios = 20000
run = ["random-read-4k"]
[[worker]]
targets = ["null"]
[study]
outstanding = [1, 4, 16]
repeat = 2
"#,
    )
    .unwrap();
    ok_in(&dir, &["study", job.to_str().unwrap(), "--iometer-csv", "s.csv", "--json", "s.json", "-q"]);
    let text = std::fs::read_to_string(dir.join("s.csv")).unwrap();
    assert_laid_out_as_iometer(&text);
    assert_eq!(
        text.lines().nth(1).and_then(|l| l.split(',').next()),
        Some("6"),
        "Iometer's cycling of outstanding I/Os"
    );
    let count = |m: &str| text.lines().filter(|l| *l == m).count();
    assert_eq!(count("'Access specifications"), 1, "the specification once: it does not change");
    assert_eq!(count("'End Test"), 1);
    // A 'Results group per run of each point, in the order run, each with its queue depth.
    let depths: Vec<String> = groups(&text).iter().map(|g| g[0][47].clone()).collect();
    assert_eq!(depths, ["1", "1", "4", "4", "16", "16"]);
    let (all, _) = converter(&text);
    assert_eq!(all.len(), 6);
    let study: Value = serde_json::from_slice(&std::fs::read(dir.join("s.json")).unwrap()).unwrap();
    let iops: Vec<f64> = study["points"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["runs"].as_array().unwrap())
        .map(|r| num(r, "results/0/totals/iops"))
        .collect();
    for (row, iops) in all.iter().zip(&iops) {
        assert!((row[0] - iops).abs() < 1e-6, "{} vs {iops}", row[0]);
    }
}

/// A figure of Iometer's results file, by the header's name, as the document holds it for the
/// row's I/Os (`m`: a `Metrics` of the document, `window_s` the recorded window); None for a
/// column that is not an I/O figure.
fn io_figure(column: &str, m: &Value, window_s: f64) -> Option<f64> {
    // A response time of no I/O is null in the document, 0 in Iometer's file.
    let ms = |k: &str| m[k].as_f64().unwrap_or(0.0);
    let raw = |d: &str, k: &str| num(&m["raw"][d], k);
    Some(match column {
        "IOps" | "Transactions per Second" => num(m, "iops"),
        "Read IOps" => num(m, "read_iops"),
        "Write IOps" => num(m, "write_iops"),
        "MiBps (Binary)" => num(m, "mibps"),
        "Read MiBps (Binary)" => num(m, "read_mibps"),
        "Write MiBps (Binary)" => num(m, "write_mibps"),
        "MBps (Decimal)" => num(m, "mbps"),
        "Read MBps (Decimal)" => num(m, "read_mbps"),
        "Write MBps (Decimal)" => num(m, "write_mbps"),
        "Average Response Time" | "Average Transaction Time" => ms("avg_response_ms"),
        "Average Read Response Time" => ms("avg_read_response_ms"),
        "Average Write Response Time" => ms("avg_write_response_ms"),
        "Maximum Response Time" | "Maximum Transaction Time" => ms("max_response_ms"),
        "Maximum Read Response Time" => ms("max_read_response_ms"),
        "Maximum Write Response Time" => ms("max_write_response_ms"),
        "Errors" => num(m, "errors"),
        "Read Errors" => num(m, "read_errors"),
        "Write Errors" => num(m, "write_errors"),
        "Bytes Read" => num(m, "read_bytes"),
        "Bytes Written" => num(m, "write_bytes"),
        "Read I/Os" => num(m, "read_ios"),
        "Write I/Os" => num(m, "write_ios"),
        "Connections per Second" | "Average Connection Time" | "Maximum Connection Time" | "Connections" => 0.0,
        // A disk worker's: Iometer's "ambiguous".
        "Transactions per Connection" => -1.0,
        "Total Raw Read Response Time" => raw("read", "response_sum_ns"),
        "Total Raw Write Response Time" => raw("write", "response_sum_ns"),
        "Total Raw Transaction Time" => raw("read", "response_sum_ns") + raw("write", "response_sum_ns"),
        "Maximum Raw Read Response Time" => raw("read", "response_max_ns"),
        "Maximum Raw Write Response Time" => raw("write", "response_max_ns"),
        "Maximum Raw Transaction Time" => raw("read", "response_max_ns").max(raw("write", "response_max_ns")),
        "Total Raw Connection Time" | "Maximum Raw Connection Time" => 0.0,
        // Timer ticks at Processor Speed (iogauge's: 10^9 a second, nanoseconds).
        "Total Raw Run Time" => (window_s * 1e9).round(),
        _ => latency_bin(column, m)?,
    })
}

/// The I/Os of one of Iometer's latency bins, named `0.5 to 1 mS` or ` >= 10 s`, from the
/// document's histograms (every operation's): each bucket counted where its midpoint falls.
/// The bin's edges are read from its name, apart from iogauge's own list of them.
fn latency_bin(column: &str, m: &Value) -> Option<f64> {
    let us = |v: &str, unit: &str| -> f64 {
        let scale = match unit {
            "uS" => 1.0,
            "mS" => 1e3,
            "S" | "s" => 1e6,
            u => panic!("unit {u} in {column:?}"),
        };
        v.parse::<f64>().unwrap() * scale
    };
    let (lo_us, hi_us) = match column.trim().strip_prefix(">= ") {
        Some(lo) => (us(lo.split(' ').next()?, lo.split(' ').nth(1)?), f64::INFINITY),
        None => {
            let (lo, hi) = column.split_once(" to ")?;
            let (hi, unit) = hi.split_once(' ')?;
            (us(lo, unit), us(hi, unit))
        }
    };
    let mut buckets = Vec::new();
    for op in ["read", "write", "trim", "flush"] {
        for b in m["raw"][op]["histogram"]["buckets"].as_array().into_iter().flatten() {
            buckets.push((b[0].as_u64().unwrap() as u32, b[1].as_u64().unwrap()));
        }
    }
    let all = iogauge::stats::Histogram::from_sparse(&buckets).unwrap();
    let within = all.buckets().filter(|&(lo, hi, _)| {
        let mid_us = (lo + (hi - lo) / 2) as f64 / 1e3;
        mid_us >= lo_us && mid_us < hi_us
    });
    Some(within.map(|(_, _, c)| c as f64).sum())
}

/// `Starting Sector`, `Maximum Size` (512-byte sectors) and `Queue Depth` of `targets`, each
/// where they all agree, else -1 (Iometer's "ambiguous").
fn geometry(column: &str, targets: &[&Value]) -> Option<f64> {
    let of = |f: &dyn Fn(&Value) -> f64| {
        let first = f(targets[0]);
        if targets.iter().all(|t| f(t) == first) { first } else { -1.0 }
    };
    Some(match column {
        "Starting Sector" => of(&|t| (num(t, "start_offset") / 512.0).floor()),
        "Maximum Size" => of(&|t| (num(t, "working_set_bytes") / 512.0).floor()),
        "Queue Depth" => of(&|t| num(t, "outstanding")),
        _ => return None,
    })
}

/// The host's CPU columns of a row from the document's `cpu` (a `CpuUsage`, or one CPU's
/// share of it); None for another column.
fn cpu_figure(column: &str, cpu: &Value) -> Option<f64> {
    Some(match column {
        "% CPU Utilization" => num(cpu, "utilization_pct"),
        "% User Time" => num(cpu, "user_pct"),
        "% Privileged Time" => num(cpu, "system_pct"),
        "% DPC Time" => num(cpu, "softirq_pct"),
        "% Interrupt Time" => num(cpu, "irq_pct"),
        _ => return None,
    })
}

/// What a row's column holds, by the header's name (None: left empty, as Iometer leaves it).
type Column<'a> = Box<dyn Fn(&str) -> Option<f64> + 'a>;

/// One row of the file as the document says it should be: its type, name and specification,
/// and each column's value.
struct Expected<'a> {
    kind: &'static str,
    name: String,
    spec: String,
    value: Column<'a>,
}

/// The targets of `workers`, in order.
fn targets_of<'a>(workers: &[&'a Value]) -> Vec<&'a Value> {
    workers.iter().flat_map(|w| w["targets"].as_array().unwrap().iter()).collect()
}

/// An ALL or MANAGER row's columns: its counts (`managers` None on a MANAGER row), the host's
/// columns from `totals`, the geometry of `targets` and the I/O figures.
fn host_row<'a>(
    counts: (Option<f64>, usize),
    totals: &'a Value,
    targets: Vec<&'a Value>,
    window: f64,
    raw: bool,
) -> Column<'a> {
    let (managers, workers) = (counts.0, counts.1 as f64);
    let disks = targets.len() as f64;
    let cpu = &totals["cpu"];
    Box::new(move |c| match c {
        "# Managers" => managers,
        "# Workers" => Some(workers),
        "# Disks" => Some(disks),
        "Interrupts per Second" => Some(num(cpu, "interrupts_per_sec")),
        "CPU Effectiveness" => Some(num(cpu, "effectiveness")),
        "Packets/Second" | "Packet Errors" | "Segments Retransmitted/Second" => Some(0.0),
        // The ALL row has no raw times and no timer speed (Iometer's ManagerList.cpp).
        c if !raw && (c.starts_with("Total Raw") || c.starts_with("Maximum Raw") || c == "Processor Speed") => None,
        "Processor Speed" => Some(1e9),
        c => cpu_figure(c, cpu).or_else(|| geometry(c, &targets)).or_else(|| io_figure(c, totals, window)),
    })
}

/// A WORKER or DISK row's columns: `of` its I/O figures, `targets` its geometry.
fn io_row<'a>(of: &'a Value, targets: Vec<&'a Value>, disks: Option<f64>, window: f64) -> Column<'a> {
    Box::new(move |c| match c {
        "# Disks" => disks,
        "Processor Speed" => Some(1e9),
        c => geometry(c, &targets).or_else(|| io_figure(c, of, window)),
    })
}

/// A manager's rows: its own, its CPUs', then each of its workers' and their targets'.
fn manager_rows<'a>(r: &'a Value, m: &'a Value, rows: &mut Vec<Expected<'a>>) {
    let (window, spec) = (num(r, "duration_s"), r["spec"].as_str().unwrap());
    let mine: Vec<&Value> = r["workers"].as_array().unwrap().iter().filter(|w| w["manager"] == m["rank"]).collect();
    let (name, totals) = (m["host"].as_str().unwrap().to_string(), &m["totals"]);
    let value = host_row((None, mine.len()), totals, targets_of(&mine), window, true);
    rows.push(Expected { kind: "MANAGER", name, spec: spec.into(), value });
    let interrupts = totals["cpu"]["per_cpu_interrupts_per_sec"].as_array().unwrap();
    for (i, cpu) in totals["cpu"]["per_cpu"].as_array().unwrap().iter().enumerate() {
        let value: Column = Box::new(move |c| match c {
            "Processor Speed" => Some(1e9),
            "Interrupts per Second" => Some(interrupts[i].as_f64().unwrap()),
            c => cpu_figure(c, cpu),
        });
        rows.push(Expected { kind: "PROCESSOR", name: format!("CPU {i}"), spec: String::new(), value });
    }
    for w in mine {
        let targets = targets_of(&[w]);
        let (name, spec) = (w["name"].as_str().unwrap().into(), w["spec"].as_str().unwrap().into());
        let value = io_row(w, targets.clone(), Some(targets.len() as f64), window);
        rows.push(Expected { kind: "WORKER", name, spec, value });
        for d in targets {
            let value = io_row(d, vec![d], None, window);
            rows.push(Expected { kind: "DISK", name: d["path"].as_str().unwrap().into(), spec: String::new(), value });
        }
    }
}

/// The rows of `r` (a result of the document) in Iometer's order: ALL, then each manager with
/// its CPUs, its workers and their targets.
fn expected_rows(r: &Value) -> Vec<Expected<'_>> {
    let workers: Vec<&Value> = r["workers"].as_array().unwrap().iter().collect();
    let managers = r["managers"].as_array().unwrap();
    let counts = (Some(managers.len() as f64), workers.len());
    let value = host_row(counts, &r["totals"], targets_of(&workers), num(r, "duration_s"), false);
    let spec = r["spec"].as_str().unwrap().to_string();
    let mut rows = vec![Expected { kind: "ALL", name: "All".into(), spec, value }];
    for m in managers {
        manager_rows(r, m, &mut rows);
    }
    rows
}

/// Every value of iogauge's Iometer file, read back by the header's names as Iometer's readers
/// do, is the result document's: each row type's every column, read and write apart (a mixed
/// workload, so no read column equals its write column), the raw times, the geometry, the
/// host's CPU and each CPU's, and the latency bins from the document's histograms. A cell the
/// document has nothing for is empty. Decimals are Iometer's six places.
#[test]
fn every_value_of_the_file_is_the_documents() {
    let dir = scratch("iometer-values");
    let args = ["run", "--target", "null", "--workers", "2", "--spec", "oltp-8k", "--spec", "file-server"];
    ok_in(&dir, &[&args[..], &["--ios", "30000", "--iometer-csv", "r.csv", "--json", "r.json", "-q"]].concat());
    let text = std::fs::read_to_string(dir.join("r.csv")).unwrap();
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let groups: Vec<usize> = (0..lines.len()).filter(|&i| lines[i] == "'Results").collect();
    let results = doc["results"].as_array().unwrap();
    assert_eq!(groups.len(), results.len(), "a 'Results group per workload");
    let mut differ = 0;
    for (&g, r) in groups.iter().zip(results) {
        let header: Vec<&str> = lines[g + 1].trim_start_matches('\'').split(',').collect();
        let rows: Vec<Vec<&str>> =
            lines[g + 2..].iter().take_while(|l| !l.starts_with('\'')).map(|l| l.split(',').collect()).collect();
        let expected = expected_rows(r);
        let kinds = |v: Vec<&str>| v.join(" ");
        assert_eq!(
            kinds(rows.iter().map(|r| r[0]).collect()),
            kinds(expected.iter().map(|e| e.kind).collect()),
            "the rows, in Iometer's order"
        );
        for (row, want) in rows.iter().zip(&expected) {
            assert_eq!((row[1], row[2]), (want.name.as_str(), want.spec.as_str()), "a {} row's names", want.kind);
            for (col, cell) in row.iter().enumerate().skip(3) {
                let at = format!("{} row {:?}, column {:?}: {cell:?}", want.kind, want.name, header[col]);
                match (want.value)(header[col]) {
                    None => assert_eq!(*cell, "", "{at}: empty where the document has nothing"),
                    Some(v) => {
                        let read: f64 = cell.parse().unwrap_or_else(|_| panic!("{at}: not a number"));
                        // Six decimals: within half a millionth, and the float's own digits.
                        assert!((read - v).abs() <= 5e-7 + v.abs() * 1e-15, "{at}: the document says {v}");
                    }
                }
            }
            let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
            differ += usize::from(row[col("Read MBps (Decimal)")] != row[col("Write MBps (Decimal)")]);
        }
    }
    assert!(differ >= 8, "read and write columns differ in every I/O row ({differ})");
}
