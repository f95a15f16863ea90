//! Iometer's results file (`results.csv`, docs/interop.md) read as a result document, so
//! `compare` and `report` set an Iometer run beside iogauge's: each `'Results` group is a
//! workload named by its access specification (with its step, `Default step 2`, when a
//! cycling test repeats one), its `WORKER` rows the workers and their `DISK` rows the targets.
//! The figures are Iometer's own (IOPS, MB/s decimal, response times in ms, CPU utilisation
//! and effectiveness from the `ALL` row); Iometer writes no percentiles, only 21 latency bins.

use crate::cpu::{CpuShare, CpuUsage};
use crate::result::{ManagerResult, Metrics, ResultDoc, TargetResult, Totals, WorkerResult, WorkloadResult};
use crate::stats::{DirStats, IoStats};
use crate::targets::{TargetInfo, TargetKind};

/// Whether `bytes` are Iometer's results file: its first line is Iometer's first header.
pub fn is_iometer(bytes: &[u8]) -> bool {
    bytes.starts_with(b"'Test Type,Test Description")
}

/// One row of a `'Results` group, read by the header's column names.
struct Row<'a> {
    header: &'a [&'a str],
    cells: Vec<&'a str>,
}

impl Row<'_> {
    fn cell(&self, column: &str) -> &str {
        self.header.iter().position(|h| h.trim() == column).and_then(|i| self.cells.get(i)).copied().unwrap_or("")
    }

    /// A number; an empty cell (a column that row type leaves empty) is 0.
    fn num(&self, column: &str) -> f64 {
        self.cell(column).trim().parse().unwrap_or(0.0)
    }

    /// The first column of `columns` the file has (Iometer 1.1 writes "MiBps (Binary)", older
    /// versions "MBps (Binary)" for the same figure).
    fn num_of(&self, columns: &[&str]) -> f64 {
        columns.iter().find(|c| self.header.iter().any(|h| h.trim() == **c)).map_or(0.0, |c| self.num(c))
    }

    /// The CPU columns (of the ALL and MANAGER rows).
    fn cpu(&self) -> CpuUsage {
        CpuUsage {
            all: CpuShare {
                utilization_pct: self.num("% CPU Utilization"),
                user_pct: self.num("% User Time"),
                system_pct: self.num("% Privileged Time"),
                irq_pct: self.num("% Interrupt Time"),
                softirq_pct: self.num("% DPC Time"),
                ..CpuShare::default()
            },
            interrupts_per_sec: self.num("Interrupts per Second"),
            effectiveness: self.num("CPU Effectiveness"),
            ..CpuUsage::default()
        }
    }

    /// A MANAGER row as the manager of rank `rank` (its place among the test's managers): its
    /// name (Iometer's manager name, the host's by default), figures and CPU; its workers
    /// are counted from the rows after it.
    fn manager(&self, rank: u32) -> ManagerResult {
        ManagerResult {
            rank,
            host: self.cell("Target Name").to_string(),
            workers: 0,
            totals: Totals { metrics: self.metrics(), outstanding: 0, cpu: self.cpu() },
            record_start_unix_ns: 0,
            record_end_unix_ns: 0,
            stopped_ms: 0.0,
            stops_untimed: 0,
        }
    }

    /// The row's figures: Iometer's counts, rates and response times (ms).
    fn metrics(&self) -> Metrics {
        let dir = |ios: &str, bytes: &str, avg: &str, max: &str, errors: &str| {
            let n = self.num(ios) as u64;
            DirStats {
                ios: n,
                bytes: self.num(bytes) as u64,
                response_sum_ns: (self.num(avg) * 1e6 * n as f64) as u64,
                response_min_ns: 0,
                response_max_ns: (self.num(max) * 1e6) as u64,
                errors: self.num(errors) as u64,
                ..DirStats::default()
            }
        };
        let raw = IoStats {
            read: dir(
                "Read I/Os",
                "Bytes Read",
                "Average Read Response Time",
                "Maximum Read Response Time",
                "Read Errors",
            ),
            write: dir(
                "Write I/Os",
                "Bytes Written",
                "Average Write Response Time",
                "Maximum Write Response Time",
                "Write Errors",
            ),
            ..IoStats::default()
        };
        let iops = self.num("IOps");
        let ios = raw.read.ios + raw.write.ios;
        let mut m = Metrics::new(&raw, if iops > 0.0 { ios as f64 / iops } else { 0.0 });
        (m.iops, m.read_iops, m.write_iops) = (iops, self.num("Read IOps"), self.num("Write IOps"));
        (m.mbps, m.read_mbps, m.write_mbps) =
            (self.num("MBps (Decimal)"), self.num("Read MBps (Decimal)"), self.num("Write MBps (Decimal)"));
        m.mibps = self.num_of(&["MiBps (Binary)", "MBps (Binary)", "MBps"]);
        m.read_mibps = self.num_of(&["Read MiBps (Binary)", "Read MBps (Binary)", "Read MBps"]);
        m.write_mibps = self.num_of(&["Write MiBps (Binary)", "Write MBps (Binary)", "Write MBps"]);
        if m.mbps == 0.0 {
            // Before Iometer 1.1 the file has binary MB/s only.
            (m.mbps, m.read_mbps, m.write_mbps) =
                (m.mibps * 1.048576, m.read_mibps * 1.048576, m.write_mibps * 1.048576);
        }
        (m.avg_response_ms, m.max_response_ms) =
            (Some(self.num("Average Response Time")), Some(self.num("Maximum Response Time")));
        m
    }
}

/// Iometer's results file as a result document; `name` (the file) appears in errors.
pub fn result(bytes: &[u8], name: &str) -> Result<ResultDoc, String> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    let after = |marker: &str| lines.iter().position(|l| *l == marker).and_then(|i| lines.get(i + 1)).copied();
    let mut results: Vec<WorkloadResult> = Vec::new();
    let mut target_info: Vec<TargetInfo> = Vec::new();
    for (i, _) in lines.iter().enumerate().filter(|(_, l)| **l == "'Results") {
        let Some(header) = lines.get(i + 1).filter(|h| h.starts_with("'Target Type,")) else {
            return Err(format!("{name} line {}: 'Results without Iometer's header line after it", i + 2));
        };
        let header: Vec<&str> = header.trim_start_matches('\'').split(',').collect();
        let rows: Vec<Row> = lines[i + 2..]
            .iter()
            .take_while(|l| !l.starts_with('\''))
            .map(|l| Row { header: &header, cells: l.split(',').collect() })
            .collect();
        let Some(all) = rows.iter().find(|r| r.cell("Target Type") == "ALL") else {
            return Err(format!("{name} line {}: a 'Results group without its ALL row", i + 1));
        };
        let spec = all.cell("Access Specification Name").to_string();
        let mut workers: Vec<WorkerResult> = Vec::new();
        // Each manager's rows follow its MANAGER row: its workers and their targets are its.
        let mut managers: Vec<ManagerResult> = Vec::new();
        for r in &rows {
            let manager = managers.len().saturating_sub(1) as u32;
            match r.cell("Target Type") {
                "MANAGER" => managers.push(r.manager(managers.len() as u32)),
                "WORKER" => workers.push(WorkerResult {
                    name: r.cell("Target Name").to_string(),
                    manager,
                    spec: r.cell("Access Specification Name").to_string(),
                    engine: None,
                    outstanding: r.cell("Queue Depth").parse().ok(),
                    cpus: Vec::new(),
                    numa_nodes: Vec::new(),
                    waited_for_cpu_ms: None,
                    cpu_waits: None,
                    metrics: r.metrics(),
                    targets: Vec::new(),
                }),
                "DISK" => {
                    let path = r.cell("Target Name").to_string();
                    if !target_info.iter().any(|t| t.path == path) {
                        target_info.push(super::foreign_target(
                            &path,
                            TargetKind::Block,
                            true,
                            "Iometer's results file",
                        ));
                    }
                    let disk = TargetResult {
                        path,
                        manager,
                        start_offset: r.num("Starting Sector") as u64 * 512,
                        working_set_bytes: r.num("Maximum Size") as u64 * 512,
                        outstanding: r.num("Queue Depth") as u64,
                        device: None,
                        metrics: r.metrics(),
                    };
                    if let Some(w) = workers.last_mut() {
                        w.targets.push(disk);
                    }
                }
                _ => {}
            }
        }
        let metrics = all.metrics();
        let duration_s = if metrics.iops > 0.0 { metrics.ios as f64 / metrics.iops } else { 0.0 };
        for w in &workers {
            if let Some(m) = managers.get_mut(w.manager as usize) {
                m.workers += 1;
                m.totals.outstanding += w.targets.iter().map(|t| t.outstanding).sum::<u64>();
            }
        }
        let outstanding = workers.iter().flat_map(|w| &w.targets).map(|t| t.outstanding).sum();
        let totals = Totals { outstanding, metrics, cpu: all.cpu() };
        results.push(super::foreign_workload(spec, duration_s, totals, workers, managers));
    }
    if results.is_empty() {
        return Err(format!("{name}: Iometer's results file holds no 'Results group (a test that never ran?)"));
    }
    // A cycling test repeats its specification: each step gets its number.
    let names: Vec<String> = results.iter().map(|r| r.spec.clone()).collect();
    for (k, r) in results.iter_mut().enumerate() {
        if names.iter().filter(|n| **n == names[k]).count() > 1 {
            let step = names[..k].iter().filter(|n| **n == names[k]).count() + 1;
            r.spec = format!("{} step {step}", names[k]);
            for w in &mut r.workers {
                w.spec = r.spec.clone();
            }
        }
    }
    Ok(super::foreign_doc(
        format!("Iometer {}", after("'Version").unwrap_or("").trim()),
        after("'Time Stamp").unwrap_or("").trim().to_string(),
        target_info,
        results,
        vec!["Iometer's own figures, read from its results file: Iometer writes no percentiles".into()],
        None,
        format!("Iometer's results file {name}"),
    ))
}
