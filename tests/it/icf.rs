//! Iometer's saved configurations: `iogauge run FILE.icf` and `iogauge study FILE.icf` on files
//! written to the format Iometer 1.1 and its 2006 versions save (tests/fixtures/iometer-1.1.icf,
//! written by us from Iometer's PageSetup.cpp, AccessSpecList.cpp, ManagerList.cpp, Worker.cpp).

use crate::common;

use std::path::Path;

use common::*;
use serde_json::Value;

const ICF: &str = include_str!("../fixtures/iometer-1.1.icf");

/// The fixture with `from` replaced by `to` (each pair in turn).
fn variant(edits: &[(&str, &str)]) -> String {
    let mut text = ICF.to_string();
    for (from, to) in edits {
        assert!(text.contains(from), "the fixture holds {from:?}");
        text = text.replace(from, to);
    }
    text
}

fn study_doc(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("s.json")).unwrap()).unwrap()
}

fn params(doc: &Value) -> Vec<Value> {
    doc["points"].as_array().unwrap().iter().map(|p| p["params"].clone()).collect()
}

#[test]
fn a_cycling_test_runs_as_a_study_on_a_block_device() {
    let lo = LoopDev::new(32 << 20);
    let dir = scratch("icf-study");
    std::fs::write(dir.join("t.icf"), ICF).unwrap();
    let map = format!("PHYSICALDRIVE:1={}", lo.dev);
    let args = [
        "study",
        "t.icf",
        "--map-target",
        &map,
        "--allow-write",
        &lo.dev,
        "--json",
        "s.json",
        "--iometer-csv",
        "s.csv",
        "-q",
    ];
    let before = kernel_ios(lo.dev.trim_start_matches("/dev/"));
    ok_in(&dir, &args);
    let after = kernel_ios(lo.dev.trim_start_matches("/dev/"));
    let doc = study_doc(&dir);
    // Queue Depth Cycling 1 to 8, exponential step 2.
    let depths: Vec<u64> = params(&doc).iter().map(|p| p["outstanding"].as_u64().unwrap()).collect();
    assert_eq!(depths, [1, 2, 4, 8]);
    let mut ios = (0, 0);
    for (p, depth) in doc["points"].as_array().unwrap().iter().zip(depths) {
        let r = &p["runs"][0]["results"][0];
        assert_eq!(r["spec"], "4K; 75% Read; 100% random");
        assert!((num(r, "duration_s") - 2.0).abs() < 0.2, "Iometer's run time of 2 s");
        let names: Vec<&str> = r["workers"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["Worker 1", "Worker 2"]);
        for w in r["workers"].as_array().unwrap() {
            assert_eq!(w["outstanding"].as_u64(), Some(depth));
            let t = &w["targets"][0];
            assert_eq!(t["path"].as_str(), Some(lo.dev.as_str()));
            // Disk maximum size 16384 sectors from starting sector 2048.
            assert_eq!((num(t, "start_offset"), num(t, "working_set_bytes")), (1048576.0, 8388608.0));
        }
        let (reads, writes) = (num(r, "totals/read_ios"), num(r, "totals/write_ios"));
        // Each I/O a read with chance 0.75: binomial.
        let share = reads / (reads + writes);
        let chance = share_bound(0.75, reads + writes);
        assert!((share - 0.75).abs() <= chance, "75 % reads, got {share} (+-{chance})");
        ios = (ios.0 + reads as u64, ios.1 + writes as u64);
    }
    // The kernel saw at least what was counted (ramp-up I/Os are not recorded: Iometer's 0 s).
    let kernel = (after.0 + after.1 - before.0 - before.1, after.2 + after.3 - before.2 - before.3);
    assert!(kernel.0 >= ios.0 && kernel.1 >= ios.1, "kernel {kernel:?}, ours {ios:?}");
    assert_eq!(doc["config"]["test"]["data"], "repeat:0x41", "Iometer's data pattern 0: repeating bytes");
    // And Iometer's results file of it is a cycling test of outstanding I/Os (type 6).
    let csv = std::fs::read_to_string(dir.join("s.csv")).unwrap();
    assert_eq!(csv.lines().nth(1).and_then(|l| l.split(',').next()), Some("6"));
}

#[test]
fn every_cycling_type_becomes_the_same_study() {
    let dir = scratch("icf-types");
    // Two targets per worker, so target cycles have steps.
    let two = "'Target\r\n\tPHYSICALDRIVE:1\r\n'Target type\r\n\tDISK\r\n'End target\r\n'Target\r\n\tPHYSICALDRIVE:2\r\n'Target type\r\n\tDISK\r\n'End target\r\n";
    let one = "'Target\r\n\tPHYSICALDRIVE:1\r\n'Target type\r\n\tDISK\r\n'End target\r\n";
    // (type, the cycled parameters of each point, Iometer's test type index of our results file)
    let cases: [(&str, &[&str], &str); 8] = [
        ("NORMAL", &[""], "0"),
        ("CYCLE_TARGETS", &["targets=1", "targets=2"], "1"),
        ("CYCLE_WORKERS", &["workers=1", "workers=2"], "2"),
        ("INCREMENT_TARGETS_PARALLEL", &["targets=1", "targets=2", "targets=3", "targets=4"], "4"),
        ("INCREMENT_TARGETS_SERIAL", &["targets=1", "targets=2", "targets=3", "targets=4"], "4"),
        (
            "CYCLE_WORKERS_AND_TARGETS",
            &["targets=1 workers=1", "targets=1 workers=2", "targets=2 workers=1", "targets=2 workers=2"],
            "5",
        ),
        ("CYCLE_OUTSTANDING_IOS", &["outstanding=1", "outstanding=2", "outstanding=4", "outstanding=8"], "6"),
        (
            "CYCLE_OUTSTANDING_IOS_AND_TARGETS",
            &[
                "targets=1 outstanding=1",
                "targets=1 outstanding=2",
                "targets=1 outstanding=4",
                "targets=1 outstanding=8",
                "targets=2 outstanding=1",
                "targets=2 outstanding=2",
                "targets=2 outstanding=4",
                "targets=2 outstanding=8",
            ],
            "7",
        ),
    ];
    for (kind, points, index) in cases {
        let text = variant(&[("\tCYCLE_OUTSTANDING_IOS\r\n", &format!("\t{kind}\r\n")), (one, two)]);
        std::fs::write(dir.join("t.icf"), text).unwrap();
        let args = [
            "study",
            "t.icf",
            "--map-target",
            "PHYSICALDRIVE:1=a.dat",
            "--map-target",
            "PHYSICALDRIVE:2=b.dat",
            "--file-size",
            "16M",
            "--time",
            "100ms",
            "--json",
            "s.json",
            "--iometer-csv",
            "s.csv",
            "-q",
            "--no-history",
        ];
        ok_in(&dir, &args);
        let doc = study_doc(&dir);
        let labels: Vec<String> = params(&doc)
            .iter()
            .map(|p| {
                let p = p.as_object().unwrap();
                let mut parts: Vec<String> = p.iter().map(|(k, v)| format!("{k}={v}")).collect();
                parts.sort();
                parts.join(" ")
            })
            .collect();
        let sorted = |l: &&str| {
            let mut parts: Vec<&str> = l.split(' ').collect();
            parts.sort();
            parts.join(" ")
        };
        assert_eq!(labels, points.iter().map(sorted).collect::<Vec<_>>(), "{kind}");
        let csv = std::fs::read_to_string(dir.join("s.csv")).unwrap();
        assert_eq!(csv.lines().nth(1).and_then(|l| l.split(',').next()), Some(index), "{kind}");
        let last = &doc["points"].as_array().unwrap().last().unwrap()["runs"][0]["results"][0];
        let disks: usize =
            last["workers"].as_array().unwrap().iter().map(|w| w["targets"].as_array().unwrap().len()).sum();
        if kind.starts_with("INCREMENT") {
            assert_eq!(disks, 4, "{kind}: every target of every worker at the last step");
        }
    }
}

#[test]
fn a_2006_configuration_runs_and_a_normal_test_is_a_run() {
    let dir = scratch("icf-2006");
    // Iometer 2006.07.27 wrote no fixed seed and no data pattern.
    let text = variant(&[
        ("Version 1.1.0 ", "Version 2006.07.27 "),
        (
            "'Number of outstanding IOs,test connection rate,transactions per connection,use fixed seed,fixed seed value\r\n\t1,DISABLED,1,DISABLED,0",
            "'Number of outstanding IOs,test connection rate,transactions per connection\r\n\t4,DISABLED,1",
        ),
        (
            "'Disk maximum size,starting sector,Data pattern\r\n\t16384,2048,0",
            "'Disk maximum size,starting sector\r\n\t0,0",
        ),
        ("\tCYCLE_OUTSTANDING_IOS\r\n", "\tNORMAL\r\n"),
        ("\t4K; 75% Read; 100% random\r\n'End assigned", "\tFile Server\r\n'End assigned"),
    ]);
    std::fs::write(dir.join("old.icf"), text).unwrap();
    let out = ok_in(&dir, &["run", "old.icf", "--map-target", "PHYSICALDRIVE:1=null", "--json", "-"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["results"][0];
    assert_eq!(r["spec"], "File Server");
    assert_eq!(r["workers"][0]["outstanding"], 4);
    assert_eq!(doc["config"]["test"]["data"], "repeat:0x41", "no data pattern: Iometer's default, repeating bytes");
    // File Server's eight lines: 512 B to 64 KiB.
    let spec = doc["config"]["spec"].as_array().unwrap().iter().find(|s| s["name"] == "File Server").unwrap();
    assert_eq!(spec["lines"].as_array().unwrap().len(), 8);
}

#[test]
fn what_cannot_run_is_one_clear_line() {
    let dir = scratch("icf-bad");
    let cases: Vec<(String, Vec<&str>, &str)> = vec![
        (ICF.to_string(), vec!["study"], "targets need a Linux path: \"PHYSICALDRIVE:1\"; give --map-target"),
        (ICF.to_string(), vec!["run", "--map-target", "PHYSICALDRIVE:1=null"], "iogauge study"),
        (
            variant(&[("\tDISK\r\n'Default target", "\tNETWORK,TCP\r\n'Default target")]),
            vec!["study", "--map-target", "PHYSICALDRIVE:1=null"],
            "network",
        ),
        (
            variant(&[("\t0          0          2\r\n", "\t0          0          0\r\n")]),
            vec!["study", "--map-target", "PHYSICALDRIVE:1=null"],
            "--time",
        ),
        (
            variant(&[("\t4096,100,75,100,0,1,0,0\r\n", "\t4096,90,75,100,0,1,0,0\r\n")]),
            vec!["study", "--map-target", "PHYSICALDRIVE:1=null"],
            "sum to 90",
        ),
        (
            variant(&[("\t4096,100,75,100,0,1,0,0\r\n", "\t4096,100,75,100,0,1,0,512\r\n")]),
            vec!["study", "--map-target", "PHYSICALDRIVE:1=null"],
            "reply",
        ),
        (
            variant(&[("'Test Type\r\n", "'Test Typo\r\n")]),
            vec!["study", "--map-target", "PHYSICALDRIVE:1=null"],
            "Test Typo",
        ),
        (
            variant(&[("Version 1.1.0 \r\n'TEST", "Version 1997.01.01\r\n'TEST")]),
            vec!["study"],
            "older than 1998.05.21",
        ),
    ];
    for (text, args, says) in cases {
        std::fs::write(dir.join("t.icf"), text).unwrap();
        let mut a = args.clone();
        a.insert(1, "t.icf");
        let out = iogauge_in(&dir, &a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.contains(says) && err.contains("t.icf"), "{args:?}: {err}");
    }
    // Iometer's test connection rate (targets closed and opened every N transactions), which
    // real files have on: refused in one line, or run without it, said once, with
    // --ignore-unknown (issue 47: it was dropped without a word).
    let text = variant(&[("\tCYCLE_OUTSTANDING_IOS\r\n", "\tNORMAL\r\n")]);
    let (off, on) = ("\t1,DISABLED,1,DISABLED,0", "\t1,ENABLED,50,DISABLED,0");
    assert!(text.contains(off), "the fixture's worker settings");
    std::fs::write(dir.join("c.icf"), text.replace(off, on)).unwrap();
    let map = ["--map-target", "PHYSICALDRIVE:1=null", "--time", "300ms", "--no-history"];
    let out = iogauge_in(&dir, &[&["run", "c.icf"][..], &map].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("test connection rate") && err.contains("every 50 transactions"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let out = iogauge_in(&dir, &[&["run", "c.icf", "--ignore-unknown", "-q"][..], &map].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches("test connection rate").count(), 1, "{err}");
    // With --time, a run time of 0 (Iometer's "until stopped") runs.
    let text = variant(&[
        ("\t0          0          2\r\n", "\t0          0          0\r\n"),
        ("\tCYCLE_OUTSTANDING_IOS\r\n", "\tNORMAL\r\n"),
    ]);
    std::fs::write(dir.join("t.icf"), text).unwrap();
    let out = ok_in(&dir, &["run", "t.icf", "--map-target", "PHYSICALDRIVE:1=null", "--time", "300ms", "--json", "-"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!((num(&doc, "results/0/duration_s") - 0.3).abs() < 0.1);
}

/// A library of access specifications, as Iometer saves one (its Access Specifications tab
/// alone) or as TOML: `--spec-file FILE` makes them names for --spec (issue 47).
#[test]
fn a_spec_library_names_specifications_for_spec() {
    let dir = scratch("icf-library");
    // Iometer's version line and its specifications, nothing else.
    let start = ICF.find("'ACCESS SPECIFICATIONS").unwrap();
    let end = ICF.find("'END access specifications").unwrap() + "'END access specifications".len();
    std::fs::write(dir.join("lib.icf"), format!("Version 1.1.0 \r\n{}\r\n", &ICF[start..end])).unwrap();
    std::fs::write(
        dir.join("lib.toml"),
        "[[spec]]\nname = \"db-16k\"\ndescription = \"ours\"\n[[spec.lines]]\nsize = \"16K\"\nread = 60\nrandom = 100\n",
    )
    .unwrap();
    let run = ["run", "--target", "null", "--ios", "2000", "--no-history", "--json", "-"];
    let lib = ["--spec-file", "lib.icf", "--spec-file", "lib.toml", "--spec", "File Server", "--spec", "db-16k"];
    let out = ok_in(&dir, &[&run[..], &lib].concat());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let specs: Vec<&str> = doc["results"].as_array().unwrap().iter().map(|r| r["spec"].as_str().unwrap()).collect();
    assert_eq!(specs, ["File Server", "db-16k"]);
    // The 16 KiB, 60 % read specification ran as the library says.
    let t = &doc["results"][1]["totals"];
    assert_eq!(num(t, "bytes"), 2000.0 * 16384.0);
    assert!((num(t, "read_ios") / 2000.0 - 0.6).abs() < 0.05, "{t}");
    // What is no library, and a name given twice: one line each.
    std::fs::write(dir.join("j.fio"), "[a]\nrw=read\n").unwrap();
    for (args, says) in [
        (vec!["--spec-file", "j.fio"], "not a library"),
        (vec!["--spec-file", "lib.toml", "--spec-file", "lib.toml"], "'db-16k' is there already"),
        (vec!["--spec-file", "nothere.icf"], "cannot read nothere.icf"),
    ] {
        let out = iogauge_in(&dir, &[&run[..], &args].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says) && err.trim().lines().count() == 1, "{args:?}: {err}");
    }
}
