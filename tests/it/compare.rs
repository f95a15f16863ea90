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
        let (pa, pb) = (num(r.0, "totals/percentiles_ms/p99"), num(r.1, "totals/percentiles_ms/p99"));
        assert_eq!(d[4], format!("{:+.1}", (pb - pa) / pa * 100.0), "p99 column: {text}");
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
