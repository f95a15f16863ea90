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

/// Rows aligned in columns (the first left, the others right), a rule under the header.
pub fn grid(rows: &[Vec<String>]) -> String {
    let cols = rows[0].len();
    let widths: Vec<usize> = (0..cols).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            if c == 0 {
                let _ = write!(out, "{cell:<w$}", w = widths[c]);
            } else {
                let _ = write!(out, "  {cell:>w$}", w = widths[c]);
            }
        }
        out.push('\n');
        if i == 0 {
            out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * (cols - 1)));
            out.push('\n');
        }
    }
    out
}
