//! `iogauge report`: one HTML file from result and study documents, with the charts and
//! tables the seeds publish, a side-by-side comparison of several systems, and what is needed
//! to reproduce each run.

pub mod bars;
pub mod charts;
pub(crate) mod html;
pub mod svg;

use std::fmt::Write;

use crate::compare;
use crate::document::{Document, Workload};
use crate::format::thousands;
use crate::result::{Detail, Dir, DirFigures, ResultDoc};
use crate::study::doc::StudyDoc;
use html::{Cell, table};
use svg::{esc, num};

/// A document and what to call it (its path or history id).
pub struct Input {
    /// The name shown for it.
    pub label: String,
    /// The document.
    pub doc: Document,
}

/// A chart of the report, for `--charts DIR`.
pub struct ChartFile {
    /// File name without `.svg`: its number and title.
    pub file_stem: String,
    /// The standalone SVG.
    pub svg: String,
}

/// The report: the page and its charts.
pub struct Report {
    /// The HTML page (charts inline).
    pub html: String,
    /// Each chart alone.
    pub charts: Vec<ChartFile>,
}

/// The most series one chart draws; more are split into small multiples.
const MOST_SERIES: usize = 6;

/// Builds the report of `inputs`, with `detail` rows (workers or targets) under each workload.
pub fn build(title: &str, inputs: &[Input], detail: Detail) -> Report {
    let mut styles = charts::Styles::default();
    let studies: Vec<(&str, &StudyDoc)> = inputs
        .iter()
        .filter_map(|i| match &i.doc {
            Document::Study(d) => Some((i.label.as_str(), &**d)),
            Document::Run(_) => None,
        })
        .collect();
    let runs: Vec<(&str, &ResultDoc)> = inputs
        .iter()
        .filter_map(|i| match &i.doc {
            Document::Run(d) => Some((i.label.as_str(), &**d)),
            Document::Study(_) => None,
        })
        .collect();
    let mut files = Vec::new();
    let mut body = format!("<h1>{}</h1>\n", esc(title));
    let _ = writeln!(
        body,
        "<p class=\"meta\">Made by iogauge {} at {} from {} document{}.</p>",
        env!("CARGO_PKG_VERSION"),
        humantime::format_rfc3339_seconds(std::time::SystemTime::now()),
        inputs.len(),
        if inputs.len() == 1 { "" } else { "s" }
    );
    body.push_str(&inputs_table(inputs));
    // Charts as (title, SVG), laid out side by side where the window is wide enough.
    let mut figures = |body: &mut String, list: Vec<(String, String)>| {
        body.push_str("<div class=\"charts\">\n");
        for (title, svg) in list {
            let n = files.len() + 1;
            let _ = writeln!(
                body,
                "<figure id=\"chart-{n}\">{svg}<figcaption>Chart {n}. {}</figcaption></figure>",
                esc(&title)
            );
            files.push(ChartFile { file_stem: format!("{n:02}-{}", slug(&title)), svg });
        }
        body.push_str("</div>\n");
    };
    let lines = |list: Vec<svg::Chart>| -> Vec<(String, String)> {
        list.into_iter().flat_map(|c| c.split(MOST_SERIES)).map(|c| (c.title.clone(), c.render())).collect()
    };
    let workloads: Vec<(&str, Vec<Workload>)> =
        inputs.iter().map(|i| (i.label.as_str(), i.doc.workloads(Detail::Totals))).collect();
    let bars: Vec<(String, String)> =
        charts::summary(&workloads, &mut styles).into_iter().map(|b| (b.title.clone(), b.render())).collect();
    if inputs.len() > 1 {
        body.push_str("<h2>Side by side</h2>\n");
        body.push_str(&comparison(inputs, detail));
    } else if !bars.is_empty() {
        body.push_str("<h2>Summary</h2>\n");
    }
    if !bars.is_empty() {
        figures(&mut body, bars);
    }
    if !studies.is_empty() {
        body.push_str("<h2>Studies</h2>\n");
        figures(&mut body, lines(charts::study_charts(&studies, &mut styles)));
        for (label, d) in &studies {
            body.push_str(&study_tables(label, d, detail));
        }
    }
    if !runs.is_empty() {
        body.push_str("<h2>Runs</h2>\n");
        figures(&mut body, lines(charts::run_charts(&runs, &mut styles)));
        for (label, d) in &runs {
            body.push_str(&run_table(label, d, detail));
        }
    }
    body.push_str("<h2>Reproducibility</h2>\n");
    for i in inputs {
        body.push_str(&reproducibility(i));
    }
    Report { html: html::page(title, &body), charts: files }
}

/// "MB/s by transfer size" -> "mb-s-by-transfer-size".
fn slug(title: &str) -> String {
    let s: String = title.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    s.split('-').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("-")
}

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.3}"))
}

fn inputs_table(inputs: &[Input]) -> String {
    let rows: Vec<Vec<Cell>> = inputs
        .iter()
        .enumerate()
        .map(|(k, i)| {
            let d = &i.doc;
            vec![
                Cell::Text(letter(k)),
                Cell::Text(i.label.clone()),
                Cell::Text(d.kind().into()),
                Cell::Text(d.started_at().into()),
                Cell::Num(format!("{:.1}", d.duration_s())),
                Cell::Text(d.runs().first().map_or("-".into(), |r| r.host.name.clone())),
                Cell::Text(d.specs().join(", ")),
                Cell::Text(d.targets().join(", ")),
                Cell::Text(if d.interrupted() { "stopped before its end".into() } else { String::new() }),
            ]
        })
        .collect();
    table("inputs", &["", "document", "kind", "started (UTC)", "time (s)", "host", "specs", "targets", "note"], &rows)
}

/// A, B, C... for the documents in tables.
fn letter(k: usize) -> String {
    if k < 26 { ((b'A' + k as u8) as char).to_string() } else { format!("#{}", k + 1) }
}

/// Every workload the documents share, each measure side by side with the % difference from
/// the first (seeds 001 and 004).
fn comparison(inputs: &[Input], detail: Detail) -> String {
    let all: Vec<Vec<Workload>> = inputs.iter().map(|i| i.doc.workloads(detail)).collect();
    let aligned = compare::align(&all.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let common = &aligned.rows;
    if common.is_empty() {
        return "<p>The documents have no workload in common: compare runs of the same specifications.</p>\n".into();
    }
    // The measures `iogauge compare` prints, laid out as it prints them: per workload a row of
    // each document's figures, then each one's % difference from A.
    let measures = &compare::MEASURES;
    let mut head: Vec<String> = vec!["workload".into(), String::new()];
    head.extend(measures.iter().map(|m| m.0.to_string()));
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    for (w, figs) in common {
        for (k, f) in figs.iter().enumerate() {
            let mut row = vec![Cell::Text(if k == 0 { w.clone() } else { String::new() }), Cell::Text(letter(k))];
            row.extend(measures.iter().map(|(_, get, fmt)| Cell::Num(get(f).map_or("-".into(), fmt))));
            rows.push(row);
        }
        for (k, f) in figs.iter().enumerate().skip(1) {
            let mut row = vec![Cell::Text(String::new()), Cell::Text(format!("{} vs A %", letter(k)))];
            row.extend(
                measures.iter().map(|(_, get, _)| Cell::Num(compare::pct_text(compare::pct(get(&figs[0]), get(f))))),
            );
            rows.push(row);
        }
    }
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut s = table("compare", &head, &rows);
    s.push_str(
        "<p class=\"meta\">% = (X - A) / A: higher is better for IOPS, MB/s and IOPS per CPU %; lower for response times and CPU %.</p>\n",
    );
    let letters: Vec<String> = (0..inputs.len()).map(letter).collect();
    if let Some(line) = compare::not_compared(&aligned.alone, &letters) {
        let _ = writeln!(s, "<p class=\"meta\">{}</p>", esc(&line));
    }
    // What differs in the set-ups, beside the figures, so a difference is not read as the
    // storage's: as `iogauge compare` says it.
    for (k, i) in inputs.iter().enumerate().skip(1) {
        let said = compare::differences(&inputs[0].doc, &i.doc, ["A", &letter(k)]);
        s.push_str(&warnings(&said));
    }
    s
}

fn study_tables(label: &str, d: &StudyDoc, detail: Detail) -> String {
    let mut s = format!("<h3>Study {}</h3>\n", esc(label));
    for search in &d.searches {
        let _ = writeln!(s, "<p class=\"answer\">{}</p>", esc(&search.answer));
    }
    let range = |v: &crate::study::stats::Spread, f: fn(f64) -> String| {
        if v.min == v.max { f(v.median) } else { format!("{} ({}-{})", f(v.median), f(v.min), f(v.max)) }
    };
    let rows: Vec<Vec<Cell>> = d
        .points
        .iter()
        .flat_map(|p| {
            p.summary.iter().enumerate().flat_map(move |(k, x)| {
                let cpu = p.headline(k);
                let point = vec![
                    Cell::Num((p.index + 1).to_string()),
                    Cell::Text(p.params.label()),
                    Cell::Text(x.spec.clone()),
                    Cell::Num(range(&x.iops, thousands)),
                    Cell::Num(format!("{:.1}", x.mbps.median)),
                    Cell::Num(ms(x.avg_response_ms.map(|v| v.median))),
                    Cell::Num(ms(x.p99_response_ms.map(|v| v.median))),
                    Cell::Num(cpu.cpu_pct.map_or("-".into(), |v| format!("{v:.1}"))),
                    Cell::Num(cpu.iops_per_cpu_pct.map_or("-".into(), thousands)),
                    Cell::Num(x.scaling.map_or("-".into(), |v| format!("{:.0}%", v * 100.0))),
                    Cell::Text(x.theory.as_ref().map_or("-".into(), |t| {
                        format!("{} {} ({:.0}%, {})", num(t.value.round()), t.unit, t.measured_pct, t.limit)
                    })),
                    Cell::Num(x.errors.to_string()),
                ];
                std::iter::once(point).chain(point_parts(p, k, detail))
            })
        })
        .collect();
    s.push_str(&table(
        "points",
        &[
            "#",
            "point",
            "spec",
            "IOPS (min-max)",
            "MB/s",
            "avg ms",
            "p99 ms",
            "CPU %",
            "IOPS per CPU %",
            "scaling",
            "theoretical maximum (reached, limit)",
            "errors",
        ],
        &rows,
    ));
    s.push_str(&iozone_tables(d));
    s.push_str(&warnings(&d.warnings));
    s
}

/// The rows of point `p`'s workload `k` per worker or target (`detail`), from its median run.
fn point_parts(p: &crate::study::doc::PointResult, k: usize, detail: Detail) -> Vec<Vec<Cell>> {
    let Some(r) = p.median_run(k).and_then(|run| run.results.get(k)) else { return Vec::new() };
    let dash = || Cell::Num("-".into());
    r.parts(detail)
        .into_iter()
        .map(|(name, part)| {
            let f = part.of(Dir::All);
            let mut row =
                vec![Cell::Num(String::new()), Cell::Text(p.params.label()), Cell::Text(format!("{}: {name}", r.spec))];
            row.extend([
                Cell::Num(thousands(f.iops)),
                Cell::Num(format!("{:.1}", f.mbps)),
                Cell::Num(ms(f.avg_response_ms)),
                Cell::Num(ms(f.percentiles_ms.get("p99").copied())),
            ]);
            row.extend((0..4).map(|_| dash()));
            row.push(Cell::Num(f.errors.to_string()));
            row
        })
        .collect()
}

/// A file-system study's figures as IOzone's report lays them out: tests by thread counts.
fn iozone_tables(d: &StudyDoc) -> String {
    let mut s = String::new();
    for p in crate::export::iozone::pivots(d) {
        let _ = writeln!(s, "<h4>{}</h4>", esc(&p.title));
        let mut head = vec!["test".to_string()];
        head.extend(p.threads.iter().map(|&n| crate::export::iozone::heading(n)));
        let rows: Vec<Vec<Cell>> = p
            .rows
            .iter()
            .map(|(test, values)| {
                let mut row = vec![Cell::Text(test.clone())];
                row.extend(values.iter().map(|v| Cell::Num(v.map_or("-".into(), |v| format!("{v:.0}")))));
                row
            })
            .collect();
        let head: Vec<&str> = head.iter().map(String::as_str).collect();
        s.push_str(&table("iozone", &head, &rows));
    }
    s
}

fn run_table(label: &str, d: &ResultDoc, detail: Detail) -> String {
    let mut s = format!("<h3>Run {}</h3>\n", esc(label));
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    for r in &d.results {
        let m = &r.totals.metrics;
        let host = d.cpu_cells(r);
        rows.push(result_row(r.spec.clone(), m.of(Dir::All), host));
        for op in m.ops() {
            rows.push(result_row(format!("{}: {}s", r.spec, op.name()), m.of(Dir::Only(op)), Default::default()));
        }
        for (name, part) in r.parts(detail) {
            rows.push(result_row(format!("{}: {name}", r.spec), part.of(Dir::All), Default::default()));
        }
    }
    let head = [
        "workload",
        "IOPS",
        "MB/s",
        "MiB/s",
        "avg ms",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "CPU %",
        "own CPU %",
        "IOPS per CPU %",
        "errors",
    ];
    s.push_str(&table("results", &head, &rows));
    s.push_str(&warnings(&d.warnings));
    s
}

fn result_row(label: String, f: DirFigures, cpu: [String; 3]) -> Vec<Cell> {
    let pct = |k: &str| ms(f.percentiles_ms.get(k).copied());
    let [host, own, per_cpu] = cpu;
    vec![
        Cell::Text(label),
        Cell::Num(thousands(f.iops)),
        Cell::Num(format!("{:.1}", f.mbps)),
        Cell::Num(format!("{:.1}", f.mibps)),
        Cell::Num(ms(f.avg_response_ms)),
        Cell::Num(pct("p50")),
        Cell::Num(pct("p99")),
        Cell::Num(pct("p99.9")),
        Cell::Num(ms(f.max_response_ms)),
        Cell::Num(host),
        Cell::Num(own),
        Cell::Num(per_cpu),
        Cell::Num(f.errors.to_string()),
    ]
}

fn warnings(list: &[String]) -> String {
    list.iter().map(|w| format!("<p class=\"warning\">Warning: {}</p>\n", esc(w))).collect()
}

/// Host, kernel, CPU, devices, version, the resolved job, start and duration.
fn reproducibility(i: &Input) -> String {
    let d = &i.doc;
    let mut s = format!("<h3>{}</h3>\n", esc(&i.label));
    let (version, job) = match d {
        Document::Run(r) => (&r.tool_version, crate::job::to_toml(&r.config)),
        Document::Study(st) => {
            let mut c = st.config.clone();
            c.study = Some(st.study.clone());
            (&st.tool_version, crate::job::to_toml(&c))
        }
    };
    // Another tool's results: that tool and its version; no iogauge job reruns them.
    let tool = if d.read_from().is_some() { "measured by" } else { "iogauge" };
    let mut rows = vec![
        vec![Cell::Text(tool.into()), Cell::Text(version.clone())],
        vec![Cell::Text("started (UTC)".into()), Cell::Text(d.started_at().into())],
        vec![Cell::Text("duration".into()), Cell::Text(format!("{:.1} s", d.duration_s()))],
    ];
    // Each manager's machine and targets (older documents: the one host); another tool's
    // results do not describe the machine.
    if let Some(r) = d.runs().first().filter(|_| d.read_from().is_none()) {
        let one = [(None, &r.host, &r.target_info)];
        let managers: Vec<_> =
            r.managers.iter().map(|m| (Some((m.rank, m.workers)), &m.host, &m.target_info)).collect();
        let machines = if managers.len() > 1 { &managers[..] } else { &one[..] };
        for (rank, h, targets) in machines {
            let key = |k: &str| Cell::Text(rank.map_or(k.to_string(), |(n, _)| format!("manager {n}: {k}")));
            // How idle CPUs slept is part of every response time at few outstanding I/Os.
            for (what, fact) in h.facts() {
                rows.push(vec![key(what), Cell::Text(fact)]);
            }
            if let Some((_, workers)) = rank {
                rows.push(vec![key("workers (first run)"), Cell::Text(workers.to_string())]);
            }
            for t in targets.iter() {
                rows.push(vec![
                    key(&format!("target {}", t.path)),
                    Cell::Text(format!(
                        "{:?}, {} ({} bytes), {}{}",
                        t.kind,
                        crate::units::human_size(t.size),
                        thousands(t.size as f64),
                        t.model,
                        if t.direct { ", O_DIRECT" } else { ", buffered" }
                    )),
                ]);
            }
        }
    }
    s.push_str(&table("repro", &["", ""], &rows));
    if let Some(from) = d.read_from() {
        let _ = writeln!(s, "<p>Read from {}: the figures are that tool's own.</p>", esc(from));
        return s;
    }
    let job = job.unwrap_or_else(|e| format!("# the job could not be written as TOML: {e}"));
    let _ = writeln!(
        s,
        "<p>The resolved job (runs it again with <code>iogauge {} FILE</code>):</p>\n<pre class=\"job\">{}</pre>",
        d.kind(),
        esc(&job)
    );
    s
}
