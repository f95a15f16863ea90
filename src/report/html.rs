//! The page around the charts: one self-contained HTML file, no script, no external font,
//! image or style (a Content-Security-Policy forbids them, so nothing can be fetched).

use super::svg::esc;

/// Styles: readable on screen, on paper and in black and white (the live page's too).
pub(crate) const CSS: &str = "
body { font-family: Helvetica, Arial, sans-serif; max-width: 1500px; margin: 2em auto; padding: 0 1em; color: #111; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.3em; border-bottom: 2px solid #111; padding-bottom: 0.2em; margin-top: 2em; }
h3 { font-size: 1.1em; margin-top: 1.5em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.85em; }
th, td { border: 1px solid #999; padding: 0.25em 0.5em; }
th { background: #eee; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
figure { margin: 1.2em 0; break-inside: avoid; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 0 1.5em; }
figure svg { max-width: 100%; height: auto; }
pre { background: #f6f6f6; border: 1px solid #ccc; padding: 0.6em; overflow-x: auto; font-size: 0.8em; }
.answer { font-weight: bold; }
.warning { color: #8a3b00; }
.meta { color: #444; }
@media print { body { max-width: none; margin: 0; } h2 { break-after: avoid; } pre { white-space: pre-wrap; } }
";

/// The whole page: a report, which runs no script.
pub fn page(title: &str, body: &str) -> String {
    whole(title, body, "default-src 'none'; style-src 'unsafe-inline'")
}

/// A page that runs its own inline script and asks its own server only (the live page, the
/// workbench): nothing is fetched from elsewhere.
pub fn app(title: &str, body: &str) -> String {
    whole(title, body, "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'")
}

fn whole(title: &str, body: &str, policy: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"iogauge {}\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        esc(title)
    )
}

/// A cell of a table: text, or a number aligned right.
pub enum Cell {
    /// Left-aligned text.
    Text(String),
    /// Right-aligned figure.
    Num(String),
}

/// A table with one header row (none if every heading is blank); a column with nothing in any row ("-" or blank) is left out.
pub fn table(class: &str, head: &[&str], rows: &[Vec<Cell>]) -> String {
    let text = |c: &Cell| match c {
        Cell::Text(t) | Cell::Num(t) => t.trim().to_string(),
    };
    let shown: Vec<bool> = (0..head.len())
        .map(|i| i == 0 || rows.iter().any(|r| r.get(i).is_some_and(|c| !matches!(text(c).as_str(), "" | "-"))))
        .collect();
    let mut s = format!("<table class=\"{class}\">\n");
    // A key-value table has no header row, rather than an empty one.
    if head.iter().any(|h| !h.is_empty()) {
        s.push_str("<tr>");
        for (h, _) in head.iter().zip(&shown).filter(|(_, on)| **on) {
            s.push_str(&format!("<th>{}</th>", esc(h)));
        }
        s.push_str("</tr>\n");
    }
    for r in rows {
        s.push_str("<tr>");
        for (c, _) in r.iter().zip(&shown).filter(|(_, on)| **on) {
            match c {
                Cell::Text(t) => s.push_str(&format!("<td>{}</td>", esc(t))),
                Cell::Num(t) => s.push_str(&format!("<td class=\"num\">{}</td>", esc(t))),
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    s
}
