//! Iometer's results file (Iometer 1.1, ManagerList.cpp), so spreadsheets made for Iometer read
//! ours. Rows: ALL, then for each manager (host) MANAGER, one PROCESSOR per CPU, then each
//! WORKER followed by one DISK row per target. Columns iogauge has no value for are left empty.

use std::fmt::Write;

use crate::cpu::CpuShare;
use crate::result::{ManagerResult, Metrics, ResultDoc, Totals, WorkloadResult};

/// Iometer 1.1's results header, verbatim.
pub const HEADER: &str = "'Target Type,Target Name,Access Specification Name,# Managers,# Workers,# Disks,IOps,Read IOps,Write IOps,MiBps (Binary),Read MiBps (Binary),Write MiBps (Binary),MBps (Decimal),Read MBps (Decimal),Write MBps (Decimal),Transactions per Second,Connections per Second,Average Response Time,Average Read Response Time,Average Write Response Time,Average Transaction Time,Average Connection Time,Maximum Response Time,Maximum Read Response Time,Maximum Write Response Time,Maximum Transaction Time,Maximum Connection Time,Errors,Read Errors,Write Errors,Bytes Read,Bytes Written,Read I/Os,Write I/Os,Connections,Transactions per Connection,Total Raw Read Response Time,Total Raw Write Response Time,Total Raw Transaction Time,Total Raw Connection Time,Maximum Raw Read Response Time,Maximum Raw Write Response Time,Maximum Raw Transaction Time,Maximum Raw Connection Time,Total Raw Run Time,Starting Sector,Maximum Size,Queue Depth,% CPU Utilization,% User Time,% Privileged Time,% DPC Time,% Interrupt Time,Processor Speed,Interrupts per Second,CPU Effectiveness,Packets/Second,Packet Errors,Segments Retransmitted/Second,0 to 50 uS,50 to 100 uS,100 to 200 uS,200 to 500 uS,0.5 to 1 mS,1 to 2 mS,2 to 5 mS,5 to 10 mS,10 to 15 mS,15 to 20 mS,20 to 30 mS,30 to 50 mS,50 to 100 mS,100 to 200 mS,200 to 500 mS,0.5 to 1 S,1 to 2 s,2 to 4.7 s,4.7 to 5 s,5 to 10 s, >= 10 s";

/// Number of columns in [`HEADER`].
pub const COLUMNS: usize = 80;

/// Upper edges of Iometer's latency bins in microseconds (the last bin is open).
const BIN_EDGES_US: [u64; 20] = [
    50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 20000, 30000, 50000, 100000, 200000, 500000, 1000000, 2000000,
    4700000, 5000000, 10000000,
];

fn num(v: f64) -> String {
    format!("{v:.6}")
}

fn opt(v: Option<f64>) -> String {
    v.map(num).unwrap_or_default()
}

/// Column index of the first CPU column (% CPU Utilization).
const CPU_COL: usize = 48;

fn io_cells(row: &mut [String], m: &Metrics) {
    let cells = [
        (6, num(m.iops)),
        (7, num(m.read_iops)),
        (8, num(m.write_iops)),
        (9, num(m.mibps)),
        (10, num(m.read_mibps)),
        (11, num(m.write_mibps)),
        (12, num(m.mbps)),
        (13, num(m.read_mbps)),
        (14, num(m.write_mbps)),
        (15, num(m.iops)),
        (17, opt(m.avg_response_ms)),
        (18, opt(m.avg_read_response_ms)),
        (19, opt(m.avg_write_response_ms)),
        (20, opt(m.avg_response_ms)),
        (22, opt(m.max_response_ms)),
        (23, opt(m.max_read_response_ms)),
        (24, opt(m.max_write_response_ms)),
        (25, opt(m.max_response_ms)),
        (27, m.errors.to_string()),
        (28, m.read_errors.to_string()),
        (29, m.write_errors.to_string()),
        (30, m.read_bytes.to_string()),
        (31, m.write_bytes.to_string()),
        (32, m.read_ios.to_string()),
        (33, m.write_ios.to_string()),
    ];
    for (i, v) in cells {
        row[i] = v;
    }
    let all = m.raw.both();
    let mut lo = 0;
    for (b, &hi) in BIN_EDGES_US.iter().enumerate() {
        row[59 + b] = all.histogram.count_between(lo * 1000, hi * 1000).to_string();
        lo = hi;
    }
    row[79] = all.histogram.count_between(lo * 1000, u64::MAX).to_string();
}

fn cpu_cells(row: &mut [String], c: &CpuShare) {
    row[CPU_COL] = num(c.utilization_pct);
    row[CPU_COL + 1] = num(c.user_pct);
    row[CPU_COL + 2] = num(c.system_pct);
    row[CPU_COL + 3] = num(c.softirq_pct);
    row[CPU_COL + 4] = num(c.irq_pct);
}

fn line(row: &[String]) -> String {
    let mut s = row.join(",");
    s.push('\n');
    s
}

fn new_row(kind: &str, name: &str, spec: &str) -> Vec<String> {
    let mut row = vec![String::new(); COLUMNS];
    row[0] = kind.into();
    row[1] = name.replace(',', ";");
    row[2] = spec.replace(',', ";");
    row
}

/// `2026-11-22T10:04:05.123Z` as Iometer writes time stamps: `2026-11-22 10:04:05:123`.
fn iometer_time(rfc3339: &str) -> String {
    rfc3339.trim_end_matches('Z').replacen('T', " ", 1).replacen('.', ":", 1)
}

fn test_block(out: &mut String, doc: &ResultDoc, r: &WorkloadResult) {
    let _ = writeln!(out, "'Test Type,Test Description\n0,{}", r.spec.replace(',', ";"));
    let _ = writeln!(out, "'Version\niogauge {}", doc.tool_version);
    let _ = writeln!(out, "'Time Stamp\n{}", iometer_time(&r.started_at));
    out.push_str("'Access specifications\n");
    let mut seen: Vec<&str> = Vec::new();
    for w in &r.workers {
        if seen.contains(&w.spec.as_str()) {
            continue;
        }
        seen.push(&w.spec);
        let _ = writeln!(out, "'Access specification name,default assignment\n{},0", w.spec.replace(',', ";"));
        out.push_str("'size,% of size,% reads,% random,delay,burst,align,reply\n");
        if let Some(spec) = doc.config.specs.iter().find(|s| s.name == w.spec) {
            for l in &spec.lines {
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{},{},0",
                    l.size,
                    l.share,
                    l.read,
                    l.random,
                    l.delay_ms,
                    l.burst,
                    l.align.unwrap_or(0)
                );
            }
        }
    }
    out.push_str("'End access specifications\n'Results\n");
    out.push_str(HEADER);
    out.push('\n');
    result_rows(out, doc, r);
    let _ = writeln!(out, "'Time Stamp\n{}\n'End Test", iometer_time(&r.started_at));
}

/// The rows of one workload's results: ALL, then each manager with its CPUs, workers and their
/// targets, as Iometer orders them.
fn result_rows(out: &mut String, doc: &ResultDoc, r: &WorkloadResult) {
    let disks: usize = r.workers.iter().map(|w| w.targets.len()).sum();
    let counts = |row: &mut Vec<String>, managers: usize, workers: usize, disks: usize| {
        row[3] = managers.to_string();
        row[4] = workers.to_string();
        row[5] = disks.to_string();
    };
    // A document from before managers were recorded has none: its one manager is the host.
    let one = [ManagerResult {
        rank: 0,
        host: doc.host.name.clone(),
        workers: r.workers.len(),
        totals: r.totals.clone(),
        record_start_unix_ns: 0,
        record_end_unix_ns: 0,
    }];
    let managers: &[ManagerResult] = if r.managers.is_empty() { &one } else { &r.managers };
    let summary = |row: &mut Vec<String>, t: &Totals, managers: usize, workers: usize, disks: usize| {
        counts(row, managers, workers, disks);
        io_cells(row, &t.metrics);
        cpu_cells(row, &t.cpu.all);
        row[54] = num(t.cpu.interrupts_per_sec);
        row[55] = num(t.cpu.effectiveness);
    };
    let mut row = new_row("ALL", "All", &r.spec);
    summary(&mut row, &r.totals, managers.len(), r.workers.len(), disks);
    out.push_str(&line(&row));
    for m in managers {
        let workers: Vec<_> = r.workers.iter().filter(|w| w.manager == m.rank).collect();
        let mut row = new_row("MANAGER", &m.host, &r.spec);
        summary(&mut row, &m.totals, 1, workers.len(), workers.iter().map(|w| w.targets.len()).sum());
        out.push_str(&line(&row));
        for (i, c) in m.totals.cpu.per_cpu.iter().enumerate() {
            let mut row = new_row("PROCESSOR", &format!("CPU {i}"), &r.spec);
            cpu_cells(&mut row, c);
            out.push_str(&line(&row));
        }
        for w in workers {
            let mut row = new_row("WORKER", &w.name, &w.spec);
            counts(&mut row, 1, 1, w.targets.len());
            io_cells(&mut row, &w.metrics);
            row[47] = w.outstanding.to_string();
            out.push_str(&line(&row));
            for t in &w.targets {
                let mut row = new_row("DISK", &t.path, &w.spec);
                counts(&mut row, 1, 1, 1);
                io_cells(&mut row, &t.metrics);
                row[45] = (t.start_offset / 512).to_string();
                row[46] = (t.working_set_bytes / 512).to_string();
                row[47] = t.outstanding.to_string();
                out.push_str(&line(&row));
            }
        }
    }
}

/// The whole results file: one Iometer test block per access specification run.
pub fn to_bytes(doc: &ResultDoc) -> Vec<u8> {
    let mut out = String::new();
    for r in &doc.results {
        test_block(&mut out, doc, r);
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_has_every_column() {
        assert_eq!(HEADER.split(',').count(), COLUMNS);
        assert_eq!(HEADER.split(',').nth(CPU_COL), Some("% CPU Utilization"));
        assert_eq!(HEADER.split(',').nth(59), Some("0 to 50 uS"));
        assert_eq!(iometer_time("2026-11-22T10:04:05.123Z"), "2026-11-22 10:04:05:123");
    }
}
