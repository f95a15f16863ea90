//! fio's job files: fio and iogauge run the same file on the same loop device, and run the
//! same mix: as many workers as fio has jobs, each with fio's outstanding I/Os (fio's own
//! reading of `iodepth`, from its JSON's "job options"), read share and transfer sizes. The
//! files are ours, modelled on fio's examples/ (fio-rand-read, fio-seq-write, fio-rand-RW,
//! aio-read, ssd-test) and on the options of its HOWTO. Jobs that mix transfer sizes say
//! `norandommap`: fio's random map (each block once per pass) cuts an I/O short where the
//! blocks after its offset were done already, which changes fio's sizes; iogauge's map keeps
//! the sizes asked (said when it imports such a job).

use crate::common;

use std::path::Path;
use std::process::Command;

use common::*;
use serde_json::Value;

/// Runs fio on `job` with DEV in its environment; its JSON output.
fn fio(dir: &Path, job: &Path, dev: &str) -> Value {
    let out = Command::new("fio")
        .args(["--output-format=json"])
        .arg(job)
        .current_dir(dir)
        .env("DEV", dev)
        .output()
        .expect("fio is installed (scripts/test installs it)");
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    // fio may print notes before its JSON.
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap()
}

fn ours(dir: &Path, job: &Path, dev: &str) -> Value {
    let mut c = command_in(dir, &["run", job.to_str().unwrap(), "--allow-write", dev, "--json", "-", "--no-history"]);
    let out = c.env("DEV", dev).output().unwrap();
    assert!(out.status.success(), "iogauge: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// (read share, mean read size, mean write size) of a fio job or an iogauge worker.
fn mix(ios: (f64, f64), bytes: (f64, f64)) -> (f64, f64, f64) {
    let per = |b: f64, n: f64| if n > 0.0 { b / n } else { 0.0 };
    (ios.0 / (ios.0 + ios.1), per(bytes.0, ios.0), per(bytes.1, ios.1))
}

/// Half the range of the transfer sizes `spec` (a workload of iogauge's result) gives reads or
/// writes: a bound on the standard deviation of one I/O's size.
fn size_spread(spec: &Value, reads: bool) -> f64 {
    let sizes: Vec<f64> = spec["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| if reads { l["read"].as_u64() > Some(0) } else { l["read"].as_u64() < Some(100) })
        .map(|l| num(l, "size"))
        .collect();
    let (lo, hi) = sizes.iter().fold((f64::MAX, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
    if sizes.is_empty() { 0.0 } else { (hi - lo) / 2.0 }
}

/// How far two independent means of `n1` and `n2` draws of standard deviation at most `sd` may
/// differ by chance (the draws number thousands: their difference is normal).
fn chance(sd: f64, n1: f64, n2: f64) -> f64 {
    if n1 == 0.0 || n2 == 0.0 { 0.0 } else { ONE_IN_A_MILLION_SD * sd * (1.0 / n1 + 1.0 / n2).sqrt() }
}

const CASES: [(&str, &str); 8] = [
    (
        "rand-read",
        "; as examples/fio-rand-read.fio\n[global]\nname=fio-rand-read\nfilename=${DEV}\nrw=randread\nbs=4K\ndirect=1\n\
         numjobs=1\ntime_based\nruntime=300ms\n\n[file1]\nsize=32m\nioengine=libaio\niodepth=16\n",
    ),
    (
        "seq-write",
        "[global]\nname=fio-seq-write\nfilename=${DEV}\nrw=write\nbs=256K\ndirect=1\nnumjobs=1\ntime_based\nruntime=300ms\n\n\
         [file1]\nsize=32m\nioengine=libaio\niodepth=16\n",
    ),
    (
        "rand-rw",
        "[global]\nname=fio-rand-RW\nfilename=${DEV}\nrw=randrw\nrwmixread=60\nrwmixwrite=40\nbs=4K\ndirect=1\n\
         numjobs=2\ntime_based\nruntime=300ms\n[file1]\nsize=32m\nioengine=libaio\niodepth=16\n",
    ),
    (
        "depths",
        "; as examples/aio-read.fio: one job per depth\n[global]\nioengine=libaio\nbuffered=0\nrw=randread\nbs=128k\n\
         size=32m\nfilename=${DEV}\ntime_based\nruntime=300ms\n[file1]\niodepth=4\n[file2]\niodepth=32\n[file3]\n\
         iodepth=8\n[file4]\niodepth=16\n",
    ),
    (
        "phases",
        "# as examples/ssd-test.fio: one phase after another\n[global]\nbs=4k\nioengine=io_uring\niodepth=4\nsize=32m\n\
         direct=1\nruntime=300ms\ntime_based\nfilename=${DEV}\n\n[seq-read]\nrw=read\nstonewall\n[rand-read]\n\
         rw=randread\nstonewall\n[seq-write]\nrw=write\nstonewall\n[rand-write]\nrw=randwrite\nstonewall\n",
    ),
    (
        "bssplit",
        "[global]\nfilename=${DEV}\ndirect=1\nioengine=libaio\ntime_based\nruntime=300ms\nsize=32m\n[mixed]\nrw=randrw\n\
         rwmixread=70\nbssplit=4k/60:64k/40\niodepth=8\nnorandommap\n",
    ),
    (
        "read-write-sizes",
        "[global]\nfilename=${DEV}\ndirect=1\nioengine=io_uring\ntime_based\nruntime=300ms\nsize=32m\n[rw]\nrw=randrw\n\
         bs=4k,64k\niodepth=8 ; reads of 4 KiB, writes of 64 KiB\nnorandommap\n",
    ),
    (
        "sync-engine",
        "[global]\nfilename=${DEV}\ndirect=1\ntime_based\nruntime=300ms\nsize=32m\n[sync]\nioengine=psync\nrw=randread\n\
         bs=8k\niodepth=8\n",
    ),
];

#[test]
fn fio_and_iogauge_run_the_same_mix() {
    let lo = LoopDev::new(64 << 20);
    let dir = scratch("fio-jobs");
    for (name, text) in CASES {
        let job = dir.join(format!("{name}.fio"));
        std::fs::write(&job, text).unwrap();
        let theirs = fio(&dir, &job, &lo.dev);
        let doc = ours(&dir, &job, &lo.dev);
        let jobs = theirs["jobs"].as_array().unwrap();
        // fio's stonewall groups are iogauge's workloads, one after another.
        let workers: Vec<&Value> =
            doc["results"].as_array().unwrap().iter().flat_map(|r| r["workers"].as_array().unwrap()).collect();
        assert_eq!(workers.len(), jobs.len(), "{name}: a worker per fio job");
        for (j, w) in jobs.iter().zip(workers) {
            let spec = doc["config"]["spec"].as_array().unwrap().iter().find(|s| s["name"] == w["spec"]).unwrap();
            // fio's own reading: the job's options over the global ones.
            let opt = |k: &str| j["job options"][k].as_str().or(theirs["global options"][k].as_str()).map(String::from);
            let sync = opt("ioengine").is_some_and(|e| e.contains("sync"));
            // fio's own reading of iodepth; a sync engine has one I/O in flight whatever it says.
            let depth: u64 = if sync { 1 } else { opt("iodepth").map_or(1, |d| d.parse().unwrap()) };
            assert_eq!(w["outstanding"].as_u64(), Some(depth), "{name}: {}", j["jobname"]);
            if sync {
                assert!(j["iodepth_level"]["1"].as_f64() > Some(99.0), "{name}: fio kept one I/O in flight");
            }
            let (fr, fw) = (num(j, "read/total_ios"), num(j, "write/total_ios"));
            let (or, ow) = (num(w, "read_ios"), num(w, "write_ios"));
            let f = mix((fr, fw), (num(j, "read/io_bytes"), num(j, "write/io_bytes")));
            let o = mix((or, ow), (num(w, "read_bytes"), num(w, "write_bytes")));
            // Each I/O a read by the same chance in both tools (a binomial draw)...
            let p = (fr + or) / (fr + fw + or + ow);
            let share = chance((p * (1.0 - p)).sqrt(), fr + fw, or + ow);
            assert!((f.0 - o.0).abs() <= share, "{name}: read share fio {} iogauge {} (+-{share})", f.0, o.0);
            // ...and of a size drawn from the same mix.
            let (rs, ws) = (chance(size_spread(spec, true), fr, or), chance(size_spread(spec, false), fw, ow));
            assert!(
                (f.1 - o.1).abs() <= rs && (f.2 - o.2).abs() <= ws,
                "{name}: sizes fio {f:?} iogauge {o:?} (+-{rs}, +-{ws})"
            );
        }
    }
}

#[test]
fn convert_prints_the_job_that_runs_the_same() {
    let dir = scratch("fio-convert");
    let job = dir.join("j.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=null\nrw=randrw\nrwmixread=70\nbs=8k\nnumber_ios=20000\n\
         iodepth_batch_submit=16\niodepth_batch_complete_min=2\nnice=3\n[a]\niodepth=4\n[b]\niodepth=8\n",
    )
    .unwrap();
    let toml = ok_in(&dir, &["convert", "j.fio"]).stdout;
    // fio's submit and completion batches are the test's (issue 45), and so is its nice.
    let text = String::from_utf8_lossy(&toml);
    assert!(text.contains("completion_batch = 2") && text.contains("submit_batch = 16"), "{text}");
    assert!(text.contains("nice = 3"), "{text}");
    // fio's 0 submits as many as the job's depth.
    std::fs::write(dir.join("z.fio"), "[z]\nioengine=null\nrw=read\nnumber_ios=10\niodepth=4\niodepth_batch=0\n")
        .unwrap();
    let zero = ok_in(&dir, &["convert", "z.fio"]).stdout;
    assert!(String::from_utf8_lossy(&zero).contains("submit_batch = 4"), "{}", String::from_utf8_lossy(&zero));
    std::fs::write(dir.join("j.toml"), &toml).unwrap();
    let from_fio = json(&["run", job.to_str().unwrap()]);
    let from_toml = json(&["run", dir.join("j.toml").to_str().unwrap()]);
    assert_eq!(from_fio["config"], from_toml["config"]);
    // The null engine does exactly the I/Os asked: 20000 per job.
    assert_eq!(num(&from_fio, "results/0/totals/ios"), 40000.0);
    let depths: Vec<u64> = from_fio["results"][0]["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["outstanding"].as_u64().unwrap())
        .collect();
    assert_eq!(depths, [4, 8]);
}

#[test]
fn includes_environment_and_comments_as_fio_reads_them() {
    let dir = scratch("fio-include");
    std::fs::write(dir.join("common.inc"), "bs=16k ; a comment\nrw=randread\n").unwrap();
    std::fs::write(
        dir.join("j.fio"),
        "[global]\nioengine=null\nnumber_ios=${N}\n\n[x]   # a job\ninclude common.inc\n",
    )
    .unwrap();
    let out = command_in(&dir, &["run", "j.fio", "--json", "-", "--no-history"]).env("N", "3000").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(num(&doc, "results/0/totals/ios"), 3000.0);
    assert_eq!(num(&doc, "results/0/totals/read_bytes"), 3000.0 * 16384.0);
}

#[test]
fn what_is_outside_the_subset_is_one_clear_line() {
    let dir = scratch("fio-bad");
    let base = "[global]\nioengine=null\nnumber_ios=100\n";
    for (body, says) in [
        ("[a]\nrw=randread\nnot_fios=0\n", "j.fio:6: option not_fios in [a] is not one of fio's options"),
        // fio's options iogauge refuses: the file, the line, the option as written and why.
        ("[a]\nexitall\n", "j.fio:5: exitall in [a]: iogauge ends a workload when every worker has done its part"),
        ("[a]\nfadvise_hint=1\n", "j.fio:5: fadvise_hint=1: iogauge gives the kernel no hint of a file's use"),
        (
            "[a]\nread_iolog=t.log\n",
            "j.fio:5: read_iolog=t.log in [a]: iogauge replays a fio iolog as a worker's trace",
        ),
        // A job that only reads cannot be verified as fio verifies it (fio checks what an
        // earlier fio job wrote): the verify line, not a flag the user never gave.
        ("[a]\nrw=read\nverify=md5\n", "j.fio:6: verify=md5: [a] only reads"),
        ("[a]\nbsrange=8k-4k\n", "bsrange=8k-4k: give MIN-MAX"),
        ("[a]\nioengine=rbd\n", "ioengine=rbd"),
        ("[a]\nrw=randread:0\n", "give the I/Os per new random offset"),
        ("[a]\nrw=write:4x\n", "fio reads \"x\" as no unit (4 bytes there)"),
        ("[a]\nrw=randread:8\nrw_sequencer=identical\n", "rw_sequencer=identical"),
        ("[a]\nrw=randwrite\nsync=often\n", "sync=often: give 0, 1"),
        ("[a]\nrandom_distribution=zoned_abs:50/1g\n", "random_distribution"),
        ("[a]\nbs=4x\n", "as no unit"),
        ("[a]\nbs=1.5k\n", "fio takes no fraction in a size (it reads 1.5k as 1 byte)"),
        ("[a]\nsize=0x10k\n", "ignores the \"k\" after it (16 bytes there)"),
        ("[a]\nkb_base=1023\n", "kb_base=1023: give 1024"),
        ("[a]\nbs=4KiB\n", "bs=4KiB: 4000 bytes as fio reads it (under kb_base=1024 k, m, g are powers of 1024"),
        ("[a]\nbssplit=4k/50:4k/50\nkb_base=1000\n", "4000 bytes as fio reads it"),
        ("[a]\nbs=4000\n", "multiple of 512 bytes"),
        ("[a]\nnumber_ios=${NOT_SET_ANYWHERE}\n", "NOT_SET_ANYWHERE"),
        ("[a]\nfilename=/dev/null:/dev/zero\niodepth=3\nioengine=libaio\n", "multiple of the files"),
        ("[a]\nbuffer_pattern=0xdeadface\n", "give 0xNN or one character"),
        ("[a]\ncontinue_on_error=read\n", "give all or none"),
        ("[a]\n[c]\nrandseed=1\n", "differ in randseed"),
        ("[a]\ncpumask=0\n", "no CPU in the mask"),
        ("[a]\ncpus_allowed_policy=spread\n", "give shared or split"),
        ("[a]\nrw=randrw\npercentage_random=30,40\n", "iogauge draws one share for reads and writes: give one"),
        ("[a]\nfilesize=1m-8m\n", "filesize=1m-8m: a range of sizes: iogauge makes every file one size"),
        ("[a]\n[b]\nwait_for=nope\n", "wait_for=nope: no job named nope before [b]"),
        ("[a]\n[b]\nwait_for=b\n", "wait_for=b: no job named b before [b]"),
        // fio's engine and job options away from their defaults: what iogauge does instead.
        ("[a]\nhipri\n", "j.fio:5: hipri: iogauge waits for completions and does not poll"),
        ("[a]\nsqthread_poll=1\n", "sqthread_poll=1: each worker submits on its own thread"),
        ("[a]\nforce_async=4\n", "--io-wq-threads N"),
        ("[a]\nstartdelay=2s\n", "startdelay=2s: every worker starts with the test; remove it"),
        ("[a]\nallow_mounted_write=1\n", "command line only, by name: --allow-mounted-write DEV"),
        ("[a]\nioscheduler=mq-deadline\n", "(echo mq-deadline > /sys/block/DEV/queue/scheduler)"),
        // Groups of other workers: what differs, in fio's words.
        (
            "[a]\n[b]\nstonewall\nnumjobs=2\nnumber_ios=50\n",
            "other workers than the first group's (2 threads (numjobs) against 1)",
        ),
        ("[a]\nioengine=psync\n[b]\nioengine=psync\nstonewall\n", "(files b.0.0 against a.0.0: without filename="),
        ("[global]\nioengine=libaio\nfilename=f\n[a]\n[b]\nstonewall\niodepth=4\n", "(iodepth=4 against 1)"),
    ] {
        std::fs::write(dir.join("j.fio"), format!("{base}{body}")).unwrap();
        let out = iogauge_in(&dir, &["run", "j.fio", "-q", "--no-history"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{body}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{body}: {err}");
        assert!(err.contains(says) && err.contains("j.fio"), "{body}: {err}");
    }
    // fio's runtime without time_based ends the job at its size or its runtime, whichever
    // comes first: a paced job stops at the runtime, a fast one at its count.
    std::fs::write(dir.join("cap.fio"), "[a]\nioengine=null\nnumber_ios=100000\nrate_iops=1000\nruntime=1\n").unwrap();
    let doc = json(&["run", dir.join("cap.fio").to_str().unwrap()]);
    let (secs, ios) = (num(&doc, "results/0/duration_s"), num(&doc, "results/0/totals/ios"));
    assert!((secs - 1.0).abs() < 0.05 && (ios - 1000.0).abs() <= 20.0, "{ios} I/Os in {secs} s");
    std::fs::write(dir.join("cap.fio"), "[a]\nioengine=null\nnumber_ios=5000\nruntime=10\n").unwrap();
    let doc = json(&["run", dir.join("cap.fio").to_str().unwrap()]);
    assert!(num(&doc, "results/0/totals/ios") == 5000.0 && num(&doc, "results/0/duration_s") < 1.0);
    // --ignore-unknown runs without the option, with a warning naming it.
    std::fs::write(dir.join("j.fio"), format!("{base}[a]\nrw=randread\nexitall\n")).unwrap();
    let out = iogauge_in(&dir, &["run", "j.fio", "--ignore-unknown", "-q", "--no-history"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("warning: j.fio:6: option exitall is not supported: ignored in [a] (--ignore-unknown)")
    );
    // Once per option, however many jobs it reaches (fio's 1mbs_clients.fio has 32); fio's
    // reporting options and a description are no reason to refuse a job, and its rate
    // options are iogauge's.
    let mut many = "[global]\nioengine=null\nnumber_ios=100\nrw=randread\nstartdelay=1\ngtod_reduce=1\nthreads=1\n\
                    disable_clat=1\nrate_process=poisson\nrate=4m\ndescription=a library of clients\n"
        .to_string();
    for i in 0..32 {
        many += &format!("[client{i}]\n{}", if i < 30 { "exitall\n" } else { "" });
    }
    std::fs::write(dir.join("many.fio"), many).unwrap();
    let out = iogauge_in(&dir, &["convert", "many.fio", "--ignore-unknown"]);
    let (err, job) = (String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches("startdelay").count(), 1, "{err}");
    assert!(err.contains("many.fio:5: option startdelay is not supported: ignored in all 32 jobs"), "{err}");
    assert!(err.contains("ignored in [client0], [client1], [client2] and 27 more jobs"), "{err}");
    assert_eq!(err.matches("gtod_reduce, disable_clat: fio's reporting options").count(), 1, "{err}");
    assert_eq!(err.lines().count(), 3, "{err}");
    let job: toml::Value = toml::from_str(&job).unwrap();
    assert_eq!(job["test"]["arrivals"].as_str(), Some("poisson"), "{job}");
    assert_eq!(job["worker"][0]["rate_mbps"].as_float(), Some(4.194304), "{job}");
    assert_eq!(job["spec"][0]["description"].as_str(), Some("a library of clients"), "{job}");
    // Settings jobs must share name their values as a user writes them.
    std::fs::write(dir.join("logs.fio"), format!("{base}[a]\nwrite_lat_log=x\n[b]\n")).unwrap();
    let out = iogauge_in(&dir, &["convert", "logs.fio"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("differ in write_*_log (. and unset)") && !err.contains("Some("), "{err}");
}

/// A job file that names fio's engine and job options at their defaults, or options of fio's
/// loop and reports, runs the same job as without them (job files tuned for fio carry
/// `hipri=0`, `sqthread_poll=0`, `stats`, `bwavgtime`...), the reporting ones said once.
#[test]
fn fios_defaults_named_change_nothing() {
    let dir = scratch("fio-defaults");
    let base = "[global]\nioengine=io_uring\ndirect=1\nfilename=t.file\nsize=8m\nrw=randread\niodepth=8\n[a]\n";
    let convert = |extra: &str| {
        std::fs::write(dir.join("j.fio"), format!("{base}{extra}")).unwrap();
        let out = iogauge_in(&dir, &["convert", "j.fio"]);
        assert!(out.status.success(), "{extra}: {}", String::from_utf8_lossy(&out.stderr));
        (String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (plain, said) = convert("");
    assert_eq!(said, "");
    let defaults = "hipri=0\nsqthread_poll=0\nsqthread_poll_cpu=1\nforce_async=0\nuncached=0\nstartdelay=0s\n\
                    fadvise_hint=0\nlockfile=none\nio_submit_mode=inline\nzonemode=none\nrandrepeat=0\n\
                    allrandrepeat=1\nfile_service_type=roundrobin\nthinktime_blocks_type=complete\n\
                    end_fsync=0\nallow_mounted_write=0\nnonvectored=1\noverwrite=1\n";
    assert_eq!(convert(defaults), (plain.clone(), String::new()));
    let (job, said) = convert("stats=1\nbwavgtime=500\niopsavgtime=500\nsignificant_figures=6\nclocksource=cpu\n");
    assert_eq!(job, plain);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.contains("stats, bwavgtime, iopsavgtime, significant_figures, clocksource: fio's reporting"),
        "{said}"
    );
}

/// fio's stonewall groups each do their own size (fio's examples/ssd-test.fio, its size
/// scaled down to 16 MiB): 16 MiB per group, not the sum over the groups in each (issue 47);
/// a job bounded by its size takes --time as fio takes --runtime, a cap.
#[test]
fn stonewall_groups_each_do_their_own_size() {
    let dir = scratch("fio-stonewall");
    let job = "[global]\nbs=4k\nioengine=libaio\niodepth=4\nsize=16m\ndirect=1\nruntime=60\nfilename=t.file\n\
               [seq-read]\nrw=read\nstonewall\n[rand-read]\nrw=randread\nstonewall\n[seq-write]\nrw=write\nstonewall\n\
               [rand-write]\nrw=randwrite\nstonewall\n";
    std::fs::write(dir.join("ssd.fio"), job).unwrap();
    let out = iogauge_in(&dir, &["run", "ssd.fio", "--json", "r.json", "-q", "--no-history"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    let bytes: Vec<f64> = doc["results"].as_array().unwrap().iter().map(|r| num(r, "totals/bytes")).collect();
    assert_eq!(bytes, [16.0 * 1048576.0; 4], "each group its own 16 MiB");
    // Groups that end on different counts cannot be one test's workloads: said in one line.
    std::fs::write(dir.join("uneven.fio"), job.replace("[rand-read]\n", "[rand-read]\nsize=8m\n")).unwrap();
    let out = iogauge_in(&dir, &["convert", "uneven.fio"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("[rand-read] starts does other I/O") && err.trim().lines().count() == 1, "{err}");
    // A job that ends on its size, capped by --time: 1 s of a paced job of 10 s.
    std::fs::write(dir.join("paced.fio"), "[a]\nioengine=null\nsize=40m\nbs=4k\nrate_iops=1000\n").unwrap();
    let doc = json(&["run", dir.join("paced.fio").to_str().unwrap(), "--time", "1s"]);
    let secs = num(&doc, "results/0/duration_s");
    assert!((secs - 1.0).abs() < 0.05, "recorded {secs} s of a job capped at 1 s");
}

#[test]
fn a_buffered_job_goes_through_the_page_cache_on_a_device_too() {
    // fio's default is buffered I/O (direct=0), on a block device as on a file. 20,000 random
    // reads of its 4,096 blocks: the kernel reads each block at most once (readahead brings
    // more per request), whatever the machine's speed.
    let lo = LoopDev::new(16 << 20);
    let dir = scratch("fio-buffered");
    let job = dir.join("b.fio");
    std::fs::write(&job, "[a]\nfilename=${DEV}\nrw=randread\nbs=4k\nioengine=libaio\niodepth=4\nnumber_ios=20000\n")
        .unwrap();
    let name = lo.dev.trim_start_matches("/dev/");
    let before = kernel_ios(name);
    let doc = ours(&dir, &job, &lo.dev);
    let after = kernel_ios(name);
    let reads = num(&doc, "results/0/totals/read_ios");
    let kernel = (after.0 + after.1 - before.0 - before.1) as f64;
    assert!(kernel < reads / 2.0, "the page cache served most reads: kernel {kernel}, ours {reads}");
    let warnings = doc["warnings"].to_string();
    assert!(warnings.contains("page cache"), "{warnings}");
}

#[test]
fn offset_modifiers_run_as_fio_runs_them() {
    // fio's `rw=...:N`: a sequential pattern leaves a hole of N after each I/O (negative:
    // backwards), a random one takes a new random offset every N I/Os. One I/O at a time, so
    // both tools' logs list the I/Os in the order they were issued.
    let lo = LoopDev::new(64 << 20);
    let dir = scratch("fio-offsets");
    let job = |rw: &str, ios: u32, logs: &Path| {
        format!(
            "[a]\nfilename=${{DEV}}\nrw={rw}\nbs=4k\nsize=1m\ndirect=1\nioengine=psync\nnumber_ios={ios}\n\
             write_lat_log={}/a\nlog_offset=1\n",
            logs.display()
        )
    };
    for rw in ["read:4k", "write:12k", "read:-8k"] {
        let (theirs, ours_dir) = (dir.join(format!("fio-{rw}")), dir.join(format!("iogauge-{rw}")));
        for d in [&theirs, &ours_dir] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("j.fio"), job(rw, 300, d)).unwrap();
        }
        fio(&dir, &theirs.join("j.fio"), &lo.dev);
        ours(&dir, &ours_dir.join("j.fio"), &lo.dev);
        let (f, o) = (logged_offsets(&theirs), logged_offsets(&ours_dir));
        assert_eq!(o.len(), 300, "{rw}");
        // fio ends after one pass over its 1 MiB where iogauge wraps: that pass agrees.
        let pass = f.len().min(o.len());
        assert!(pass >= 64, "rw={rw}: fio did {pass} I/Os");
        assert_eq!(f[..pass], o[..pass], "rw={rw}: offsets of fio then iogauge");
    }
    // The share of I/Os that follow the one before, in fio's log and in iogauge's, and
    // iogauge's document.
    let follow =
        |offs: &[u64]| offs.windows(2).filter(|w| w[1] == w[0] + 4096).count() as f64 / (offs.len() - 1) as f64;
    let following = |name: &str, rw: &str| {
        let (theirs, ours_dir) = (dir.join(format!("fio-{name}")), dir.join(format!("iogauge-{name}")));
        for d in [&theirs, &ours_dir] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("j.fio"), job(&format!("{rw}\nsize=32m\nnorandommap"), 4000, d)).unwrap();
        }
        fio(&dir, &theirs.join("j.fio"), &lo.dev);
        let doc = ours(&dir, &ours_dir.join("j.fio"), &lo.dev);
        (follow(&logged_offsets(&theirs)), follow(&logged_offsets(&ours_dir)), doc)
    };
    // Runs of 8: 7 I/Os of every 8 follow the one before, in both tools.
    let (f, o, doc) = following("runs", "randread:8");
    assert!((f - 0.875).abs() < 0.01 && (o - 0.875).abs() < 0.01, "following I/Os: fio {f}, iogauge {o}");
    assert_eq!(doc["config"]["spec"][0]["lines"][0]["seek_every"], 8, "{}", doc["config"]["spec"]);
    // percentage_random=30: 7 I/Os in 10 follow the one before, in both tools (4,000 I/Os,
    // binomial sd 0.0072: 0.04 is 5.5 sd, a false failure under 1 in 10^7 per tool).
    let (f, o, doc) = following("share", "randread\npercentage_random=30");
    assert!((f - 0.7).abs() < 0.04 && (o - 0.7).abs() < 0.04, "following I/Os: fio {f}, iogauge {o}");
    assert_eq!(doc["config"]["spec"][0]["lines"][0]["random"], 30, "{}", doc["config"]["spec"]);
    // A sequential mix (rw=rw): in both tools each read follows the last read and each write
    // the last write (fio's place per direction), read from each log's direction column.
    let per_direction = |logs: &Path| {
        let mut logs_there = std::fs::read_dir(logs).unwrap().map(|e| e.unwrap().path());
        let log = logs_there.find(|p| p.to_string_lossy().ends_with("_clat.1.log")).unwrap();
        let (mut next, mut ios) = ([0u64; 2], 0);
        for line in std::fs::read_to_string(log).unwrap().lines() {
            let f: Vec<u64> = line.split(',').map(|x| x.trim().parse().unwrap()).collect();
            let (dir, offset) = (f[2] as usize, f[4]);
            assert_eq!(offset, next[dir], "{}: I/O {ios} (direction {dir})", logs.display());
            (next[dir], ios) = (offset + 4096, ios + 1);
        }
        ios
    };
    let (theirs, ours_dir) = (dir.join("fio-rw"), dir.join("iogauge-rw"));
    for d in [&theirs, &ours_dir] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("j.fio"), job("rw", 200, d)).unwrap();
    }
    fio(&dir, &theirs.join("j.fio"), &lo.dev);
    let doc = ours(&dir, &ours_dir.join("j.fio"), &lo.dev);
    assert!(per_direction(&theirs) >= 200 && per_direction(&ours_dir) == 200);
    assert_eq!(doc["config"]["spec"][0]["sequential_per_direction"], true, "{}", doc["config"]["spec"]);
}

/// Jobs bounded by their size, whose counts fio and iogauge must give alike (issue 47): a
/// job with no size does the whole device (as fio's examples/basic-verify.fio), a sequential
/// read that skips a hole after each I/O ends at the end of its part (`rw=read:512k`), and
/// stonewall groups each do their own size. Counted from fio's own JSON, on the same device.
#[test]
fn jobs_bounded_by_size_move_what_fio_moves() {
    let lo = LoopDev::new(32 << 20);
    let dir = scratch("fio-size");
    for (name, text) in [
        ("whole-device", "[write]\nrw=randwrite\nbs=4k\ndirect=1\nioengine=libaio\niodepth=16\nfilename=${DEV}\n"),
        ("skip", "[skip]\nrw=read:512k\nbs=1m\ndirect=1\nioengine=libaio\nsize=24m\nfilename=${DEV}\n"),
        (
            "groups",
            "[global]\nbs=4k\nioengine=libaio\niodepth=4\nsize=8m\ndirect=1\nfilename=${DEV}\n[seq-read]\nrw=read\n\
             stonewall\n[rand-write]\nrw=randwrite\nstonewall\n",
        ),
    ] {
        let job = dir.join(format!("{name}.fio"));
        std::fs::write(&job, text).unwrap();
        let theirs = fio(&dir, &job, &lo.dev);
        let doc = ours(&dir, &job, &lo.dev);
        let counts = |d: &str| {
            let fio: Vec<(f64, f64)> = theirs["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| (num(&j[d], "total_ios"), num(&j[d], "io_kbytes") * 1024.0))
                .collect();
            let ours: Vec<(f64, f64)> = doc["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (num(&r["totals"], &format!("{d}_ios")), num(&r["totals"], &format!("{d}_bytes"))))
                .collect();
            (fio, ours)
        };
        for d in ["read", "write"] {
            let (fio, ours) = counts(d);
            assert_eq!(fio, ours, "{name}: {d} I/Os and bytes per group, fio's then iogauge's");
        }
    }
}

/// Sizes as shares of the file (`size=50%`, `io_size`, `offset`, `offset_increment`) move
/// what fio moves, from where fio starts: a share of the device's size, each start rounded up
/// to the transfer size, each part rounded down to it and ending at the device's end. The
/// device's size (30 MiB and 12 KiB) makes no share round. Sizes in plain bytes too
/// (`size=1048576`, `offset=8192`). Counted from fio's own JSON; the
/// offsets of both tools' per-I/O logs, one I/O at a time, I/O by I/O.
#[test]
fn shares_of_the_file_move_what_fio_moves() {
    let lo = LoopDev::new((30 << 20) + 12288);
    let dir = scratch("fio-shares");
    for (name, opts, same_offsets) in [
        ("size", "rw=read\nbs=1m\nsize=50%", true),
        ("offset", "rw=read\nbs=64k\noffset=10%\nsize=25%", true),
        ("to-the-end", "rw=read\nbs=1m\noffset=60%\nsize=50%", true),
        ("io_size", "rw=randread\nbs=4k\nio_size=10%\nnorandommap", false),
        ("copies", "rw=write\nbs=1m\nnumjobs=3\noffset_increment=33%\nsize=33%\ngroup_reporting", false),
        // The second copy's part ends at the device's end: half of what the first moves.
        ("copies-to-the-end", "rw=read\nbs=1m\nnumjobs=2\noffset_increment=50%\nsize=100%\ngroup_reporting", false),
        // Plain bytes, no unit: read as KiB, the offset would be 8 MiB and the size 1 GiB.
        ("bytes", "rw=read\nbs=4096\noffset=8192\nsize=1048576", true),
        ("bytes-io_size", "rw=randread\nbs=4096\noffset=8192\nsize=1048576\nio_size=262144\nnorandommap", false),
        (
            "bytes-copies",
            "rw=write\nbs=65536\nnumjobs=2\noffset_increment=4194304\nsize=2097152\ngroup_reporting",
            false,
        ),
    ] {
        let (theirs, ours_dir) = (dir.join(format!("fio-{name}")), dir.join(format!("iogauge-{name}")));
        for d in [&theirs, &ours_dir] {
            std::fs::create_dir_all(d).unwrap();
            let job = format!(
                "[a]\nfilename=${{DEV}}\ndirect=1\nioengine=psync\n{opts}\nwrite_lat_log={}/a\nlog_offset=1\n",
                d.display()
            );
            std::fs::write(d.join("j.fio"), job).unwrap();
        }
        let fio = fio(&dir, &theirs.join("j.fio"), &lo.dev);
        let doc = ours(&dir, &ours_dir.join("j.fio"), &lo.dev);
        for d in ["read", "write"] {
            let fio = (num(&fio["jobs"][0][d], "total_ios"), num(&fio["jobs"][0][d], "io_kbytes") * 1024.0);
            let totals = &doc["results"][0]["totals"];
            let ours = (num(totals, &format!("{d}_ios")), num(totals, &format!("{d}_bytes")));
            assert_eq!(fio, ours, "{name}: {d} I/Os and bytes, fio's then iogauge's");
        }
        if same_offsets {
            let offsets = logged_offsets(&ours_dir);
            assert_eq!(offsets.len() as f64, num(&doc["results"][0]["totals"], "ios"), "{name}: one line an I/O");
            assert_eq!(logged_offsets(&theirs), offsets, "{name}: offsets, fio's then iogauge's");
        }
    }
    // A share needs the file, of one size: one line, naming it.
    let missing = dir.join("missing");
    std::fs::write(dir.join("m.fio"), format!("[a]\nfilename={}\nrw=read\nsize=50%\n", missing.display())).unwrap();
    let out = iogauge_in(&dir, &["convert", "m.fio"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("m.fio:4: size as a share of the file needs the file:") && err.contains("give it in bytes"));
}

/// `nrfiles` without `filename`: each copy its own files, named and sized as fio names and
/// sizes them (`NAME.COPY.FILE`, `size` over the files), every byte of them written.
#[test]
fn nrfiles_gives_each_copy_its_files() {
    let dir = scratch("fio-nrfiles");
    let listing = |d: &Path| {
        let mut files: Vec<(String, u64)> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name() != "j.fio")
            .map(|e| (e.file_name().to_string_lossy().to_string(), e.metadata().unwrap().len()))
            .collect();
        files.sort();
        files
    };
    let (theirs, ours_dir) = (dir.join("fio"), dir.join("iogauge"));
    for d in [&theirs, &ours_dir] {
        std::fs::create_dir_all(d).unwrap();
        let job = format!(
            "[x]\nnrfiles=3\nsize=3m\ndirectory={}\nrw=write\nbs=64k\nnumjobs=2\niodepth=3\nioengine=libaio\n\
             direct=1\ngroup_reporting\n",
            d.display()
        );
        std::fs::write(d.join("j.fio"), job).unwrap();
    }
    let fio = fio(&dir, &theirs.join("j.fio"), "");
    let job = ours_dir.join("j.fio");
    let out = command_in(&dir, &["run", job.to_str().unwrap(), "--json", "-", "--no-history"]).output().unwrap();
    assert!(out.status.success(), "iogauge: {}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(num(&fio["jobs"][0]["write"], "io_kbytes") * 1024.0, 6.0 * 1048576.0);
    assert_eq!(num(&doc["results"][0]["totals"], "write_bytes"), 6.0 * 1048576.0);
    let names = ["x.0.0", "x.0.1", "x.0.2", "x.1.0", "x.1.1", "x.1.2"];
    assert_eq!(listing(&theirs), names.map(|n| (n.to_string(), 1 << 20)).to_vec());
    assert_eq!(listing(&theirs), listing(&ours_dir));
    for n in names {
        let data = std::fs::read(ours_dir.join(n)).unwrap();
        assert!(data.chunks(4096).all(|b| b.iter().any(|&x| x != 0)), "{n}: a block left unwritten");
    }
}

/// `blockalign` puts random offsets on its boundary, and `loops` repeats a job's count (issue
/// 47: both refused). Offsets read from iogauge's own I/O log.
/// Sizes mean what fio makes of them (parse.c), checked against the fio installed: under its
/// default kb_base=1024, k is 1024 bytes and kib 1000 (fio's "opposite" units, which the import
/// points out); under kb_base=1000 the other way round, wherever the section sets it; hex is
/// bytes. Each job runs on fio's null engine and iogauge's null target: the same I/O size and
/// count.
#[test]
fn sizes_read_as_fio_reads_them() {
    let dir = scratch("fio-sizes");
    for (kb_base, bs) in [
        ("", "4k"),
        ("", "4KB"),
        ("", "4ki"),
        ("", "512KiB"),
        ("", "0x1000"),
        ("", "4096b"),
        ("kb_base=1000\n", "512k"),
        ("kb_base=1000\n", "4kib"),
    ] {
        // The section's kb_base is read before its sizes, even when written after them.
        let job = format!("[a]\nioengine=null\nrw=read\nbs={bs}\nsize=2m\n{kb_base}");
        std::fs::write(dir.join("s.fio"), &job).unwrap();
        let theirs = &fio(&dir, &dir.join("s.fio"), "")["jobs"][0]["read"];
        let (ios, bytes) = (theirs["total_ios"].as_f64().unwrap(), theirs["io_bytes"].as_f64().unwrap());
        let out = iogauge_in(&dir, &["run", "s.fio", "--json", "-", "--no-history"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{job}: {err}");
        let ours: Value = serde_json::from_slice(&out.stdout).unwrap();
        let t = &ours["results"][0]["totals"];
        assert_eq!((num(t, "ios"), num(t, "bytes")), (ios, bytes), "{job}: fio's I/Os and bytes");
        let warned = err.contains("fio reads kib, mib, gib, tib and pib as powers of 1000");
        assert_eq!(warned, kb_base.is_empty() && bs.to_ascii_lowercase().contains("ib"), "{job}: {err}");
    }
    // Only sizes are read so: a description that names KiB is no size.
    std::fs::write(dir.join("s.fio"), "[a]\nioengine=null\nrw=read\nbs=4k\nsize=1m\ndescription=4KiB reads\n").unwrap();
    let out = iogauge_in(&dir, &["run", "s.fio", "-q", "--no-history"]);
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    // Any size option is, the run's size too: 2MiB is 2,000,000 bytes, 488 transfers of 4k.
    std::fs::write(dir.join("s.fio"), "[a]\nioengine=null\nrw=read\nbs=4k\nsize=2MiB\n").unwrap();
    let theirs = fio(&dir, &dir.join("s.fio"), "")["jobs"][0]["read"]["total_ios"].as_f64().unwrap();
    let out = iogauge_in(&dir, &["run", "s.fio", "--json", "-", "--no-history"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("s.fio:5: size=2MiB: fio reads kib, mib"), "{err}");
    let ours: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((num(&ours, "results/0/totals/ios"), theirs), (488.0, 488.0), "fio's I/O count");
    // A size that is no whole number of transfers: fio does the whole ones that fit, or the
    // one that crosses it too, by pattern.
    for rw in ["read", "randwrite", "randrw", "rw", "randread:2", "randread\nnorandommap=1"] {
        let job = format!("[a]\nioengine=null\nrw={rw}\nbs=512000\nsize=2m\n");
        std::fs::write(dir.join("s.fio"), &job).unwrap();
        let theirs = &fio(&dir, &dir.join("s.fio"), "")["jobs"][0];
        let ios = |d: &str| theirs[d]["total_ios"].as_f64().unwrap();
        let out = iogauge_in(&dir, &["run", "s.fio", "--json", "-", "--no-history"]);
        assert!(out.status.success(), "{job}: {}", String::from_utf8_lossy(&out.stderr));
        let ours: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(num(&ours, "results/0/totals/ios"), ios("read") + ios("write"), "{job}: fio's I/O count");
    }
}

#[test]
fn blockalign_and_loops_read_as_fio_reads_them() {
    let dir = scratch("fio-align");
    std::fs::write(
        dir.join("a.fio"),
        "[a]\nioengine=null\nrw=randread\nbs=4k\nblockalign=64k\nsize=64m\nnumber_ios=2000\nloops=3\n",
    )
    .unwrap();
    let out = iogauge_in(&dir, &["run", "a.fio", "--log-dir", "logs", "--json", "r.json", "-q", "--no-history"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(num(&doc, "results/0/totals/ios"), 6000.0, "number_ios x loops");
    let log = std::fs::read_dir(dir.join("logs"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().contains("lat"));
    let text = std::fs::read_to_string(log.expect("a latency log").path()).unwrap();
    // fio's log columns: time, value, direction, size, offset.
    let offsets: Vec<u64> = text.lines().filter_map(|l| l.split(',').nth(4)?.trim().parse().ok()).collect();
    assert_eq!(offsets.len(), 6000);
    assert!(offsets.iter().all(|o| o % 65536 == 0), "every offset on a 64 KiB boundary");
}

/// fio's meaning on our own corpus (tests/fixtures/fio-conformance/, one fio feature a file):
/// each job run by fio and by iogauge on one scratch file gets the status it states (same
/// counts, bytes and mix, and the same I/Os one by one from fio's per-I/O logs and iogauge's
/// --iolog, or refused in one line), and none differs silently. With
/// FIO_EXAMPLES naming fio's own examples/ (from fio's source), those run too: no silent
/// difference among them.
#[test]
fn fio_conformance_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut runs = vec![(root.join("tests/fixtures/fio-conformance"), true)];
    if let Some(examples) = std::env::var_os("FIO_EXAMPLES") {
        runs.push((examples.into(), false));
    }
    for (dir, check) in runs {
        let mut cmd = Command::new(root.join("scripts/fio-conformance"));
        cmd.arg(&dir).args(["--iogauge", bin()]);
        if check {
            cmd.arg("--check");
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}:\n{}{}",
            dir.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn offset_increment_gives_each_copy_its_region() {
    let dir = scratch("fio-offset-increment");
    let file = dir.join("f");
    std::fs::write(&file, vec![0u8; 12 << 20]).unwrap();
    std::fs::write(
        dir.join("j.fio"),
        format!("[copies]\nfilename={}\nrw=write\nbs=64k\nsize=1m\nnumjobs=3\noffset_increment=4m\n", file.display()),
    )
    .unwrap();
    ok_in(&dir, &["run", "j.fio", "--no-history", "-q", "--allow-write", file.to_str().unwrap()]);
    let data = std::fs::read(&file).unwrap();
    // Copy N writes [4N MiB, 4N+1 MiB) and nothing else: iogauge's blocks are never all zeros.
    for (mib, chunk) in data.chunks(1 << 20).enumerate() {
        let written = chunk.chunks(4096).all(|b| b.iter().any(|&x| x != 0));
        let untouched = chunk.iter().all(|&x| x == 0);
        assert!(if mib % 4 == 0 { written } else { untouched }, "MiB {mib}: written {written}");
    }
}

/// fio's CPU placement is iogauge's: `cpus_allowed` and `cpumask` give a job's threads their
/// CPUs, and `cpus_allowed_policy=split` puts each thread on one of them by its number in the
/// whole file (a job's first copy after one other thread takes the set's second CPU), round
/// the set again when threads outnumber CPUs. Read from fio's own job processes while they
/// run, and from the workers' `cpus` in iogauge's result.
#[test]
fn cpus_allowed_places_each_thread_as_fio_does() {
    let dir = scratch("fio-cpus");
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let allowed = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap().trim().to_string();
    let cpus = cpu_list(&allowed);
    std::fs::write(
        dir.join("j.fio"),
        format!(
            "[global]\nioengine=null\nrw=randread\nsize=1g\ntime_based=1\nruntime=3\niodepth=4\n\
             iodepth_batch_complete_max=4\ncpus_allowed={allowed}\ncpus_allowed_policy=split\n\
             [mask]\ncpumask={:#x}\n[split]\nnumjobs=3\n[shared]\ncpus_allowed_policy=shared\nnumjobs=2\n",
            1u64 << cpus[0]
        ),
    )
    .unwrap();
    // iogauge's workers, each copy of a count on its own line, in the file's order.
    let out = iogauge_in(&dir, &["run", "j.fio", "--time", "1s", "--json", "-", "--no-history"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cpus_of = |w: &Value| w["cpus"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap() as u32).collect();
    let ours: Vec<Vec<u32>> = doc["results"][0]["workers"].as_array().unwrap().iter().map(cpus_of).collect();
    let at = |i: usize| vec![cpus[i % cpus.len()]];
    assert_eq!(ours, [vec![cpus[0]], at(1), at(2), at(3), cpus.clone(), cpus.clone()]);
    // fio's job processes (children of fio), each looked at every 50 ms while fio runs (a job
    // sets its affinity first and keeps it), then put in the file's order by the pids fio
    // prints for its jobs in that order ("split: (groupid=0, jobs=1): err= 0: pid=N: ...").
    let mut fio =
        Command::new("fio").arg("j.fio").current_dir(&dir).stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut seen = std::collections::HashMap::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    // (Its report, a few KiB, fits the pipe: fio does not wait for this test to read it.)
    while fio.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
        for pid in std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        {
            let (Ok(stat), Ok(status)) = (
                std::fs::read_to_string(format!("/proc/{pid}/stat")),
                std::fs::read_to_string(format!("/proc/{pid}/status")),
            ) else {
                continue;
            };
            let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
            if let (Some(ppid), Some(list)) = (ppid, status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")))
            {
                if ppid == fio.id() {
                    seen.insert(pid, cpu_list(list));
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = fio.wait_with_output().unwrap();
    assert!(out.status.success(), "fio failed");
    let text = String::from_utf8_lossy(&out.stdout);
    let pids = text.lines().filter_map(|l| l.split_once(" pid=")?.1.split(':').next()?.parse::<u32>().ok());
    let theirs: Vec<Vec<u32>> = pids.map(|pid| seen.get(&pid).cloned().unwrap_or_default()).collect();
    assert_eq!(theirs, ours, "fio's job processes' CPUs, then iogauge's workers' ({text})");
    // fio's io_uring options for what iogauge's engine does anyway are taken as they are, and
    // so are a direct job's invalidate and a reporting option (said).
    std::fs::write(
        dir.join("u.fio"),
        "[u]\nioengine=io_uring\nregisterfiles=1\nfixedbufs=1\nfilename=null\nnumber_ios=10\ndirect=1\n\
         invalidate=1\nunified_rw_reporting=1\n",
    )
    .unwrap();
    let said = String::from_utf8_lossy(&ok_in(&dir, &["convert", "u.fio"]).stderr).to_string();
    assert!(said.contains("unified_rw_reporting: fio's reporting options") && said.lines().count() == 1, "{said}");
}

/// The CPUs of a list as /proc writes one (`0-3,8`).
fn cpu_list(text: &str) -> Vec<u32> {
    let range = |r: &str| match r.split_once('-') {
        Some((a, b)) => a.parse().unwrap()..=b.parse().unwrap(),
        None => r.parse().unwrap()..=r.parse().unwrap(),
    };
    text.trim().split(',').flat_map(range).collect()
}

/// What fio's written data, seed and error options ask is what iogauge runs: `buffer_pattern`
/// of one byte and `zero_buffers` write every block as fio writes it (both tools' files
/// compared byte for byte), `randseed` is the test's seed (fio's numbers may be hexadecimal),
/// `continue_on_error=all` its `on_error` (what iogauge cannot do of them:
/// `what_is_outside_the_subset_is_one_clear_line`).
#[test]
fn data_seed_and_errors_read_as_fio_means_them() {
    let dir = scratch("fio-data");
    for (option, byte) in [("buffer_pattern=0x5a", 0x5a_u8), ("buffer_pattern=\"A\"", b'A'), ("zero_buffers=1", 0)] {
        let mut written = Vec::new();
        for tool in ["fio", "iogauge"] {
            let file = dir.join(format!("{tool}.dat"));
            std::fs::write(&file, vec![0xff_u8; 1 << 20]).unwrap();
            let job = format!("[w]\nfilename={}\nrw=write\nbs=4k\nsize=1m\nioengine=psync\n{option}\n", file.display());
            std::fs::write(dir.join("w.fio"), job).unwrap();
            if tool == "fio" {
                let out = Command::new("fio").arg("w.fio").current_dir(&dir).output().unwrap();
                assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
            } else {
                ok_in(&dir, &["run", "w.fio", "-q", "--no-history", "--allow-write", file.to_str().unwrap()]);
            }
            written.push(std::fs::read(&file).unwrap());
        }
        assert!(written[0].iter().all(|&b| b == byte), "{option}: fio wrote other bytes");
        assert!(written[0] == written[1], "{option}: iogauge wrote other bytes than fio");
    }
    std::fs::write(
        dir.join("s.fio"),
        "[global]\nioengine=null\nnumber_ios=100\nrandseed=0x1092\ncontinue_on_error=all\n[a]\n[b]\n",
    )
    .unwrap();
    let doc = json(&["run", dir.join("s.fio").to_str().unwrap()]);
    assert_eq!(doc["config"]["test"]["seed"], 4242);
    assert_eq!(doc["config"]["test"]["on_error"], "continue");
}

/// fio's random map (its default): a random job bounded by its size touches each block once,
/// in fio and in iogauge, from each tool's per-I/O log (fio's t/jobs/t0020.fio: 256 offsets in
/// 256 I/Os over 1 MiB); with `norandommap` both draw with repeats (about 162 of the 256
/// blocks: the expected count, sd about 6, so under 230 is over 10 sd from a map's 256).
#[test]
fn a_random_job_bounded_by_its_size_touches_each_block_once() {
    let dir = scratch("fio-random-map");
    for (extra, once) in [("", true), ("norandommap\n", false)] {
        for tool in ["fio", "iogauge"] {
            let logs = dir.join(format!("{tool}{}", extra.trim()));
            std::fs::create_dir_all(&logs).unwrap();
            let job = format!(
                "; as fio's t/jobs/t0020.fio\n[test]\nioengine=null\nfilesize=1M\nrw=randread\nwrite_lat_log={}/test\n\
                 log_offset=1\n{extra}",
                logs.display()
            );
            std::fs::write(logs.join("j.fio"), job).unwrap();
            run_with(tool, &dir, &logs.join("j.fio"));
            let offsets = logged_offsets(&logs);
            let mut distinct = offsets.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(offsets.len(), 256, "{tool} {extra}: I/Os");
            if once {
                assert_eq!(distinct.len(), 256, "{tool}: each block once");
            } else {
                assert!(distinct.len() < 230, "{tool} with norandommap: {} blocks of 256", distinct.len());
            }
        }
    }
}

/// A job whose size is no whole number of its transfers issues what fio issues, per direction,
/// at fio's offsets: on a file larger than the size, fio issues the transfer that crosses it
/// (`size=1000k bs=64k rw=read`: 16 reads; `rw=read:12k`: 14), on a file just as large it does
/// not (15); a random job with fio's random map takes each whole block once (15), without it
/// (`norandommap`) it crosses the size (16). From fio's JSON and both tools' per-I/O logs, one
/// I/O at a time, on the same file.
#[test]
fn the_transfer_that_crosses_the_size_is_fios() {
    let dir = scratch("fio-last-transfer");
    let file = dir.join("f");
    for (file_size, rw, fios) in [
        (4 << 20, "read", 16),
        (4 << 20, "write", 16),
        (4 << 20, "read:12k", 14),
        (4 << 20, "write:12k", 14),
        (4 << 20, "rw", 16),
        (4 << 20, "randread", 15),
        (4 << 20, "randread\nnorandommap", 16),
        (1000 << 10, "read", 15),
        (1000 << 10, "read:12k", 13),
    ] {
        let mut offsets = Vec::new();
        let mut counts = Vec::new();
        for tool in ["fio", "iogauge"] {
            std::fs::write(&file, vec![1u8; file_size]).unwrap();
            let logs = dir.join(format!("{tool}-{}-{file_size}", rw.replace(['\n', ':'], "-")));
            std::fs::create_dir_all(&logs).unwrap();
            let job = format!(
                "[a]\nfilename={}\nsize=1000k\nbs=64k\nrw={rw}\nioengine=psync\nwrite_lat_log={}/a\nlog_offset=1\n",
                file.display(),
                logs.display()
            );
            std::fs::write(logs.join("j.fio"), job).unwrap();
            let ios = if tool == "fio" {
                let doc = fio(&dir, &logs.join("j.fio"), "");
                ["read", "write"].map(|d| num(&doc["jobs"][0][d], "total_ios"))
            } else {
                let file = file.to_str().unwrap();
                let out =
                    ok_in(&dir, &["run", logs.join("j.fio").to_str().unwrap(), "--allow-write", file, "--json", "-"]);
                let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
                ["read", "write"].map(|d| num(&doc["results"][0]["totals"], &format!("{d}_ios")))
            };
            counts.push(ios);
            offsets.push(logged_offsets(&logs));
        }
        let what = format!("rw={rw} on a file of {file_size} bytes");
        assert_eq!(counts[0][0] + counts[0][1], fios as f64, "{what}: fio's I/Os");
        // A mix's directions are drawn at random, in each tool with its own seed.
        let total = |c: [f64; 2]| if rw == "rw" { [c[0] + c[1], 0.0] } else { c };
        assert_eq!(total(counts[0]), total(counts[1]), "{what}: reads and writes, fio's then iogauge's");
        if !rw.starts_with("rand") && rw != "rw" {
            assert_eq!(offsets[0], offsets[1], "{what}: offsets, fio's then iogauge's");
        }
        let mut distinct = offsets[1].clone();
        distinct.sort_unstable();
        distinct.dedup();
        if rw == "randread" {
            assert_eq!(distinct.len(), 15, "{what}: each whole block once");
        }
    }
    // fio's t/jobs/t0007 on a device larger than its size: a read at each 1.5 MiB step that
    // starts under 128 MiB, the last at 127.5 MiB crossing it: 86 reads (85 on a file of
    // just 128 MiB).
    let lo = LoopDev::new(160 << 20);
    let job = dir.join("t0007.fio");
    std::fs::write(&job, "[foo]\nfilename=${DEV}\nsize=128mb\nrw=read:512k\nbs=1m\nnorandommap\ndirect=1\n").unwrap();
    let theirs = num(&fio(&dir, &job, &lo.dev)["jobs"][0]["read"], "total_ios");
    let ours = num(&ours(&dir, &job, &lo.dev)["results"][0]["totals"], "read_ios");
    assert_eq!((theirs, ours), (86.0, 86.0), "t0007's reads, fio's then iogauge's");
}

/// Every option of the fio installed (`fio --cmdhelp=all`, and the options of the engines
/// iogauge runs, `fio --enghelp=ENGINE`) and each alias fio gives it (`fio --cmdhelp=NAME`) is
/// a row of the importer's: a job that gives it is read, said or refused with its reason,
/// never taken for an option fio does not have.
#[test]
fn options_are_fios() {
    let fio_says = |args: &[&str]| {
        let out = Command::new("fio").args(args).output().expect("fio is installed (scripts/test installs it)");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let mut names: Vec<String> = Vec::new();
    let listed = |text: &str| -> Vec<String> {
        let names = text.lines().filter_map(|l| l.split_once(':').map(|(n, _)| n.trim().to_string()));
        names.filter(|n| !n.is_empty() && !n.contains(' ')).collect()
    };
    names.extend(listed(&fio_says(&["--cmdhelp=all"])));
    assert!(names.len() > 200, "fio --cmdhelp=all listed {} options", names.len());
    for engine in ["io_uring", "libaio", "pvsync2", "nbd"] {
        names.extend(listed(&fio_says(&[&format!("--enghelp={engine}")])));
    }
    let aliases: Vec<String> = names
        .iter()
        .filter_map(|n| {
            fio_says(&[&format!("--cmdhelp={n}")])
                .lines()
                .find_map(|l| Some(l.split_once("alias:")?.1.trim().to_string()))
        })
        .collect();
    names.extend(aliases);
    names.sort();
    names.dedup();
    let dir = scratch("fio-options");
    let mut unknown = Vec::new();
    for name in &names {
        std::fs::write(dir.join("j.fio"), format!("[a]\nioengine=null\nnumber_ios=1\n{name}=1\n")).unwrap();
        let out = iogauge_in(&dir, &["convert", "j.fio"]);
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("is not one of fio's options") || err.contains("not a fio option") {
            unknown.push(name.clone());
        }
    }
    assert!(unknown.is_empty(), "fio's options without a row: {unknown:?}");
}

/// The I/Os of a fio log of one job (`time, value, ddir, bs, offset, prio`, fio's
/// `log_offset=1`): (direction, size, offset), in the log's order.
fn logged_ios(log: &Path) -> Vec<(u64, u64, u64)> {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let field = |l: &str, i: usize| l.split(',').nth(i).unwrap().trim().parse::<u64>().unwrap();
    text.lines().map(|l| (field(l, 2), field(l, 3), field(l, 4))).collect()
}

/// `--iolog FILE` writes every I/O issued as fio's iolog (version 3), which fio's `read_iolog`
/// replays: fio replaying iogauge's iolog of a mix of random reads and writes on a file does
/// the same I/Os, one by one in the same order, as iogauge's per-I/O log says it did (one I/O
/// at a time, so issue and completion orders agree).
#[test]
fn fio_replays_iogauges_iolog() {
    let dir = scratch("fio-iolog");
    let file = dir.join("t.dat");
    std::fs::write(&file, vec![7u8; 8 << 20]).unwrap();
    let f = file.to_str().unwrap();
    let args = ["run", "--target", f, "--spec", "oltp-4k", "--ios", "600", "--iolog", "io.log", "--log-dir", "ours"];
    ok_in(&dir, &[&args[..], &["--allow-write", f, "--buffered", "-q", "--no-history"]].concat());
    let iolog = std::fs::read_to_string(dir.join("io.log")).unwrap();
    assert!(iolog.starts_with(&format!("fio version 3 iolog\n0 {f} add\n0 {f} open\n")), "{iolog}");
    std::fs::create_dir_all(dir.join("theirs")).unwrap();
    std::fs::write(
        dir.join("r.fio"),
        "[r]\nread_iolog=io.log\nioengine=psync\nreplay_no_stall=1\nwrite_lat_log=theirs/r\nlog_offset=1\n",
    )
    .unwrap();
    let out = Command::new("fio").arg("r.fio").current_dir(&dir).output().unwrap();
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    let ours = logged_ios(&dir.join("ours/worker_1_lat.1.log"));
    assert_eq!(ours.len(), 600);
    assert!(ours.iter().any(|io| io.0 == 1) && ours.iter().any(|io| io.0 == 0), "reads and writes");
    assert_eq!(logged_ios(&dir.join("theirs/r_lat.1.log")), ours, "fio's replay, then iogauge's I/Os");
}

/// fio's log columns as `log_offset` says (fio 3.33: `time, value, ddir, bs, prio`, or with
/// `log_offset=1` the offset before the priority), and `per_job_logs=0` (every job's lines in
/// one file named by the prefix alone, as fio's t/jobs/t0020.fio writes `test_bw.log`): the same
/// files and columns in both tools, for two jobs.
#[test]
fn logs_have_fios_columns_and_names() {
    let dir = scratch("fio-log-columns");
    for (options, files) in [
        ("", vec!["x_lat.1.log", "x_lat.2.log"]),
        ("log_offset=1\n", vec!["x_lat.1.log", "x_lat.2.log"]),
        ("per_job_logs=0\nlog_offset=1\n", vec!["x_lat.log"]),
    ] {
        let mut layouts = Vec::new();
        for tool in ["fio", "iogauge"] {
            let logs = dir.join(format!("{tool}-{}", options.replace(['\n', '='], "-")));
            std::fs::create_dir_all(&logs).unwrap();
            let job = format!(
                "[global]\nioengine=null\nrw=read\nbs=4k\nsize=64k\nwrite_lat_log={}/x\n{options}[x.1]\n[x.2]\n",
                logs.display()
            );
            std::fs::write(logs.join("j.fio"), job).unwrap();
            run_with(tool, &dir, &logs.join("j.fio"));
            // iogauge names a log by its worker, fio by the job's number: each file's lines.
            let mut names: Vec<String> = std::fs::read_dir(&logs)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
                .filter(|n| n.contains("_lat."))
                .collect();
            names.sort();
            let texts: Vec<String> = names.iter().map(|n| std::fs::read_to_string(logs.join(n)).unwrap()).collect();
            let columns: Vec<usize> = texts.iter().flat_map(|t| t.lines().map(|l| l.split(',').count())).collect();
            let offsets: Vec<u64> = texts
                .iter()
                .flat_map(|t| t.lines().map(|l| l.split(',').nth(4).unwrap().trim().parse().unwrap()))
                .collect();
            layouts.push((names.len(), columns, offsets));
        }
        assert_eq!(layouts[0].0, files.len(), "{options}: fio's files");
        assert_eq!(
            layouts[0], layouts[1],
            "{options}: files, columns of every line and column 5, fio's then iogauge's"
        );
    }
}

/// fio's examples/basic-verify.fio on a 32 MiB device: fio writes every 4 KiB block once (its
/// random map) and then reads each back and checks it (`do_verify`, its default). iogauge does
/// the same: a workload of random writes touching each of the 8,192 blocks once, then a
/// workload reading each back in order, every block checked, none mismatched; fio's counts the
/// same. With `do_verify=0`, the writes alone in both.
#[test]
fn a_verify_job_writes_every_block_and_reads_each_back() {
    let lo = LoopDev::new(32 << 20);
    let dir = scratch("fio-basic-verify");
    let job = "; examples/basic-verify.fio\n[write-and-verify]\nrw=randwrite\nbs=4k\ndirect=1\nioengine=libaio\n\
               iodepth=16\nverify=crc32c\nfilename=${DEV}\nwrite_lat_log=logs/w\nlog_offset=1\n";
    for (extra, reads) in [("", 8192.0), ("do_verify=0\n", 0.0)] {
        std::fs::create_dir_all(dir.join("logs")).unwrap();
        std::fs::write(dir.join("v.fio"), format!("{job}{extra}")).unwrap();
        let theirs = &fio(&dir, &dir.join("v.fio"), &lo.dev)["jobs"][0];
        let counts = |d: &str| num(&theirs[d], "total_ios");
        assert_eq!((counts("write"), counts("read")), (8192.0, reads), "{extra}: fio's writes and reads");
        std::fs::remove_dir_all(dir.join("logs")).unwrap();
        std::fs::create_dir_all(dir.join("logs")).unwrap();
        let doc = ours(&dir, &dir.join("v.fio"), &lo.dev);
        let results = doc["results"].as_array().unwrap();
        assert_eq!(num(&results[0]["totals"], "write_ios"), 8192.0, "{extra}: iogauge's writes");
        let mut written = logged_offsets(&dir.join("logs"));
        written.sort_unstable();
        written.dedup();
        assert_eq!(written.len(), 8192, "{extra}: every block written once");
        if reads > 0.0 {
            let back = &results[1];
            assert_eq!(num(&back["totals"], "read_ios"), 8192.0, "iogauge's read-back");
            assert_eq!(num(back, "verify/checked_blocks"), 8192.0, "every block checked");
            assert_eq!(num(back, "verify/mismatches"), 0.0);
        } else {
            assert_eq!(results.len(), 1, "no read-back with do_verify=0");
        }
    }
}

/// fio's bsrange: each size drawn as fio draws it, the same shares in both tools (from each
/// tool's per-I/O log, 20,000 reads on the null engine): 4k-16k, every multiple of 4 KiB a
/// quarter; 4k-10k, 4 KiB and 8 KiB 40 % each and 10 KiB 20 %. Two binomial shares of 20,000
/// draws differ by 0.0049 sd at most: 0.03 is over 6 sd.
#[test]
fn bsrange_draws_sizes_as_fio_draws_them() {
    let dir = scratch("fio-bsrange");
    for range in ["4k-16k", "4k-10k"] {
        let mut shares = Vec::new();
        for tool in ["fio", "iogauge"] {
            let logs = dir.join(format!("{tool}-{range}"));
            std::fs::create_dir_all(&logs).unwrap();
            let job = format!(
                "[a]\nioengine=null\nrw=randread\nbsrange={range}\nsize=1g\nnumber_ios=20000\nnorandommap\n\
                 write_lat_log={}/a\nlog_offset=1\n",
                logs.display()
            );
            std::fs::write(logs.join("j.fio"), job).unwrap();
            run_with(tool, &dir, &logs.join("j.fio"));
            let ios = logged_ios(&logs.join("a_lat.1.log"));
            assert_eq!(ios.len(), 20000, "{tool} {range}");
            let mut by_size = std::collections::BTreeMap::new();
            for (_, bs, _) in &ios {
                *by_size.entry(*bs).or_insert(0.0) += 1.0 / ios.len() as f64;
            }
            shares.push(by_size);
        }
        let sizes = |m: &std::collections::BTreeMap<u64, f64>| m.keys().copied().collect::<Vec<_>>();
        assert_eq!(sizes(&shares[0]), sizes(&shares[1]), "{range}: the sizes, fio's then iogauge's");
        for (bs, f) in &shares[0] {
            assert!((f - shares[1][bs]).abs() < 0.03, "{range}: {bs} bytes: fio {f}, iogauge {}", shares[1][bs]);
        }
    }
}

/// Runs the fio job file `job` with `tool` ("fio", or iogauge), in `dir`; its logs are the
/// job's to say.
fn run_with(tool: &str, dir: &Path, job: &Path) {
    if tool == "fio" {
        fio(dir, job, "");
    } else {
        ok_in(dir, &["run", job.to_str().unwrap(), "-q", "--no-history"]);
    }
}
