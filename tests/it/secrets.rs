//! A password given in a target's URL (iSCSI CHAP, against a real tgtd asking for it) logs in
//! by every path a URL enters iogauge by, and appears nowhere iogauge writes: not on stdout or
//! stderr, in no file (results, the distilled job and its JSON, the history database itself,
//! verify maps, live lines), in no file's name. The password holds a string found nowhere else,
//! looked for as bytes (a URL encoded in a file's name keeps it too). The workbench's paths are
//! in ui.rs (`a_typed_targets_password_logs_in_and_is_answered_nowhere`).

use crate::common;
use crate::iscsi::{Tgtd, served};

use std::path::Path;
use std::process::Output;

use common::{LoopDev, command_in, num, scratch};

/// A password of its own for this test process: `Pw/CORE-x`, where CORE (letters and digits,
/// kept as they are by any encoding) is what must appear nowhere. The '/' is left unencoded in
/// the URLs, as users write it.
pub(crate) fn password() -> (String, String) {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    let core = format!("q{:x}z{nanos:x}k", std::process::id());
    (format!("Pw/{core}-x"), core)
}

/// Every file under `dir`.
pub(crate) fn walk(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .flat_map(|e| match e.file_type().unwrap().is_dir() {
            true => walk(&e.path()),
            false => vec![e.path().display().to_string()],
        })
        .collect()
}

/// Every file under `dir` whose name or bytes hold `core`.
pub(crate) fn files_holding(dir: &Path, core: &str) -> Vec<String> {
    let holds = |p: &String| {
        p.contains(core) || std::fs::read(p).is_ok_and(|b| b.windows(core.len()).any(|w| w == core.as_bytes()))
    };
    walk(dir).into_iter().filter(holds).collect()
}

/// The commands of one test, run in `out` with the history and verify maps in `out/data`,
/// everything they said kept.
struct Commands<'a> {
    out: &'a Path,
    said: String,
}

impl Commands<'_> {
    /// Runs iogauge with `args`; asserts it succeeded.
    fn ok(&mut self, args: &[&str]) -> Output {
        let out = command_in(self.out, args).env("XDG_DATA_HOME", self.out.join("data")).output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "iogauge {args:?}: {stderr}");
        self.said += &format!("{stdout}{stderr}");
        out
    }
}

#[test]
fn a_chap_password_logs_in_by_every_path_and_appears_nowhere() {
    let dev = LoopDev::new(16 << 20);
    let target = Tgtd::start();
    target.lun(1, &dev.dev, true);
    let (password, core) = password();
    target.chap("alice", &password);
    let url = target.url(1).replace("iscsi://", &format!("iscsi://alice%{password}@"));
    let shown = target.url(1).replace("iscsi://", "iscsi://alice@");
    // What the test writes (job files and a trace naming the URL) apart from what iogauge does.
    let (inputs, out) = (scratch("secrets-in"), scratch("secrets-out"));
    let mut c = Commands { out: &out, said: String::new() };
    let input = |name: &str, text: String| {
        std::fs::write(inputs.join(name), text).unwrap();
        inputs.join(name).display().to_string()
    };
    let before = served(dev.name());
    // The command line: a verified run with every output, then its verify.
    c.ok(&[
        "run",
        "--target",
        &url,
        "--allow-write",
        &url,
        "--rw",
        "randrw",
        "--ios",
        "400",
        "--verify",
        "--json",
        "r.json",
        "--csv",
        "r.csv",
        "--live-json",
        "live.jsonl",
    ]);
    let after = served(dev.name());
    // Logged in: the LUN's device served every I/O (the reads of the write check before
    // them too, and of none but this run).
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("r.json")).unwrap()).unwrap();
    let t = &doc["results"][0]["totals"];
    let commands = (after[0] - before[0]) + (after[2] - before[2]);
    assert!(num(t, "ios") == 400.0 && commands >= 400, "{commands} SCSI commands served for {t}");
    assert_eq!(doc["target_info"][0]["path"], shown.as_str());
    c.ok(&["verify", "--target", &url, "--json"]);
    // The verify map, named after the target and holding its name (a later write drops it).
    assert!(walk(&out).iter().any(|f| f.ends_with(".map")), "no verify map in {:?}", walk(&out));
    let listed = files_holding(&out, &core);
    assert!(listed.is_empty(), "the password is in {listed:?}");
    // A replay, a distilled trace checked on the LUN, a built-in study.
    let mut trace = String::from("fio version 3 iolog\n0 f add\n0 f open\n");
    for i in 0..200u64 {
        trace += &format!("{} f read {} 4096\n", i * 500, (i * 7919 % 2000) * 4096);
    }
    let trace = input("t.iolog", trace);
    c.ok(&["replay", &trace, "--target", &url, "--json", "replay.json"]);
    c.ok(&["distil", &trace, "--check", &url, "-o", "distilled.toml", "--json"]);
    c.ok(&["study", "baseline", "--target", &url, "--allow-write", &url, "--ios", "100", "--json", "baseline.json"]);
    // A job file and a fio job file naming it, run and converted.
    let toml = input(
        "job.toml",
        format!(
            "[test]\nios = 200\nallow_write = [\"{url}\"]\nrun = [\"random-read-4k\"]\n\
             [[worker]]\noutstanding = 4\ntargets = [\"{url}\"]\n"
        ),
    );
    c.ok(&["run", &toml, "--json", "job.json"]);
    c.ok(&["convert", &toml]);
    // fio's libiscsi engine names the LUN in filename=, its colons escaped.
    let fio = input(
        "job.fio",
        format!("[j]\nioengine=libiscsi\nfilename={}\nrw=randread\nbs=4k\nnumber_ios=100\n", url.replace(':', "\\:")),
    );
    c.ok(&["run", &fio, "--json", "fio.json"]);
    c.ok(&["convert", &fio]);
    // A study of a job file logs in at every point with the password its URL gave once.
    let study = input(
        "study.toml",
        format!(
            "[test]\nios = 100\nrun = [\"random-read-4k\"]\n[[worker]]\ntargets = [\"{url}\"]\n[study]\noutstanding = [1, 2]\n"
        ),
    );
    c.ok(&["study", &study, "--json", "study.json"]);
    // What the history shows of them.
    c.ok(&["history"]);
    let listed = files_holding(&out, &core);
    assert!(c.said.contains(&shown), "{}", c.said);
    assert!(!c.said.contains(&core), "the password is in what iogauge said: {}", c.said);
    assert!(listed.is_empty(), "the password is in {listed:?}");
    // The distilled job names the target, and how to give it the password it does not hold.
    let job = std::fs::read_to_string(out.join("distilled.toml")).unwrap();
    assert!(job.contains(&shown) && job.contains("LIBISCSI_CHAP_PASSWORD"), "{job}");
    // Where it was looked for.
    let files = walk(&out);
    for f in ["history.sqlite", "distilled.toml", "live.jsonl", "r.csv", "baseline.json", "study.json"] {
        assert!(files.iter().any(|p| p.ends_with(f)), "no {f} among {files:?}");
    }
}
