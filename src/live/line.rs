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

/// The line cut to `width` columns, never wrapped (a wrapped line is left behind on the
/// terminal at every redraw): single spaces and the shorter phase first, then cut, ending
/// in `…`. One column is kept free, where some terminals wrap at once.
pub fn fit(line: &str, width: usize) -> String {
    let room = width.saturating_sub(1).max(10);
    if line.chars().count() <= room {
        return line.to_string();
    }
    let compact = line.replace(" (not recorded)", "").replace("  ", " ");
    if compact.chars().count() <= room {
        return compact;
    }
    compact.chars().take(room - 1).chain(['…']).collect()
}

/// The terminal's width in columns, when stdout is one.
fn terminal_width() -> Option<usize> {
    let mut ws = libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ writes one winsize through the pointer, which outlives the call.
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    (ok && ws.ws_col > 0).then_some(ws.ws_col as usize)
}

/// Draws the line over the last one, cut to the terminal's width.
pub fn draw(s: &Snapshot) {
    let line = text(s);
    let line = terminal_width().map_or(line.clone(), |w| fit(&line, w));
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "\r\x1b[K{line}");
    let _ = out.flush();
}

/// Clears it.
pub fn clear() {
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "\r\x1b[K");
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Interval;
    use crate::run::Progress;

    #[test]
    fn the_line_says_where_a_study_is_and_the_time_left() {
        let interval = Interval {
            t_s: 12.0,
            duration_s: 1.0,
            iops: 12345.0,
            mbps: 50.5,
            avg_response_ms: Some(0.25),
            cpu_pct: 40.0,
            percentiles_ms: [("p99".to_string(), 1.5)].into(),
            histogram: None,
        };
        let progress = Progress {
            label: "point 2 of 3: outstanding=4".into(),
            point: 2,
            points: Some(3),
            round: None,
            elapsed_s: 70.0,
            left_s: Some(65.0),
        };
        let mut s = Snapshot {
            workload: "oltp-8k",
            phase: Phase::Run,
            elapsed_s: 12.0,
            total_s: Some(60.0),
            interval,
            ios: 12345,
            bytes: 50_500_000,
            response_ns: 0,
            in_flight: 4,
            counts: Vec::new(),
            study: Some(progress),
        };
        assert_eq!(
            text(&s),
            "[point 2 of 3: outstanding=4, ~1 min 5 s left] oltp-8k recording 12/60 s  IOPS 12,345  MB/s 50.5  avg 0.250 ms  p99 1.500 ms  CPU 40 %"
        );
        s.study = None;
        s.phase = Phase::Ramp;
        assert!(text(&s).starts_with("oltp-8k ramp-up (not recorded) 12/60 s"));
        assert_eq!(duration(7300.0), "2 h 1 min");
        // Cut to the terminal, never wrapped: the full line where it fits, then single spaces
        // and the short phase, then cut with an ellipsis, one column left free.
        let line = text(&s);
        assert_eq!(fit(&line, 200), line);
        let compact = "oltp-8k ramp-up 12/60 s IOPS 12,345 MB/s 50.5 avg 0.250 ms p99 1.500 ms CPU 40 %";
        assert_eq!(fit(&line, compact.len() + 1), compact);
        let cut = fit(&line, 40);
        assert!(cut.ends_with('…') && cut.chars().count() == 39, "{cut}");
    }
}
