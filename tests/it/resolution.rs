//! A job is resolved once, as written, into the test that runs, and the results say what ran:
//! a study's workers cycle counts workers as the job's `count` does; a workload is named by the
//! specifications its workers ran; a test file reused at another size than asked is said.

use crate::common;

use std::path::Path;

use common::*;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn a_workers_cycle_counts_each_worker_entry_as_written() {
    let dir = scratch("resolution-count");
    let job = write(
        &dir,
        "study.toml",
        "[test]\nios = 2000\nrun = [\"random-read-4k\"]\n[[worker]]\ncount = 2\ntargets = [\"null\"]\n\
         [study]\nworkers = [1, 2]\n",
    );
    let out = ok(&["study", &job, "--json", "-", "--no-history"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for (p, n) in doc["points"].as_array().unwrap().iter().zip([1u64, 2]) {
        assert_eq!(num(p, "params/workers") as u64, n);
        let run = &p["runs"][0]["results"][0];
        let names: Vec<&str> = run["workers"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
        let want: Vec<String> = (1..=n).map(|k| format!("worker {k}")).collect();
        assert_eq!(names, want, "point workers = {n}");
        // Each point does exactly the I/Os asked, shared by its workers.
        assert_eq!(num(run, "totals/ios"), 2000.0);
    }
    // The study records the job as written: one entry, its count as the user gave it.
    assert_eq!(doc["config"]["worker"].as_array().unwrap().len(), 1);
    assert_eq!(doc["config"]["worker"][0]["count"], 2);
}

#[test]
fn a_workload_is_named_by_the_specifications_that_ran() {
    let dir = scratch("resolution-names");
    // One worker runs the listed workload, the other its own (a 64 KiB log writer).
    let job = write(
        &dir,
        "mixed.toml",
        "[test]\nios = 4000\nrun = [\"oltp-8k\"]\n[[worker]]\ntargets = [\"null\"]\n[[worker]]\n\
         spec = \"sql-server-log-64k\"\ntargets = [\"null\"]\n",
    );
    let doc = json(&["run", &job, "--no-history"]);
    let r = &doc["results"][0];
    assert_eq!(r["spec"], "oltp-8k+sql-server-log-64k");
    let specs: Vec<&str> = r["workers"].as_array().unwrap().iter().map(|w| w["spec"].as_str().unwrap()).collect();
    assert_eq!(specs, ["oltp-8k", "sql-server-log-64k"]);
    // --spec on a job whose workers all name their own: nothing would run it. One line, exit 2.
    let own = write(
        &dir,
        "own.toml",
        "[test]\nios = 1000\n[[worker]]\nspec = \"random-read-4k\"\ntargets = [\"null\"]\n[[worker]]\n\
         spec = \"sql-server-log-64k\"\ntargets = [\"null\"]\n",
    );
    let out = iogauge(&["run", &own, "--spec", "oltp-8k", "--no-history"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("every worker names its own spec") && err.contains("oltp-8k"), "{err}");
    // Without --spec the same job runs, named by both its workers' specifications.
    let doc = json(&["run", &own, "--no-history"]);
    assert_eq!(doc["results"][0]["spec"], "random-read-4k+sql-server-log-64k");
}

#[test]
fn a_reused_test_file_of_another_size_is_said() {
    let dir = scratch("resolution-size");
    let file = dir.join("iogauge.tst");
    let path = file.to_str().unwrap();
    let run = |size: &str| {
        let out = ok(&["run", "--target", path, "--file-size", size, "--ios", "200", "--json", "-", "--quiet"]);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (doc, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (first, said) = run("64M");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 64 << 20);
    assert!(first["warnings"].as_array().unwrap().is_empty(), "{said}");
    // Asked larger: the file is reused as it is, and both the document and stderr say so.
    let (second, said) = run("128M");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 64 << 20);
    assert_eq!(num(&second, "target_info/0/size"), (64u64 << 20) as f64, "the result says what ran");
    let warned: Vec<&str> = second["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
    let says = |w: &str| w.contains(path) && w.contains("is 64M, not the 128M file_size asks");
    assert!(warned.iter().any(|w| says(w)), "{warned:?}");
    assert!(said.lines().any(says), "{said}");
    // A file iogauge did not create is the user's: file_size does not speak of it.
    let mine = dir.join("mine.dat");
    std::fs::write(&mine, vec![7u8; 4 << 20]).unwrap();
    let out =
        ok(&["run", "--target", mine.to_str().unwrap(), "--file-size", "8M", "--ios", "100", "--json", "-", "-q"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["warnings"].as_array().unwrap().is_empty());
    assert_eq!(std::fs::metadata(&mine).unwrap().len(), 4 << 20);
}
