//! Which charts a report draws, chosen by what its documents hold: a study's cycles give the
//! seeds' figures (MB/s by transfer size per number of volumes, IOPS against response time
//! with the limit, IOPS by drive stroke, scaling against the theoretical maximum); a run gives
//! its latency percentiles, histogram and time series.

use super::bars::Bars;
use super::svg::{Axis, Chart, Mark, Rule, Scale, Series, num};
use crate::config::Measure;
use crate::document::Workload;
use crate::result::{Headline, ResultDoc, WorkloadResult};
use crate::study::Point;
use crate::study::doc::{PointResult, SpecSummary, StudyDoc, workload_of};
use crate::units::format_size;

/// One style per series name across the whole report, so a series keeps its colour.
#[derive(Default)]
pub struct Styles {
    names: Vec<String>,
}

impl Styles {
    /// The style of series `name`.
    pub fn of(&mut self, name: &str) -> usize {
        match self.names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.names.push(name.to_string());
                self.names.len() - 1
            }
        }
    }
}

/// A study cycle parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Param {
    Managers,
    Targets,
    Workers,
    Size,
    Stroke,
    Outstanding,
    Rate,
    Threads,
}

const PARAMS: [Param; 8] = [
    Param::Managers,
    Param::Targets,
    Param::Workers,
    Param::Size,
    Param::Stroke,
    Param::Outstanding,
    Param::Rate,
    Param::Threads,
];

impl Param {
    fn get(self, p: &Point) -> Option<f64> {
        match self {
            Param::Managers => p.managers.map(f64::from),
            Param::Targets => p.targets.map(f64::from),
            Param::Workers => p.workers.map(f64::from),
            Param::Size => p.size.map(|v| v as f64),
            Param::Stroke => p.stroke,
            Param::Outstanding => p.outstanding.map(f64::from),
            Param::Rate => p.rate_pct,
            Param::Threads => p.threads.map(f64::from),
        }
    }

    /// The value as a series name part: "2 targets", "64K".
    fn tag(self, v: f64) -> String {
        match self {
            Param::Managers => format!("{} host{}", v, if v == 1.0 { "" } else { "s" }),
            Param::Targets => format!("{} target{}", v, if v == 1.0 { "" } else { "s" }),
            Param::Workers => format!("{} worker{}", v, if v == 1.0 { "" } else { "s" }),
            Param::Size => format_size(v as u64),
            Param::Stroke => format!("stroke {}%", num(v)),
            Param::Outstanding => format!("{v} outstanding"),
            Param::Rate => format!("rate {}%", num(v)),
            Param::Threads => format!("{} thread{}", v, if v == 1.0 { "" } else { "s" }),
        }
    }

    /// What it is, in a chart title: "IOPS by drive stroke".
    fn noun(self) -> &'static str {
        match self {
            Param::Managers => "number of hosts",
            Param::Targets => "number of targets",
            Param::Workers => "number of workers",
            Param::Size => "transfer size",
            Param::Stroke => "drive stroke",
            Param::Outstanding => "outstanding I/Os",
            Param::Rate => "offered rate",
            Param::Threads => "number of threads",
        }
    }

    fn axis(self, values: &[f64]) -> Axis {
        let spread = |v: &[f64]| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(0.0, f64::max);
            lo > 0.0 && hi / lo >= 16.0
        };
        let (label, scale) = match self {
            Param::Managers => ("Hosts (managers)", Scale::Count),
            Param::Targets => ("Targets (volumes)", Scale::Count),
            Param::Workers => ("Workers", Scale::Count),
            Param::Size => ("Transfer size (bytes)", Scale::Log2Size),
            Param::Stroke => ("Drive stroke (% of each target)", Scale::Percent),
            Param::Outstanding => {
                ("Outstanding I/Os (per target and worker)", if spread(values) { Scale::Log2 } else { Scale::Count })
            }
            Param::Rate => ("Offered rate (% of the maximum)", Scale::Percent),
            Param::Threads => ("Threads (each with files of its own)", Scale::Count),
        };
        Axis { label: label.into(), scale }
    }
}

/// One spec at one point of one study.
struct Row<'a> {
    study: &'a str,
    point: &'a PointResult,
    s: &'a SpecSummary,
}

/// The studies' rows and which parameters vary among them.
struct Rows<'a> {
    rows: Vec<Row<'a>>,
    varying: Vec<Param>,
    multi: bool,
}

impl<'a> Rows<'a> {
    fn new(studies: &[(&'a str, &'a StudyDoc)]) -> Rows<'a> {
        let rows: Vec<Row> = studies
            .iter()
            .flat_map(|&(study, d)| {
                // A steady-state study's cycles are drawn as its last round measured them.
                let last = d.steady.as_ref().and_then(|s| s.rounds.last());
                d.points
                    .iter()
                    .filter(move |p| last.is_none_or(|l| l.contains(&p.index)))
                    .flat_map(move |p| p.summary.iter().map(move |s| Row { study, point: p, s }))
            })
            .collect();
        let varying = PARAMS
            .into_iter()
            .filter(|k| {
                let mut seen: Vec<f64> = rows.iter().filter_map(|r| k.get(&r.point.params)).collect();
                seen.sort_by(f64::total_cmp);
                seen.dedup();
                seen.len() > 1
            })
            .collect();
        Rows { rows, varying, multi: studies.len() > 1 }
    }

    /// The series name of a row when `x` (and `also`) are on the axes: the study (if several),
    /// the other varying parameters, the spec.
    fn key(&self, r: &Row, skip: &[Param]) -> String {
        let mut parts = Vec::new();
        if self.multi {
            parts.push(r.study.to_string());
        }
        let size = r.point.params.size;
        let workload = workload_of(&r.s.spec, r.s.workload.as_deref(), size);
        // A specification named for its size (a size cycle renames it) needs no size tag.
        let named_for_size = workload != r.s.spec;
        for k in self.varying.iter().filter(|k| !skip.contains(k)) {
            if let Some(v) = k.get(&r.point.params).filter(|_| *k != Param::Size || !named_for_size) {
                parts.push(k.tag(v));
            }
        }
        // With the size on the x axis, a series is the workload at every size.
        let spec = if size.is_some() && skip.contains(&Param::Size) { workload } else { &r.s.spec };
        parts.push(spec.to_string());
        parts.join(" · ")
    }

    /// Series of (x, y) grouped by [`Rows::key`], in order of first appearance, sorted by x.
    fn series(&self, styles: &mut Styles, skip: &[Param], xy: impl Fn(&Row) -> Option<(f64, f64)>) -> Vec<Series> {
        group(styles, self.rows.iter().filter_map(|r| Some((self.key(r, skip), xy(r)?))), true)
    }

    fn x_values(&self, k: Param) -> Vec<f64> {
        self.rows.iter().filter_map(|r| k.get(&r.point.params)).collect()
    }
}

fn chart(title: &str, x: Axis, y: &str, y_scale: Scale, series: Vec<Series>) -> Chart {
    Chart {
        title: title.into(),
        x,
        y: Axis { label: y.into(), scale: y_scale },
        series,
        x_rules: vec![],
        marks: vec![],
        span: vec![],
    }
}

const IOPS: &str = "IOPS (I/Os per second)";
const MBPS: &str = "MB/s (10^6 bytes per second)";
const AVG_MS: &str = "Average response time (ms)";
const CPU: &str = "CPU utilisation of the host (%)";

/// The charts of the studies' cycles.
pub fn study_charts(studies: &[(&str, &StudyDoc)], styles: &mut Styles) -> Vec<Chart> {
    // Each chart takes the studies that cycle what it shows, so a size sweep and a
    // response-time search in one report do not mix their points.
    let cycling = |k: Param| -> Vec<(&str, &StudyDoc)> {
        studies.iter().copied().filter(|(l, d)| Rows::new(&[(*l, *d)]).varying.contains(&k)).collect()
    };
    let mut out = Vec::new();
    // One cycle on the x axis, the others as series (seed 000's figures, seed 001's chart 1).
    let by = |k: Param, what: &str, y: &str, f: &dyn Fn(&SpecSummary) -> Option<f64>, styles: &mut Styles| {
        let rows = Rows::new(&cycling(k));
        let series = rows.series(styles, &[k], |r| Some((k.get(&r.point.params)?, f(r.s)?)));
        chart(&format!("{what} by {}", k.noun()), k.axis(&rows.x_values(k)), y, Scale::Linear, series)
    };
    let on = |k: Param| !cycling(k).is_empty();
    if on(Param::Size) {
        out.push(by(Param::Size, "MB/s", MBPS, &|s| Some(s.mbps.median), styles));
        out.push(by(Param::Size, "IOPS", IOPS, &|s| Some(s.iops.median), styles));
    }
    // Seed 002's figures: each test's throughput and CPU against the number of threads.
    if on(Param::Threads) {
        out.push(by(Param::Threads, "MB/s", MBPS, &|s| Some(s.mbps.median), styles));
        out.push(by(Param::Threads, "CPU utilisation", CPU, &|s| Some(s.cpu_pct.median), styles));
    }
    if on(Param::Stroke) {
        out.push(by(Param::Stroke, "IOPS", IOPS, &|s| Some(s.iops.median), styles));
    }
    let loaded: Vec<(&str, &StudyDoc)> = studies
        .iter()
        .copied()
        .filter(|(l, d)| {
            !d.searches.is_empty()
                || !d.curves.is_empty()
                || Rows::new(&[(*l, *d)]).varying.contains(&Param::Outstanding)
        })
        .collect();
    let searches: Vec<_> = loaded.iter().flat_map(|(l, d)| d.searches.iter().map(move |s| (*l, d, s))).collect();
    if on(Param::Outstanding) && searches.is_empty() {
        out.push(by(Param::Outstanding, "IOPS", IOPS, &|s| Some(s.iops.median), styles));
        out.push(by(
            Param::Outstanding,
            "Average response time",
            AVG_MS,
            &|s| s.avg_response_ms.map(|v| v.median),
            styles,
        ));
    }
    if !loaded.is_empty() {
        out.push(response_chart(&Rows::new(&loaded), &searches, styles));
    }
    for k in [Param::Managers, Param::Targets, Param::Workers] {
        if on(k) {
            out.extend(scaling_charts(&Rows::new(&cycling(k)), k, styles));
        }
    }
    let multi = studies.len() > 1;
    out.extend(studies.iter().flat_map(|(label, d)| steady_chart(label, d, multi, styles)));
    out.retain(|c| !c.is_empty());
    out
}

/// SNIA PTS's steady-state figure: the tracked measure round by round, and over the window its
/// mean, the excursion band (mean +- half the allowed excursion) and the least-squares line.
fn steady_chart(label: &str, d: &StudyDoc, multi: bool, styles: &mut Styles) -> Option<Chart> {
    let st = d.steady.as_ref()?;
    let criteria = d.study.steady.as_ref()?;
    let [a, b] = st.window?;
    let y = match st.measure {
        Measure::Mbps => MBPS,
        Measure::AvgMs => AVG_MS,
        Measure::Iops => IOPS,
    };
    let mut series = Vec::new();
    let mut rules = vec![Rule { value: a as f64, label: format!("window {a}-{b}") }];
    // Every workload tracked is too many lines: the one that varied most stands for them.
    let excursion = |t: &&crate::study::doc::Tracked| {
        crate::study::steady::fit(&t.values[a as usize - 1..b as usize]).excursion_pct
    };
    let drawn: Vec<_> = match st.tracked.len() {
        0..=4 => st.tracked.iter().collect(),
        _ => st.tracked.iter().max_by(|x, y| excursion(x).total_cmp(&excursion(y))).into_iter().collect(),
    };
    for t in drawn {
        let name = if multi { format!("{label} {}", t.spec) } else { t.spec.clone() };
        let points = t.values.iter().enumerate().map(|(i, v)| ((i + 1) as f64, *v)).collect();
        series.push(Series { name: name.clone(), style: styles.of(&name), points });
        let window = &t.values[a as usize - 1..b as usize];
        let fit = crate::study::steady::fit(window);
        let half = criteria.excursion_pct / 200.0;
        let over = |f: &dyn Fn(f64) -> f64| (a..=b).map(|r| (r as f64, f(r as f64))).collect::<Vec<_>>();
        let band = criteria.excursion_pct / 2.0;
        for (what, points) in [
            ("mean".to_string(), over(&|_| fit.mean)),
            (format!("mean +{band} %"), over(&|_| fit.mean * (1.0 + half))),
            (format!("mean -{band} %"), over(&|_| fit.mean * (1.0 - half))),
            ("least squares".to_string(), over(&|r| fit.intercept + fit.slope * (r - a as f64))),
        ] {
            let name = format!("{name} {what}");
            series.push(Series { name: name.clone(), style: styles.of(&name), points });
        }
    }
    if series.is_empty() {
        return None;
    }
    if !st.reached {
        rules.push(Rule { value: b as f64, label: "not steady".into() });
    }
    let x = Axis { label: "Round".into(), scale: Scale::Linear };
    let title =
        if st.reached { format!("Steady state, reached at round {b}") } else { "Steady state, not reached".into() };
    Some(Chart { x_rules: rules, ..chart(&title, x, y, Scale::Linear, series) })
}

/// IOPS against response time, one curve per series in order of load, with the limit drawn
/// and the maximum under it marked (seed 001's charts 2, 5, 6, 8).
fn response_chart(
    rows: &Rows,
    searches: &[(&str, &&StudyDoc, &crate::study::doc::SearchResult)],
    styles: &mut Styles,
) -> Chart {
    // A p99 limit is read on a p99 axis; any other on the average.
    let p99 = !searches.is_empty() && searches.iter().all(|s| s.2.of == "p99");
    let resp = |s: &SpecSummary| if p99 { s.p99_response_ms } else { s.avg_response_ms }.map(|v| v.median);
    // Each curve in order of load (a search measures depths out of order): outstanding I/Os
    // up; open-loop rates up, the uncontrolled maximum last.
    let load = |r: &Row| {
        let p = &r.point.params;
        (p.outstanding.unwrap_or(0), p.rate_pct.unwrap_or(f64::INFINITY))
    };
    let mut by_load: Vec<&Row> = rows.rows.iter().collect();
    by_load.sort_by(|a, b| load(a).partial_cmp(&load(b)).unwrap_or(std::cmp::Ordering::Equal));
    let skip = [Param::Outstanding, Param::Rate];
    let series =
        group(styles, by_load.iter().filter_map(|r| Some((rows.key(r, &skip), (resp(r.s)?, r.s.iops.median)))), false);
    let of = if p99 { "p99" } else { "avg" };
    let mut c = chart(
        &format!("IOPS against {} response time", if p99 { "99th percentile" } else { "average" }),
        Axis {
            label: format!("{} response time (ms)", if p99 { "99th percentile" } else { "Average" }),
            scale: Scale::Linear,
        },
        IOPS,
        Scale::Linear,
        series,
    );
    for (label, doc, s) in searches {
        if s.of == of && !c.x_rules.iter().any(|r| r.value == s.limit_ms) {
            c.x_rules.push(Rule { value: s.limit_ms, label: format!("limit {} ms", num(s.limit_ms)) });
        }
        let found = s.found.and_then(|i| doc.points.get(i)).and_then(|p| p.summary.iter().find(|x| x.spec == s.spec));
        if let Some(f) = found.filter(|_| s.of == of) {
            let who = if rows.multi { format!("{label}: ") } else { String::new() };
            if let Some(x) = resp(f) {
                let label = format!("{who}max {} IOPS at {} ms", num(f.iops.median.round()), num(x));
                c.marks.push(Mark { x, y: f.iops.median, label });
            }
        }
    }
    // Many labels would overlap: the answers are listed under the charts.
    if c.marks.len() > 3 {
        c.marks.iter_mut().for_each(|m| m.label.clear());
    }
    c
}

/// Measured against the theoretical maximum by number of targets or workers, and the scaling
/// factor per step (seed 000). With a transfer-size cycle too, each count stands for its peak
/// over the sizes, as seed 000 reports it ("a single volume reached its peak of 114 MB/sec at
/// the 16 KB transfer size; a 95% scaling factor").
fn scaling_charts(rows: &Rows, k: Param, styles: &mut Styles) -> Vec<Chart> {
    // The theory's unit; without one, MB/s for a transfer-size cycle (seed 000), else IOPS.
    let unit_mbps = match rows.rows.iter().find_map(|r| r.s.theory.as_ref()) {
        Some(t) => t.unit == "mbps",
        None => rows.varying.contains(&Param::Size),
    };
    let measured = |s: &SpecSummary| if unit_mbps { s.mbps.median } else { s.iops.median };
    let skip = [k, Param::Size];
    let mut peaks: Vec<(String, f64, &Row)> = Vec::new();
    for r in &rows.rows {
        let Some(x) = k.get(&r.point.params) else { continue };
        let key = rows.key(r, &skip);
        match peaks.iter_mut().find(|p| p.0 == key && p.1 == x) {
            Some(p) if measured(r.s) > measured(p.2.s) => p.2 = r,
            Some(_) => {}
            None => peaks.push((key, x, r)),
        }
    }
    let mut series = group(styles, peaks.iter().map(|(key, x, r)| (key.clone(), (*x, measured(r.s)))), true);
    series.extend(group(
        styles,
        peaks
            .iter()
            .filter_map(|(key, x, r)| Some((format!("theoretical maximum · {key}"), (*x, r.s.theory.as_ref()?.value)))),
        true,
    ));
    let factor =
        group(styles, peaks.iter().filter_map(|(key, x, r)| Some((key.clone(), (*x, r.s.scaling? * 100.0)))), true);
    // Where the limiting component changes along a series, say which it is.
    let mut marks: Vec<Mark> = Vec::new();
    let mut last: Option<(&str, &str)> = None;
    for (key, x, r) in &peaks {
        if let Some(t) = &r.s.theory {
            if last != Some((key.as_str(), t.limit.as_str())) {
                marks.push(Mark { x: *x, y: t.value, label: format!("limit: {}", t.limit) });
                last = Some((key, &t.limit));
            }
        }
    }
    let what = k.axis(&[]).label.to_lowercase();
    let peak = if rows.varying.contains(&Param::Size) { " (peak over transfer sizes)" } else { "" };
    let unit = if unit_mbps { ("MB/s", MBPS) } else { ("IOPS", IOPS) };
    let mut c = chart(
        &format!("{} by number of {what}{peak}", unit.0),
        k.axis(&rows.x_values(k)),
        unit.1,
        Scale::Linear,
        series,
    );
    c.marks = marks;
    let f = chart(
        &format!("Scaling factor by number of {what}{peak}"),
        k.axis(&rows.x_values(k)),
        "Scaling factor (% of N x the one)",
        Scale::Percent,
        factor,
    );
    vec![c, f]
}

/// Points grouped into series by name, in order of first appearance, sorted by x if asked.
fn group(styles: &mut Styles, items: impl Iterator<Item = (String, (f64, f64))>, sort_x: bool) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for (name, p) in items {
        match out.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(p),
            None => out.push(Series { style: styles.of(&name), name, points: vec![p] }),
        }
    }
    if sort_x {
        for s in &mut out {
            s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
    }
    out
}

/// A summary chart's title, vertical axis and figure of a workload.
type BarMeasure = (&'static str, &'static str, fn(&Headline) -> Option<f64>);

/// The summary of the documents' shared workloads (of one document: its workloads): IOPS, MB/s
/// and response times, a bar per document in its colour. None past 24 workloads (a study's
/// many points have the seeds' charts instead).
pub fn summary(docs: &[(&str, Vec<Workload>)], styles: &mut Styles) -> Vec<Bars> {
    let lists: Vec<&[Workload]> = docs.iter().map(|d| d.1.as_slice()).collect();
    let shared = crate::compare::align(&lists).rows;
    if shared.is_empty() || shared.len() > 24 || (docs.len() == 1 && shared.len() < 2) {
        return Vec::new();
    }
    let measures: [BarMeasure; 4] = [
        ("IOPS by workload", IOPS, |h| Some(h.iops)),
        ("MB/s by workload", "MB/s (10^6 bytes/s)", |h| Some(h.mbps)),
        ("Average response time by workload", AVG_MS, |h| h.avg_response_ms),
        ("99th percentile response time by workload", "p99 response time (ms)", |h| h.p99_response_ms),
    ];
    measures
        .iter()
        .map(|(title, y, get)| Bars {
            title: title.to_string(),
            y_label: y.to_string(),
            categories: shared.iter().map(|(k, _)| k.clone()).collect(),
            groups: docs
                .iter()
                .enumerate()
                .map(|(k, (label, _))| {
                    (label.to_string(), styles.of(label), shared.iter().map(|(_, h)| get(&h[k])).collect())
                })
                .collect(),
        })
        .filter(|b| !b.is_empty())
        .collect()
}

/// A run's charts: its latency percentiles, histogram and time series. With several runs,
/// each workload they share gets its own charts with one line per run (in the run's colour
/// throughout the report), so the comparison wanted is on one chart; a workload not in every
/// run is drawn with the others of its run.
pub fn run_charts(runs: &[(&str, &ResultDoc)], styles: &mut Styles) -> Vec<Chart> {
    if let [(_, d)] = runs {
        let results: Vec<(String, &WorkloadResult)> = d.results.iter().map(|r| (r.spec.clone(), r)).collect();
        return workload_charts("", &results, styles);
    }
    let names: Vec<Vec<String>> =
        runs.iter().map(|(_, d)| d.results.iter().map(|r| r.spec.clone()).collect()).collect();
    let shared = crate::compare::align_names(&names);
    let mut out = Vec::new();
    for at in &shared {
        let results: Vec<(String, &WorkloadResult)> =
            runs.iter().zip(at).map(|((label, d), &i)| (label.to_string(), &d.results[i])).collect();
        out.extend(workload_charts(&format!("{}: ", names[0][at[0]]), &results, styles));
    }
    let rest: Vec<(String, &WorkloadResult)> = runs
        .iter()
        .enumerate()
        .flat_map(|(k, (label, d))| {
            let shared = &shared;
            d.results
                .iter()
                .enumerate()
                .filter(move |(i, _)| !shared.iter().any(|at| at[k] == *i))
                .map(move |(_, r)| (format!("{label} · {}", r.spec), r))
        })
        .collect();
    if !rest.is_empty() {
        out.extend(workload_charts("", &rest, styles));
    }
    out
}

/// The charts of some workloads' results, one series each (named as given), titles after
/// `prefix`: percentiles, histogram, and the time series that have two intervals or more.
fn workload_charts(prefix: &str, results: &[(String, &WorkloadResult)], styles: &mut Styles) -> Vec<Chart> {
    let mut series = |f: &dyn Fn(&WorkloadResult) -> Vec<(f64, f64)>| -> Vec<Series> {
        results.iter().map(|(name, r)| Series { name: name.clone(), style: styles.of(name), points: f(r) }).collect()
    };
    let percentiles = series(&|r| {
        let mut p: Vec<(f64, f64)> = r
            .totals
            .metrics
            .percentiles_ms
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix('p')?.parse::<f64>().ok()?, *v)))
            .collect();
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        p
    });
    let histogram = series(&|r| histogram_points(&r.totals.metrics.raw.all().histogram));
    fn time(r: &WorkloadResult, what: fn(&crate::result::Interval) -> Option<f64>) -> Vec<(f64, f64)> {
        r.intervals.iter().filter_map(|i| Some((i.t_s, what(i)?))).collect()
    }
    let iops_t = series(&|r| time(r, |i| Some(i.iops)));
    let resp_t = series(&|r| time(r, |i| i.avg_response_ms));
    let p99_t = series(&|r| time(r, |i| i.percentiles_ms.get("p99").copied()));
    let cpu_t = series(&|r| time(r, |i| Some(i.cpu_pct)));
    let secs = || Axis { label: "Time into the recorded run (s)".into(), scale: Scale::Linear };
    let resp_axis = || Axis { label: "Response time (ms)".into(), scale: Scale::Log10 };
    let title = |t: &str| format!("{prefix}{t}");
    let mut out = vec![
        chart(
            &title("Response time percentiles"),
            Axis { label: "Percentile (%)".into(), scale: Scale::Nines },
            "Response time (ms)",
            Scale::Log10,
            percentiles,
        ),
        Chart {
            y: Axis { label: "I/Os (% of all in the run)".into(), scale: Scale::Percent },
            ..chart(&title("Response time histogram"), resp_axis(), "", Scale::Linear, histogram)
        },
    ];
    // A time series of one interval is a dot, not a trend: drawn only with two or more.
    let over_time = [
        chart(&title("IOPS over time"), secs(), IOPS, Scale::Linear, iops_t),
        chart(&title("Average response time over time"), secs(), AVG_MS, Scale::Linear, resp_t),
        chart(
            &title("99th percentile response time over time"),
            secs(),
            "p99 response time (ms)",
            Scale::Linear,
            p99_t,
        ),
        chart(&title("CPU utilisation over time"), secs(), "CPU utilisation (% of all CPUs)", Scale::Percent, cpu_t),
    ];
    out.extend(over_time.into_iter().filter(|c| c.series.iter().any(|s| s.points.len() > 1)));
    out.retain(|c| !c.is_empty());
    out
}

/// The histogram in four bins per power of two: (bin midpoint in ms, % of all I/Os).
fn histogram_points(h: &crate::stats::Histogram) -> Vec<(f64, f64)> {
    let total = h.total() as f64;
    let mut bins: Vec<(i64, u64)> = Vec::new();
    for (lo, hi, count) in h.buckets() {
        let mid = (lo + hi) as f64 / 2.0;
        let bin = (mid.max(1.0).log2() * 4.0).floor() as i64;
        match bins.last_mut() {
            Some(b) if b.0 == bin => b.1 += count,
            _ => bins.push((bin, count)),
        }
    }
    bins.into_iter().map(|(b, c)| (2f64.powf((b as f64 + 0.5) / 4.0) / 1e6, c as f64 / total * 100.0)).collect()
}
