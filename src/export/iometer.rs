//! Iometer's results file, row by row as Iometer 1.1 writes it (ManagerList.cpp, Manager.cpp,
//! Worker.cpp, AccessSpecList.cpp, PageSetup.cpp), so the spreadsheets and converters made for
//! Iometer read ours: which columns each row type fills, and whether an unused one is empty or
//! zero, are Iometer's (docs/result-schema.md lists where iogauge's reading of a field differs).
//!
//! A file is one Iometer test: its type and description, then per access specification run
//! the block of specifications, then one `'Results` group per run (a cycling test has one per
//! step), and `'End Test` once.

use std::fmt::Write;
use std::time::Duration;

use crate::config::{StudyConfig, TargetsIn};
use crate::host::cpu::CpuShare;
use crate::result::{ManagerResult, Metrics, ResultDoc, TargetResult, Totals, WorkloadResult};
use crate::study::doc::StudyDoc;

/// Iometer 1.1's results header, verbatim.
pub const HEADER: &str = "'Target Type,Target Name,Access Specification Name,# Managers,# Workers,# Disks,IOps,Read IOps,Write IOps,MiBps (Binary),Read MiBps (Binary),Write MiBps (Binary),MBps (Decimal),Read MBps (Decimal),Write MBps (Decimal),Transactions per Second,Connections per Second,Average Response Time,Average Read Response Time,Average Write Response Time,Average Transaction Time,Average Connection Time,Maximum Response Time,Maximum Read Response Time,Maximum Write Response Time,Maximum Transaction Time,Maximum Connection Time,Errors,Read Errors,Write Errors,Bytes Read,Bytes Written,Read I/Os,Write I/Os,Connections,Transactions per Connection,Total Raw Read Response Time,Total Raw Write Response Time,Total Raw Transaction Time,Total Raw Connection Time,Maximum Raw Read Response Time,Maximum Raw Write Response Time,Maximum Raw Transaction Time,Maximum Raw Connection Time,Total Raw Run Time,Starting Sector,Maximum Size,Queue Depth,% CPU Utilization,% User Time,% Privileged Time,% DPC Time,% Interrupt Time,Processor Speed,Interrupts per Second,CPU Effectiveness,Packets/Second,Packet Errors,Segments Retransmitted/Second,0 to 50 uS,50 to 100 uS,100 to 200 uS,200 to 500 uS,0.5 to 1 mS,1 to 2 mS,2 to 5 mS,5 to 10 mS,10 to 15 mS,15 to 20 mS,20 to 30 mS,30 to 50 mS,50 to 100 mS,100 to 200 mS,200 to 500 mS,0.5 to 1 S,1 to 2 s,2 to 4.7 s,4.7 to 5 s,5 to 10 s, >= 10 s";

/// Number of columns in [`HEADER`] (a PROCESSOR row stops after the network columns).
pub const COLUMNS: usize = 80;

/// Columns of a PROCESSOR row: Iometer ends it before the latency bins.
const PROCESSOR_COLUMNS: usize = 59;

/// "Processor Speed": Iometer's timer ticks per second, the unit of the raw columns. iogauge's
/// raw times are nanoseconds, so its timer runs at 10^9 ticks per second.
const TICKS_PER_S: f64 = 1e9;

/// Iometer's value for a setting that differs among a row's parts (AMBIGUOUS_VALUE).
const AMBIGUOUS: i64 = -1;

/// Upper edges of Iometer's latency bins in microseconds (the last bin is open).
const BIN_EDGES_US: [u64; 20] = [
    50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 20000, 30000, 50000, 100000, 200000, 500000, 1000000, 2000000,
    4700000, 5000000, 10000000,
];

/// Iometer's test types (the index written under `'Test Type`; PageSetup.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestType {
    /// 0: no cycling.
    Normal = 0,
    /// 1: every worker gets more targets at each step.
    CyclingTargets = 1,
    /// 2: more workers at each step.
    CyclingWorkers = 2,
    /// 4: targets added down each worker, one manager at a time (iogauge's `series`; it never
    /// writes 3, the same on all managers at once).
    IncTargetsSerial = 4,
    /// 5: workers, and targets within each step of workers.
    CyclingWorkersTargets = 5,
    /// 6: outstanding I/Os.
    CyclingQueue = 6,
    /// 7: outstanding I/Os, and targets within each.
    CyclingQueueTargets = 7,
}

impl TestType {
    /// The Iometer test type a study's cycles amount to; `Normal` when Iometer has none for it
    /// (a transfer-size sweep, a curve).
    pub fn of(study: &StudyConfig) -> TestType {
        let targets = study.targets.is_some();
        let others = study.managers.is_some() || study.size.is_some() || study.stroke.is_some();
        let queue = study.outstanding.is_some() || study.limit.is_some();
        match (targets, study.workers.is_some(), queue) {
            _ if others || study.curve.is_some() => TestType::Normal,
            (true, false, false) if study.targets_in == TargetsIn::Series => TestType::IncTargetsSerial,
            (true, false, false) => TestType::CyclingTargets,
            (false, true, false) => TestType::CyclingWorkers,
            (true, true, false) => TestType::CyclingWorkersTargets,
            (false, false, true) => TestType::CyclingQueue,
            (true, false, true) => TestType::CyclingQueueTargets,
            _ => TestType::Normal,
        }
    }
}

fn num(v: f64) -> String {
    format!("{v:.6}")
}

/// Names with Iometer's separators made spaces (Worker.cpp does so for target names).
fn name(s: &str) -> String {
    s.replace([',', '\n', '\r'], " ")
}

/// One row of cells, empty until filled.
struct Row(Vec<String>);

impl Row {
    fn new(kind: &str, row_name: &str, spec: &str) -> Row {
        let mut cells = vec![String::new(); COLUMNS];
        cells[0] = kind.into();
        cells[1] = name(row_name);
        cells[2] = name(spec);
        Row(cells)
    }

    /// `# Managers`, `# Workers`, `# Disks`: each row type fills only some.
    fn counts(&mut self, managers: Option<usize>, workers: Option<usize>, disks: usize) {
        self.0[3] = managers.map(|v| v.to_string()).unwrap_or_default();
        self.0[4] = workers.map(|v| v.to_string()).unwrap_or_default();
        self.0[5] = disks.to_string();
    }

    /// IOps to `Transactions per Connection`: every I/O figure, and the connection columns of a
    /// disk worker (`0.000000`, `0` connections, `-1` transactions per connection).
    fn io(&mut self, m: &Metrics) {
        let ms = |v: Option<f64>| num(v.unwrap_or(0.0));
        let cells = [
            num(m.iops),
            num(m.read_iops),
            num(m.write_iops),
            num(m.mibps),
            num(m.read_mibps),
            num(m.write_mibps),
            num(m.mbps),
            num(m.read_mbps),
            num(m.write_mbps),
            num(m.iops),
            num(0.0),
            ms(m.avg_response_ms),
            ms(m.avg_read_response_ms),
            ms(m.avg_write_response_ms),
            ms(m.avg_response_ms),
            num(0.0),
            ms(m.max_response_ms),
            ms(m.max_read_response_ms),
            ms(m.max_write_response_ms),
            ms(m.max_response_ms),
            num(0.0),
            m.errors.to_string(),
            m.read_errors.to_string(),
            m.write_errors.to_string(),
            m.read_bytes.to_string(),
            m.write_bytes.to_string(),
            m.read_ios.to_string(),
            m.write_ios.to_string(),
            "0".into(),
            AMBIGUOUS.to_string(),
        ];
        for (i, v) in cells.into_iter().enumerate() {
            self.0[6 + i] = v;
        }
    }

    /// The nine raw columns, in timer ticks (ns): response time sums and maxima, transactions
    /// being I/Os; no connections; the recorded window.
    fn raw(&mut self, m: &Metrics, window_s: f64) {
        let (r, w) = (&m.raw.read, &m.raw.write);
        let cells = [
            r.response_sum_ns,
            w.response_sum_ns,
            r.response_sum_ns + w.response_sum_ns,
            0,
            r.response_max_ns,
            w.response_max_ns,
            r.response_max_ns.max(w.response_max_ns),
            0,
            (window_s * TICKS_PER_S).round() as u64,
        ];
        for (i, v) in cells.into_iter().enumerate() {
            self.0[36 + i] = v.to_string();
        }
    }

    /// `Starting Sector`, `Maximum Size` (512-byte sectors) and `Queue Depth` shared by the
    /// targets under the row, or -1 where they differ (Iometer's GetDiskStart and the like).
    fn geometry<'a>(&mut self, targets: impl Iterator<Item = &'a TargetResult> + Clone) {
        fn common(mut v: impl Iterator<Item = i64>) -> i64 {
            let first = v.next().unwrap_or(AMBIGUOUS);
            if v.all(|x| x == first) { first } else { AMBIGUOUS }
        }
        self.0[45] = common(targets.clone().map(|t| (t.start_offset / 512) as i64)).to_string();
        self.0[46] = common(targets.clone().map(|t| (t.working_set_bytes / 512) as i64)).to_string();
        self.0[47] = common(targets.map(|t| t.outstanding as i64)).to_string();
    }

    /// `% CPU Utilization` .. `% Interrupt Time`.
    fn cpu(&mut self, c: &CpuShare) {
        let cells = [c.utilization_pct, c.user_pct, c.system_pct, c.softirq_pct, c.irq_pct];
        for (i, v) in cells.into_iter().enumerate() {
            self.0[48 + i] = num(v);
        }
    }

    fn processor_speed(&mut self) {
        self.0[53] = num(TICKS_PER_S);
    }

    /// ALL and MANAGER rows: the host's interrupts and CPU effectiveness, and the network
    /// columns, zero for disk workers.
    fn host(&mut self, t: &Totals) {
        self.cpu(&t.cpu.all);
        self.0[54] = num(t.cpu.interrupts_per_sec);
        self.0[55] = num(t.cpu.effectiveness);
        for i in 56..59 {
            self.0[i] = num(0.0);
        }
    }

    /// The 21 latency bins: completed I/Os per range of response time.
    fn bins(&mut self, m: &Metrics) {
        let all = m.raw.all();
        let mut lo = 0;
        for (b, &hi) in BIN_EDGES_US.iter().enumerate() {
            self.0[59 + b] = all.histogram.count_between(lo * 1000, hi * 1000).to_string();
            lo = hi;
        }
        self.0[79] = all.histogram.count_between(lo * 1000, u64::MAX).to_string();
    }

    fn write(mut self, out: &mut String, columns: usize) {
        self.0.truncate(columns);
        out.push_str(&self.0.join(","));
        out.push('\n');
    }
}

/// `2026-11-22T10:04:05.123Z` plus `after` as Iometer writes time stamps:
/// `2026-11-22 10:04:05:123` (iogauge's are UTC; Iometer's are local time).
fn iometer_time(rfc3339: &str, after: f64) -> String {
    let at = humantime::parse_rfc3339(rfc3339)
        .map(|t| humantime::format_rfc3339_millis(t + Duration::from_secs_f64(after.max(0.0))).to_string())
        .unwrap_or_else(|_| rfc3339.to_string());
    at.trim_end_matches('Z').replacen('T', " ", 1).replacen('.', ":", 1)
}

/// The file's opening: test type and description, version, the test's start.
fn begin(out: &mut String, test_type: TestType, description: &str, version: &str, started_at: &str) {
    let _ = writeln!(out, "'Test Type,Test Description\n{},{}", test_type as u32, name(description));
    let _ = writeln!(out, "'Version\niogauge {version}");
    let _ = writeln!(out, "'Time Stamp\n{}", iometer_time(started_at, 0.0));
}

/// The access specifications the workers of `r` ran, each once, as AccessSpecList.cpp writes
/// them (a trailing comma after `reply`).
fn access_specs(out: &mut String, doc: &ResultDoc, r: &WorkloadResult) {
    out.push_str("'Access specifications\n");
    let mut seen: Vec<&str> = Vec::new();
    for w in &r.workers {
        if seen.contains(&w.spec.as_str()) {
            continue;
        }
        seen.push(&w.spec);
        let _ = writeln!(out, "'Access specification name,default assignment\n{},0", name(&w.spec));
        out.push_str("'size,% of size,% reads,% random,delay,burst,align,reply\n");
        for l in doc.config.specs.iter().filter(|s| s.name == w.spec).flat_map(|s| &s.lines) {
            let align = l.align.unwrap_or(0);
            let _ =
                writeln!(out, "{},{},{},{},{},{},{align},0,", l.size, l.share, l.read, l.random, l.delay_ms, l.burst);
        }
    }
    out.push_str("'End access specifications\n");
}

/// One `'Results` group: the header, ALL, then each manager with its CPUs, workers and their
/// targets, as Iometer orders them, and the time the results were taken.
fn results(out: &mut String, doc: &ResultDoc, r: &WorkloadResult) {
    out.push_str("'Results\n");
    out.push_str(HEADER);
    out.push('\n');
    // A document from before managers were recorded has none: its one manager is the host.
    let one = [ManagerResult {
        rank: 0,
        host: doc.host.name.clone(),
        workers: r.workers.len(),
        totals: r.totals.clone(),
        record_start_unix_ns: 0,
        record_end_unix_ns: 0,
        stopped_ms: 0.0,
        stops_untimed: 0,
    }];
    let managers: &[ManagerResult] = if r.managers.is_empty() { &one } else { &r.managers };
    let window = r.duration_s;
    let all_targets = r.workers.iter().flat_map(|w| &w.targets);

    let mut row = Row::new("ALL", "All", &r.spec);
    row.counts(Some(managers.len()), Some(r.workers.len()), all_targets.clone().count());
    row.io(&r.totals.metrics);
    row.geometry(all_targets);
    row.host(&r.totals);
    row.bins(&r.totals.metrics);
    row.write(out, COLUMNS);
    for m in managers {
        let workers: Vec<_> = r.workers.iter().filter(|w| w.manager == m.rank).collect();
        let targets = workers.iter().flat_map(|w| &w.targets);
        let mut row = Row::new("MANAGER", &m.host, &r.spec);
        row.counts(None, Some(workers.len()), targets.clone().count());
        row.io(&m.totals.metrics);
        row.raw(&m.totals.metrics, window);
        row.geometry(targets);
        row.host(&m.totals);
        row.processor_speed();
        row.bins(&m.totals.metrics);
        row.write(out, COLUMNS);
        let interrupts = &m.totals.cpu.per_cpu_interrupts_per_sec;
        for (i, c) in m.totals.cpu.per_cpu.iter().enumerate() {
            let mut row = Row::new("PROCESSOR", &format!("CPU {i}"), "");
            row.cpu(c);
            row.processor_speed();
            row.0[54] = interrupts.get(i).map(|&v| num(v)).unwrap_or_default();
            row.write(out, PROCESSOR_COLUMNS);
        }
        for w in workers {
            let mut row = Row::new("WORKER", &w.name, &w.spec);
            row.counts(None, None, w.targets.len());
            row.io(&w.metrics);
            row.raw(&w.metrics, window);
            row.geometry(w.targets.iter());
            row.processor_speed();
            row.bins(&w.metrics);
            row.write(out, COLUMNS);
            for t in &w.targets {
                let mut row = Row::new("DISK", &t.path, "");
                row.io(&t.metrics);
                row.raw(&t.metrics, window);
                row.geometry(std::iter::once(t));
                row.processor_speed();
                row.bins(&t.metrics);
                row.write(out, COLUMNS);
            }
        }
    }
    let _ = writeln!(out, "'Time Stamp\n{}", iometer_time(&r.started_at, r.duration_s));
}

/// Writes the access-specification block when the specifications change, then the results:
/// the way Iometer goes on to its next access specification or cycling step.
struct Steps<'a> {
    out: String,
    last_specs: Option<Vec<&'a str>>,
}

impl<'a> Steps<'a> {
    fn push(&mut self, doc: &'a ResultDoc, r: &'a WorkloadResult) {
        let specs: Vec<&str> = r.workers.iter().map(|w| w.spec.as_str()).collect();
        if self.last_specs.as_ref() != Some(&specs) {
            access_specs(&mut self.out, doc, r);
            self.last_specs = Some(specs);
        }
        results(&mut self.out, doc, r);
    }

    /// `'End Test` tells automation that every run is done; a stopped test ends as Iometer
    /// ends an aborted one.
    fn end(mut self, interrupted: bool) -> Vec<u8> {
        self.out.push_str(if interrupted { "Aborted test\n" } else { "'End Test\n" });
        self.out.into_bytes()
    }
}

/// A run's results file: one Iometer test (type 0) running each access specification in turn.
pub fn to_bytes(doc: &ResultDoc) -> Vec<u8> {
    let specs: Vec<&str> = doc.results.iter().map(|r| r.spec.as_str()).collect();
    let mut steps = Steps { out: String::new(), last_specs: None };
    begin(&mut steps.out, TestType::Normal, &specs.join(" "), &doc.tool_version, &doc.started_at);
    for r in &doc.results {
        steps.push(doc, r);
    }
    steps.end(doc.interrupted)
}

/// A study's results file, as Iometer writes a cycling test: its type from the study's
/// cycles, the access specifications when they change, one `'Results` group per run of each
/// point (every repeat, in the order run), `'End Test` once.
pub fn study_to_bytes(study: &StudyDoc) -> Vec<u8> {
    let description = study.points.first().map(|p| p.params.label()).unwrap_or_default();
    let mut steps = Steps { out: String::new(), last_specs: None };
    let test_type = TestType::of(&study.study);
    begin(
        &mut steps.out,
        test_type,
        &format!("iogauge study from {description}"),
        &study.tool_version,
        &study.started_at,
    );
    for run in study.points.iter().flat_map(|p| &p.runs) {
        for r in &run.results {
            steps.push(run, r);
        }
    }
    steps.end(study.interrupted)
}

/// Iometer's results file (`--iometer-csv`).
pub struct IometerCsv;

impl super::Exporter for IometerCsv {
    fn what(&self) -> &'static str {
        "the Iometer results file"
    }
    fn run(&self, doc: &ResultDoc) -> Vec<u8> {
        to_bytes(doc)
    }
    fn study(&self, doc: &StudyDoc) -> super::Export {
        super::Export::Bytes(study_to_bytes(doc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Steps as Cycle, Value};

    #[test]
    fn header_has_every_column() {
        assert_eq!(HEADER.split(',').count(), COLUMNS);
        assert_eq!(HEADER.split(',').nth(48), Some("% CPU Utilization"));
        assert_eq!(HEADER.split(',').nth(53), Some("Processor Speed"));
        assert_eq!(HEADER.split(',').nth(PROCESSOR_COLUMNS), Some("0 to 50 uS"));
        assert_eq!(iometer_time("2026-11-22T10:04:05.123Z", 0.0), "2026-11-22 10:04:05:123");
        assert_eq!(iometer_time("2026-11-22T10:04:05.123Z", 60.5), "2026-11-22 10:05:05:623");
    }

    #[test]
    fn a_study_is_the_cycling_test_of_its_cycles() {
        let two = || Some(Cycle::List(vec![Value(1.0), Value(2.0)]));
        let of = |f: &dyn Fn(&mut StudyConfig)| {
            let mut s = StudyConfig::default();
            f(&mut s);
            TestType::of(&s) as u32
        };
        assert_eq!(of(&|_| {}), 0);
        assert_eq!(of(&|s| s.targets = two()), 1);
        assert_eq!(of(&|s| s.workers = two()), 2);
        assert_eq!(of(&|s| (s.targets, s.targets_in) = (two(), TargetsIn::Series)), 4);
        assert_eq!(of(&|s| (s.targets, s.workers) = (two(), two())), 5);
        assert_eq!(of(&|s| s.outstanding = two()), 6);
        assert_eq!(of(&|s| (s.outstanding, s.targets) = (two(), two())), 7);
        // Iometer cannot cycle transfer sizes: a sweep of them is a normal test per point.
        assert_eq!(of(&|s| (s.size, s.outstanding) = (two(), two())), 0);
    }
}
