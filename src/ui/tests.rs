//! The workbench's calls answered without a browser or a server: each route's function given
//! a request as hyper hands it over, on a history of its own; runs are queued as the ranks'
//! are (never started), so what a start hands over is seen and nothing is run.

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::mpsc;
use std::task::{Context, Poll};

use hyper::body::Body;
use serde_json::{Value, json};

use super::api::Api;
use super::routes::ROUTES;
use super::run::{Maker, Queued};
use super::topology::ManagerView;
use crate::document::Document;
use crate::http::{Handler, Reply};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";
const RUN: &str = include_str!("../../tests/fixtures/result-1-null.json");
const ICF: &str = include_str!("../../tests/fixtures/iometer-1.1.icf");

/// A workbench of one manager on a history in a directory of its own, and the queue its runs
/// go into.
struct Bench {
    api: Api,
    queued: mpsc::Receiver<Queued>,
    dir: PathBuf,
}

impl Bench {
    fn new(tag: &str) -> Bench {
        let dir = std::env::temp_dir().join(format!("iogauge-ui-unit-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (queue, queued) = mpsc::channel();
        let maker = Maker::Ranks { queue, stop: |_| {} };
        let here = ManagerView { rank: 0, host: "here".into(), cpus: 2, targets: Vec::new() };
        let api = Api::new(TOKEN.into(), Some(dir.join("history.sqlite")), maker, vec![here], [127, 0, 0, 1].into());
        Bench { api, queued, dir }
    }

    /// The answer to `method path` with `body`: its status, its headers and its body.
    fn ask(&self, method: &str, path: &str, body: Option<Value>) -> (u16, hyper::HeaderMap, Vec<u8>) {
        let req = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("Host", "127.0.0.1:8080")
            .header("Authorization", format!("Bearer {TOKEN}"))
            .body(())
            .unwrap();
        let body = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        let r = self.api.respond(&req.into_parts().0, &body);
        (r.status().as_u16(), r.headers().clone(), bytes(r))
    }

    /// The answer's status and JSON.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let (status, _, b) = self.ask(method, path, body);
        (status, serde_json::from_slice(&b).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&b).into())))
    }

    /// Saves `doc` into the workbench's history: its id.
    fn save(&self, doc: &Document) -> i64 {
        let mut h = crate::history::History::open(&self.dir.join("history.sqlite")).unwrap();
        h.save(None, doc).unwrap()
    }
}

impl Drop for Bench {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A reply's whole body (hyper's `Full`: one frame, ready at once).
fn bytes(r: Reply) -> Vec<u8> {
    let mut body = r.into_body();
    let mut cx = Context::from_waker(std::task::Waker::noop());
    match Pin::new(&mut body).poll_frame(&mut cx) {
        Poll::Ready(Some(Ok(frame))) => frame.into_data().map(|d| d.to_vec()).unwrap_or_default(),
        Poll::Ready(None) => Vec::new(),
        other => panic!("a body not ready at once: {other:?}"),
    }
}

fn run_doc() -> Document {
    Document::parse(RUN.as_bytes(), "result-1-null.json").unwrap()
}

/// A study of two points, outstanding 1 and 4, each the fixture's run.
fn study_doc() -> Document {
    let Document::Run(run) = run_doc() else { unreachable!("a run") };
    let mut study = crate::study::doc::StudyDoc::of_run(&run);
    let mut second = study.points[0].clone();
    study.points[0].params.outstanding = Some(1);
    second.params.outstanding = Some(4);
    second.index = 1;
    study.points.push(second);
    Document::Study(Box::new(study))
}

#[test]
fn the_page_and_a_call_without_the_token_or_to_another_host() {
    let b = Bench::new("page");
    let (status, _, page) = b.ask("GET", "/", None);
    assert_eq!(status, 200);
    assert!(String::from_utf8(page).unwrap().contains("iogauge workbench"));
    let req = hyper::Request::builder().uri("/api/host").header("Host", "127.0.0.1:1").body(()).unwrap();
    assert_eq!(b.api.respond(&req.into_parts().0, b"").status(), 403, "no token");
    let req = hyper::Request::builder()
        .uri(format!("/api/host?token={TOKEN}"))
        .header("Host", "evil.example:8080")
        .body(())
        .unwrap();
    assert_eq!(b.api.respond(&req.into_parts().0, b"").status(), 403, "another site's name");
    let (status, e) = b.call("GET", "/api/nothing", None);
    assert!(status == 404 && e["error"].as_str().unwrap().contains("docs/ui.md"), "{e}");
    assert_eq!(b.call("POST", "/api/host", None).0, 404, "a call by another method");
}

#[test]
fn host_names_every_manager() {
    let b = Bench::new("host");
    let (status, host) = b.call("GET", "/api/host", None);
    assert_eq!(status, 200, "{host}");
    assert_eq!(host["managers"], json!([{ "rank": 0, "host": "here", "cpus": 2 }]));
    assert_eq!(host["version"], env!("CARGO_PKG_VERSION"));
}

/// Test Setup's meanings are short lines: each key's first sentence (the engine's help is
/// four lines of prose), its whole help beside it for those who ask.
#[test]
fn settings_say_each_key_in_one_short_line() {
    let b = Bench::new("settings");
    let (_, keys) = b.call("GET", "/api/settings", None);
    let keys = keys.as_array().unwrap();
    assert_eq!(keys.len(), crate::config::KEYS.len());
    for k in keys {
        let (short, summary) = (k["short"].as_str().unwrap(), k["summary"].as_str().unwrap());
        assert!(summary.starts_with(short.trim_end_matches('…')), "{k}");
        assert!(short.chars().count() <= 101, "{}: {} characters: {short}", k["name"], short.chars().count());
        // One ellipsis where a line is cut, not the doc's own dots before it (log_name's "...…").
        assert!(!short.contains(".…") && !short.contains("……"), "{short}");
    }
    let engine = keys.iter().find(|k| k["name"] == "engine").unwrap();
    assert!(
        engine["short"].as_str().unwrap().ends_with("(one I/O in flight per worker; the result warns)."),
        "{engine}"
    );
    // The whole help is there too, for the hover: long.
    assert!(engine["meaning"].as_str().unwrap().len() > 300, "its help is long: {engine}");
}

#[test]
fn targets_are_the_null_target_and_the_hosts_devices_and_no_other_manager() {
    let b = Bench::new("targets");
    let (status, list) = b.call("GET", "/api/targets", None);
    assert_eq!(status, 200, "{list}");
    assert_eq!(list[0]["path"], "null");
    let (status, e) = b.call("GET", "/api/targets?rank=2", None);
    assert!(status == 400 && e["error"].as_str().unwrap().contains("no manager 2"), "{e}");
    assert_eq!(b.call("GET", "/api/targets?rank=x", None).0, 400);
}

#[test]
fn a_typed_target_is_inspected() {
    let b = Bench::new("inspect");
    let file = b.dir.join("t.tst");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    let (status, t) = b.call("POST", "/api/targets/inspect", Some(json!({ "path": file })));
    assert_eq!(status, 200, "{t}");
    assert_eq!((t["kind"].as_str(), t["size_bytes"].as_u64()), (Some("file"), Some(1 << 20)), "{t}");
    // A file not there yet is said to be made, of no size yet (it showed the default's 1 GiB).
    let (status, t) = b.call("POST", "/api/targets/inspect", Some(json!({ "path": b.dir.join("new.tst") })));
    assert_eq!((status, t["size_bytes"].as_u64()), (200, Some(0)), "{t}");
    assert!(t["model"].as_str().unwrap().starts_with("will be created (file_size"), "{t}");
    assert!(!b.dir.join("new.tst").exists(), "inspecting made nothing");
    let (status, e) = b.call("POST", "/api/targets/inspect", Some(json!({ "where": "x" })));
    assert!(status == 400 && e["error"].as_str().unwrap().contains("path"), "{e}");
}

#[test]
fn specifications_are_listed_written_and_read_back() {
    let b = Bench::new("specs");
    let (_, builtin) = b.call("GET", "/api/specs", None);
    let oltp = builtin.as_array().unwrap().iter().find(|s| s["name"] == "oltp-8k").unwrap().clone();
    let mine = json!({ "name": "mine", "lines": [{ "size": 8192, "share": 100, "read": 67, "random": 100 }] });
    let (status, file) = b.call("POST", "/api/specs/file", Some(json!({ "specs": [oltp, mine] })));
    assert_eq!(status, 200, "{file}");
    let text = file["toml"].as_str().unwrap();
    let (status, back) = b.call("POST", "/api/specs/read", Some(json!({ "name": "s.toml", "text": text })));
    assert_eq!(status, 200, "{back}");
    assert_eq!(back[1]["name"], "mine");
    assert_eq!(back[1]["lines"][0]["read"], 67);
    let bad =
        json!({ "specs": [{ "name": "bad", "lines": [{ "size": 4096, "share": 50, "read": 100, "random": 0 }] }] });
    let (status, e) = b.call("POST", "/api/specs/file", Some(bad));
    assert!(status == 400 && e["error"].as_str().unwrap().contains("bad"), "{e}");
}

#[test]
fn a_seeds_study_is_set_up_on_the_targets_given() {
    let b = Bench::new("studies");
    let (_, all) = b.call("GET", "/api/studies", None);
    assert!(all.as_array().unwrap().iter().any(|s| s["name"] == "seed001-limit"), "{all}");
    let (status, study) = b.call("POST", "/api/studies/seed001-limit", Some(json!({ "targets": ["null"] })));
    assert_eq!(status, 200, "{study}");
    assert_eq!(study["job"]["worker"][0]["targets"], json!(["null"]));
    assert!(study["toml"].as_str().unwrap().contains("[study.limit]"));
    assert_eq!(b.call("POST", "/api/studies/seed999", Some(json!({}))).0, 400);
}

#[test]
fn a_job_built_is_checked_and_shown_as_toml() {
    let b = Bench::new("job");
    let job =
        json!({ "test": { "run": ["oltp-8k"], "time": "1s" }, "worker": [{ "targets": ["null"], "outstanding": 4 }] });
    let (status, built) = b.call("POST", "/api/job", Some(json!({ "job": job })));
    assert_eq!(status, 200, "{built}");
    assert!(built["toml"].as_str().unwrap().contains("outstanding = 4"), "{built}");
    let bad = json!({ "test": { "run": ["no-such-spec"] }, "worker": [{ "targets": ["null"] }] });
    let (status, e) = b.call("POST", "/api/job", Some(json!({ "job": bad })));
    assert!(status == 400 && e["error"].as_str().unwrap().contains("no-such-spec"), "{e}");
}

/// An Iometer configuration saved on Windows names its targets as Windows does: loaded as it
/// is, it is answered with the names that need a Linux path; given one each (`null` too), it
/// is the job (issue 84, the first problem).
#[test]
fn an_icf_from_windows_asks_for_its_targets_linux_paths() {
    let b = Bench::new("icf");
    let (status, e) = b.call("POST", "/api/job/read", Some(json!({ "name": "w.icf", "text": ICF })));
    assert_eq!(status, 400, "{e}");
    assert_eq!(e["unmapped"], json!(["PHYSICALDRIVE:1"]), "{e}");
    assert!(e["error"].as_str().unwrap().contains("PHYSICALDRIVE:1"), "{e}");
    let map = json!({ "PHYSICALDRIVE:1": "null" });
    let (status, read) =
        b.call("POST", "/api/job/read", Some(json!({ "name": "w.icf", "text": ICF, "map_target": map })));
    assert_eq!(status, 200, "{read}");
    let workers = read["job"]["worker"].as_array().unwrap();
    assert!(!workers.is_empty() && workers.iter().all(|w| w["targets"] == json!(["null"])), "{read}");
    // A job file is read as it is.
    let toml = "[test]\nrun = [\"oltp-8k\"]\n[[worker]]\ntargets = [\"null\"]\n";
    let (status, read) = b.call("POST", "/api/job/read", Some(json!({ "name": "j.toml", "text": toml })));
    assert_eq!((status, &read["job"]["worker"][0]["targets"]), (200, &json!(["null"])), "{read}");
}

/// A worker without a target is refused, saying which, and nothing is started: the job
/// file's default, ./iogauge.tst, would have been made in the workbench's directory.
#[test]
fn a_worker_without_a_target_cannot_start() {
    let b = Bench::new("no-target");
    let job =
        "[test]\nrun = [\"oltp-8k\"]\n[[worker]]\nname = \"w1\"\ntargets = [\"null\"]\n[[worker]]\nname = \"w2\"\n";
    let (status, e) = b.call("POST", "/api/runs", Some(json!({ "job": job })));
    assert_eq!(status, 400, "{e}");
    assert!(e["error"].as_str().unwrap().starts_with("worker \"w2\" has no target"), "{e}");
    assert!(b.queued.try_recv().is_err(), "nothing was started");
    assert_eq!(b.call("GET", "/api/runs/current", None).0, 404);
    let unnamed = "[test]\nrun = [\"oltp-8k\"]\n[[worker]]\ntargets = [\"null\"]\n[[worker]]\ntargets = []\n";
    let (_, e) = b.call("POST", "/api/runs", Some(json!({ "job": unnamed })));
    assert!(e["error"].as_str().unwrap().starts_with("worker 2 has no target"), "{e}");
}

/// What is wrong with a job built on the page is said by the page's control for it, not by a
/// line of a TOML text the user never wrote nor by a flag (issue 84: `job:2:6:`,
/// `--allow-write`, `'iogauge specs'`); the command line's messages are unchanged.
#[test]
fn errors_name_the_pages_controls_not_the_command_lines() {
    let b = Bench::new("words");
    let ask =
        |job: Value| b.call("POST", "/api/job", Some(json!({ "job": job }))).1["error"].as_str().unwrap().to_string();
    let e = ask(json!({ "test": { "run": ["oltp-8k"], "time": "abc" }, "worker": [{ "targets": ["null"] }] }));
    assert!(e.starts_with("Test Setup's time: 'abc' is not a duration"), "{e}");
    let e = ask(json!({ "test": { "run": ["oltp-8k"] }, "worker": [
        { "name": "w1", "targets": ["null"] }, { "name": "w2", "targets": ["null"], "spec": "nosuch" }] }));
    assert!(e.starts_with("worker \"w2\"'s Access specification: unknown access specification 'nosuch'"), "{e}");
    assert!(e.contains("the Access Specifications tab lists the built-in ones"), "{e}");
    let e = ask(json!({ "test": { "run": ["oltp-8k"] }, "worker": [{ "targets": ["null"], "outstanding": 0 }] }));
    assert!(e.starts_with("worker \"worker 1\"'s Outstanding I/Os: "), "{e}");
    let spec = json!({ "name": "mine", "lines": [{ "size": 4096, "share": 100, "read": 150, "random": 0 }] });
    let (_, e) = b.call("POST", "/api/specs/file", Some(json!({ "specs": [spec] })));
    assert!(e["error"].as_str().unwrap().starts_with("access specification 'mine' line 1: read = 150 %"), "{e}");
    // A job's text given to Start is the caller's: its lines say where (a script's).
    let text = "[test]\nrun = [\"oltp-8k\"]\ntime = \"x\"\n[[worker]]\ntargets = [\"null\"]\n";
    let (_, e) = b.call("POST", "/api/runs", Some(json!({ "job": text })));
    assert!(e["error"].as_str().unwrap().starts_with("job:3:"), "{e}");
    // The run's own refusal: its cure named by the Safety field, the device by its name.
    let job = "[test]\nrun = [\"oltp-8k\"]\n[[worker]]\ntargets = [\"null\"]\n";
    b.call("POST", "/api/runs", Some(json!({ "job": job })));
    let refusal = "iogauge: refusing to write to /dev/loop3: ext4 signature at offset 0x438 on /dev/loop3; pass \
                   --allow-write /dev/loop3 (or allow_write in the job file) to destroy its data\n";
    let ended = super::Ended { exit_status: 2, history_id: None, message: refusal.into() };
    b.queued.try_recv().expect("queued").take().expect("not stopped").ended(ended);
    let (_, state) = b.call("GET", "/api/runs/current", None);
    let want = "iogauge: refusing to write to /dev/loop3: ext4 signature at offset 0x438 on /dev/loop3; type \
                /dev/loop3 in Test Setup's 'Allow writing to' (Safety), or in the box below, to destroy its data\n";
    assert_eq!(state["messages"], want);
}

/// A value of the wrong type in a job or specifications built on the page is said by the page's
/// control and in its words, not by serde's (`the request's JSON: invalid type: string "abc",
/// expected u32 at line 1 column 80`, `data did not match any variant of untagged enum Steps`).
#[test]
fn a_value_of_the_wrong_type_is_said_by_its_control() {
    let b = Bench::new("types");
    let error = |path: &str, body: Value| b.call("POST", path, Some(body)).1["error"].as_str().unwrap().to_string();
    let line = |k: &str, v: Value| {
        let mut line = json!({ "size": 4096, "share": 100, "read": 100, "random": 100 });
        line[k] = v;
        json!({ "specs": [{ "name": "mine", "lines": [line] }] })
    };
    for (k, v, want) in [
        ("share", json!("abc"), "specification \"mine\"'s line 1 (% of access): 'abc' is not a whole number"),
        ("read", json!(-1), "specification \"mine\"'s line 1 (% read): '-1' is not a whole number"),
        ("delay_ms", json!("x"), "specification \"mine\"'s line 1 (delay ms): 'x' is not a whole number"),
    ] {
        let e = error("/api/specs/file", line(k, v));
        assert!(e.starts_with(want), "{e}");
    }
    let no_size = json!({ "specs": [{ "name": "mine", "lines": [{ "share": 100, "read": 100, "random": 100 }] }] });
    let e = error("/api/specs/file", no_size);
    assert!(e.starts_with("specification \"mine\"'s line 1") && e.contains("size"), "{e}");
    let job = |test: Value| json!({ "job": { "test": test, "worker": [{ "targets": ["null"] }] } });
    let e = error("/api/job", job(json!({ "run": ["oltp-8k"], "seed": "abc" })));
    assert_eq!(e, "Test Setup's seed: 'abc' is not a whole number");
    let unnamed = json!({ "name": " ", "lines": [{ "size": 4096, "read": 100, "random": 100 }] });
    let e = error("/api/specs/file", json!({ "specs": [unnamed] }));
    assert!(e.contains("without a name"), "{e}");
    let e = error(
        "/api/job",
        json!({ "job": { "test": { "run": ["oltp-8k"] }, "spec": [unnamed], "worker": [{ "targets": ["null"] }] } }),
    );
    assert!(e.contains("without a name"), "{e}");
}

/// A device ticked for a worker and gone since (a loop device detached; here, one that was
/// never there) is refused, naming the worker and the device; nothing is started.
#[test]
fn a_worker_whose_device_is_gone_cannot_start() {
    let b = Bench::new("gone");
    let job = "[test]\nrun = [\"oltp-8k\"]\n[[worker]]\nname = \"w1\"\ntargets = [\"null\", \"/dev/iogauge-gone\"]\n";
    let (status, e) = b.call("POST", "/api/runs", Some(json!({ "job": job })));
    assert_eq!(status, 400, "{e}");
    let e = e["error"].as_str().unwrap();
    assert!(e.starts_with("worker \"w1\"'s target /dev/iogauge-gone is gone from this host: untick it"), "{e}");
    assert!(b.queued.try_recv().is_err(), "nothing was started");
}

/// A run started, watched and stopped before the main thread took it: it ends as stopped,
/// and a second run may start only then.
#[test]
fn a_run_is_started_watched_and_stopped() {
    let b = Bench::new("runs");
    assert_eq!(b.call("GET", "/api/runs/current", None).0, 404);
    let job = "[test]\nrun = [\"oltp-8k\"]\n[[worker]]\ntargets = [\"null\"]\n";
    let (status, started) = b.call("POST", "/api/runs", Some(json!({ "job": job })));
    assert_eq!((status, &started["kind"]), (202, &json!("run")), "{started}");
    let order = b.queued.try_recv().expect("queued").order;
    assert!(order.toml.contains("targets = [\"null\"]"), "{}", order.toml);
    let (status, e) = b.call("POST", "/api/runs", Some(json!({ "job": job })));
    // One at a time, said without the run's number (no history id: it read as one).
    assert_eq!((status, &e["error"]), (409, &json!("a run is going: stop it first, or wait for its end")), "{e}");
    let (_, state) = b.call("GET", "/api/runs/1?after=0", None);
    assert_eq!((&state["state"], &state["id"]), (&json!("running"), &json!(1)), "{state}");
    assert!(state["job"].as_str().unwrap().contains("null"), "{state}");
    assert_eq!(b.call("POST", "/api/runs/1/stop", None).0, 202);
    let (_, state) = b.call("GET", "/api/runs/current", None);
    assert_eq!((&state["state"], &state["exit_status"]), (&json!("ended"), &json!(130)), "{state}");
    assert_eq!(b.call("POST", "/api/runs/1/stop", None).0, 409, "not going");
    assert_eq!(b.call("GET", "/api/runs/2", None).0, 404);
    // A run is 1 or more (0 stood for the current run inside, and answered run 1).
    for id in ["0", "-1", "18446744073709551616", "x"] {
        assert_eq!(b.call("GET", &format!("/api/runs/{id}"), None).0, 400, "run {id}");
        assert_eq!(b.call("POST", &format!("/api/runs/{id}/stop"), None).0, 400, "run {id}");
    }
}

#[test]
fn the_history_lists_its_entries_and_their_documents_and_jobs() {
    let b = Bench::new("history");
    assert_eq!(b.call("GET", "/api/history", None), (200, json!([])));
    assert_eq!(b.call("GET", "/api/history/1", None).0, 400, "nothing saved yet");
    let id = b.save(&run_doc());
    let (_, list) = b.call("GET", "/api/history?limit=5", None);
    assert_eq!(list[0]["id"], id, "{list}");
    let (status, _, doc) = b.ask("GET", &format!("/api/history/{id}"), None);
    let saved = crate::history::History::open(&b.dir.join("history.sqlite")).unwrap().document_bytes(id).unwrap();
    assert_eq!((status, doc), (200, saved));
    let (_, job) = b.call("GET", &format!("/api/history/{id}/job"), None);
    assert!(job["toml"].as_str().unwrap().contains("random-read-4k"), "{job}");
}

/// The Results Display's blocks: a run's workload with its totals, each worker and each
/// target; a study's, one per point, each titled with the value it cycled (issue 84: six
/// identical blocks for outstanding 1 to 32).
#[test]
fn results_are_blocks_each_study_point_titled_by_its_value() {
    let b = Bench::new("result");
    let run = b.save(&run_doc());
    let (_, blocks) = b.call("GET", &format!("/api/history/{run}/result"), None);
    assert_eq!(blocks.as_array().unwrap().len(), 1, "{blocks}");
    assert_eq!((&blocks[0]["title"], &blocks[0]["point"]), (&json!("random-read-4k"), &Value::Null));
    let rows: Vec<(&str, &str)> = blocks[0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["kind"].as_str().unwrap(), r["part"].as_str().unwrap()))
        .collect();
    assert_eq!(rows, [("all", "all"), ("worker", "worker 1"), ("target", "null")]);
    let study = b.save(&study_doc());
    let (_, blocks) = b.call("GET", &format!("/api/history/{study}/result"), None);
    let titles: Vec<&str> = blocks.as_array().unwrap().iter().map(|b| b["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["outstanding=1 · random-read-4k", "outstanding=4 · random-read-4k"]);
    assert_eq!(blocks[1]["point"], "outstanding=4");
}

/// A saved result as each format's file: the JSON as saved, and the CSV and Iometer results
/// file its run's flags would write, each named for the download.
#[test]
fn a_result_is_exported_as_json_csv_and_iometers_results_file() {
    let b = Bench::new("export");
    let doc = run_doc();
    let id = b.save(&doc);
    let Document::Run(run) = &doc else { unreachable!("a run") };
    let saved = crate::history::History::open(&b.dir.join("history.sqlite")).unwrap().document_bytes(id).unwrap();
    use crate::export::Exporter;
    for (format, expected, file) in [
        ("json", saved, format!("iogauge-{id}.json")),
        ("csv", crate::export::csv::Csv.run(run), format!("iogauge-{id}.csv")),
        ("iometer-csv", crate::export::iometer::IometerCsv.run(run), format!("iogauge-{id}-iometer.csv")),
    ] {
        let (status, head, body) = b.ask("GET", &format!("/api/history/{id}/export?format={format}"), None);
        assert_eq!(status, 200, "{format}");
        assert_eq!(body, expected, "{format}");
        let disposition = head["content-disposition"].to_str().unwrap();
        assert_eq!(disposition, format!("attachment; filename=\"{file}\""));
    }
    let (_, _, iometer) = b.ask("GET", &format!("/api/history/{id}/export?format=iometer-csv"), None);
    assert!(String::from_utf8(iometer).unwrap().contains(crate::export::iometer::HEADER));
    let (status, e) = b.call("GET", &format!("/api/history/{id}/export?format=xlsx"), None);
    assert!(status == 400 && e["error"].as_str().unwrap().contains("json, csv or iometer-csv"), "{e}");
}

/// The report a page's run links to has a row per worker and per target (a null worker beside
/// a loop device's dominated its total, with nothing else to see).
#[test]
fn the_report_has_a_row_per_worker_and_per_target() {
    let b = Bench::new("report");
    let id = b.save(&run_doc());
    let (status, _, html) = b.ask("GET", &format!("/api/history/{id}/report"), None);
    let html = String::from_utf8(html).unwrap();
    assert_eq!(status, 200);
    for row in ["<td>random-read-4k: worker 1</td>", "<td>random-read-4k: null</td>"] {
        assert!(html.contains(row), "{row} in the report");
    }
}

#[test]
fn two_runs_are_compared() {
    let b = Bench::new("compare");
    let (x, y) = (b.save(&run_doc()), b.save(&run_doc()));
    let (status, cmp) = b.call("GET", &format!("/api/compare?a={x}&b={y}"), None);
    assert_eq!(status, 200, "{cmp}");
    assert!(cmp["text"].as_str().unwrap().contains("random-read-4k"), "{cmp}");
    assert_eq!(b.call("GET", &format!("/api/compare?a={x}"), None).0, 400);
}

/// A run beside a study of the same specification is compared point by point (issue 84: it
/// was refused, "no workload in common"), as `iogauge compare` compares them.
#[test]
fn a_run_is_compared_with_each_point_of_a_study_of_its_specification() {
    let b = Bench::new("compare-study");
    let (run, study) = (b.save(&run_doc()), b.save(&study_doc()));
    let (status, cmp) = b.call("GET", &format!("/api/compare?a={run}&b={study}"), None);
    assert_eq!(status, 200, "{cmp}");
    let text = cmp["text"].as_str().unwrap();
    for row in ["random-read-4k ~ outstanding=1 random-read-4k", "random-read-4k ~ outstanding=4 random-read-4k"] {
        assert!(text.contains(row), "{row} in {text}");
    }
}

/// docs/ui.md's table of calls is the routes': every call the workbench answers is there,
/// and it lists no other.
#[test]
fn the_docs_list_every_route_and_no_other() {
    let docs = include_str!("../../docs/ui.md");
    let api = &docs[docs.find("## The API").expect("docs/ui.md has its API section")..];
    let listed: std::collections::BTreeSet<&str> = api
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`').map(|(call, _)| call))
        .collect();
    let routes: std::collections::BTreeSet<String> =
        ROUTES.iter().map(|r| format!("{} {}", r.method, r.path)).collect();
    let routes: std::collections::BTreeSet<&str> = routes.iter().map(String::as_str).collect();
    assert_eq!(listed, routes, "docs/ui.md's table against the routes");
}

/// No function of the workbench is over 60 lines, in its Rust or its page's script.
#[test]
fn no_function_of_the_workbench_is_over_60_lines() {
    let files = [
        ("api.rs", include_str!("api.rs")),
        ("mod.rs", include_str!("mod.rs")),
        ("results.rs", include_str!("results.rs")),
        ("routes.rs", include_str!("routes.rs")),
        ("run.rs", include_str!("run.rs")),
        ("tests.rs", include_str!("tests.rs")),
        ("topology.rs", include_str!("topology.rs")),
        ("words.rs", include_str!("words.rs")),
        ("page.html", include_str!("page.html")),
    ];
    for (name, text) in files {
        for (line, len) in functions(text) {
            assert!(len <= 60, "src/ui/{name}:{line}: a function of {len} lines");
        }
    }
}

/// Each function's first line and its length in lines: from the line that opens one (`fn`, a
/// script's `function`, or a handler's `=> {`) to the line that closes it at its indentation.
/// A declaration without a body (`;`) or a function on one line is none or one line.
fn functions(text: &str) -> Vec<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let prefixes = ["pub(super) ", "pub(crate) ", "pub ", "const ", "async ", "unsafe "];
    let opens = |l: &str| {
        let t = prefixes.iter().fold(l.trim_start(), |t, p| t.strip_prefix(p).unwrap_or(t));
        t.starts_with("fn ") || t.starts_with("function ") || l.trim_end().ends_with("=> {")
    };
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate().filter(|(_, l)| opens(l)) {
        let indent = l.len() - l.trim_start().len();
        let ends = |e: &&str| e.trim_end().ends_with('{') || e.trim_end().ends_with(';') || e.trim_end().ends_with('}');
        let Some(head) = lines[i..].iter().position(ends) else { continue };
        if !lines[i + head].trim_end().ends_with('{') {
            continue;
        }
        let body = &lines[i + head + 1..];
        let close =
            body.iter().position(|e| e.len() - e.trim_start().len() == indent && e.trim_start().starts_with('}'));
        out.push((i + 1, close.map_or(lines.len() - i, |c| head + c + 2)));
    }
    out
}

#[test]
fn a_functions_length_is_counted_from_its_opening_line_to_its_closing_brace() {
    let text = "fn a() {\n    x();\n}\n\nfunction b(y) {\n  if (y) {\n  }\n}\nfn c(\n    d: u8,\n) -> u8 {\n    d\n}\n\
                fn what(&self) -> u8;\n$(\"x\").onclick = async () => {\n  go();\n};\n";
    assert_eq!(functions(text), [(1, 3), (5, 4), (9, 5), (15, 3)]);
}

/// The worker panel's form is the `[[worker]]` keys' own: every key, each with how the form
/// takes it, so a key declared in src/config/worker.rs reaches the page with nothing else.
#[test]
fn the_worker_form_offers_every_worker_key() {
    let b = Bench::new("worker-keys");
    let (status, keys) = b.call("GET", "/api/worker-keys", None);
    assert_eq!(status, 200, "{keys}");
    let names: Vec<&str> = keys.as_array().unwrap().iter().map(|k| k["name"].as_str().unwrap()).collect();
    let declared: Vec<&str> = crate::config::WORKER_KEYS.iter().map(|k| k.name).collect();
    assert_eq!(names, declared);
    let form = |name: &str| keys.as_array().unwrap().iter().find(|k| k["name"] == name).unwrap()["form"].clone();
    assert_eq!((form("cpus"), form("stroke"), form("targets")), (json!("list"), json!("value"), json!("list")));
}
