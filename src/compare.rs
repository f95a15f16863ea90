//! `iogauge compare A B`: two result or study documents side by side, per workload, with the
//! % difference of B from A (seed 001's "% better", seed 004's side-by-side tables).

use crate::config::{KEYS, Rate, WorkerConfig};
use crate::document::{Document, Workload};
use crate::format::{grid, opt_ms, thousands};
use crate::result::{Detail, Headline};
use crate::units::human_size;

/// % difference of `b` from `a`; None when `a` is zero or either is missing.
pub fn pct(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if a != 0.0 => Some((b - a) / a * 100.0),
        _ => None,
    }
}

/// A % difference as the tables print it: `+12.3`, `-4.0`; one that rounds to nothing is
/// `+0.0` (never `-0.0`); `-` when there is none.
pub fn pct_text(p: Option<f64>) -> String {
    match p {
        Some(v) if (v * 10.0).round() == 0.0 => "+0.0".into(),
        Some(v) => format!("{v:+.1}"),
        None => "-".into(),
    }
}

/// Rows of several documents side by side, and the rows that found no partner.
#[derive(Debug, Default)]
pub struct Aligned {
    /// Each row every document has, in the first's order: its name (`first's ~ other's` where
    /// paired in order) and each document's figures. A workload's workers or targets follow
    /// it, named `workload / part`.
    pub rows: Vec<(String, Vec<Headline>)>,
    /// For each document, its rows that not every other has: workloads, and workers or
    /// targets of the workloads in common.
    pub alone: Vec<Vec<String>>,
}

/// The workloads present in both, in A's order, with A's and B's figures, and the rows only
/// in one of them (see [`align`]); then a workload left alone on one side beside each left on
/// the other that ran the same specification, where one side has one of it: a run beside
/// every point of a study that ran its specification.
pub fn pair(a: &[Workload], b: &[Workload]) -> (Vec<(String, Headline, Headline)>, Aligned) {
    let names: Vec<Vec<String>> = [a, b].iter().map(|d| d.iter().map(|w| w.name.clone()).collect()).collect();
    let mut groups = align_names(&names);
    groups.extend(same_spec(a, b, &groups));
    let mut aligned = align_groups(&[a, b], &groups);
    let rows = std::mem::take(&mut aligned.rows);
    (rows.into_iter().map(|(k, mut h)| (k, h.remove(0), h.remove(0))).collect(), aligned)
}

/// The workloads of the first document that every other one has too, in its order, with
/// each document's figures (see [`align_names`]); under each, its workers or targets that
/// every document has, paired by place (their labels) the same way. What pairs is
/// compared; what does not is in [`Aligned::alone`].
pub fn align(docs: &[&[Workload]]) -> Aligned {
    let names: Vec<Vec<String>> = docs.iter().map(|d| d.iter().map(|w| w.name.clone()).collect()).collect();
    align_groups(docs, &align_names(&names))
}

/// The rows of `groups` (for each, a workload's index in each document) and what is alone.
fn align_groups(docs: &[&[Workload]], groups: &[Vec<usize>]) -> Aligned {
    let mut out = Aligned { rows: Vec::new(), alone: vec![Vec::new(); docs.len()] };
    for at in groups {
        let workloads: Vec<&Workload> = docs.iter().zip(at).map(|(d, &i)| &d[i]).collect();
        let name = one_name(workloads.iter().map(|w| w.name.as_str()));
        out.rows.push((name.clone(), workloads.iter().map(|w| w.headline.clone()).collect()));
        let labels: Vec<Vec<String>> =
            workloads.iter().map(|w| w.parts.iter().map(|(l, _)| l.clone()).collect()).collect();
        let parts = align_names(&labels);
        for p in &parts {
            let label = one_name(workloads.iter().zip(p).map(|(w, &j)| w.parts[j].0.as_str()));
            let figures = workloads.iter().zip(p).map(|(w, &j)| w.parts[j].1.clone()).collect();
            out.rows.push((format!("{name} / {label}"), figures));
        }
        for (k, w) in workloads.iter().enumerate() {
            let paired: std::collections::HashSet<usize> = parts.iter().map(|p| p[k]).collect();
            let alone = w.parts.iter().enumerate().filter(|(j, _)| !paired.contains(j));
            out.alone[k].extend(alone.map(|(_, (l, _))| format!("{} / {l}", w.name)));
        }
    }
    for (k, d) in docs.iter().enumerate() {
        let paired: std::collections::HashSet<usize> = groups.iter().map(|g| g[k]).collect();
        let alone = d.iter().enumerate().filter(|(i, _)| !paired.contains(i));
        out.alone[k].extend(alone.map(|(_, w)| w.name.clone()));
    }
    out
}

/// The workloads of `a` and `b` that `paired` leaves alone, paired by the specification they
/// ran where one side has one of it left (a run beside a study's points): their indexes.
fn same_spec(a: &[Workload], b: &[Workload], paired: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let left = |d: &[Workload], k: usize| -> Vec<usize> {
        (0..d.len()).filter(|i| !paired.iter().any(|g| g[k] == *i)).collect()
    };
    let (left_a, left_b) = (left(a, 0), left(b, 1));
    let mut out = Vec::new();
    for &i in &left_a {
        let ys: Vec<usize> = left_b.iter().copied().filter(|&j| b[j].spec == a[i].spec).collect();
        let xs = left_a.iter().filter(|&&x| a[x].spec == a[i].spec).count();
        if xs == 1 || ys.len() == 1 {
            out.extend(ys.into_iter().map(|j| vec![i, j]));
        }
    }
    out
}

/// Paired rows' names as one: the first's, then ` ~ other's` for each other that differs.
fn one_name<'a>(mut names: impl Iterator<Item = &'a str>) -> String {
    let first = names.next().unwrap_or_default();
    names.fold(first.to_string(), |all, n| if n == first { all } else { format!("{all} ~ {n}") })
}

/// The rows not compared, in one line, naming the documents by `letters`: `not compared, only
/// in A: x, y; only in B: z` (with more than two documents, those not in every one); None when
/// every row paired. A long list names its first rows and counts the rest.
pub fn not_compared(alone: &[Vec<String>], letters: &[String]) -> Option<String> {
    const NAMED: usize = 8;
    let said: Vec<String> = alone
        .iter()
        .zip(letters)
        .filter(|(rows, _)| !rows.is_empty())
        .map(|(rows, letter)| {
            let mut list = rows.iter().take(NAMED).cloned().collect::<Vec<_>>().join(", ");
            if rows.len() > NAMED {
                list += &format!(" and {} more", rows.len() - NAMED);
            }
            match alone.len() {
                2 => format!("only in {letter}: {list}"),
                _ => format!("{letter}: {list}"),
            }
        })
        .collect();
    let head = if alone.len() == 2 { "not compared, " } else { "not compared, not in every document: " };
    (!said.is_empty()).then(|| format!("{head}{}", said.join("; ")))
}

/// `iogauge compare`'s text (and the workbench's): the side-by-side table of the rows that
/// pair, the rows that do not pair in one line, seed 002's summary, and what differs in the
/// set-ups. `names` are what A and B are called; an error when no workload pairs.
pub fn text(names: [&str; 2], a: &Document, b: &Document, detail: Detail) -> crate::error::Result<String> {
    let [na, nb] = names;
    let (rows, aligned) = pair(&a.workloads(detail), &b.workloads(detail));
    if rows.is_empty() {
        return Err(crate::error::input(format!(
            "{na} and {nb} have no workload in common: compare runs of the same specifications"
        )));
    }
    let mut out = table(na, nb, &rows);
    if let Some(line) = not_compared(&aligned.alone, &["A".into(), "B".into()]) {
        out.push_str(&format!("{line}\n"));
    }
    out.push_str(&overall(a, b).unwrap_or_default());
    for w in differences(a, b, ["A", "B"]) {
        out.push_str(&format!("warning: {w}\n"));
    }
    Ok(out)
}

/// For each workload of the first list that every other list has too, in the first's order,
/// its index in each list. A workload is found by its name; those of the first and of another
/// list that match no name of the other are paired in order when as many are left on each
/// side (fio's job `randread` beside iogauge's `random-read-4k`).
pub fn align_names(docs: &[Vec<String>]) -> Vec<Vec<usize>> {
    let Some((first, others)) = docs.split_first() else { return Vec::new() };
    // For each other list: where each of the first's workloads is in it.
    let matches: Vec<Vec<Option<usize>>> = others
        .iter()
        .map(|o| {
            let unmatched =
                |x: &[String], y: &[String]| -> Vec<usize> { (0..x.len()).filter(|&i| !y.contains(&x[i])).collect() };
            let (left_f, left_o) = (unmatched(first, o), unmatched(o, first));
            (0..first.len())
                .map(|i| {
                    o.iter().position(|x| *x == first[i]).or_else(|| {
                        let at = left_f.iter().position(|&j| j == i)?;
                        (left_f.len() == left_o.len()).then(|| left_o[at])
                    })
                })
                .collect()
        })
        .collect();
    (0..first.len())
        .filter_map(|i| {
            let mut at = vec![i];
            for m in &matches {
                at.push(m[i]?);
            }
            Some(at)
        })
        .collect()
}

/// A measure compared: its name, where it is in a workload's figures, how it prints.
pub type Measure = (&'static str, fn(&Headline) -> Option<f64>, fn(f64) -> String);
/// The measures compared (by `compare` and the report's side-by-side table).
pub const MEASURES: [Measure; 7] = [
    ("IOPS", |h| Some(h.iops), thousands),
    ("MB/s", |h| Some(h.mbps), |v| format!("{v:.1}")),
    ("avg ms", |h| h.avg_response_ms, |v| opt_ms(Some(v))),
    ("p50 ms", |h| h.p50_response_ms, |v| opt_ms(Some(v))),
    ("p99 ms", |h| h.p99_response_ms, |v| opt_ms(Some(v))),
    ("CPU %", |h| h.cpu_pct, |v| format!("{v:.1}")),
    ("IOPS/CPU%", |h| h.iops_per_cpu_pct, thousands),
];

/// The side-by-side table of `A` and `B`: per workload a row of A's figures, one of B's and
/// one of B's % difference from A (within 80 columns).
pub fn table(a_name: &str, b_name: &str, rows: &[(String, Headline, Headline)]) -> String {
    let mut cells = vec![vec!["workload".to_string(), String::new()]];
    cells[0].extend(MEASURES.iter().map(|m| m.0.to_string()));
    for (k, a, b) in rows {
        for (side, h) in [("A", a), ("B", b)] {
            let mut row = vec![if side == "A" { k.clone() } else { String::new() }, side.into()];
            row.extend(MEASURES.iter().map(|(_, get, fmt)| get(h).map_or("-".into(), fmt)));
            cells.push(row);
        }
        let mut row = vec![String::new(), "%".into()];
        row.extend(MEASURES.iter().map(|(_, get, _)| pct_text(pct(get(a), get(b)))));
        cells.push(row);
    }
    let mut out = grid(&cells);
    out.push_str(&format!(
        "A = {a_name}\nB = {b_name}\n% = (B - A) / A: better higher for IOPS, MB/s, IOPS/CPU%; lower for ms, CPU %\n"
    ));
    out
}

/// What differs between the two documents' set-ups, so a difference in the figures is not
/// read as the storage's: targets and their sizes, engine, outstanding I/Os, workers, recorded
/// time, the machine (host, kernel, CPUs, memory, the devices behind the targets), every other
/// setting that changes what runs or how it is timed (how the worker waits and spreads,
/// rates, working sets, CPUs, an access specification's lines...); and the points an
/// interrupted study did not reach. `names` are what the two are called ("A", "B").
pub fn differences(a: &Document, b: &Document, names: [&str; 2]) -> Vec<String> {
    let mut out = Vec::new();
    let (sa, sb) = (setup(a), setup(b));
    let [na, nb] = names;
    let differ = |what: &str, x: &String, y: &String| format!("{na} and {nb} differ in {what}: {x} vs {y}");
    for (what, x, y) in [
        ("targets", &sa.targets, &sb.targets),
        ("engine", &sa.engine, &sb.engine),
        ("outstanding I/Os", &sa.outstanding, &sb.outstanding),
        ("workers", &sa.workers, &sb.workers),
        ("file-system test", &sa.fs, &sb.fs),
    ] {
        // Empty is unknown: another tool's results do not say (Iometer's file, the engine).
        if x != y && !x.is_empty() && !y.is_empty() {
            out.push(differ(what, x, y));
        }
    }
    // Another tool's results say nothing of iogauge's settings; the sizes of targets that
    // differ anyway would only repeat it.
    if a.read_from().is_none() && b.read_from().is_none() {
        // A setting one side lacks (an access specification only one ran) is not compared.
        let sizes = sa.targets == sb.targets;
        for (what, x) in &sa.settings {
            let Some((_, y)) = sb.settings.iter().find(|(w, _)| w == what) else { continue };
            if x != y && (sizes || what != "target sizes") {
                out.push(differ(what, x, y));
            }
        }
    }
    // A run that ends on a count of I/Os takes the time it takes.
    let timed = !sa.counted && !sb.counted;
    if timed && (sa.seconds - sb.seconds).abs() > 0.1 * sa.seconds.max(sb.seconds) {
        out.push(format!(
            "{na} and {nb} differ in recorded time: {:.1} s vs {:.1} s per workload",
            sa.seconds, sb.seconds
        ));
    }
    for (side, d) in [(na, a), (nb, b)] {
        if let Some(missing) = missing_points(d) {
            out.push(format!("{side} is a study stopped before its end: {missing}"));
        }
    }
    out
}

/// What a document ran on, as text to compare.
struct Setup {
    targets: String,
    engine: String,
    outstanding: String,
    workers: String,
    seconds: f64,
    counted: bool,
    fs: String,
    /// Everything else that changes the figures, labelled (the two sides pair by label).
    settings: Vec<(String, String)>,
}

/// `[test]` keys whose difference is not said among the settings: they change neither the
/// I/O nor how it is timed (permissions, time-outs, the series' interval, the seed of the
/// same laws), or another line says it (recorded time, the workloads by name, the engine
/// each ran, the targets' sizes).
const UNSAID_KEYS: &[&str] = &[
    "time",
    "ios",
    "bytes",
    "max_time",
    "run",
    "engine",
    "interval",
    "file_size",
    "allow_write",
    "allow_mounted_write",
    "seed",
    "on_error",
    "sync_timeout",
    "io_timeout",
];

/// `[test]` keys that name a directory or a file (the journal's, the logs', the iolog): whether
/// one is given changes what each I/O costs, which one does not.
const DIRECTORY_KEYS: &[&str] = &["journal", "log_dir", "iolog"];

/// The settings of a document's runs that change its figures, each with its distinct values.
fn settings(runs: &[&crate::result::ResultDoc]) -> Vec<(String, String)> {
    let mut said: Vec<(String, Vec<String>)> = Vec::new();
    let mut say = |what: &str, value: String| match said.iter_mut().find(|(w, _)| w == what) {
        Some((_, values)) => values.push(value),
        None => said.push((what.to_string(), vec![value])),
    };
    for r in runs {
        // The machine, as far as the document says.
        for (what, fact) in r.host.facts() {
            say(what, fact);
        }
        for d in &r.host.devices {
            say(&format!("the device behind {}", d.target), d.model.clone());
        }
        for t in &r.target_info {
            say("target sizes", format!("{} {}", t.path, human_size(t.size)));
        }
        let test = serde_json::to_value(&r.config.test).unwrap_or_default();
        for key in KEYS.iter().filter(|k| !UNSAID_KEYS.contains(&k.name)) {
            let value = match (test.get(key.name), DIRECTORY_KEYS.contains(&key.name)) {
                // Left out of a document: the default.
                (None | Some(serde_json::Value::Null), _) => key.default.trim_matches('"').to_string(),
                (Some(_), true) => "given".to_string(),
                (Some(v), false) => plain(v),
            };
            say(key.name, value);
        }
        for w in &r.config.workers {
            say("working sets", working_set(w));
            say("workers' rates", rate(w));
        }
        say("workers' CPUs", workers_cpus(&r.config.workers));
        // A specification of the same name may have other lines (a job file's own, edited).
        for s in &r.config.specs {
            say(&format!("the number of lines of {}", s.name), s.lines.len().to_string());
            for (i, line) in s.lines.iter().enumerate() {
                // As a job file gives it, in the keys' order.
                let fields = crate::job::to_toml(line).unwrap_or_default();
                say(&format!("{}'s line {}", s.name, i + 1), fields.trim_end().replace('\n', ", "));
            }
        }
    }
    said.into_iter().map(|(what, values)| (what, joined(values))).collect()
}

/// Values as one text: each once, in order; numbers in numeric order, before any text (a
/// study's outstanding I/Os read 12, 24, 3, 48 in the text's order).
fn joined(mut values: Vec<String>) -> String {
    values.sort_by(|a, b| {
        let number = |v: &str| v.parse::<f64>().ok().filter(|n| n.is_finite());
        match (number(a), number(b)) {
            (Some(x), Some(y)) => x.total_cmp(&y).then_with(|| a.cmp(b)),
            (x, y) => y.is_some().cmp(&x.is_some()).then_with(|| a.cmp(b)),
        }
    });
    values.dedup();
    values.join(", ")
}

/// A JSON value as a job file would give it, strings without their quotes.
fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// A worker's working set, as its keys give it.
fn working_set(w: &WorkerConfig) -> String {
    let size = match (w.working_set, w.stroke) {
        (Some(bytes), _) => human_size(bytes),
        (None, Some(pct)) => format!("{pct} % of each target"),
        (None, None) => "each whole target".to_string(),
    };
    match w.offset {
        0 => size,
        at => format!("{size} from {}", human_size(at)),
    }
}

/// A worker's open-loop rate, or its closed loop.
fn rate(w: &WorkerConfig) -> String {
    let Rate { iops, mbps } = w.rate();
    if iops.is_none() && mbps.is_none() {
        return "none (closed loop)".to_string();
    }
    let parts = [iops.map(|v| format!("{} IOPS", thousands(v))), mbps.map(|v| format!("{v} MB/s"))];
    parts.into_iter().flatten().collect::<Vec<_>>().join(" and ")
}

/// The CPUs each worker may run on, worker by worker (`0; 1`, each its own), or once where
/// all may run on the same (`0-1 (each of 2)`): the same CPUs shared or split differ.
fn workers_cpus(workers: &[WorkerConfig]) -> String {
    let of = |w: &WorkerConfig| match w.cpus.is_empty() {
        true => "any".to_string(),
        false => crate::host::placement::cpu_list(&w.cpus),
    };
    let lists: Vec<String> = workers.iter().map(of).collect();
    match lists.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [first, rest @ ..] if rest.iter().all(|l| l == first) => format!("{first} (each of {})", lists.len()),
        _ => lists.join("; "),
    }
}

fn setup(d: &Document) -> Setup {
    let runs = d.runs();
    let distinct = |f: &dyn Fn(&crate::result::WorkloadResult) -> String| {
        joined(runs.iter().flat_map(|r| &r.results).map(f).collect())
    };
    let mut targets = d.targets();
    targets.sort();
    let recorded: Vec<f64> = runs.iter().flat_map(|r| &r.results).map(|r| r.duration_s).collect();
    Setup {
        targets: targets.join(", "),
        // The engine itself (io_uring, psync, nbd...), not the kernel features it found on
        // each target (a device's discard command is the device's, not a different engine).
        engine: distinct(&|r| {
            let engine = r.workers.first().and_then(|w| w.engine.as_deref()).unwrap_or("");
            engine.split([';', '(']).next().unwrap_or("").trim().to_string()
        }),
        outstanding: distinct(&|r| r.totals.outstanding.to_string()),
        workers: distinct(&|r| r.workers.len().to_string()),
        seconds: recorded.iter().sum::<f64>() / recorded.len().max(1) as f64,
        // A file-system test moves its files' bytes in the time that takes.
        counted: runs.iter().any(|r| r.config.test.counted() || r.config.fs.is_some()),
        fs: distinct(&|r| {
            r.fs.as_ref().map_or(String::new(), |f| {
                let with = |on: bool, what: &str| if on { format!(", {what} included") } else { String::new() };
                format!(
                    "{} I/O of {} records{}{}",
                    f.io,
                    crate::units::format_size(f.record_bytes),
                    with(f.fsync_included, "fsync"),
                    with(f.close_included, "close")
                )
            })
        }),
        settings: settings(&runs),
    }
}

/// The points an interrupted study did not run, by their parameters.
fn missing_points(d: &Document) -> Option<String> {
    let Document::Study(s) = d else { return None };
    if !s.interrupted {
        return None;
    }
    let planned: Vec<crate::study::Point> = match &s.config.fs {
        Some(fs) => fs
            .threads
            .iter()
            .flat_map(|&n| {
                let tests = fs.phases().into_iter().filter(|t| t.1);
                tests.map(move |(t, _)| crate::study::Point {
                    threads: Some(n),
                    test: Some(t.name().into()),
                    ..Default::default()
                })
            })
            .collect(),
        None => {
            let mut job = s.config.clone();
            job.study = Some(s.study.clone());
            crate::study::points(&job).ok()?
        }
    };
    // A file-system point's label leaves its test to the workload's name.
    let key =
        |p: &crate::study::Point| format!("{} {}", p.label(), p.test.as_deref().unwrap_or("")).trim_end().to_string();
    let done: Vec<String> = s.points.iter().map(|p| key(&p.params)).collect();
    let missing: Vec<String> = planned.iter().map(key).filter(|l| !done.contains(l)).collect();
    Some(if missing.is_empty() {
        "its last point is incomplete".into()
    } else {
        format!("{} of {} points missing ({})", missing.len(), planned.len(), missing.join("; "))
    })
}

/// A file-system study's point, as seed 002's summary uses it.
struct FsPoint {
    threads: u32,
    test: String,
    mbps: f64,
    cpu: f64,
}

fn fs_points(d: &crate::study::doc::StudyDoc) -> Vec<FsPoint> {
    d.points
        .iter()
        .filter_map(|p| {
            let s = p.summary.first()?;
            let (threads, test) = (p.params.threads?, p.params.test.clone()?);
            Some(FsPoint { threads, test, mbps: s.mbps.median, cpu: s.cpu_pct.median })
        })
        .collect()
}

/// Seed 002's summary of two file-system studies: the write tests and the read tests each
/// taken together (the mean MB/s and CPU over the points both hold), B as % of A ("Overall
/// Write 100 % / 110 %"). None unless both are file-system studies with points in common.
pub fn overall(a: &Document, b: &Document) -> Option<String> {
    let (Document::Study(a), Document::Study(b)) = (a, b) else { return None };
    let (pa, pb) = (fs_points(a), fs_points(b));
    let mut rows =
        vec![["", "MB/s A", "MB/s B", "B % of A", "CPU % A", "CPU % B", "B % of A"].map(String::from).to_vec()];
    for (label, writes) in [("Overall write", true), ("Overall read", false)] {
        let both: Vec<(&FsPoint, &FsPoint)> = pa
            .iter()
            .filter(|x| crate::config::FS_TESTS.iter().any(|t| t.name() == x.test && t.writes() == writes))
            .filter_map(|x| Some((x, pb.iter().find(|y| y.threads == x.threads && y.test == x.test)?)))
            .collect();
        if both.is_empty() {
            continue;
        }
        let mean = |f: fn(&FsPoint) -> f64, side: usize| {
            both.iter().map(|p| f(if side == 0 { p.0 } else { p.1 })).sum::<f64>() / both.len() as f64
        };
        let (ma, mb, ca, cb) = (mean(|p| p.mbps, 0), mean(|p| p.mbps, 1), mean(|p| p.cpu, 0), mean(|p| p.cpu, 1));
        let share = |x: f64, y: f64| if x > 0.0 { format!("{:.0}%", y / x * 100.0) } else { "-".into() };
        rows.push(vec![
            label.into(),
            format!("{ma:.1}"),
            format!("{mb:.1}"),
            share(ma, mb),
            format!("{ca:.1}"),
            format!("{cb:.1}"),
            share(ca, cb),
        ]);
    }
    (rows.len() > 1).then(|| {
        format!("\nseed 002's summary: the mean over the thread counts, B as % of A (A = 100 %)\n{}", grid(&rows))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_left_out_or_told_by_presence_are_keys() {
        for name in UNSAID_KEYS.iter().chain(DIRECTORY_KEYS) {
            assert!(KEYS.iter().any(|k| k.name == *name), "{name} is no key of [test]");
        }
    }

    #[test]
    fn values_are_joined_in_numeric_order() {
        let values = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(joined(values(&["12", "24", "3", "48", "6", "96", "3"])), "3, 6, 12, 24, 48, 96");
        assert_eq!(joined(values(&["9", "1.5", "io_uring", "10"])), "1.5, 9, 10, io_uring");
        assert_eq!(joined(values(&["psync", "io_uring"])), "io_uring, psync");
    }

    #[test]
    fn percent_difference() {
        assert_eq!(pct(Some(100.0), Some(125.0)), Some(25.0));
        assert_eq!(pct(Some(200.0), Some(150.0)), Some(-25.0));
        assert_eq!(pct(Some(0.0), Some(1.0)), None);
        assert_eq!(pct(None, Some(1.0)), None);
        assert_eq!(
            [pct_text(Some(-0.04)), pct_text(Some(0.04)), pct_text(Some(-4.0)), pct_text(None)],
            ["+0.0", "+0.0", "-4.0", "-"]
        );
    }

    fn f(iops: f64) -> Headline {
        Headline {
            iops,
            mbps: 0.0,
            avg_response_ms: None,
            p50_response_ms: None,
            p99_response_ms: None,
            cpu_pct: None,
            iops_per_cpu_pct: None,
        }
    }

    /// A workload by name and IOPS, with its parts (named with theirs).
    type Named<'a> = (&'a str, f64, &'a [(&'a str, f64)]);

    /// Workloads named with their IOPS, each with its parts.
    fn workloads(list: &[Named]) -> Vec<Workload> {
        let part = |(n, v): &(&str, f64)| (n.to_string(), f(*v));
        list.iter()
            .map(|(n, v, parts)| Workload {
                name: n.to_string(),
                // A study's point is named before its specification.
                spec: n.rsplit(' ').next().unwrap_or(n).to_string(),
                headline: f(*v),
                parts: parts.iter().map(part).collect(),
            })
            .collect()
    }

    fn rows(p: &[(String, Headline, Headline)]) -> Vec<(&str, f64, f64)> {
        p.iter().map(|r| (r.0.as_str(), r.1.iops, r.2.iops)).collect()
    }

    #[test]
    fn pairs_workloads_by_name_then_the_rest_in_order() {
        let a = workloads(&[("x", 1.0, &[]), ("y", 2.0, &[]), ("z", 3.0, &[])]);
        let b = workloads(&[("z", 30.0, &[]), ("x", 10.0, &[])]);
        let (p, aligned) = pair(&a, &b);
        assert_eq!(rows(&p), [("x", 1.0, 10.0), ("z", 3.0, 30.0)]);
        assert_eq!(aligned.alone, [vec!["y".to_string()], vec![]]);
        // Names that match nothing are paired in order when as many are left on each side.
        let b = workloads(&[("u", 10.0, &[]), ("y", 20.0, &[]), ("v", 30.0, &[])]);
        let (p, aligned) = pair(&a, &b);
        assert_eq!(rows(&p), [("x ~ u", 1.0, 10.0), ("y", 2.0, 20.0), ("z ~ v", 3.0, 30.0)]);
        assert_eq!(aligned.alone, [Vec::<String>::new(), vec![]]);
    }

    /// Workers pair by place under the workloads that pair (issue 83: with four workers on one
    /// side and two on the other, nothing compared); those that do not are named in one line.
    #[test]
    fn parts_pair_under_their_workload_and_the_rest_are_said() {
        let a = workloads(&[("r", 1.0, &[("worker 1", 1.0), ("worker 2", 2.0), ("worker 3", 3.0)])]);
        let b = workloads(&[("r", 10.0, &[("worker 2", 20.0), ("worker 1", 10.0)]), ("s", 5.0, &[])]);
        let (p, aligned) = pair(&a, &b);
        assert_eq!(rows(&p), [("r", 1.0, 10.0), ("r / worker 1", 1.0, 10.0), ("r / worker 2", 2.0, 20.0)]);
        let letters = ["A".to_string(), "B".to_string()];
        assert_eq!(
            not_compared(&aligned.alone, &letters).as_deref(),
            Some("not compared, only in A: r / worker 3; only in B: s")
        );
        // A long list names its first rows and counts the rest.
        let many: Vec<String> = (1..=10).map(|k| format!("w{k}")).collect();
        let line = not_compared(&[many, vec![]], &letters).unwrap();
        assert!(line.ends_with("w8 and 2 more"), "{line}");
    }

    /// A run beside a study of its specification (issue 84: refused, "no workload in common"):
    /// the run's workload is compared with each point's, a worker with each point's worker.
    #[test]
    fn a_run_pairs_with_every_point_of_a_study_of_its_specification() {
        let run = workloads(&[("r", 5.0, &[("worker 1", 5.0)])]);
        let study = workloads(&[
            ("outstanding=1 r", 1.0, &[("worker 1", 1.0)]),
            ("outstanding=2 r", 2.0, &[("worker 1", 2.0)]),
            ("outstanding=1 s", 9.0, &[]),
        ]);
        let (p, aligned) = pair(&run, &study);
        let want = [
            ("r ~ outstanding=1 r", 5.0, 1.0),
            ("r ~ outstanding=1 r / worker 1", 5.0, 1.0),
            ("r ~ outstanding=2 r", 5.0, 2.0),
            ("r ~ outstanding=2 r / worker 1", 5.0, 2.0),
        ];
        assert_eq!(rows(&p), want);
        assert_eq!(aligned.alone, [vec![], vec!["outstanding=1 s".to_string()]]);
        // The other way round alike, in the study's order.
        let (p, _) = pair(&study, &run);
        assert_eq!(
            rows(&p).iter().map(|r| r.0).collect::<Vec<_>>(),
            [
                "outstanding=1 r ~ r",
                "outstanding=1 r ~ r / worker 1",
                "outstanding=2 r ~ r",
                "outstanding=2 r ~ r / worker 1"
            ]
        );
        // Two studies of other points: which pairs with which is not known, so none do.
        let other = workloads(&[("outstanding=8 r", 8.0, &[]), ("outstanding=16 r", 16.0, &[])]);
        let three =
            workloads(&[("outstanding=1 r", 1.0, &[]), ("outstanding=2 r", 2.0, &[]), ("outstanding=4 r", 4.0, &[])]);
        assert!(pair(&three, &other).0.is_empty());
    }
}
