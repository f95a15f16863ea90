//! `--http`'s page: one self-contained HTML file (no external script, style or font) that
//! polls `/live.json` and draws IOPS, MB/s and the 99th percentile over time, and a study's
//! progress, in the look of `iogauge report`.

/// The page's own styles and script (page.html), inside the report's look.
const BODY: &str = include_str!("page.html");

/// The whole page.
pub fn html() -> String {
    crate::report::html::app("iogauge live", BODY)
}
