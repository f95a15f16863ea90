//! How numbers and tables are printed: the terminal's tables, the report's cells, the live line.

use std::fmt::Write;

/// An integer with thousands separators: 123,456.
pub fn thousands(v: f64) -> String {
    let s = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Text from a file as a terminal may be given it: each control character (an escape
/// sequence's ESC, a bell, a newline that would split a one-line message) written out as Rust
/// writes it (`\u{1b}`, `\n`), everything else as it is.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return text.into();
    }
    text.chars()
        .map(|c| if c.is_control() { c.escape_debug().to_string() } else { c.to_string() })
        .collect::<String>()
        .into()
}

/// Text a job names things with (a worker, a specification, a target), which a terminal will
/// be given: refused with its first control character (C0, DEL or C1), written out as Rust
/// writes it (`\u{1b}`), where it has one.
pub fn printable(text: &str) -> Result<(), String> {
    match text.chars().find(|c| c.is_control()) {
        Some(c) => Err(c.escape_debug().to_string()),
        None => Ok(()),
    }
}

/// A response time in ms: 3 decimals under 1 ms, 2 above, and 2 significant digits under a
/// µs, where 3 decimals would be 0.000 (the null target's, a RAM disk's percentiles): at most
/// 8 characters down to 10 ns, as wide as `12345.67`, so a table keeps within 80 columns;
/// `-` for none.
pub fn opt_ms(v: Option<f64>) -> String {
    v.map_or_else(
        || "-".into(),
        |v| match v {
            v if v > 0.0 && v < 0.001 => format!("{v:.*}", (1 - v.log10().floor() as i32) as usize),
            v if v < 1.0 => format!("{v:.3}"),
            v => format!("{v:.2}"),
        },
    )
}

/// The width tables keep within: a terminal's 80 columns.
pub const WIDTH: usize = 80;

/// Rows aligned in columns (words left, figures right), a rule under the header, within
/// [`WIDTH`] where the figures allow: a first cell too long for the room the others leave goes
/// on a line of its own, its figures on the next. A row of one cell is a heading.
pub fn grid(rows: &[Vec<String>]) -> String {
    let cols = rows[0].len();
    // A column of words (names, paths, dates) reads left-aligned; one of figures right-aligned.
    let figure = |s: &str| s.chars().all(|c| c.is_ascii_digit() || ",.+-% ".contains(c));
    let left: Vec<bool> =
        (0..cols).map(|c| c == 0 || rows[1..].iter().any(|r| r.get(c).is_some_and(|s| !figure(s)))).collect();
    let width = |c: usize| rows.iter().map(|r| r.get(c).map_or(0, |s| s.chars().count())).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols).map(width).collect();
    // Width right of the first column: two spaces after it, `gap` between the others.
    let figures = |gap: usize| match widths.get(1) {
        Some(w) => 2 + w + widths[2..].iter().map(|w| w + gap).sum::<usize>(),
        None => 0,
    };
    // Two apart; one when that lets the first column fit.
    let fits = |gap: usize| widths[0] + figures(gap) <= WIDTH;
    let gap = if !fits(2) && fits(1) { 1 } else { 2 };
    let figures = figures(gap);
    let label = widths[0].min(WIDTH.saturating_sub(figures).max(rows[0][0].chars().count()));
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let mut line = String::new();
        if row.len() == 1 {
            line.push_str(&row[0]);
        } else {
            if row[0].chars().count() > label {
                out.push_str(&row[0]);
                out.push('\n');
                line.push_str(&" ".repeat(label));
            } else {
                let _ = write!(line, "{:<label$}", row[0]);
            }
            for (c, cell) in row.iter().enumerate().skip(1) {
                let sep = if c == 1 { "  " } else { &"  "[..gap] };
                let _ = if left[c] {
                    write!(line, "{sep}{cell:<w$}", w = widths[c])
                } else {
                    write!(line, "{sep}{cell:>w$}", w = widths[c])
                };
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
        if i == 0 {
            out.push_str(&"-".repeat(label + figures));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_time_under_a_microsecond_keeps_two_significant_digits() {
        let said = [Some(0.000412), Some(0.0000123), Some(0.0), Some(0.259), Some(3.561), None].map(opt_ms);
        assert_eq!(said, ["0.00041", "0.000012", "0.000", "0.259", "3.56", "-"]);
    }

    fn rows(label: &str) -> Vec<Vec<String>> {
        let head = ["workload", "IOPS", "MB/s", "avg ms", "p99 ms", "max ms", "CPU %", "own %", "IOPS/CPU%"];
        let row = [label, "61,768", "253.0", "0.259", "0.350", "3.56", "14.6", "15.4", "4,236"];
        vec![head.map(String::from).to_vec(), row.map(String::from).to_vec()]
    }

    #[test]
    fn a_table_keeps_within_80_columns() {
        // Fits with two spaces; a longer name with one between figures; a much longer one on a
        // line of its own.
        for (name, gap, own_line) in
            [("oltp-8k", 2, false), ("streaming-write-64k", 1, false), ("4k:60,64k:40-read70-random100", 2, true)]
        {
            let text = grid(&rows(name));
            assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{name}:\n{text}");
            let last: Vec<&str> = text.lines().collect();
            assert_eq!(last.len(), if own_line { 4 } else { 3 }, "{name}:\n{text}");
            assert_eq!(last[0].contains("MB/s avg ms"), gap == 1, "{name}:\n{text}");
            assert!(last.last().unwrap().trim_end().ends_with("4,236"));
        }
        // Words left, figures right.
        let t = grid(&[vec!["id".into(), "host".into(), "IOPS".into()], vec!["1".into(), "vm".into(), "5".into()]]);
        assert_eq!(t.lines().nth(2).unwrap(), "1   vm       5");
    }
}
