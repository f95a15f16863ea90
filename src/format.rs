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

/// A response time in ms: 3 decimals under 1 ms, 2 above; `-` for none.
pub fn opt_ms(v: Option<f64>) -> String {
    v.map_or_else(
        || "-".into(),
        |v| {
            if v < 1.0 { format!("{v:.3}") } else { format!("{v:.2}") }
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
    let figure = |s: &str| s.trim_end_matches(" max").chars().all(|c| c.is_ascii_digit() || ",.+-% ".contains(c));
    let left: Vec<bool> =
        (0..cols).map(|c| c == 0 || rows[1..].iter().any(|r| r.get(c).is_some_and(|s| !figure(s)))).collect();
    let width = |c: usize| rows.iter().map(|r| r.get(c).map_or(0, |s| s.chars().count())).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols).map(width).collect();
    let figures: usize = widths[1..].iter().map(|w| w + 2).sum();
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
                let _ = if left[c] {
                    write!(line, "  {cell:<w$}", w = widths[c])
                } else {
                    write!(line, "  {cell:>w$}", w = widths[c])
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
