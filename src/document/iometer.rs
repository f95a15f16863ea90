//! Iometer's results file (`results.csv`, docs/interop.md) read as a result document, so
//! `compare` and `report` set an Iometer run beside iogauge's: each `'Results` group is a
//! workload named by its access specification (with its step, `Default step 2`, when a
//! cycling test repeats one), its `WORKER` rows the workers and their `DISK` rows the targets.
//! The figures are Iometer's own (IOPS, MB/s decimal, response times in ms, CPU utilisation
//! and effectiveness from the `ALL` row); Iometer writes no percentiles, only 21 latency bins.

use std::collections::{HashMap, HashSet};

use crate::host::cpu::{CpuShare, CpuUsage};
use crate::result::{ManagerResult, Metrics, ResultDoc, TargetResult, Totals, WorkerResult, WorkloadResult};
use crate::stats::{DirStats, IoStats};
use crate::targets::{TargetInfo, TargetKind};

/// Whether `bytes` are Iometer's results file: its first line is Iometer's first header.
pub fn is_iometer(bytes: &[u8]) -> bool {
    bytes.starts_with(b"'Test Type,Test Description")
}

/// A `'Results` group's header: each column's place, by name (the first of a name), found at
/// once whatever the width.
struct Columns<'a> {
    place: HashMap<&'a str, usize>,
    width: usize,
}

impl<'a> Columns<'a> {
    fn of(header: &'a str) -> Columns<'a> {
        let mut place = HashMap::new();
        let names: Vec<&str> = header.trim_start_matches('\'').split(',').map(str::trim).collect();
        for (i, n) in names.iter().enumerate() {
            place.entry(*n).or_insert(i);
        }
        Columns { place, width: names.len() }
    }

    fn has(&self, column: &str) -> bool {
        self.place.contains_key(column)
    }
}

/// One row of a `'Results` group, read by the header's column names; `line` (from 1) for
/// messages.
struct Row<'a> {
    columns: &'a Columns<'a>,
    cells: Vec<&'a str>,
    line: usize,
}

impl Row<'_> {
    fn cell(&self, column: &str) -> &str {
        self.columns.place.get(column).and_then(|&i| self.cells.get(i)).copied().unwrap_or("")
    }

    /// A cell's text as it may be printed (names, paths).
    fn text(&self, column: &str) -> String {
        crate::format::visible(self.cell(column)).into_owned()
    }

    /// A number; an empty cell (a column that row type leaves empty) is 0. Anything else that
    /// is not a figure (a word, a negative, NaN) is refused, naming the line and column.
    fn num(&self, column: &str) -> Result<f64, String> {
        let cell = self.cell(column).trim();
        match cell.parse::<f64>() {
            _ if cell.is_empty() => Ok(0.0),
            Ok(v) if v >= 0.0 && v.is_finite() => Ok(v),
            _ => Err(format!("line {}: {column} \"{}\" is not a figure", self.line, crate::format::visible(cell))),
        }
    }

    /// The first column of `columns` the file has (Iometer 1.1 writes "MiBps (Binary)", older
    /// versions "MBps (Binary)" for the same figure).
    fn num_of(&self, columns: &[&str]) -> Result<f64, String> {
        columns.iter().find(|c| self.columns.has(c)).map_or(Ok(0.0), |c| self.num(c))
    }

    /// One direction's counters; its mean response time at most its longest.
    fn dir(&self, [ios, bytes, avg, max, errors]: [&str; 5]) -> Result<DirStats, String> {
        let n = self.num(ios)? as u64;
        let (avg_ms, max_ms) = (self.num(avg)?, self.num(max)?);
        if n > 0 && avg_ms > max_ms {
            return Err(format!("line {}: {avg} {avg_ms} above {max} {max_ms}", self.line));
        }
        Ok(DirStats {
            ios: n,
            bytes: self.num(bytes)? as u64,
            response_sum_ns: (avg_ms * 1e6 * n as f64) as u64,
            response_min_ns: 0,
            response_max_ns: (max_ms * 1e6) as u64,
            errors: self.num(errors)? as u64,
            ..DirStats::default()
        })
    }

    /// The row's figures: Iometer's counts, rates and response times (ms).
    fn metrics(&self) -> Result<Metrics, String> {
        let raw = IoStats {
            read: self.dir([
                "Read I/Os",
                "Bytes Read",
                "Average Read Response Time",
                "Maximum Read Response Time",
                "Read Errors",
            ])?,
            write: self.dir([
                "Write I/Os",
                "Bytes Written",
                "Average Write Response Time",
                "Maximum Write Response Time",
                "Write Errors",
            ])?,
            ..IoStats::default()
        };
        let iops = self.num("IOps")?;
        let ios = raw.read.ios.saturating_add(raw.write.ios);
        let mut m = Metrics::new(&raw, if iops > 0.0 { ios as f64 / iops } else { 0.0 });
        (m.iops, m.read_iops, m.write_iops) = (iops, self.num("Read IOps")?, self.num("Write IOps")?);
        (m.mbps, m.read_mbps, m.write_mbps) =
            (self.num("MBps (Decimal)")?, self.num("Read MBps (Decimal)")?, self.num("Write MBps (Decimal)")?);
        m.mibps = self.num_of(&["MiBps (Binary)", "MBps (Binary)", "MBps"])?;
        m.read_mibps = self.num_of(&["Read MiBps (Binary)", "Read MBps (Binary)", "Read MBps"])?;
        m.write_mibps = self.num_of(&["Write MiBps (Binary)", "Write MBps (Binary)", "Write MBps"])?;
        if m.mbps == 0.0 {
            // Before Iometer 1.1 the file has binary MB/s only.
            (m.mbps, m.read_mbps, m.write_mbps) =
                (m.mibps * 1.048576, m.read_mibps * 1.048576, m.write_mibps * 1.048576);
        }
        let (avg, max) = (self.num("Average Response Time")?, self.num("Maximum Response Time")?);
        if avg > max {
            return Err(format!("line {}: Average Response Time {avg} above Maximum Response Time {max}", self.line));
        }
        (m.avg_response_ms, m.max_response_ms) = (Some(avg), Some(max));
        Ok(m)
    }
}

/// Iometer's results file as a result document; `name` (the file) appears in errors. One pass
/// over its lines, one row held at a time: linear in the file.
pub fn result(bytes: &[u8], name: &str) -> Result<ResultDoc, String> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines = text.lines().enumerate().peekable();
    let (mut version, mut stamp) = (None, None);
    let mut results: Vec<WorkloadResult> = Vec::new();
    let mut target_info = Targets::default();
    while let Some((i, line)) = lines.next() {
        let next = lines.peek().map(|(_, l)| crate::format::visible(l.trim()).into_owned());
        match line {
            "'Version" => version = version.or(next),
            "'Time Stamp" => stamp = stamp.or(next),
            "'Results" => {
                let Some((_, header)) = lines.next_if(|(_, h)| h.starts_with("'Target Type,")) else {
                    return Err(format!("{name} line {}: 'Results without Iometer's header line after it", i + 2));
                };
                let columns = Columns::of(header);
                let rows = std::iter::from_fn(|| lines.next_if(|(_, l)| !l.starts_with('\''))).map(|(n, l)| Row {
                    columns: &columns,
                    cells: l.split(',').take(columns.width).collect(),
                    line: n + 1,
                });
                let group = group(rows, &mut target_info).map_err(|e| format!("{name} {e}"))?;
                results
                    .push(group.ok_or_else(|| format!("{name} line {}: a 'Results group without its ALL row", i + 1))?);
            }
            _ => {}
        }
    }
    if results.is_empty() {
        return Err(format!("{name}: Iometer's results file holds no 'Results group (a test that never ran?)"));
    }
    number_steps(&mut results);
    Ok(super::foreign_doc(
        format!("Iometer {}", version.unwrap_or_default()),
        stamp.unwrap_or_default(),
        target_info.list,
        results,
        vec!["Iometer's own figures, read from its results file: Iometer writes no percentiles".into()],
        None,
        format!("Iometer's results file {name}"),
    ))
}

/// The targets of a file, each once, in order.
#[derive(Default)]
struct Targets {
    list: Vec<TargetInfo>,
    seen: HashSet<String>,
}

/// A `'Results` group's rows as a workload: its `MANAGER` rows the managers, each followed
/// by its `WORKER` rows, the workers, each followed by its `DISK` rows, the targets; the `ALL`
/// row the totals and the CPU. None without an `ALL` row.
fn group<'a>(rows: impl Iterator<Item = Row<'a>>, targets: &mut Targets) -> Result<Option<WorkloadResult>, String> {
    let mut workers: Vec<WorkerResult> = Vec::new();
    let mut managers: Vec<ManagerResult> = Vec::new();
    let mut all = None;
    for r in rows {
        // Each manager's rows follow its MANAGER row: its workers and their targets are its.
        let manager = managers.len().saturating_sub(1) as u32;
        match r.cell("Target Type") {
            "ALL" if all.is_none() => all = Some((r.text("Access Specification Name"), r.metrics()?, cpu(&r)?)),
            "MANAGER" => managers.push(manager_of(&r, managers.len() as u32)?),
            "WORKER" => workers.push(WorkerResult {
                name: r.text("Target Name"),
                manager,
                spec: r.text("Access Specification Name"),
                engine: None,
                outstanding: r.cell("Queue Depth").parse().ok(),
                cpus: Vec::new(),
                numa_nodes: Vec::new(),
                waited_for_cpu_ms: None,
                cpu_waits: None,
                metrics: r.metrics()?,
                targets: Vec::new(),
            }),
            "DISK" => {
                let path = r.text("Target Name");
                if targets.seen.insert(path.clone()) {
                    targets.list.push(super::foreign_target(&path, TargetKind::Block, true, "Iometer's results file"));
                }
                let disk = TargetResult {
                    path,
                    manager,
                    start_offset: (r.num("Starting Sector")? as u64).saturating_mul(512),
                    working_set_bytes: (r.num("Maximum Size")? as u64).saturating_mul(512),
                    outstanding: r.num("Queue Depth")? as u64,
                    device: None,
                    metrics: r.metrics()?,
                };
                if let Some(w) = workers.last_mut() {
                    w.targets.push(disk);
                }
            }
            _ => {}
        }
    }
    let Some((spec, metrics, cpu)) = all else { return Ok(None) };
    let duration_s = if metrics.iops > 0.0 { metrics.ios as f64 / metrics.iops } else { 0.0 };
    let depth = |w: &WorkerResult| w.targets.iter().fold(0u64, |sum, t| sum.saturating_add(t.outstanding));
    for w in &workers {
        if let Some(m) = managers.get_mut(w.manager as usize) {
            m.workers += 1;
            m.totals.outstanding = m.totals.outstanding.saturating_add(depth(w));
        }
    }
    let outstanding = workers.iter().fold(0u64, |sum, w| sum.saturating_add(depth(w)));
    let totals = Totals { outstanding, metrics, cpu };
    Ok(Some(super::foreign_workload(spec, duration_s, totals, workers, managers)))
}

/// A MANAGER row as the manager of rank `rank` (its place among the test's managers): its
/// name (Iometer's manager name, the host's by default), figures and CPU; its workers are
/// counted from the rows after it.
fn manager_of(r: &Row, rank: u32) -> Result<ManagerResult, String> {
    Ok(ManagerResult {
        rank,
        host: r.text("Target Name"),
        workers: 0,
        totals: Totals { metrics: r.metrics()?, outstanding: 0, cpu: cpu(r)? },
        record_start_unix_ns: 0,
        record_end_unix_ns: 0,
        stopped_ms: 0.0,
        stops_untimed: 0,
    })
}

/// The CPU figures of an `ALL` or `MANAGER` row.
fn cpu(all: &Row) -> Result<CpuUsage, String> {
    Ok(CpuUsage {
        all: CpuShare {
            utilization_pct: all.num("% CPU Utilization")?,
            user_pct: all.num("% User Time")?,
            system_pct: all.num("% Privileged Time")?,
            irq_pct: all.num("% Interrupt Time")?,
            softirq_pct: all.num("% DPC Time")?,
            ..CpuShare::default()
        },
        interrupts_per_sec: all.num("Interrupts per Second")?,
        effectiveness: all.num("CPU Effectiveness")?,
        ..CpuUsage::default()
    })
}

/// A cycling test repeats its specification: each step gets its number (`Default step 2`).
fn number_steps(results: &mut [WorkloadResult]) {
    let mut count: HashMap<String, usize> = HashMap::new();
    for r in results.iter() {
        *count.entry(r.spec.clone()).or_default() += 1;
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    for r in results.iter_mut().filter(|r| count[&r.spec] > 1) {
        let step = seen.entry(r.spec.clone()).or_default();
        *step += 1;
        r.spec = format!("{} step {step}", r.spec);
        for w in &mut r.workers {
            w.spec = r.spec.clone();
        }
    }
}
