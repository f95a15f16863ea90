//! `iogauge report`: rendered in a real browser (Debian's chromium, headless, network off),
//! and fed the seeds' published numbers to check that the charts plot what they are given.

use crate::common;

use std::path::{Path, PathBuf};

use common::*;
use iogauge::format::thousands;
use serde_json::{Value, json};

/// Where screenshots are kept (not in git).
fn artifacts() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Headless chromium with no network: every host resolves to nothing, any proxy is dead.
fn offline_chromium(profile: &Path, args: &[&str]) -> std::process::Output {
    let offline = ["--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND", "--virtual-time-budget=5000"];
    chromium(profile, &[&offline[..], args].concat())
}

/// The page's console messages (a page with no script has none unless something failed, such
/// as a blocked fetch).
fn console_lines(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr).lines().filter(|l| l.contains(":CONSOLE")).map(String::from).collect()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// Measures every chart in the browser: its points, how many have a size, how many lie
/// inside the plot area.
const CHECK: &str = r#"<script>
const out = [];
for (const svg of document.querySelectorAll('svg.chart')) {
  const plot = svg.querySelector('rect.plot').getBoundingClientRect();
  const pts = [...svg.querySelectorAll('g.pt, g.bar')];
  let drawn = 0, inside = 0;
  for (const p of pts) {
    const b = p.getBoundingClientRect();
    if (b.width > 0 && b.height > 0) drawn++;
    const cx = b.x + b.width / 2, cy = b.y + b.height / 2;
    if (cx >= plot.left - 1 && cx <= plot.right + 1 && cy >= plot.top - 1 && cy <= plot.bottom + 1) inside++;
  }
  // Every legend name ends inside the chart (in its own units: the page may scale it).
  const box = svg.viewBox.baseVal.width;
  const legend_right = Math.max(0, ...[...svg.querySelectorAll('g.legend text')].map(t => { const b = t.getBBox(); return b.x + b.width; }));
  out.push({title: svg.querySelector('title').textContent, points: pts.length, drawn, inside,
            width: svg.getBoundingClientRect().width, legend_fits: legend_right <= box,
            series: svg.querySelectorAll('g.series').length});
}
const pre = document.createElement('pre'); pre.id = 'check'; pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"#;

/// Measures every chart of `html` in the browser: each point (or bar) drawn inside its plot, every
/// legend name inside its chart, at most 6 series in one chart.
fn check_in_browser(dir: &Path, html: &str) {
    let charts = svgs(html);
    let checked = html
        .replace("default-src 'none'", "default-src 'none'; script-src 'unsafe-inline'")
        .replace("</body>", &format!("{CHECK}</body>"));
    let page = write(dir, "checked.html", &checked);
    let out = offline_chromium(&dir.join("profile"), &["--dump-dom", &format!("file://{page}")]);
    let dom = String::from_utf8(out.stdout).unwrap();
    let text = &dom[dom.find("<pre id=\"check\">").expect("the check ran") + 16..];
    let text = text[..text.find("</pre>").unwrap()].replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
    let measured: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(measured.len(), charts.len(), "the browser sees every chart");
    for (m, svg) in measured.iter().zip(&charts) {
        let given = svg.matches("class=\"pt\"").count() + svg.matches("class=\"bar\"").count();
        assert!(given > 0, "{}: a chart without points", m["title"]);
        assert_eq!(m["points"], given, "{}", m["title"]);
        assert_eq!(m["drawn"], given, "{}: every point has a size on screen", m["title"]);
        assert_eq!(m["inside"], given, "{}: every point lies in its plot", m["title"]);
        assert!(m["width"].as_f64().unwrap() > 300.0, "{}", m["title"]);
        assert_eq!(m["legend_fits"], true, "{}: a legend name is cut off", m["title"]);
        assert!(m["series"].as_u64().unwrap() <= 6, "{}: more than 6 series in one chart", m["title"]);
    }
}

/// The SVG charts of a page, in order.
fn svgs(html: &str) -> Vec<&str> {
    html.split("<svg ").skip(1).map(|s| &s[..s.find("</svg>").unwrap()]).collect()
}

/// A point: its series, values and position.
#[derive(Debug)]
struct Pt {
    series: String,
    x: f64,
    y: f64,
    px: f64,
    py: f64,
}

fn attr<'a>(s: &'a str, name: &str) -> &'a str {
    let start = s.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
    &s[start..start + s[start..].find('"').unwrap()]
}

fn points(svg: &str) -> Vec<Pt> {
    let mut out = Vec::new();
    for series in svg.split("<g class=\"series\"").skip(1) {
        let name = attr(series, "data-name").to_string();
        for p in series.split("<g class=\"pt\"").skip(1) {
            let t = attr(p, "transform").trim_start_matches("translate(").trim_end_matches(')');
            let (px, py) = t.split_once(',').unwrap();
            out.push(Pt {
                series: name.clone(),
                x: attr(p, "data-x").parse().unwrap(),
                y: attr(p, "data-y").parse().unwrap(),
                px: px.parse().unwrap(),
                py: py.parse().unwrap(),
            });
        }
    }
    out
}

/// The bottom of the plot area (y = 0 on a linear axis from zero).
fn base(svg: &str) -> f64 {
    let plot = &svg[svg.find("class=\"plot\"").unwrap()..];
    attr(plot, "y").parse::<f64>().unwrap() + attr(plot, "height").parse::<f64>().unwrap()
}

fn chart<'a>(html: &'a str, title: &str) -> &'a str {
    svgs(html)
        .into_iter()
        .find(|s| s.contains(&format!("<title>{title}</title>")))
        .unwrap_or_else(|| panic!("no chart '{title}'"))
}

/// Asserts the series' pixel heights are proportional to its values (a linear axis from 0).
fn proportional(svg: &str, pts: &[&Pt]) {
    let b = base(svg);
    let k: Vec<f64> = pts.iter().map(|p| (b - p.py) / p.y).collect();
    for r in &k {
        assert!((r / k[0] - 1.0).abs() < 0.005, "heights not proportional to values: {k:?}");
    }
}

#[test]
fn the_report_renders_in_a_real_browser_with_every_point() {
    let dir = scratch("report");
    // A run with a time series, a cycle over targets and sizes, and a response-time search.
    ok_in(
        &dir,
        &[
            "run",
            "--target",
            "null",
            "--spec",
            "random-read-4k",
            "--spec",
            "oltp-8k",
            "--ramp",
            "0s",
            "--time",
            "1s",
            "--interval",
            "100ms",
            "--qd",
            "4",
            "--json",
            "run.json",
            "-q",
        ],
    );
    let cycles = write(
        &dir,
        "cycles.toml",
        "[test]\nramp = \"0s\"\ntime = \"100ms\"\nrun = [\"streaming-read-64k\"]\n[[worker]]\ntargets = [\"null\", \"null\"]\n\
         [study]\ntargets = [1, 2]\nsize = [\"4K\", \"64K\", \"1M\"]\n",
    );
    ok_in(&dir, &["study", &cycles, "--json", "cycles.json", "-q"]);
    let limit = write(
        &dir,
        "limit.toml",
        "[test]\nramp = \"0s\"\ntime = \"100ms\"\nrun = [\"random-read-4k\"]\n[[worker]]\ntargets = [\"null\"]\n\
         [study]\nlimit = { ms = 0.004, max_outstanding = 256 }\n",
    );
    ok_in(&dir, &["study", &limit, "--json", "limit.json", "-q"]);
    ok_in(&dir, &["report", "run.json", "cycles.json", "limit.json", "-o", "report.html", "--charts", "charts"]);
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();

    // Self-contained: nothing to fetch, and a policy that forbids fetching.
    let no_ns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for bad in ["http://", "https://", "<script", "<link", "@import", "url("] {
        assert!(!no_ns.contains(bad), "the report must not hold {bad}");
    }
    assert!(html.contains("default-src 'none'"));
    let titles = [
        "MB/s by transfer size",
        "IOPS by transfer size",
        "MB/s by number of targets (volumes) (peak over transfer sizes)",
        "Scaling factor by number of targets (volumes) (peak over transfer sizes)",
        "IOPS against average response time",
        "Response time percentiles",
        "Response time histogram",
        "IOPS over time",
        "Average response time over time",
        "99th percentile response time over time",
        "CPU utilisation over time",
    ];
    let charts = svgs(&html);
    // A loaded pass once found the scaling chart missing and not again in six tries beside
    // four burners: a chart missing says what each point of the cycle measured.
    let cycled: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("cycles.json")).unwrap()).unwrap();
    let measured: Vec<String> = cycled["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("{} {} {}", p["params"], p["summary"][0]["iops"]["median"], p["summary"][0]["scaling"]))
        .collect();
    for t in titles {
        assert!(
            charts.iter().any(|s| s.contains(&format!("<title>{t}</title>"))),
            "chart '{t}' missing; the cycle's points (params, IOPS, scaling): {measured:?}"
        );
    }
    for section in ["Reproducibility", "Side by side", "The resolved job", "kernel", "idle CPUs", "iogauge"] {
        assert!(html.contains(section), "{section} missing");
    }

    // The browser: no console message, a screenshot, every point drawn inside its plot.
    let profile = dir.join("profile");
    let url = format!("file://{}", dir.join("report.html").display());
    let shot = artifacts().join("report.png");
    let _ = std::fs::remove_file(&shot);
    let out =
        offline_chromium(&profile, &["--window-size=1200,4000", &format!("--screenshot={}", shot.display()), &url]);
    assert_eq!(console_lines(&out.stderr), Vec::<String>::new(), "the page logs nothing");
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 50_000, "a real screenshot: {} bytes", png.len());

    check_in_browser(&dir, &html);

    // What is drawn is what the documents hold: percentiles, the limit, the found maximum.
    let run: Value = serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
    let svg = chart(&html, "Response time percentiles");
    let pts = points(svg);
    for r in run["results"].as_array().unwrap() {
        let spec = r["spec"].as_str().unwrap();
        let mine: Vec<(f64, f64)> = pts.iter().filter(|p| p.series.ends_with(spec)).map(|p| (p.x, p.y)).collect();
        let mut want: Vec<(f64, f64)> = r["totals"]["percentiles_ms"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k[1..].parse().unwrap(), v.as_f64().unwrap()))
            .collect();
        want.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert_eq!(mine, want, "{spec}");
    }
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("limit.json")).unwrap()).unwrap();
    let search = &doc["searches"][0];
    let found = &doc["points"][search["found"].as_u64().expect("the search found a depth") as usize]["summary"][0];
    let svg = chart(&html, "IOPS against average response time");
    assert_eq!(attr(&svg[svg.find("class=\"rule\"").unwrap()..], "data-x"), "0.004", "the limit is drawn");
    let mark = &svg[svg.find("class=\"mark\"").expect("the maximum is marked")..];
    assert_eq!(attr(mark, "data-x").parse::<f64>().unwrap(), found["avg_response_ms"]["median"].as_f64().unwrap());
    assert_eq!(attr(mark, "data-y").parse::<f64>().unwrap(), found["iops"]["median"].as_f64().unwrap());
    assert_eq!(points(svg).len(), search["measured"].as_array().unwrap().len(), "every depth measured is a point");

    // --charts: each chart alone, the same SVG.
    let mut files: Vec<_> = std::fs::read_dir(dir.join("charts")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), charts.len());
    for (f, svg) in files.iter().zip(&charts) {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{}", f.display());
        assert_eq!(&text[5..text.len() - 6], *svg);
    }
}

#[test]
fn the_console_check_catches_a_page_that_fetches() {
    // The detector the test above relies on: a blocked fetch is logged.
    let dir = scratch("report-console");
    let page = write(
        &dir,
        "bad.html",
        "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\"></head>\
         <body><img src=\"https://example.invalid/x.png\"></body></html>",
    );
    let out = offline_chromium(&dir.join("profile"), &["--dump-dom", &format!("file://{page}")]);
    assert!(!console_lines(&out.stderr).is_empty(), "a blocked image is a console message");
}

/// A real study document whose point summaries are replaced by published figures.
fn study_with(dir: &Path, study: &str, figures: &dyn Fn(usize, &mut Value)) -> String {
    let job = write(
        dir,
        "s.toml",
        &format!(
            "[test]\nramp = \"0s\"\nios = 1000\nrun = [\"random-read-4k\"]\n[[worker]]\ntargets = [\"null\", \"null\", \"null\", \"null\"]\n\
             [study]\n{study}\n"
        ),
    );
    ok_in(dir, &["study", &job, "--json", "s.json", "-q", "--no-history"]);
    let mut doc: Value = serde_json::from_slice(&std::fs::read(dir.join("s.json")).unwrap()).unwrap();
    for (i, p) in doc["points"].as_array_mut().unwrap().iter_mut().enumerate() {
        figures(i, &mut p["summary"][0]);
    }
    write(dir, "seed.json", &doc.to_string())
}

fn spread(v: f64) -> Value {
    json!({"median": v, "min": v, "max": v, "cv": 0.0})
}

#[test]
fn seed_000_volume_scaling_draws_its_published_shape() {
    // Seed 000, figure 5: RAID 5 spiral-write peaks of 114, 229, 340 and 460 MB/s for 1..4
    // volumes, against a theoretical 120 MB/s per volume.
    let dir = scratch("report-seed000");
    let peaks = [114.0, 229.0, 340.0, 460.0];
    let doc = study_with(&dir, "targets = [1, 2, 3, 4]", &|i, s| {
        let n = (i + 1) as f64;
        s["mbps"] = spread(peaks[i]);
        s["theory"] = json!({"unit": "mbps", "value": 120.0 * n, "measured_pct": peaks[i] / (120.0 * n) * 100.0, "limit": "drives"});
        s["scaling"] = if i == 0 { Value::Null } else { json!(peaks[i] / (n * peaks[0])) };
    });
    ok_in(&dir, &["report", &doc, "-o", "r.html"]);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    let svg = chart(&html, "MB/s by number of targets (volumes)");
    let pts = points(svg);
    let measured: Vec<&Pt> = pts.iter().filter(|p| p.series == "random-read-4k").collect();
    let theory: Vec<&Pt> = pts.iter().filter(|p| p.series.starts_with("theoretical maximum")).collect();
    assert_eq!(
        measured.iter().map(|p| (p.x, p.y)).collect::<Vec<_>>(),
        [(1.0, 114.0), (2.0, 229.0), (3.0, 340.0), (4.0, 460.0)]
    );
    assert_eq!(theory.iter().map(|p| p.y).collect::<Vec<_>>(), [120.0, 240.0, 360.0, 480.0]);
    proportional(svg, &measured);
    proportional(svg, &theory);
    // Volumes equally apart, and each measured point below its theoretical maximum.
    let dx: Vec<f64> = measured.windows(2).map(|w| w[1].px - w[0].px).collect();
    assert!(dx.iter().all(|d| (d - dx[0]).abs() < 0.02), "{dx:?}");
    for (m, t) in measured.iter().zip(&theory) {
        assert!(m.py > t.py && (m.px - t.px).abs() < 0.01);
    }
    assert!(svg.contains("limit: drives"));
    assert!(html.contains("480 mbps (96%, drives)"), "the table gives the theory, % reached and the limit");
}

#[test]
fn seed_001_drive_stroke_draws_its_published_shape() {
    // Seed 001, chart 1: RAID 5 OLTP 8K IOPS against drive stroke.
    let dir = scratch("report-seed001");
    let strokes = [8.0, 15.0, 30.0, 45.0, 60.0, 75.0, 90.0];
    let iops = [1050.0, 949.0, 843.0, 765.0, 752.0, 691.0, 688.0];
    let doc = study_with(&dir, "stroke = [8, 15, 30, 45, 60, 75, 90]", &|i, s| s["iops"] = spread(iops[i]));
    ok_in(&dir, &["report", &doc, "-o", "r.html"]);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    let svg = chart(&html, "IOPS by drive stroke");
    let pts = points(svg);
    assert_eq!(
        pts.iter().map(|p| (p.x, p.y)).collect::<Vec<_>>(),
        strokes.iter().copied().zip(iops).collect::<Vec<_>>()
    );
    let refs: Vec<&Pt> = pts.iter().collect();
    proportional(svg, &refs);
    // x is linear in the stroke: pixels per % the same between any two points.
    let k: Vec<f64> = pts.windows(2).map(|w| (w[1].px - w[0].px) / (w[1].x - w[0].x)).collect();
    assert!(k.iter().all(|v| (v - k[0]).abs() < 0.01), "{k:?}");
    // Falling, as published: each point lower on the page than the one before.
    assert!(pts.windows(2).all(|w| w[1].py > w[0].py));
}

#[test]
fn seed_004_side_by_side_table_gives_the_published_figures_and_differences() {
    // Seed 004: 10Gb HBA (A) against the software initiator (B), IOPS and CPU %.
    let dir = scratch("report-seed004");
    let published = [
        ("web-file-server-4k", (23_579.47, 6.09), (23_222.59, 14.01)),
        ("db-oltp-8k", (16_125.20, 4.95), (16_182.18, 10.86)),
    ];
    for (name, pick) in [("hba.json", 0), ("software.json", 1)] {
        let out = ok_in(
            &dir,
            &[
                "run",
                "--target",
                "null",
                "--ios",
                "1000",
                "--spec",
                "web-file-server-4k",
                "--spec",
                "db-oltp-8k",
                "--json",
                "-",
                "-q",
            ],
        );
        let mut doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        for r in doc["results"].as_array_mut().unwrap() {
            let row = published.iter().find(|p| r["spec"] == p.0).unwrap();
            let (iops, cpu) = if pick == 0 { row.1 } else { row.2 };
            r["totals"]["iops"] = json!(iops);
            r["totals"]["cpu"]["utilization_pct"] = json!(cpu);
            r["totals"]["cpu"]["effectiveness"] = json!(iops / cpu);
            // Recorded over a window long enough for CPU figures, as the seed's were: 1,000
            // I/Os on null take too short a one, whose CPU figures are shown as "-".
            r["duration_s"] = json!(60.0);
        }
        write(&dir, name, &doc.to_string());
    }
    ok_in(&dir, &["report", "hba.json", "software.json", "-o", "r.html"]);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    let table = &html[html.find("<table class=\"compare\">").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    let head: Vec<&str> = table.split("<th>").skip(1).map(|c| &c[..c.find("</th>").unwrap()]).collect();
    let rows: Vec<Vec<&str>> = table
        .split("<tr>")
        .skip(2)
        .map(|r| r.split("<td").skip(1).map(|c| &c[c.find('>').unwrap() + 1..c.find("</td>").unwrap()]).collect())
        .collect();
    for (name, a, b) in published {
        // As `iogauge compare` lays it out: the workload's row of A, then B, then B's % of A.
        let at = rows.iter().position(|r| r[0] == name).unwrap_or_else(|| panic!("no row for {name}"));
        let (ra, rb, rp) = (&rows[at], &rows[at + 1], &rows[at + 2]);
        assert_eq!((ra[1], rb[1], rp[1]), ("A", "B", "B vs A %"), "{name}");
        let col = |h: &str| head.iter().position(|x| *x == h).unwrap_or_else(|| panic!("no column {h}"));
        let pct = |x: f64, y: f64| format!("{:+.1}", (y - x) / x * 100.0);
        assert_eq!((ra[col("IOPS")], rb[col("IOPS")]), (thousands(a.0).as_str(), thousands(b.0).as_str()));
        assert_eq!(rp[col("IOPS")], pct(a.0, b.0), "{name}: % of B against A");
        assert_eq!(
            (ra[col("CPU %")], rb[col("CPU %")]),
            (format!("{:.1}", a.1).as_str(), format!("{:.1}", b.1).as_str())
        );
        assert_eq!(rp[col("CPU %")], pct(a.1, b.1));
    }
    // The HBA's CPU advantage the seed reports: B used more than twice A's CPU on both.
    assert!(html.contains(&format!("{:+.1}", (14.01 - 6.09) / 6.09 * 100.0)));
}

#[test]
fn many_workloads_are_small_multiples_with_whole_legends() {
    let dir = scratch("readable");
    // Eight workloads, one with a long name; one interval each (no time series to draw).
    let mut args = vec!["run", "--target", "null", "--ramp", "0s", "--time", "300ms", "--json", "many.json", "-q"];
    for s in ["oltp-4k", "oltp-8k", "file-server", "web-server", "random-read-4k", "random-write-4k", "dss-1m"] {
        args.extend(["--spec", s]);
    }
    ok_in(&dir, &args);
    ok_in(
        &dir,
        &[
            "run",
            "--target",
            "null",
            "--bs",
            "4K:60,64K:40",
            "--read",
            "70",
            "--ramp",
            "0s",
            "--time",
            "1s",
            "--interval",
            "250ms",
            "--json",
            "long.json",
            "-q",
        ],
    );
    ok_in(&dir, &["report", "many.json", "long.json", "-o", "r.html"]);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    let charts = svgs(&html);
    let titled = |t: &str| charts.iter().filter(|s| s.contains(&format!("<title>{t}"))).count();
    assert_eq!(titled("Response time percentiles ("), 2, "8 series: two small multiples of at most 6");
    // long.json has four intervals: its time series is drawn; many.json's single ones are dots in it.
    assert!(titled("IOPS over time") >= 1);
    // A percentage axis stops at 100.
    for svg in charts.iter().filter(|s| s.contains("% of all CPUs") || s.contains("% of all in the run")) {
        let ticks: Vec<f64> = svg
            .split("text-anchor=\"end\">")
            .skip(1)
            .filter_map(|t| t[..t.find('<').unwrap()].replace(',', "").parse().ok())
            .collect();
        assert!(ticks.iter().all(|t| *t <= 100.0), "{ticks:?}");
    }
    // No empty header row (the reproducibility table is keys and values).
    assert!(!html.contains("<tr><th></th><th></th></tr>"), "an empty header row");
    // No column of a table is empty throughout (no scaling or theory in plain runs).
    assert!(!html.contains("<th>scaling</th>") && !html.contains("theoretical maximum"), "empty columns shown");
    check_in_browser(&dir, &html);
    // One run of one interval: no time-series chart at all.
    ok_in(&dir, &["run", "--target", "null", "--ramp", "0s", "--time", "300ms", "--json", "one.json", "-q"]);
    ok_in(&dir, &["report", "one.json", "-o", "one.html"]);
    let one = std::fs::read_to_string(dir.join("one.html")).unwrap();
    assert!(!one.contains("over time</title>"), "a time series of one point");
}

/// The colour of series `name` in a line chart.
fn stroke_of<'a>(svg: &'a str, name: &str) -> &'a str {
    let series = &svg[svg.find(&format!("<g class=\"series\" data-name=\"{name}\"")).unwrap()..];
    attr(&series[series.find("<path").unwrap()..], "stroke")
}

#[test]
fn two_runs_compare_on_one_chart_per_workload_with_their_setups_beside() {
    let dir = scratch("report-compare");
    for (name, qd) in [("a.json", "1"), ("b.json", "8")] {
        ok_in(
            &dir,
            &[
                "run",
                "--target",
                "null",
                "--spec",
                "oltp-8k",
                "--spec",
                "random-read-4k",
                "--qd",
                qd,
                "--ramp",
                "0s",
                "--time",
                "1s",
                "--interval",
                "250ms",
                "--json",
                name,
                "-q",
            ],
        );
    }
    ok_in(&dir, &["report", "a.json", "b.json", "-o", "r.html"]);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    let docs: Vec<Value> = ["a.json", "b.json"]
        .iter()
        .map(|n| serde_json::from_slice(&std::fs::read(dir.join(n)).unwrap()).unwrap())
        .collect();
    let mut colours = Vec::new();
    for (k, w) in ["oltp-8k", "random-read-4k"].iter().enumerate() {
        // A and B's figures of one workload on one chart, each run in its colour throughout.
        for kind in ["Response time percentiles", "IOPS over time"] {
            let svg = chart(&html, &format!("{w}: {kind}"));
            let series: Vec<&str> =
                svg.split("<g class=\"series\" data-name=\"").skip(1).map(|s| &s[..s.find('"').unwrap()]).collect();
            assert_eq!(series, ["a.json", "b.json"], "{w}: {kind}");
            colours.push((stroke_of(svg, "a.json"), stroke_of(svg, "b.json")));
            if kind == "Response time percentiles" {
                for (d, name) in docs.iter().zip(["a.json", "b.json"]) {
                    let p99 = num(&d["results"][k]["totals"], "percentiles_ms/p99");
                    assert!(
                        points(svg).iter().any(|p| p.series == name && p.x == 99.0 && p.y == p99),
                        "{w} {name} p99"
                    );
                }
            }
        }
        // The summary: a bar per run for each workload, of the run's own IOPS.
        let bars = chart(&html, "IOPS by workload");
        for (d, name) in docs.iter().zip(["a.json", "b.json"]) {
            let bar = &bars[bars.find(&format!("data-category=\"{w}\" data-series=\"{name}\"")).unwrap()..];
            assert_eq!(attr(bar, "data-y").parse::<f64>().unwrap(), num(&d["results"][k]["totals"], "iops"));
        }
    }
    assert!(colours.windows(2).all(|c| c[0] == c[1]) && colours[0].0 != colours[0].1, "{colours:?}");
    // What differs in the set-ups is said beside the figures, as `compare` says it.
    assert!(html.contains("A and B differ in outstanding I/Os: 1 vs 8"), "no set-up difference beside the table");
    check_in_browser(&dir, &html);
    // At 1280 px, two charts side by side.
    let shot = artifacts().join("report-compare-1280.png");
    let url = format!("file://{}", dir.join("r.html").display());
    let out = offline_chromium(
        &dir.join("profile"),
        &["--window-size=1280,2000", &format!("--screenshot={}", shot.display()), &url],
    );
    assert!(console_lines(&out.stderr).is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000, "a screenshot");
    let tops = html.matches("<figure").count();
    assert!(tops >= 8, "{tops} charts");
}

/// A study's report with `--detail all` (the workbench's) has a row per worker and per target
/// under each point, from the point's median run: a null worker beside another no longer hides
/// it in the point's total.
#[test]
fn a_studys_report_has_each_points_workers_and_targets() {
    let dir = scratch("report-study-detail");
    let job = "[test]\nramp = \"0s\"\ntime = \"1s\"\nrun = [\"random-read-4k\"]\n\
               [[worker]]\nname = \"fast\"\ntargets = [\"null\"]\n[[worker]]\nname = \"paced\"\n\
               targets = [\"null\"]\nrate_iops = 500\n[study]\noutstanding = [1, 2]\n";
    std::fs::write(dir.join("s.toml"), job).unwrap();
    ok_in(&dir, &["study", "s.toml", "-q", "--no-history", "--json", "s.json"]);
    ok_in(&dir, &["report", "s.json", "--detail", "all", "-o", "r.html"]);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    for point in ["outstanding=1", "outstanding=2"] {
        for part in ["random-read-4k: fast", "random-read-4k: paced", "random-read-4k: null"] {
            let row = html.lines().any(|l| l.contains(point) && l.contains(part));
            assert!(row, "no row {part} at {point}");
        }
    }
    // Without --detail the points' totals only.
    ok_in(&dir, &["report", "s.json", "-o", "plain.html"]);
    assert!(!std::fs::read_to_string(dir.join("plain.html")).unwrap().contains("random-read-4k: paced"));
}
