//! `--http`'s page: one self-contained HTML file (no external script, style or font) that
//! polls `/live.json` and draws IOPS, MB/s and the 99th percentile over time, and a study's
//! progress, in the look of `iogauge report`.

use crate::report::html::CSS;

/// The page's own styles and script (page.html), inside the report's look.
const BODY: &str = include_str!("page.html");

/// The whole page.
pub fn html() -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"iogauge {}\">\n<title>iogauge live</title>\n<style>{CSS}</style>\n</head>\n<body>\n{BODY}</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    )
}
