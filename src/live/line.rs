//! The live line: one line on the terminal, redrawn each interval, and cleared when a
//! workload ends (its table follows).

use std::io::Write;

use crate::run::{Phase, Snapshot};

/// "3 min 20 s", "1 h 5 min", "40 s".
fn duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}

/// The line of a snapshot: where a study is, the workload, its phase and the last interval.
pub fn text(s: &Snapshot) -> String {
    let phase = match s.phase {
        Phase::Ramp => "ramp-up (not recorded)",
        Phase::Run => "recording",
    };
    let study = s.study.as_ref().map_or(String::new(), |p| {
        let left = p.left_s.map_or(String::new(), |l| format!(", ~{} left", duration(l)));
        format!("[{}{left}] ", p.label)
    });
    let total = s.total_s.map_or(String::new(), |t| format!("/{t:.0}"));
    let iv = &s.interval;
    let avg = iv.avg_response_ms.map_or("-".into(), |v| format!("{v:.3}"));
    let p99 = iv.percentiles_ms.get("p99").map_or("-".into(), |v| format!("{v:.3}"));
    format!(
        "{study}{} {phase} {:.0}{total} s  IOPS {}  MB/s {:.1}  avg {avg} ms  p99 {p99} ms  CPU {:.0} %",
        s.workload,
        s.elapsed_s,
        crate::format::thousands(iv.iops),
        iv.mbps,
        iv.cpu_pct
    )
}

/// Draws the line over the last one.
pub fn draw(s: &Snapshot) {
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "\r\x1b[K{}", text(s));
    let _ = out.flush();
}

/// Clears it.
pub fn clear() {
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "\r\x1b[K");
    let _ = out.flush();
}
