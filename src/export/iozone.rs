//! A file-system study as IOzone's `-R` report lays it out: a table per figure, a row per
//! test, a column per thread count, throughput in kB/s (1024 bytes per second, as IOzone's);
//! and the CPU beside it, as seed 002 gives it. As text under a study's table, as CSV
//! (`--iozone-csv`), and in the report.

use crate::config::FS_TESTS;
use crate::format::{grid, thousands};
use crate::host::cpu::MIN_WINDOW_S;
use crate::result::FsFigures;
use crate::study::doc::StudyDoc;
use crate::study::stats::Spread;

/// One table: rows of (test, a value per thread count).
pub struct Pivot {
    /// What the values are.
    pub title: String,
    /// The thread counts, one column each.
    pub threads: Vec<u32>,
    /// IOzone's name of each test, and its value at each thread count (median of the runs).
    pub rows: Vec<(String, Vec<Option<f64>>)>,
}

/// The figures of a file-system study, empty for any other.
pub fn pivots(doc: &StudyDoc) -> Vec<Pivot> {
    let mut threads: Vec<u32> = doc.points.iter().filter_map(|p| p.params.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    if threads.is_empty() {
        return Vec::new();
    }
    // A figure of a run (its file-system figures and CPU %), None where it has no value.
    type Figure = fn(&FsFigures, f64) -> Option<f64>;
    let figures: [(&str, Figure); 4] = [
        ("Children see throughput (kB/s, 1024 bytes/s)", |f, _| Some(f.children_mibps * 1024.0)),
        ("Parent sees throughput (kB/s, 1024 bytes/s)", |f, _| Some(f.parent_mibps * 1024.0)),
        ("CPU utilisation of the host (%)", |_, cpu| Some(cpu)),
        ("Throughput per CPU % (kB/s per %)", |f, cpu| (cpu > 0.0).then(|| f.children_mibps * 1024.0 / cpu)),
    ];
    let value = |test: &str, n: u32, figure: Figure| -> Option<f64> {
        let p = doc.points.iter().find(|p| p.params.threads == Some(n) && p.params.test.as_deref() == Some(test))?;
        let v: Vec<f64> = p
            .runs
            .iter()
            .filter_map(|r| {
                let w = r.results.first()?;
                // A phase too short for the kernel's 10 ms CPU ticks has no CPU % (NaN).
                let cpu = if w.cpu_measured() { w.totals.cpu.all.utilization_pct } else { f64::NAN };
                figure(w.fs.as_ref()?, cpu).filter(|v| !v.is_nan())
            })
            .collect();
        (!v.is_empty()).then(|| Spread::of(&v).median)
    };
    let tests = FS_TESTS.iter().filter(|t| doc.points.iter().any(|p| p.params.test.as_deref() == Some(t.name())));
    figures
        .iter()
        .map(|(title, figure)| Pivot {
            title: title.to_string(),
            threads: threads.clone(),
            rows: tests
                .clone()
                .map(|t| (t.iozone_name().to_string(), threads.iter().map(|&n| value(t.name(), n, *figure)).collect()))
                .collect(),
        })
        .collect()
}

/// The column heading of `n` threads.
pub fn heading(n: u32) -> String {
    format!("{n} thread{}", if n == 1 { "" } else { "s" })
}

/// The tables as text, under a study's table; empty for a study of no file system.
pub fn to_text(doc: &StudyDoc) -> String {
    let mut out = String::new();
    for p in pivots(doc) {
        let mut head = vec!["test".to_string()];
        head.extend(p.threads.iter().map(|&n| heading(n)));
        let mut rows = vec![head];
        for (test, values) in &p.rows {
            let mut row = vec![test.clone()];
            row.extend(
                values
                    .iter()
                    .map(|v| v.map_or("-".into(), |v| if v >= 100.0 { thousands(v) } else { format!("{v:.1}") })),
            );
            rows.push(row);
        }
        out.push('\n');
        out.push_str(&p.title);
        out.push('\n');
        out.push_str(&grid(&rows));
    }
    let short = doc.points.iter().flat_map(|p| &p.runs).flat_map(|r| &r.results).any(|w| !w.cpu_measured());
    if short && !out.is_empty() {
        out.push_str(&format!(
            "CPU: \"-\" for a phase shorter than {MIN_WINDOW_S} s (the kernel counts CPU time in 10 ms ticks): \
             give a larger --total or --size\n"
        ));
    }
    out
}

/// The tables as CSV, one after another as IOzone's report has them: the title on a line of
/// its own, `test` and a column per thread count, a row per test, an empty line between.
pub fn to_csv(doc: &StudyDoc) -> Vec<u8> {
    let mut out = String::new();
    for p in pivots(doc) {
        out.push_str(&format!("\"{}\"\ntest", p.title));
        for &n in &p.threads {
            out.push_str(&format!(",{}", heading(n)));
        }
        out.push('\n');
        for (test, values) in &p.rows {
            out.push_str(test);
            for v in values {
                out.push(',');
                if let Some(v) = v {
                    out.push_str(&format!("{v:.2}"));
                }
            }
            out.push('\n');
        }
        out.push('\n');
    }
    out.into_bytes()
}

/// IOzone's report as CSV (`--iozone-csv`): a file-system study's tables (a run's: those of
/// its one point).
pub struct IozoneCsv;

impl super::Exporter for IozoneCsv {
    fn what(&self) -> &'static str {
        "the IOzone CSV file"
    }
    fn run(&self, doc: &crate::result::ResultDoc) -> Vec<u8> {
        to_csv(&StudyDoc::of_run(doc))
    }
    fn study(&self, doc: &StudyDoc) -> super::Export {
        super::Export::Bytes(to_csv(doc))
    }
}
