//! The tables printed at the end of a test (one row per workload, like the seeds' tables) and
//! of a study (one row per point and workload; a file-system study's IOzone tables under it).

use std::fmt::Write;

use crate::config::Measure;
use crate::format::{grid, opt_ms, thousands};
use crate::result::warnings;
use crate::result::{Detail, Dir, DirFigures, ResultDoc, WorkerResult, WorkloadResult};
use crate::study::doc::{SteadyRow, StudyDoc, workload_of};

/// The summary table of a document: a row per workload, read and write apart when it has
/// both, the `detail` rows under it; errors, notes and warnings under the table.
pub fn to_bytes(doc: &ResultDoc, detail: Detail) -> Vec<u8> {
    let mut out = grid(&rows(doc, detail));
    set_up(doc, &mut out);
    in_flight(doc, &mut out);
    device_times(doc, &mut out);
    failures(doc, &mut out);
    for w in &doc.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out.into_bytes()
}

/// A row per workload (its read and write apart when it mixes them, then `detail`'s parts).
fn rows(doc: &ResultDoc, detail: Detail) -> Vec<Vec<String>> {
    let errors = doc.results.iter().any(|r| r.totals.metrics.errors > 0);
    let mut rows = vec![
        ["workload", "IOPS", "MB/s", "avg ms", "p99 ms", "max ms", "CPU %", "own %", "IOPS/CPU%"]
            .map(String::from)
            .to_vec(),
    ];
    if errors {
        rows[0].push("errors".into());
    }
    let no_cpu = || vec![String::new(); 3];
    for r in &doc.results {
        let m = &r.totals.metrics;
        let host = doc.cpu_cells(r).to_vec();
        let mut add = |label: String, f: DirFigures, cpu: Vec<String>| {
            let mut row = vec![label];
            row.extend(figures(f));
            row.extend(cpu);
            if errors {
                row.push(f.errors.to_string());
            }
            rows.push(row);
        };
        add(r.spec.clone(), m.of(Dir::All), host);
        for op in m.ops() {
            add(format!("  {}", op.name()), m.of(Dir::Only(op)), no_cpu());
        }
        for (name, part) in r.parts(detail) {
            add(format!("  {name}"), part.of(Dir::All), no_cpu());
        }
    }
    rows
}

/// What ran: workers, outstanding I/Os, time, targets, managers.
fn set_up(doc: &ResultDoc, out: &mut String) {
    if let Some(r) = doc.results.first() {
        let mut targets: Vec<&str> = r.targets.iter().map(|t| t.path.as_str()).collect();
        targets.dedup();
        let null = targets.iter().all(|t| *t == crate::targets::NULL);
        let _ = writeln!(
            out,
            "{} worker(s), {} I/Os outstanding in all, {:.1} s recorded each, on {}",
            r.workers.len(),
            r.totals.outstanding,
            r.duration_s,
            targets.join(", ")
        );
        // How the figures were taken: the ramp-up before them, and whether the page cache
        // served any; on the null target, iogauge's own CPU per I/O, the figure it is there
        // to measure.
        let ramp = match r.ramp_s > 0.0 {
            true => format!("{:.1} s of ramp-up before each, not recorded", r.ramp_s),
            false => "no ramp-up".into(),
        };
        let measured: Vec<&WorkloadResult> = doc.results.iter().filter(|r| r.totals.metrics.ios > 0).collect();
        let ns = |r: &WorkloadResult| r.totals.cpu.own_us_per_io * 1000.0;
        let mode = match (null, doc.config.test.buffered, measured.as_slice()) {
            (true, _, [one]) => format!("; iogauge's CPU per I/O {:.0} ns (null target)", ns(one)),
            (true, ..) => String::new(),
            (false, true, _) => "; buffered I/O (through the page cache)".into(),
            (false, false, _) => "; direct I/O (O_DIRECT, no page cache)".into(),
        };
        let _ = writeln!(out, "{ramp}{mode}");
        if null && measured.len() > 1 {
            for r in measured {
                let _ = writeln!(out, "{}: iogauge's CPU per I/O {:.0} ns (null target)", r.spec, ns(r));
            }
        }
        let _ = writeln!(out, "CPU %: the whole host's (Iometer's figure); own %: iogauge's part of it");
        if let Some(from) = &doc.read_from {
            let _ = writeln!(out, "-: a figure not in {from}");
        } else if doc.results.iter().any(|r| !r.cpu_measured()) {
            let s = crate::host::cpu::MIN_WINDOW_S;
            let _ = writeln!(out, "-: a window under {s} s, too short for the kernel's 10 ms CPU ticks");
        }
        if r.managers.len() > 1 {
            let hosts: Vec<String> = r.managers.iter().map(|m| format!("{} {}", m.rank, m.host)).collect();
            let skew = doc.results.iter().map(|r| r.start_skew_ms).fold(0.0, f64::max);
            // Hosts' clocks differ by their offset, which the skew cannot hold.
            let clocks = match r.managers.iter().any(|m| m.host != r.managers[0].host) {
                true => ", each by its host's clock",
                false => "",
            };
            let _ = writeln!(
                out,
                "{} managers ({}), recording started within {skew:.3} ms of each other{clocks}",
                r.managers.len(),
                hosts.join(", ")
            );
        }
    }
}

/// Each workload's pace against its rate, or the I/Os really in flight when well under the
/// asked depth.
fn in_flight(doc: &ResultDoc, out: &mut String) {
    for r in &doc.results {
        // An open loop keeps in flight what its rate needs; a closed one should keep all.
        if let Some(p) = warnings::pace(doc, r) {
            let _ = writeln!(out, "{}: {}", r.spec, p.describe());
        } else if let Some((mean, asked)) = warnings::in_flight(r) {
            let psync = r.workers.iter().any(WorkerResult::one_io_at_a_time);
            let why = if psync { ": psync does one I/O at a time per worker" } else { "" };
            let _ = writeln!(out, "{}: {mean:.1} of {asked} I/Os in flight on average (IOPS x avg ms){why}", r.spec);
        }
    }
}

/// Each block device's own mean time per I/O, as the kernel counted it, beside the response
/// time measured there: the device's part, and the host's (queueing in the kernel's threads,
/// the tool's loop, a woken CPU); and how many of the outstanding I/Os the device held.
fn device_times(doc: &ResultDoc, out: &mut String) {
    for r in &doc.results {
        for t in &r.targets {
            let Some(d) = &t.device else { continue };
            let (Some(device), Some(measured)) = (d.avg_ms, t.metrics.avg_response_ms) else { continue };
            let held = d.avg_in_flight.map_or(String::new(), |q| {
                format!("; it held {q:.1} of the {} outstanding I/Os on average", t.outstanding)
            });
            let _ = writeln!(
                out,
                "{}: {}: the block layer's own mean time per I/O {device:.4} ms over {} I/Os, against {measured:.4} ms \
                 measured{held}",
                r.spec,
                t.path,
                thousands(d.ios as f64)
            );
        }
    }
}

/// I/O errors, the first failed I/O, and what verification found.
fn failures(doc: &ResultDoc, out: &mut String) {
    for r in &doc.results {
        for e in &r.totals.metrics.error_kinds {
            let _ = writeln!(out, "{}: {} I/O error(s): {}", r.spec, e.count, e.text);
        }
        if let Some(f) = &r.first_error {
            let stop = doc.config.test.on_error == crate::config::OnError::Stop;
            let _ = if f.errno == libc::ETIMEDOUT {
                writeln!(out, "{}: stopped, the target stopped answering: {f}", r.spec)
            } else if stop {
                writeln!(out, "{}: stopped at the first failed I/O: {f} (--on-error continue goes on)", r.spec)
            } else {
                writeln!(out, "{}: the first failed I/O: {f}", r.spec)
            };
        }
        if let Some(v) = &r.verify {
            let _ = writeln!(
                out,
                "{}: verified {} block(s) of {} bytes read back, {} mismatch(es)",
                r.spec, v.checked_blocks, v.block_bytes, v.mismatches
            );
            for m in v.found.iter().take(10) {
                let _ = writeln!(out, "  {m}");
            }
            if v.found.len() > 10 {
                let _ = writeln!(out, "  ... {} more in the JSON document", v.mismatches - 10);
            }
        }
    }
}

/// IOPS, MB/s, avg, p99 and max response time of some I/Os.
fn figures(f: DirFigures) -> [String; 5] {
    let p99 = f.percentiles_ms.get("p99").copied();
    [thousands(f.iops), format!("{:.1}", f.mbps), opt_ms(f.avg_response_ms), opt_ms(p99), opt_ms(f.max_response_ms)]
}

/// The study's table: the median of each point's repeats, their spread (with repeats), and
/// the warnings; a steady-state study's, its window's means.
pub fn study_to_bytes(doc: &StudyDoc) -> Vec<u8> {
    if let Some(st) = &doc.steady {
        return steady_to_bytes(doc, st);
    }
    // A point with several workloads is a heading over a row for each.
    let grouped = doc.points.iter().any(|p| p.summary.len() > 1);
    let first = if grouped { "point / workload" } else { "point and workload" };
    let mut rows = vec![[first, "IOPS", "MB/s", "avg ms", "p99 ms", "CPU %", "IOPS/CPU%"].map(String::from).to_vec()];
    let sums = || doc.points.iter().flat_map(|p| &p.summary);
    // One run per point has no spread: no CV column, rather than a 0.0 that looks measured.
    let repeats = doc.points.iter().any(|p| p.runs.len() > 1);
    let mut split = false;
    let errors = sums().any(|s| s.errors > 0);
    let (scaling, theory) = (sums().any(|s| s.scaling.is_some()), sums().any(|s| s.theory.is_some()));
    for (on, head) in [(repeats, "IOPS CV %"), (errors, "errors"), (scaling, "scaling")] {
        if on {
            rows[0].push(head.into());
        }
    }
    if theory {
        rows[0].extend(["% of max".to_string(), "limit".into()]);
    }
    for p in &doc.points {
        let point = format!("{} {}", p.index + 1, p.params.label());
        if grouped {
            rows.push(vec![point.clone()]);
        }
        for (k, s) in p.summary.iter().enumerate() {
            let label = if grouped { format!("  {}", s.spec) } else { format!("{point}  {}", s.spec) };
            let mut row = vec![
                label,
                thousands(s.iops.median),
                format!("{:.1}", s.mbps.median),
                opt_ms(s.avg_response_ms.map(|v| v.median)),
                opt_ms(s.p99_response_ms.map(|v| v.median)),
                format!("{:.1}", s.cpu_pct.median),
                thousands(s.iops_per_cpu_pct.median),
            ];
            // The kernel's 10 ms ticks over a run shorter than MIN_WINDOW_S are noise.
            if !p.cpu_measured(k) {
                row[5..7].fill("-".into());
            }
            if repeats {
                row.push(if p.runs.len() > 1 { format!("{:.1}", s.iops.cv * 100.0) } else { "-".into() });
            }
            if errors {
                row.push(s.errors.to_string());
            }
            if scaling {
                row.push(s.scaling.map_or("-".into(), |v| format!("{:.0} %", v * 100.0)));
            }
            if theory {
                row.push(s.theory.as_ref().map_or("-".into(), |t| format!("{:.0} %", t.measured_pct)));
                row.push(s.theory.as_ref().map_or("-".into(), |t| t.limit.clone()));
            }
            rows.push(row);
            // Reads and writes apart, as a run's table has them: the median repeat's.
            let Some(r) = p.median_run(k).and_then(|d| d.results.get(k)) else { continue };
            for op in r.totals.metrics.ops() {
                let f = r.totals.metrics.of(Dir::Only(op));
                let p99 = f.percentiles_ms.get("p99").copied();
                rows.push(vec![
                    format!("    {}s", op.name()),
                    thousands(f.iops),
                    format!("{:.1}", f.mbps),
                    opt_ms(f.avg_response_ms),
                    opt_ms(p99),
                ]);
                split = true;
            }
        }
    }
    let mut out = grid(&rows);
    let _ =
        writeln!(out, "{} point(s) x {} run(s); figures are medians of the runs", doc.points.len(), doc.study.repeat);
    if split && doc.study.repeat > 1 {
        let _ = writeln!(out, "reads and writes: the run whose IOPS is the median's");
    }
    tail(doc, &mut out);
    out.into_bytes()
}

/// A steady-state study: per point, a row of each workload's measure averaged over the window
/// (SNIA's PTS tables: transfer sizes down, read/write mixes across), and the verdict.
fn steady_to_bytes(doc: &StudyDoc, st: &crate::study::doc::SteadyResult) -> Vec<u8> {
    let mut specs: Vec<String> = Vec::new();
    let mut points: Vec<crate::study::Point> = Vec::new();
    let workload = |r: &SteadyRow| workload_of(&r.spec, r.workload.as_deref(), r.params.size).to_string();
    for r in &st.table {
        let s = workload(r);
        if !specs.contains(&s) {
            specs.push(s);
        }
        if !points.contains(&r.params) {
            points.push(r.params.clone());
        }
    }
    let unit = match st.measure {
        Measure::Mbps => "MB/s",
        Measure::AvgMs => "avg ms",
        Measure::Iops => "IOPS",
    };
    let mut rows = vec![std::iter::once(format!("{unit}, mean of the window")).chain(specs.iter().cloned()).collect()];
    for p in &points {
        let mut row = vec![p.label()];
        for s in &specs {
            let r = st.table.iter().find(|r| &r.params == p && workload(r) == *s);
            row.push(r.map_or("-".into(), |r| match st.measure {
                Measure::Mbps => format!("{:.1}", r.mbps),
                Measure::AvgMs => opt_ms(r.avg_response_ms),
                Measure::Iops => thousands(r.iops),
            }));
        }
        rows.push(row);
    }
    let mut out = grid(&rows);
    if let Some(p) = &st.precondition {
        let _ = writeln!(
            out,
            "preconditioned: {} x {} ({} MB in {:.1} s, {:.1} MB/s)",
            p.spec,
            p.passes,
            p.bytes / 1_000_000,
            p.duration_s,
            p.mbps
        );
    }
    let _ = writeln!(out, "{}", st.answer);
    tail(doc, &mut out);
    out.into_bytes()
}

/// What every study table ends with: search answers, IOzone's tables, the warnings.
fn tail(doc: &StudyDoc, out: &mut String) {
    for s in &doc.searches {
        let _ = writeln!(out, "{}", s.answer);
    }
    // A file-system study: IOzone's tables too, tests by thread counts.
    out.push_str(&super::iozone::to_text(doc));
    for w in &doc.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
}

/// The table on stdout, with the rows asked under each workload.
pub struct Table {
    /// The rows under each workload of a run.
    pub detail: Detail,
}

impl Table {
    /// A run's table.
    pub fn run(&self, doc: &ResultDoc) -> Vec<u8> {
        to_bytes(doc, self.detail)
    }
    /// A study's table.
    pub fn study(&self, doc: &StudyDoc) -> Vec<u8> {
        study_to_bytes(doc)
    }
}
