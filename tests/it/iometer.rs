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
