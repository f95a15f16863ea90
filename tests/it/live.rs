//! Watching a run: `--metrics` scraped by the real Prometheus server and checked by its
//! `promtool`, `--live-json` against its schema and the result, and `--http`'s page in
//! headless Chromium.

use crate::common;

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// A port free now (the kernel's pick; closed again for the server to take).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// GET `url` with curl: the status line's code and the body.
fn get(url: &str, headers: &[&str]) -> (u16, String) {
    let mut c = Command::new("curl");
    c.args(["-s", "-m", "5", "-w", "\n%{http_code}", url]);
    for h in headers {
        c.args(["-H", h]);
    }
    let out = c.output().expect("curl runs (scripts/test installs it)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

/// A Prometheus server of its own, scraping `target` every second.
struct Prometheus {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Prometheus {
    fn start(target: u16) -> Prometheus {
        let dir = scratch("prometheus");
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: iogauge\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let child = common::in_own_session(&mut Command::new("prometheus"))
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus runs (scripts/test installs it)");
        let p = Prometheus { child, port, dir };
        // Ready, and scraping already (the target is down until iogauge listens): a run
        // started before its first scrape would be seen only from a random later second.
        let t0 = Instant::now();
        while !p.scraping() {
            assert!(t0.elapsed() < Duration::from_secs(60), "prometheus did not start scraping");
            std::thread::sleep(Duration::from_millis(200));
        }
        p
    }

    fn scraping(&self) -> bool {
        let (code, body) = get(&self.url("/api/v1/targets"), &[]);
        let v: Value = if code == 200 { serde_json::from_str(&body).unwrap_or_default() } else { Value::Null };
        v["data"]["activeTargets"][0]["lastScrape"].as_str().is_some_and(|t| !t.starts_with("0001"))
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// An instant query's vector at `at` (Unix seconds): each sample's labels and value.
    fn query(&self, promql: &str, at: f64) -> Vec<(Value, f64)> {
        let v = self.api(promql, at);
        v.iter().map(|s| (s["metric"].clone(), s["value"][1].as_str().unwrap().parse().unwrap())).collect()
    }

    /// The result of a query at `at` (Unix seconds) through Prometheus's HTTP API.
    fn api(&self, promql: &str, at: f64) -> Vec<Value> {
        let q: String = promql
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let (code, body) = get(&self.url(&format!("/api/v1/query?query={q}&time={at:.3}")), &[]);
        assert_eq!(code, 200, "{promql}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        v["data"]["result"].as_array().unwrap().clone()
    }

    /// A range query's samples at `at` (Unix seconds): each series' labels and its (time,
    /// value) pairs, as Prometheus stored them.
    fn samples(&self, promql: &str, at: f64) -> Vec<(Value, Vec<(f64, f64)>)> {
        let v = self.api(promql, at);
        let pair = |p: &Value| (p[0].as_f64().unwrap(), p[1].as_str().unwrap().parse().unwrap());
        v.iter().map(|s| (s["metric"].clone(), s["values"].as_array().unwrap().iter().map(pair).collect())).collect()
    }

    /// Of Prometheus's scrapes in the `secs` seconds up to `at`, how many succeeded and how
    /// many there were: its `up` series, 0 for a scrape that failed, one its own parser
    /// (OpenMetrics) refused included.
    fn scrapes_up(&self, secs: u64, at: f64) -> (f64, f64) {
        let value = |q: String| self.query(&q, at).first().map_or(0.0, |s| s.1);
        (value(format!("sum_over_time(up[{secs}s])")), value(format!("count_over_time(up[{secs}s])")))
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Fetches /metrics every 300 ms until `child` ends; every scrape must pass `promtool check
/// metrics`. Returns the states of the test (`iogauge_state`) those checked scrapes were
/// taken in, and the child's output. (How many scrapes fit in the run is the host's: beside
/// two burners and the suite, a scrape and its check took 0.7 s, 18 in 13 s.)
/// Also returns the last moment the child was seen running (Unix seconds): Prometheus marks
/// its series stale at its first failed scrape after the exit, so an instant query for the
/// final counts asks at that moment, inside `--linger`, not after it.
/// The child lingers until `prom` has scraped its final figures: once its metrics say the
/// test ended and Prometheus has that too, its `--linger` is cut short with SIGINT, as Ctrl-C
/// cuts it. A fixed linger of 3 s went by without a scrape once in a suite's pass (Prometheus
/// held back on a loaded host), so the tests give a long one, ended this way.
fn scrape_while(child: Child, port: u16, prom: &Prometheus) -> (BTreeSet<String>, std::process::Output, f64) {
    let url = format!("http://127.0.0.1:{port}/metrics");
    let mut child = child;
    let mut states = BTreeSet::new();
    let unix_now = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    let mut alive = unix_now();
    let mut cut_short = false;
    loop {
        // Running at `t`: try_wait, after it, found it running.
        let t = unix_now();
        if child.try_wait().unwrap().is_some() {
            break;
        }
        alive = t;
        let (code, body) = get(&url, &[]);
        if code == 200 {
            let mut check = Command::new("promtool")
                .args(["check", "metrics"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            check.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
            let out = output_of(check);
            assert!(
                out.status.success(),
                "promtool check metrics: {}{}\n{body}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let state = body.lines().find_map(|l| l.strip_prefix(r#"iogauge_state{state=""#)?.strip_suffix(r#""} 1"#));
            states.extend(state.map(String::from));
            if !cut_short
                && body.contains(r#"iogauge_state{state="ended"} 1"#)
                && !prom.query(r#"iogauge_state{state="ended"} == 1"#, unix_now()).is_empty()
            {
                // Still lingering, so still running: Prometheus's samples so far are before this.
                alive = unix_now();
                // SAFETY: kill sends a signal to our child, which has not been reaped yet.
                unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
                cut_short = true;
            }
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    (states, output_of(child), alive)
}

/// iogauge started in `dir` with `args`, its output kept.
fn spawn_in(dir: &Path, args: &[&str]) -> Child {
    command_in(dir, args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// The pace of [`prometheus_sees_the_results_rates_and_exact_counts`], I/Os per second.
const PACE: f64 = 20_000.0;

#[test]
fn prometheus_sees_the_results_rates_and_exact_counts() {
    let port = free_port();
    let prom = Prometheus::start(port);
    let dir = scratch("live-prom");
    let json = dir.join("r.json");
    // Paced (an open loop at 20,000 IOPS), so every second holds the same work and a rate over
    // 5 s is the device's, not the machine's noise.
    let child = spawn_in(
        &dir,
        &[
            "run",
            "--target",
            "null",
            "--rate-iops",
            &PACE.to_string(),
            "--ramp",
            "1s",
            "--time",
            "12s",
            "--interval",
            "1s",
            "--metrics",
            &format!("127.0.0.1:{port}"),
            "--linger",
            "60s",
            "--json",
            json.to_str().unwrap(),
            "--no-history",
            "-q",
        ],
    );
    let (states, out, alive) = scrape_while(child, port, &prom);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Checked while it recorded and once it had ended (its 1 s of ramp-up may fall between two).
    assert!(states.contains("recording") && states.contains("ended"), "scrapes checked in states {states:?}");
    let doc = read_json(&json);
    let r = &doc["results"][0];
    let start = r["managers"][0]["record_start_unix_ns"].as_f64().unwrap() / 1e9;
    // Every scrape from recording's start to a second before the exit was seen succeeded. Not
    // the target's state now: its last scrape may have come after the exit (refused, as it
    // should be); and not up to the exit, which may cut a scrape begun just before it.
    // Scraped every second, about 14 of them (at least 8: the rates below want 4 in each 5 s).
    let secs = (alive - 1.0 - start).floor() as u64;
    let (up, by_prometheus) = prom.scrapes_up(secs, alive - 1.0);
    assert!(
        up == by_prometheus && by_prometheus >= 8.0,
        "{up} of Prometheus's {by_prometheus} scrapes in {secs} s succeeded"
    );
    let intervals = r["intervals"].as_array().unwrap();
    // The result's count of recorded I/Os `t` s into recording: its intervals' counts added
    // up, spread evenly inside an interval (the run is paced).
    let counted = |t: f64| -> f64 {
        let mut sum = 0.0;
        for iv in intervals {
            let (end, d) = (num(iv, "t_s"), num(iv, "duration_s"));
            let n = num(iv, "iops") * d;
            if t < end {
                return sum + n * ((t - (end - d)) / d).max(0.0);
            }
            sum += n;
        }
        sum
    };
    // At 6, 8, 10 and 12 s into recording, the counters' growth between the first and last
    // samples Prometheus stored in the last 5 s against the result's count over the same span.
    // The samples themselves, not rate(), which extrapolates to the window's edges (Prometheus's
    // estimate, not iogauge's counts); the same span, not the intervals that end in the 5 s,
    // which hold a second the samples may not. (A loaded pass saw rate() at 19,380 against the
    // intervals' 20,056 with scrapes of 7 ms; which side moved was not kept: the message now
    // says.)
    for at in [6.0, 8.0, 10.0, 12.0] {
        let series = prom.samples("iogauge_ios_total[5s]", start + at);
        // Scraped every second: at least 4 samples in a 5 s window, one scrape's for every
        // series.
        let times: Vec<f64> = series.first().map(|s| s.1.iter().map(|p| p.0 - start).collect()).unwrap_or_default();
        assert!(times.len() >= 4, "at {at} s: {series:?}");
        assert!(series.iter().all(|s| s.1.iter().map(|p| p.0 - start).eq(times.iter().copied())), "{series:?}");
        let (first, last) = (times[0], times[times.len() - 1]);
        let span = last - first;
        let rate = series.iter().map(|s| s.1[s.1.len() - 1].1 - s.1[0].1).sum::<f64>() / span;
        let mean = (counted(last) - counted(first)) / span;
        // Prometheus stamps a sample when its scrape starts; iogauge reads its counters when it
        // answers, up to the scrape's duration later. Over the span, the two ends' delays can
        // move the rate by their sum over the span: under load, an answer 80 ms late at one end
        // is 2 % (issue 45: failed once so, with a suite, builds and two burners beside it). The
        // bound is those durations, as Prometheus measured them, and 2 % for the I/Os inside an
        // interval not being evenly spread (a stall of 80 ms). An interval that did not keep
        // the pace held a longer stall or its catching up: the count at an end inside it is
        // off by up to the I/Os it lacked or had over the pace (a loaded pass: workers held
        // 250 ms, the interval holding one end 19,034 I/Os in 1.2 s, 4,966 short; the rate
        // 4.9 % off).
        let late = prom.query("max_over_time(scrape_duration_seconds[5s])", start + at);
        let late = late.first().map_or(0.0, |s| s.1);
        // The interval holding `t` s into recording (the last for a time past its end).
        let holding = |t: f64| intervals.iter().position(|iv| t < num(iv, "t_s")).unwrap_or(intervals.len() - 1);
        let off_pace = |t: f64| -> f64 {
            let iv = &intervals[holding(t)];
            (num(iv, "iops") - PACE).abs() * num(iv, "duration_s")
        };
        // And a worker held inside the interval of an end (an idle pass of the suite: 6 s of
        // 12 held, one hold of about 0.4 s caught up within its interval, so that interval's
        // count was near the pace and the rate 8.7 % off): the I/Os due by then and not yet
        // done, at most the pace times the longest an I/O completing in that interval or the
        // next waited since it was due (an open loop times each from then).
        let backlog = |t: f64| -> f64 {
            let i = holding(t);
            let longest = |iv: &Value| iv["percentiles_ms"]["p99.999"].as_f64().unwrap_or(0.0) / 1000.0;
            PACE * intervals[i..(i + 2).min(intervals.len())].iter().map(longest).fold(0.0, f64::max)
        };
        let ends = off_pace(first) + off_pace(last) + backlog(first) + backlog(last);
        let bound = mean * (0.02 + 2.0 * late / span) + ends / span;
        let per_second: Vec<String> =
            intervals.iter().map(|iv| format!("{:.1} s: {:.0}", num(iv, "t_s"), num(iv, "iops"))).collect();
        assert!(
            (rate - mean).abs() <= bound,
            "at {at} s: Prometheus's samples grow {rate:.0}/s from {first:.3} to {last:.3} s, the result's count \
             {mean:.0}/s (scrapes took up to {late:.3} s); intervals {per_second:?}"
        );
    }
    // The last scrape (during --linger) holds the result's count exactly.
    let now = alive;
    let total = prom.query("sum(iogauge_ios_total)", now);
    assert_eq!(total[0].1 as u64, r["totals"]["ios"].as_u64().unwrap());
    let state = prom.query("iogauge_state == 1", now);
    assert_eq!(state[0].0["state"], "ended");
}

#[test]
fn a_study_is_scraped_its_counters_grow_across_points_and_say_progress() {
    let port = free_port();
    let prom = Prometheus::start(port);
    let dir = scratch("live-study");
    let json = dir.join("s.json");
    let lines = dir.join("live.jsonl");
    let job = dir.join("sweep.toml");
    std::fs::write(
        &job,
        "[test]\nrun = [\"random-read-4k\"]\nramp = \"0s\"\ntime = \"2s\"\ninterval = \"500ms\"\n\
         [[worker]]\ntargets = [\"null\"]\n[study]\noutstanding = [1, 2, 4]\n",
    )
    .unwrap();
    let child = spawn_in(
        &dir,
        &[
            "study",
            job.to_str().unwrap(),
            "--metrics",
            &port.to_string(),
            "--linger",
            "60s",
            "--live-json",
            lines.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--no-history",
            "-q",
        ],
    );
    let (_, out, alive) = scrape_while(child, port, &prom);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = read_json(&json);
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    let ios: u64 = points.iter().map(|p| p["runs"][0]["results"][0]["totals"]["ios"].as_u64().unwrap()).sum();
    let now = alive;
    // One series for the one workload: it grew through all three points, never reset.
    let total = prom.query("iogauge_ios_total", now);
    assert_eq!(total.len(), 1, "{total:?}");
    assert_eq!(total[0].1 as u64, ios);
    let resets = prom.query("resets(iogauge_ios_total[1m])", now);
    assert_eq!(resets[0].1, 0.0);
    let points_seen = prom.query("max_over_time(iogauge_study_point[1m])", now);
    assert_eq!(points_seen[0].1, 3.0);
    assert_eq!(prom.query("iogauge_study_points", now)[0].1, 3.0);
    // The Grafana dashboard (docs/grafana-iogauge.json): every query of every panel is valid
    // PromQL over these metrics and finds data near the study's end.
    let board: Value =
        serde_json::from_str(include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/grafana-iogauge.json"))).unwrap();
    for panel in board["panels"].as_array().unwrap() {
        for t in panel["targets"].as_array().unwrap() {
            let expr = t["expr"].as_str().unwrap();
            assert!(!prom.query(expr, now - 4.0).is_empty(), "panel {}: {expr} finds nothing", panel["title"]);
        }
    }
    // The lines say the same progress: points 1 to 3 of 3, time left falling to about 0.
    let lines: Vec<Value> =
        std::fs::read_to_string(&lines).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let seen: Vec<u64> = lines.iter().map(|l| l["study"]["point"].as_u64().unwrap()).collect();
    assert!(seen.windows(2).all(|w| w[0] <= w[1]) && seen[0] == 1 && seen.last() == Some(&3), "{seen:?}");
    assert!(lines.iter().all(|l| l["study"]["points"] == 3));
    let last_left = lines.last().unwrap()["study"]["left_s"].as_f64().unwrap();
    assert!(last_left <= 1.0, "{last_left} s left in the last interval");
}

/// Validates each line of `path` against docs/live-schema.json (python3-jsonschema).
fn validate_lines(path: &Path) -> Result<(), String> {
    let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/docs");
    let script = format!(
        "import json,jsonschema; r=json.load(open('{docs}/result-schema.json')); s=json.load(open('{docs}/live-schema.json')); \
         jsonschema.Draft202012Validator.check_schema(s); \
         v=jsonschema.Draft202012Validator(s, resolver=jsonschema.RefResolver.from_schema(s, store={{r['$id']: r}})); \
         [v.validate(json.loads(l)) for l in open('{}')]",
        path.display()
    );
    let out = Command::new("/usr/bin/python3").args(["-c", &script]).output().unwrap();
    if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

/// A FIFO `lines` made in `dir`.
fn fifo_in(dir: &Path) -> std::path::PathBuf {
    let fifo = dir.join("lines");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    fifo
}

/// A FIFO given to `--live-json` that no reader opens: the command waits 5 s for one, then
/// ends with one line before any I/O (a plain open waited for ever). Opened by a reader that
/// comes within them, it runs.
#[test]
fn a_fifo_without_a_reader_is_one_line_after_a_bounded_wait() {
    let dir = scratch("live-no-reader");
    let fifo = fifo_in(&dir);
    let args = ["run", "--target", "null", "--ramp", "0s", "--time", "1s", "--no-history", "-q"];
    let args = [&args[..], &["--live-json", fifo.to_str().unwrap(), "--json", "r.json"]].concat();
    let started = Instant::now();
    let out = command_in(&dir, &args).output().unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no reader opened this FIFO within 5 s") && err.trim().lines().count() == 1, "{err}");
    // 5 s, and a loaded host's start.
    assert!(took >= Duration::from_secs(5) && took < Duration::from_secs(15), "took {took:?}");
    assert!(!dir.join("r.json").exists(), "nothing ran");
    // A reader that comes 1 s later is in time.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            std::fs::read_to_string(&fifo).unwrap()
        })
    };
    let out = command_in(&dir, &args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = reader.join().unwrap();
    assert!(lines.lines().count() >= 1 && lines.lines().all(|l| l.contains("\"phase\"")), "{lines}");
}

/// A reader of `--live-json` that stops reading (a pipe's consumer paused, a FIFO's reader
/// stuck) holds up neither the test nor its end: the run ends on time, then gives the lines
/// still waiting a few seconds and says what was lost. Before, the monitor wrote the lines
/// itself and waited in write(2): a 2 s test never ended.
#[test]
fn a_reader_that_stops_reading_holds_up_nothing() {
    let dir = scratch("live-stuck");
    let fifo = fifo_in(&dir);
    // The reader opens the FIFO, reads one line and then nothing: 200 lines of 10 ms fill the
    // pipe's 64 KiB.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut r = std::io::BufReader::new(std::fs::File::open(&fifo).unwrap());
            let mut first = String::new();
            r.read_line(&mut first).unwrap();
            (first, r)
        })
    };
    let args = ["run", "--target", "null", "--ramp", "0s", "--time", "2s", "--interval", "10ms", "--no-history"];
    let started = Instant::now();
    let mut run = command_in(&dir, &args)
        .args(["--live-json", fifo.to_str().unwrap(), "--json", "r.json", "-q"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let code = loop {
        if let Some(status) = run.try_wait().unwrap() {
            break status.code();
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = run.kill();
            // A reader still waiting for a writer to open the FIFO is let go.
            let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
            panic!("a 2 s test held by its --live-json reader for 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (first, mut rest) = reader.join().unwrap();
    let took = started.elapsed();
    let mut err = String::new();
    std::io::Read::read_to_string(run.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(code, Some(0), "{err}");
    // 2 s of test, up to 5 s for the lines still waiting, and the start's and end's own time.
    assert!(took < Duration::from_secs(12), "took {took:?}");
    assert!(err.contains("--live-json: the reader did not take every line within 5 s"), "{err}");
    assert_eq!(err.matches("--live-json").count(), 1, "said once: {err}");
    // The result is whole; what the reader took, and takes now, are whole lines in order.
    let doc = read_json(&dir.join("r.json"));
    assert_eq!(num(&doc["results"][0], "duration_s"), 2.0);
    let mut taken = vec![first];
    taken.extend(std::io::BufRead::lines(&mut rest).map(Result::unwrap));
    let lines: Vec<Value> = taken.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(lines.len() > 1 && lines.len() < 200, "{} lines", lines.len());
    let times: Vec<f64> = lines.iter().map(|l| num(l, "elapsed_s")).collect();
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
}

/// The rows of the history database `db`, by SQLite's own tool.
fn history_rows(db: &Path) -> u64 {
    let out = Command::new("sqlite3").arg(db).arg("SELECT count(*) FROM runs").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// `ARGS --live-json -` whose reader takes the first recording line, then goes away, with its
/// stderr too when `all_readers`: the command's exit status, and its stderr while kept.
fn reader_goes_away(dir: &Path, args: &[&str], all_readers: bool) -> (Option<i32>, String) {
    let mut child = command_in(dir, args)
        .args(["--interval", "100ms", "--live-json", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let first = lines.find(|l| l.as_ref().is_ok_and(|l| l.contains("\"recording\"")));
    assert!(first.is_some(), "no recording line");
    drop(lines);
    if all_readers {
        drop(child.stderr.take());
    }
    let out = output_of(child);
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_reader_that_goes_away_ends_nothing_and_the_result_is_saved() {
    let dir = scratch("live-gone");
    let db = dir.join("h.sqlite");
    let db_arg = db.to_str().unwrap();
    // A run whose --live-json reader is `head -c 10`: it goes on, saves, writes its document,
    // says so once, and exits as the run ended (0), not by SIGPIPE.
    let run = ["run", "--target", "null", "--ramp", "0s", "--time", "2s", "--db", db_arg, "--json", "r.json"];
    let (code, err) = reader_goes_away(&dir, &run, false);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.matches("its reader went away").count(), 1, "said once: {err}");
    assert_eq!(num(&read_json(&dir.join("r.json"))["results"][0], "duration_s"), 2.0);
    assert_eq!(history_rows(&db), 1);
    // A study's too: every point is run and the study saved.
    std::fs::write(
        dir.join("s.toml"),
        "[test]\nrun = [\"random-read-4k\"]\ntime = \"500ms\"\nramp = \"0s\"\n[[worker]]\ntargets = [\"null\"]\n\
         [study]\noutstanding = [1, 2, 4]\n",
    )
    .unwrap();
    let study = ["study", "s.toml", "--db", db_arg, "--json", "s.json"];
    let (code, err) = reader_goes_away(&dir, &study, false);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(read_json(&dir.join("s.json"))["points"].as_array().unwrap().len(), 3);
    assert_eq!(history_rows(&db), 2);
    // Every reader gone, stderr too (a workbench that ended): the run saves all the same.
    let (code, _) = reader_goes_away(&dir, &run, true);
    assert_eq!(code, Some(0));
    assert_eq!(history_rows(&db), 3);
}

#[test]
fn json_lines_follow_their_schema_and_add_up_to_the_result() {
    let dir = scratch("live-lines");
    let lines = dir.join("live.jsonl");
    let json = dir.join("r.json");
    ok_in(
        &dir,
        &[
            "run",
            "--target",
            "null",
            "--workers",
            "2",
            "--qd",
            "8",
            "--ramp",
            "500ms",
            "--time",
            "2s",
            "--interval",
            "250ms",
            "--live-json",
            lines.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--no-history",
        ],
    );
    validate_lines(&lines).unwrap();
    let doc = read_json(&json);
    let r = &doc["results"][0];
    let all: Vec<Value> =
        std::fs::read_to_string(&lines).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let recorded: Vec<&Value> = all.iter().filter(|l| l["phase"] == "recording").collect();
    assert_eq!(all.len() - recorded.len(), 2, "two ramp-up intervals of 250 ms");
    assert_eq!(recorded.len(), r["intervals"].as_array().unwrap().len());
    let ios: u64 = recorded.iter().map(|l| l["ios"].as_u64().unwrap()).sum();
    let total = r["totals"]["ios"].as_u64().unwrap();
    // The lines are the samples the result's intervals are, of the completions recorded
    // (counted by their own time against the window, as the result is) and read, at the end,
    // once the workers have drained: exactly the result's.
    assert_eq!(ios, total, "{ios} in the lines, {total} recorded");
    let intervals = r["intervals"].as_array().unwrap();
    for (k, (l, iv)) in recorded.iter().zip(intervals).enumerate() {
        assert_eq!(l["t_s"], iv["t_s"]);
        // The result trims its last interval to the totals (run/tally.rs); the line is what
        // was seen then.
        if k + 1 < intervals.len() {
            assert_eq!(
                (&l["iops"], &l["mbps"]),
                (&iv["iops"], &iv["mbps"]),
                "the same sample as the result's interval"
            );
        }
        let n = l["ios"].as_f64().unwrap();
        assert!((num(l, "iops") - n / num(l, "duration_s")).abs() < 1e-6 * n.max(1.0));
    }
    // stdout: the lines and nothing else.
    let out = ok(&[
        "run",
        "--target",
        "null",
        "--ramp",
        "0s",
        "--time",
        "1s",
        "--interval",
        "250ms",
        "--live-json",
        "-",
        "--no-history",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(text.lines().all(|l| serde_json::from_str::<Value>(l).is_ok()), "{text}");
}

/// The live page's DOM after Chromium has run its script for `ms` of virtual time.
fn page_dom(url: &str, profile: &Path, ms: u32) -> String {
    let out = chromium(profile, &[&format!("--virtual-time-budget={ms}"), "--dump-dom", url]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The text of the element with id `id`.
fn by_id(dom: &str, id: &str) -> String {
    let at = dom.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("no #{id} in {dom}"));
    let rest = &dom[at..];
    let open = rest.find('>').unwrap() + 1;
    rest[open..open + rest[open..].find('<').unwrap()].to_string()
}

#[test]
fn the_live_page_shows_the_numbers_of_the_json_lines() {
    let dir = scratch("live-page");
    let lines = dir.join("live.jsonl");
    let port = free_port();
    let mut child = spawn_in(
        &dir,
        &[
            "run",
            "--target",
            "null",
            "--ramp",
            "1s",
            // Long enough for two Chromium starts on a loaded machine; stopped below.
            "--time",
            "300s",
            "--interval",
            "500ms",
            "--http",
            &port.to_string(),
            "--live-json",
            lines.to_str().unwrap(),
            "--no-history",
            "-q",
        ],
    );
    let url = format!("http://127.0.0.1:{port}/");
    let profile = scratch("chromium");
    wait_for_workers(&mut child);
    std::thread::sleep(Duration::from_millis(2000));
    let first = page_dom(&url, &profile, 1500);
    std::thread::sleep(Duration::from_millis(2000));
    let second = page_dom(&url, &profile, 1500);
    // Unknown paths and other methods, while it runs.
    assert_eq!(get(&format!("{url}nothing"), &[]).0, 404);
    assert_eq!(get(&format!("{url}metrics"), &[]).0, 404, "--http alone serves no metrics");
    let out = Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", &url])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "405");
    // Ctrl-C: the run stops and keeps what it measured, its lines included.
    // SAFETY: kill with a child's pid and a signal number.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = output_of(child);
    assert!(out.status.code().is_some(), "{}", String::from_utf8_lossy(&out.stderr));
    let all: Vec<Value> =
        std::fs::read_to_string(&lines).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let mut seqs = Vec::new();
    for dom in [&first, &second] {
        let seq: usize = by_id(dom, "seq").parse().unwrap();
        assert!(seq >= 1, "the page had seen no interval: {dom}");
        // The page shows the seq-th line's figures, as the lines file has them.
        let line = &all[seq - 1];
        let iops: f64 = by_id(dom, "iops").replace(',', "").parse().unwrap();
        assert_eq!(iops, num(line, "iops").round(), "interval {seq}");
        assert_eq!(by_id(dom, "mbps").replace(',', ""), format!("{:.1}", num(line, "mbps")));
        assert_eq!(by_id(dom, "workload"), line["workload"].as_str().unwrap());
        seqs.push(seq);
    }
    assert!(seqs[1] > seqs[0], "the page moved on: intervals {seqs:?}");
    assert!(first.contains("<polyline"), "the charts are drawn");
    // Axes: from zero, over the test's seconds, the ramp-up's intervals shaded.
    let chart = &second[second.find("id=\"chart-iops\"").unwrap()..];
    let chart = &chart[..chart.find("</svg>").unwrap()];
    assert!(chart.contains("<rect class=\"ramp\""), "the ramp-up is marked: {chart}");
    assert!(chart.contains(">0</text>"), "the value axis starts at zero: {chart}");
    assert!(chart.contains("0.0 s</text>") && chart.matches(" s</text>").count() == 3, "a time axis: {chart}");
}

#[test]
fn live_flags_refuse_bad_input_in_one_line() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let at = format!("127.0.0.1:{port}");
    for (args, says) in [
        (vec!["--metrics", "nine"], "--metrics nine: not a port or ADDR:PORT"),
        (vec!["--http", "127.0.0.1:99999"], "--http 127.0.0.1:99999: not a port"),
        (vec!["--metrics", &at], "cannot listen there"),
        (vec!["--linger", "2s"], "--linger keeps --metrics or --http serving"),
        (vec!["--live-json", "/nonexistent/dir/x"], "--live-json /nonexistent/dir/x: cannot write it"),
    ] {
        let mut a = vec!["run", "--target", "null", "--time", "1s", "--no-history"];
        a.extend(args);
        let out = iogauge(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{a:?}: {err}");
        assert!(err.contains(says), "{a:?}: {err}");
        assert!(out.stdout.is_empty(), "{a:?}: nothing measured, nothing printed");
    }
}

/// A file-system study is watched as any other: its lines say the test (IOzone's name), the
/// thread count and the point, and follow the schema.
#[test]
fn a_file_system_study_has_live_lines_too() {
    let dir = scratch("live-fs");
    let files = scratch("live-fs-files");
    let job = dir.join("fs.toml");
    std::fs::write(
        &job,
        format!(
            "[test]\ninterval = \"20ms\"\n[fs]\ndir = \"{}\"\nthreads = [1]\nsize = \"512M\"\nrecord = \"4K\"\ntests = [\"write\", \"read\"]\n",
            files.display()
        ),
    )
    .unwrap();
    let lines = dir.join("live.jsonl");
    let json = dir.join("s.json");
    let (lines_arg, json_arg) = (lines.to_str().unwrap(), json.to_str().unwrap());
    ok_in(&dir, &["study", job.to_str().unwrap(), "--live-json", lines_arg, "--json", json_arg, "--no-history", "-q"]);
    validate_lines(&lines).unwrap();
    let all: Vec<Value> =
        std::fs::read_to_string(&lines).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(!all.is_empty(), "512 MiB in 4 KiB records take more than 20 ms");
    for l in &all {
        let label = l["study"]["label"].as_str().unwrap();
        assert!(label.starts_with("threads=1 "), "{label}");
        assert!(["write", "read"].contains(&l["workload"].as_str().unwrap()), "{l}");
        assert_eq!(l["study"]["points"], 2);
    }
    // The lines are the monitor's samples, as a run's: each test's add up to its result.
    let doc = read_json(&json);
    for p in doc["points"].as_array().unwrap() {
        let test = p["params"]["test"].as_str().unwrap();
        let lines: u64 = all.iter().filter(|l| l["workload"] == test).map(|l| l["ios"].as_u64().unwrap()).sum();
        assert_eq!(lines, p["runs"][0]["results"][0]["totals"]["ios"].as_u64().unwrap(), "{test}");
    }
}

/// Series are bounded by the job: 64 workers x 8 targets give a series per worker and per
/// target and direction, never one per worker x target.
#[test]
fn sixty_four_workers_on_eight_targets_make_a_bounded_series_count() {
    let dir = scratch("live-64x8");
    let port = free_port();
    let mut args = vec!["run", "--workers", "64", "--qd", "2", "--spec", "oltp-8k", "--ramp", "0s", "--time", "1s"];
    for _ in 0..8 {
        args.extend(["--target", "null"]);
    }
    let (p, json) = (port.to_string(), dir.join("r.json"));
    args.extend(["--metrics", &p, "--linger", "3s", "--no-history", "-q", "--json", json.to_str().unwrap()]);
    let child = spawn_in(&dir, &args);
    let url = format!("http://127.0.0.1:{port}/metrics");
    let t0 = Instant::now();
    let body = loop {
        let (_, body) = get(&url, &[]);
        if body.contains("iogauge_state{state=\"ended\"} 1") {
            break body;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "the run did not end");
        std::thread::sleep(Duration::from_millis(200));
    };
    let out = output_of(child);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let series: Vec<&str> = body.lines().filter(|l| !l.starts_with('#')).collect();
    let family = |name: &str| series.iter().filter(|l| l.starts_with(&format!("{name}{{"))).count();
    // A series per worker that recorded an I/O (on 2 CPUs, 64 workers do not all get one in).
    let doc = read_json(&json);
    let workers = doc["results"][0]["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 64);
    let counted = workers.iter().filter(|w| w["ios"].as_u64().unwrap() > 0).count();
    assert_eq!(family("iogauge_worker_ios_total"), counted);
    // Eight targets named alike ("null") on one manager are one series per direction.
    assert!(family("iogauge_target_ios_total") <= 8 * 2, "{}", family("iogauge_target_ios_total"));
    assert!(series.iter().all(|l| !(l.contains("worker=") && l.contains("target="))));
    assert!(series.len() < 300, "{} series", series.len());
}

/// Clients that connect and never finish a request, or ask and never read, hold only their own
/// connections: the run ends on time with its result, and a scraper still gets answers.
#[test]
fn hostile_clients_delay_neither_the_run_nor_other_scrapes() {
    use std::io::Write;
    let dir = scratch("live-hostile");
    let port = free_port();
    let json = dir.join("r.json");
    let args = ["run", "--target", "null", "--ramp", "0s", "--time", "8s", "--metrics", &port.to_string()];
    let child = spawn_in(
        &dir,
        &[&args[..], &["--linger", "1s", "--json", json.to_str().unwrap(), "--no-history", "-q"]].concat(),
    );
    let t0 = Instant::now();
    let addr = format!("127.0.0.1:{port}");
    let connect = || loop {
        if let Ok(s) = std::net::TcpStream::connect(&addr) {
            break s;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "never listened");
        std::thread::sleep(Duration::from_millis(20));
    };
    // 40 that send half a request head, and 10 that ask for /metrics without ever reading.
    let mut held = Vec::new();
    for _ in 0..40 {
        let mut s = connect();
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n").unwrap();
        held.push(s);
    }
    for _ in 0..10 {
        let mut s = connect();
        for _ in 0..100 {
            if s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").is_err() {
                break;
            }
        }
        held.push(s);
    }
    // Past the 5 s a head may take, a scrape is answered again (the run lasts 8 s).
    let answered = loop {
        let (code, body) = get(&format!("http://{addr}/metrics"), &[]);
        if code == 200 {
            break body;
        }
        assert!(t0.elapsed() < Duration::from_secs(9), "no answer while hostile clients held connections");
        std::thread::sleep(Duration::from_millis(250));
    };
    assert!(answered.contains("iogauge_ios_total"));
    let out = output_of(child);
    let took = t0.elapsed().as_secs_f64();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    drop(held);
    let doc = read_json(&json);
    let recorded = num(&doc["results"][0], "duration_s");
    assert!((recorded - 8.0).abs() < 0.1, "recorded {recorded} s of 8");
    // 8 s of run, 1 s of linger, and start-up: the hostile clients added nothing.
    assert!(took < 8.0 + 1.0 + 3.0, "took {took} s");
}

/// 32 clients that keep their connections alive, asking every 100 ms (and coming back when
/// closed), used to hold every place the server has: a scraper's connection was closed unread
/// (issue 46). A new connection now closes the oldest: each of 8 scrapes is answered, at once.
#[test]
fn keep_alive_clients_cannot_keep_a_scraper_out() {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = scratch("live-keepalive");
    let port = free_port();
    let args = ["run", "--target", "null", "--ramp", "0s", "--time", "8s", "--metrics", &port.to_string()];
    let child = spawn_in(&dir, &[&args[..], &["--no-history", "-q"]].concat());
    let addr = format!("127.0.0.1:{port}");
    let t0 = Instant::now();
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(t0.elapsed() < Duration::from_secs(10), "never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..32)
        .map(|_| {
            let (stop, addr) = (std::sync::Arc::clone(&stop), addr.clone());
            std::thread::spawn(move || {
                let mut asked = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    let Ok(mut s) = std::net::TcpStream::connect(&addr) else { break };
                    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                    let mut buf = [0u8; 4096];
                    while !stop.load(Ordering::Relaxed) {
                        // HEAD: the answer is its head alone, read whole in one go or two.
                        if s.write_all(b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n").is_err() {
                            break;
                        }
                        let mut got = Vec::new();
                        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                            match s.read(&mut buf) {
                                Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
                                _ => break,
                            }
                        }
                        if !got.starts_with(b"HTTP/1.1 200") {
                            break;
                        }
                        asked += 1;
                        std::thread::sleep(Duration::from_millis(100));
                    }
                }
                asked
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1000));
    for i in 0..8 {
        let t = Instant::now();
        let (code, body) = get(&format!("http://{addr}/metrics"), &[]);
        assert_eq!(code, 200, "scrape {i} not answered beside 32 keep-alive clients");
        assert!(body.contains("iogauge_ios_total"));
        // A loaded machine's scheduling, not a wait for a place: under the 5 s a head may take.
        assert!(t.elapsed() < Duration::from_secs(2), "scrape {i} took {:?}", t.elapsed());
        std::thread::sleep(Duration::from_millis(200));
    }
    stop.store(true, Ordering::Relaxed);
    let asked: u32 = clients.into_iter().map(|c| c.join().unwrap()).sum();
    assert!(asked > 32, "the keep-alive clients were answered too ({asked} answers)");
    assert!(output_of(child).status.success());
}

/// The live line fits the terminal (issue 48: 142-175 characters in a study, wrapped debris
/// under 100 columns): on a terminal of 60 columns (a pty from script(1)), every redraw of a
/// study's line is at most 59 columns, never wrapped.
#[test]
fn the_live_line_fits_the_terminal() {
    let dir = scratch("live-width");
    std::fs::write(
        dir.join("s.toml"),
        "[test]\nramp = \"0s\"\ntime = \"2s\"\nrun = [\"random-read-4k\"]\n[[worker]]\ntargets = [\"null\"]\n\
         [study]\noutstanding = [1, 2]\n",
    )
    .unwrap();
    let bin = bin();
    let cmd = format!("stty cols 60; '{bin}' study s.toml --no-history");
    let out = Command::new("script").args(["-qec", &cmd, "/dev/null"]).current_dir(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    // Each redraw: carriage return, erase the line, the line; the table after the last clear
    // runs on over lines of its own (the pty ends them with CR LF).
    let lines: Vec<&str> = text.split("\r\x1b[K").skip(1).filter(|l| !l.is_empty() && !l.contains('\n')).collect();
    assert!(lines.len() >= 2, "the live line was drawn: {text:?}");
    for l in &lines {
        assert!(l.chars().count() <= 59, "{} columns: {l}", l.chars().count());
    }
    assert!(lines.iter().any(|l| l.contains("random-read-4k")), "{lines:?}");
}
