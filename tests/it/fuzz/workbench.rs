//! Hostile requests to the workbench: the JSON bodies of the calls that read what the page
//! sends (a job to check, a job file or spec file to read, specifications to write, a built-in
//! study to set up), mutated from real ones, posted to a real `iogauge ui`. Each is answered
//! with its JSON or an error of one line (400, 404), never a failure of the server, which
//! answers on after them. (Calls that start runs or inspect targets are left out: they act.)

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};

use super::{JsonEdit, apply, apply_json, cases, edit_with, json_edit};

/// A workbench of this test's, ended when dropped.
pub(crate) struct Workbench {
    child: Child,
    address: String,
    token: String,
    _listed: crate::common::DisksHeld,
}

impl Workbench {
    pub(crate) fn start() -> Workbench {
        let listed = crate::common::hold_disks(crate::common::Disks::Listed);
        let dir = crate::common::scratch("fuzz-workbench");
        let db = dir.join("history.sqlite");
        let mut child =
            crate::common::command_in(&dir, &["ui", "--listen", "127.0.0.1:0", "--db", db.to_str().unwrap()])
                .stdin(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
        // Its messages read to the end, as a terminal would: a pipe closed on it would end it.
        let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        std::io::BufRead::read_line(&mut err, &mut line).unwrap();
        std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
        let url = line.trim().strip_prefix("iogauge: workbench at http://").unwrap_or_else(|| panic!("{line}"));
        let (address, token) = url.split_once("/?token=").unwrap();
        Workbench { child, address: address.into(), token: token.into(), _listed: listed }
    }

    /// POSTs `body` to `path`: the status and the answer.
    pub(crate) fn post(&self, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
        self.call("POST", path, body)
    }

    /// GETs `path`: the status and the answer.
    pub(crate) fn get(&self, path: &str) -> (u16, Vec<u8>) {
        self.call("GET", path, b"")
    }

    fn call(&self, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
        let mut s = TcpStream::connect(&self.address).unwrap();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            self.address,
            self.token,
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(body).unwrap();
        let mut answer = Vec::new();
        s.read_to_end(&mut answer).unwrap();
        let text = String::from_utf8_lossy(&answer);
        let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("{text}"));
        let at = answer.windows(4).position(|w| w == b"\r\n\r\n").map_or(answer.len(), |i| i + 4);
        (status, answer[at..].to_vec())
    }
}

impl Drop for Workbench {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A call and the body a page sends it.
fn samples() -> Vec<(&'static str, Value)> {
    let example =
        |name: &str| std::fs::read_to_string(format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let toml = example("oltp-two-workers.toml");
    let job = serde_json::to_value(iogauge::job::parse(&toml, "oltp-two-workers.toml").unwrap()).unwrap();
    let icf = String::from_utf8(super::fixture("iometer-1.1.icf")).unwrap();
    let fio = String::from_utf8(super::fixture("fio-two-groups.fio")).unwrap();
    let specs = iogauge::spec::builtin();
    vec![
        ("/api/job", json!({ "job": job })),
        ("/api/job/read", json!({ "name": "oltp-two-workers.toml", "text": toml })),
        ("/api/job/read", json!({ "name": "t.icf", "text": icf })),
        ("/api/job/read", json!({ "name": "two.fio", "text": fio })),
        ("/api/specs/read", json!({ "name": "s.toml", "text": iogauge::job::specs_toml(&specs).unwrap() })),
        ("/api/specs/file", json!({ "specs": specs })),
        ("/api/studies/seed001-stroke", json!({ "targets": ["null"] })),
        ("/api/studies/baseline", json!({ "targets": ["null", "null"], "total": 1048576 })),
    ]
}

/// What a body is made of: a sample's JSON with edits, or its text edited as bytes.
fn body(sample: &Value, json_edits: &[JsonEdit], text_edits: &[super::Edit]) -> Vec<u8> {
    let bytes = apply_json(&serde_json::to_vec(sample).unwrap(), json_edits);
    match text_edits.is_empty() {
        true => bytes,
        false => apply(String::from_utf8(bytes).unwrap(), text_edits).into_bytes(),
    }
}

const PIECES: &[&str] = &["{", "}", "[", "]", ",", "\"", "0", "-1", "1e999", "\\u001b", "null", "\\"];

/// The answer to a hostile body: its JSON (200), or an error of the request (400) or of what
/// it names (404) in one line.
fn answered(status: u16, answer: &[u8], path: &str) {
    let v: Value = serde_json::from_slice(answer).unwrap_or_else(|e| panic!("{path}: {status} {e}"));
    match status {
        200 => {}
        400 | 404 => {
            let e = v["error"].as_str().unwrap_or_else(|| panic!("{path}: {v}"));
            assert!(!e.trim().is_empty() && !e.contains('\n'), "{path}: {e:?}");
        }
        s => panic!("{path}: status {s}: {v}"),
    }
}

#[test]
fn workbench_request_bodies() {
    let wb = Workbench::start();
    let samples = samples();
    let strategy = (
        0..samples.len(),
        proptest::collection::vec(json_edit(), 0..5),
        proptest::collection::vec(edit_with(PIECES), 0..3),
    );
    let mut runner = TestRunner::new(Config { cases: cases(200), ..Config::default() });
    runner
        .run(&strategy, |(k, json_edits, text_edits)| {
            let (path, sample) = &samples[k];
            let (status, answer) = wb.post(path, &body(sample, &json_edits, &text_edits));
            answered(status, &answer, path);
            Ok(())
        })
        .unwrap();
    // Still answering, as before them.
    let (status, answer) = wb.post("/api/job/read", &serde_json::to_vec(&samples[1].1).unwrap());
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
}
