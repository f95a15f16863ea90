//! `iogauge compare`: the % differences are those of the documents' own numbers.

mod common;

use common::*;

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
    for (k, spec) in ["oltp-8k", "random-read-4k"].iter().enumerate() {
        let line = text.lines().find(|l| l.starts_with(spec)).unwrap_or_else(|| panic!("no row for {spec}: {text}"));
        let cells: Vec<&str> = line.split_whitespace().collect();
        let (ia, ib) = (num(&da["results"][k], "totals/iops"), num(&db["results"][k], "totals/iops"));
        assert_eq!(cells[3], format!("{:+.1}", (ib - ia) / ia * 100.0), "{line}");
        let (ma, mb) = (num(&da["results"][k], "totals/mbps"), num(&db["results"][k], "totals/mbps"));
        assert_eq!(cells[6], format!("{:+.1}", (mb - ma) / ma * 100.0), "{line}");
    }
    // Bad input: one line, exit 2.
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "{\"schema\": \"other/9\"}").unwrap();
    let out = iogauge(&["compare", junk.to_str().unwrap(), a.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("unknown schema 'other/9'") && err.trim_end().lines().count() == 1, "{err}");
}
