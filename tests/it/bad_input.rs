//! Every mistake: one line on stderr naming what is wrong, exit status 2, no panic, nothing
//! written (not even the default test file).

use crate::common;

use std::path::Path;

use common::*;

/// Runs in a fresh directory and checks the mistake's message; returns stderr. A mistake is
/// answered at once: a command still running after 60 s (reading a device named by mistake to
/// its end, /dev/zero forever) is killed and fails the test.
fn rejected_in(dir: &Path, args: &[&str], needle: &str) -> String {
    let mut child = command_in(dir, args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run iogauge");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{args:?}: still running after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: not one line: {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.stdout.is_empty(), "{args:?}: stdout {}", String::from_utf8_lossy(&out.stdout));
    assert!(!dir.join("iogauge.tst").exists(), "{args:?} created the test file");
    err
}

fn rejected(args: &[&str], needle: &str) -> String {
    rejected_in(&scratch("bad"), args, needle)
}

/// A FIFO given where a job names a file to read would hold the command (or a workbench
/// call) until a writer came: refused as no regular file, at once.
#[test]
fn a_baseline_that_is_a_fifo_is_refused_not_waited_for() {
    let dir = scratch("fifo-baseline");
    assert!(std::process::Command::new("mkfifo").arg(dir.join("ff")).status().unwrap().success());
    let job = "[storage]\nraid = \"jbod\"\ndrives = 1\nbaseline = \"ff\"\n[[worker]]\ntargets = [\"null\"]\n";
    std::fs::write(dir.join("j.toml"), job).unwrap();
    rejected_in(&dir, &["run", "j.toml", "--no-history"], "[storage] baseline ff: not a regular file");
}

#[test]
fn flags() {
    rejected(&["run", "--spec", "nope"], "unknown access specification 'nope'");
    // A key's check names the flag that gave it, as it was typed.
    rejected(&["run", "--workers", "0"], "--workers 0: give at least 1 worker");
    rejected(&["run", "--cpu-latency", "2s"], "--cpu-latency 2s: give at most 1s");
    rejected(&["run", "--qd", "0"], "--outstanding 0: give 1 to 65536");
    rejected(&["run", "--time", "10x"], "'10x' is not a duration");
    rejected(&["run", "--file-size", "1Q"], "'1Q' is not a size");
    rejected(&["run", "--engine", "aio"], "unknown engine 'aio'");
    rejected(&["run", "--stroke", "150"], "--stroke 150: give a % of the target");
    rejected(&["run", "--bogus"], "--bogus");
    rejected(&["run", "--target", "/dev/does-not-exist"], "/dev/does-not-exist does not exist");
    rejected(&["run", "--target", "/no/such/dir/file"], "directory /no/such/dir does not exist");
    rejected(&["run", "--target", "null", "--working-set", "4K", "--spec", "dss-1m"], "larger than the working set");
    rejected(&["run", "--target", "null", "--target", "iogauge.tst"], "null target cannot share a worker");
    rejected(&["specs", "nope"], "unknown access specification 'nope'");
    rejected(&["run", "--spec", "OLPT-8k"], "did you mean 'oltp-8k'");
    rejected(&["run", "--spec", "random-read-3000"], "multiple of 512");
    rejected(&["run", "--bs", "4K:60,64K:30"], "--bs 4K:60,64K:30: line shares sum to 90 %");
    // A history that is a device is refused as the workbench starts, not by each run it starts.
    rejected(&["ui", "--listen", "127.0.0.1:0", "--db", "/dev/null"], "--db /dev/null: not a regular file");
    rejected(&["run", "--bs", "4k,64k"], "READ,WRITE form is not supported");
    rejected(&["run", "--rw", "randread", "--read", "70"], "use --rw randrw");
    rejected(&["run", "--rw", "sequential"], "use read, write, randread");
    rejected(&["run", "--read", "150"], "150 is out of range: give 0 to 100 (see 'iogauge run --help')");
    // Past what the flag's type holds: not that type's range, which the key's check may narrow.
    rejected(&["run", "--io-wq-threads", "99999999999"], "99999999999 is too large (see 'iogauge run --help')");
    rejected(&["run", "--io-wq-threads", "5000"], "--io-wq-threads 5000: give 1 to 4096");
    rejected(&["run", "--spec", "oltp"], "did you mean 'oltp-4k', 'oltp-8k'");
    // What clap says below its first line is said on it: the names a flag takes, the nearest
    // flag or command to what was typed, and no help of a command that does not exist.
    rejected(&["run", "--cpus-policy", "bogus"], "'bogus' for '--cpus-policy <POLICY>': give shared or split (see");
    rejected(&["run", "--cpus-policy", "spli"], "did you mean split?");
    rejected(
        &["run", "--tme", "1s"],
        "unexpected argument '--tme' found: did you mean --time? (see 'iogauge run --help')",
    );
    rejected(&["histry"], "unrecognized subcommand 'histry': did you mean history");
    rejected(&["histry"], "(see 'iogauge --help')");
    // A bare word one letter from `null` names no file to make a gigabyte of (issue 48).
    let dir = scratch("nul");
    for typo in ["nul", "nulll", "Null", "nill"] {
        rejected_in(&dir, &["run", "--target", typo], "did you mean null?");
        assert!(!dir.join(typo).exists(), "{typo} was created");
    }
    rejected(&["run", "--bs", "4K", "--spec", "oltp-8k"], "give one");
    rejected(&["run", "--rate-mbps", "0"], "--rate-mbps 0: give 0.000001 to 10,000,000 MB/s");
    // A rate is a pace a device can keep, not a backlog nor a gap longer than any test.
    rejected(&["run", "--rate-iops", "1e300"], "--rate-iops 1e300: give 0.001 to 1,000,000,000 I/Os per second");
    rejected(&["run", "--rate-iops", "1e-300"], "--rate-iops 1e-300: give 0.001");
    rejected(&["run", "--total-rate-mbps", "inf"], "--total-rate-mbps inf: give 0.000001 to 10,000,000 MB/s");
    rejected(&["run", "--cpus", "0-4294967295"], "CPU 4294967295: the kernel numbers CPUs from 0 to 8191");
    rejected(&["run", "--stroke", "50", "--working-set", "1G"], "--stroke: give --stroke or --working-set, not both");
    // A negative number reaches the flag's parser, not clap's "unexpected argument '-1'".
    rejected(&["run", "--workers", "-1"], "'-1' for '--workers <N>': '-1' is not a whole number from 0 to 4294967295");
    rejected(&["run", "--stroke", "-5"], "--stroke -5: give a % of the target above 0");
    rejected(&["run", "--file-size", "0.3K"], "not a whole number of bytes");
    rejected(&["run", "--ios", "100", "--time", "5s"], "--ios ends the test on a count");
    rejected(&["run", "--bytes", "1G", "--ramp", "1s"], "--ramp does not apply");
    rejected(&["study", "baseline", "--target", "null", "--ios", "100", "--time", "1s"], "give one");
}

#[test]
fn fio_flags_answer_with_iogauges() {
    for (fio, ours) in [
        ("--iodepth=32", "use --qd N"),
        ("--numjobs", "use --workers N"),
        ("--runtime", "use --time DURATION"),
        ("--ramp_time", "use --ramp DURATION"),
        ("--filename", "use --target PATH"),
        ("--size", "use --file-size SIZE"),
        ("--ioengine=libaio", "use --engine"),
        ("--direct=1", "O_DIRECT is the default"),
        ("--cpus_allowed=0-3", "use --cpus LIST"),
        ("--cpus_allowed_policy=split", "use --cpus-policy shared|split"),
        ("--iodepth_batch_complete_min=8", "use --completion-batch N"),
        ("--buffer_pattern=0x5a", "use --data repeat:0xNN"),
        ("--continue_on_error=all", "use --on-error continue"),
    ] {
        let err = rejected(&["run", fio, "1"], ours);
        let name = fio.split('=').next().unwrap();
        assert!(err.starts_with(&format!("iogauge: {name} is fio's flag")), "{err}");
    }
}

#[test]
fn transfer_size_must_fit_the_logical_block_size() {
    let file = scratch("lbs").join("b.img");
    std::fs::File::create(&file).unwrap().set_len(64 << 20).unwrap();
    let dev = attach_loop(&file, &["--sector-size", "4096"]);
    let err = rejected(&["run", "--target", &dev, "--spec", "random-read-512"], "logical block size 4096");
    let _ = std::process::Command::new("losetup").args(["-d", &dev]).status();
    assert!(err.contains("transfer size 512"), "{err}");
}

#[test]
fn job_files_name_line_and_column() {
    let dir = scratch("job");
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let sum = write(
        "sum.toml",
        "[test]\nrun = [\"mine\"]\n\n[[spec]]\nname = \"mine\"\nlines = [{ size = \"4K\", share = 60, read = 100, random = 100 }]\n\n[[worker]]\ntargets = [\"null\"]\n",
    );
    rejected_in(&dir, &["run", &sum], "sum.toml:4:1: access specification 'mine': line shares sum to 60 %");
    let qd = write("qd.toml", "[test]\nrun = [\"oltp-8k\"]\n[[worker]]\ntargets = [\"null\"]\noutstanding = 0\n");
    rejected_in(&dir, &["run", &qd], "qd.toml:5:15: outstanding = 0");
    let unknown = write("unknown.toml", "[[worker]]\nspec = \"oltp-9k\"\ntargets = [\"null\"]\n");
    rejected_in(&dir, &["run", &unknown], "unknown.toml:2:8: unknown access specification 'oltp-9k'");
    let typo = write("typo.toml", "[test]\ntime = \"10s\"\nramp_up = \"1s\"\n");
    rejected_in(&dir, &["run", &typo], "typo.toml:3:1:");
    let syntax = write("syntax.toml", "[test\n");
    rejected_in(&dir, &["run", &syntax], "syntax.toml:1:");
    rejected_in(&dir, &["run", &qd, "--workers", "2"], "cannot be combined with job file");
    rejected_in(&dir, &["run", "missing.toml"], "cannot read job file missing.toml");
}

/// Sizes beyond the machine are refused in one line before anything is made: more workers
/// than a test may have (by flag, by count, by entries), more threads than the system lets
/// iogauge start, I/O buffers larger than the memory available.
#[test]
fn limits() {
    rejected(&["run", "--target", "null", "--workers", "100000"], "100000 workers in all");
    let dir = scratch("bad-limits");
    std::fs::write(dir.join("count.toml"), "[test]\nios = 10\n[[worker]]\ncount = 4294967295\ntargets = [\"null\"]\n")
        .unwrap();
    rejected_in(&dir, &["run", "count.toml"], "4294967295 workers in all");
    let entries = "[[worker]]\ntargets = [\"null\"]\n".repeat(200_000);
    std::fs::write(dir.join("entries.toml"), format!("[test]\nios = 10\n{entries}")).unwrap();
    rejected_in(&dir, &["run", "entries.toml"], "200000 workers in all");
    // Within the test's limit but beyond the threads a process may start here (each thread
    // takes about 4 of vm.max_map_count's mappings, 65530 by default).
    let max_maps: u64 = std::fs::read_to_string("/proc/sys/vm/max_map_count").unwrap().trim().parse().unwrap();
    if max_maps / 4 < 60_000 {
        rejected(&["run", "--target", "null", "--workers", "60000", "--ios", "100"], "give fewer workers");
    }
    let target = dir.join("small.dat");
    std::fs::File::create(&target).unwrap().set_len(1 << 30).unwrap();
    let t = target.to_str().unwrap();
    rejected_in(
        &dir,
        &["run", "--target", t, "--spec", "streaming-read-1m", "--qd", "65536", "--workers", "8", "--ios", "10"],
        "I/O buffers need 512.0 GiB",
    );
}

/// Inputs bounded (issue 46): an include reads regular files only and never prints what a
/// file that is no job file holds; a job file is read to a bound; counts beyond what runs are
/// refused, not clamped; a share of 0 % and a URL of an unknown (or capitalised) scheme are
/// mistakes, not a file name.
#[test]
fn foreign_inputs_are_bounded_and_never_quoted() {
    let dir = scratch("bounded");
    std::fs::write(dir.join("zero.fio"), "[j]\ninclude /dev/zero\n").unwrap();
    rejected_in(&dir, &["run", "zero.fio"], "include /dev/zero: not a regular file");
    std::fs::write(dir.join("secret"), "root:$6$abcdefgh$notahash:19000:0:99999:7:::\n").unwrap();
    std::fs::write(dir.join("leak.fio"), format!("[j]\ninclude {}\n", dir.join("secret").display())).unwrap();
    let err = rejected_in(&dir, &["run", "leak.fio"], "not a fio option");
    assert!(!err.contains("abcdefgh") && !err.contains("root"), "{err}");
    rejected_in(&dir, &["run", "/dev/zero"], "cannot read job file /dev/zero: a device: give a job file");
    rejected_in(&dir, &["run", "--target", "null", "--spec-file", "/dev/zero"], "/dev/zero: a device");
    let big = dir.join("big.toml");
    std::fs::write(&big, vec![b'#'; (16 << 20) + 1]).unwrap();
    rejected_in(&dir, &["run", "big.toml"], "larger than 16 MiB");
    std::fs::write(dir.join("many.fio"), "[j]\nioengine=null\nnumjobs=1000000\nsize=1m\n").unwrap();
    rejected_in(&dir, &["run", "many.fio"], "numjobs=1000000: give 1 to 4096 jobs");
    rejected_in(&dir, &["run", "--target", "null", "--bs", "4K:0"], "share of 0 %");
    rejected_in(&dir, &["run", "--target", "NBD://localhost/x"], "the scheme in lower case");
}

/// A target typed where the job file goes, as `fio --filename` users might (`iogauge run
/// /dev/sdb`): said to be a target, with the flag that names one, and the device never read
/// as a job's text.
#[test]
fn a_target_given_as_the_job_is_said_so() {
    let dev = LoopDev::new(32 << 20);
    let before = kernel_ios(dev.name());
    for args in
        [vec!["run", dev.dev.as_str()], vec!["run", dev.dev.as_str(), "--qd", "4"], vec!["study", dev.dev.as_str()]]
    {
        rejected(&args, &format!("{0} is a target, not a job file: test it with iogauge run --target {0}", dev.dev));
    }
    // A command without a job file says which flag names a target.
    let hint = format!("{0}: a target is named with --target {0} (see 'iogauge profile --help')", dev.dev);
    rejected(&["profile", dev.dev.as_str()], &hint);
    rejected(&["profile", "null"], "null: a target is named with --target null");
    rejected(&["profile", "nope"], "unexpected argument 'nope'");
    assert_eq!(kernel_ios(dev.name()), before, "the device was read or written");
    rejected(&["run", "null"], "null is a target, not a job file");
    rejected(&["run", "nbd://localhost/export"], "nbd://localhost/export is a target, not a job file");
    // A job file of that name is read as one.
    let dir = scratch("named-null");
    std::fs::write(dir.join("null"), "[test]\ntime = \"x\"\n").unwrap();
    rejected_in(&dir, &["run", "null"], "null:2");
}

/// A device named where iogauge reads a file (a document, a trace, a verify map) is refused in
/// one line, never read: a disk would be read whole into memory, /dev/zero forever.
#[test]
fn a_device_is_never_read_as_a_file() {
    let dev = LoopDev::new(32 << 20);
    let before = kernel_ios(dev.name());
    let d = dev.dev.as_str();
    rejected(&["report", d, "--output", "r.html"], &format!("{d} is a device, not a document"));
    rejected(&["compare", d, d], &format!("{d} is a device, not a document"));
    rejected(
        &["replay", d, "--target", "null"],
        &format!("{d} is a block device, not a trace: record one with iogauge capture --device {d}"),
    );
    rejected(&["distil", d], &format!("{d} is a block device, not a trace"));
    assert_eq!(kernel_ios(dev.name()), before, "the device was read");
    rejected(&["report", "/dev/zero", "--output", "r.html"], "/dev/zero is a device, not a document");
    rejected(&["distil", "/dev/zero"], "/dev/zero is a device, not a trace");
    rejected(&["verify", "--target", "null", "--map", "/dev/zero"], "verify map /dev/zero: not a regular file");
    // A file of no newlines is read a line's bound, not to its end.
    let dir = scratch("long-line");
    std::fs::write(dir.join("one.log"), vec![b'a'; 1 << 20]).unwrap();
    rejected_in(&dir, &["distil", "one.log"], "one.log:1: a line longer than 64 KiB: not a trace");
}

/// A device this user may not open is said with who may: root, and the group whose members
/// may read it (udev makes disks `root:disk`, mode 660), and with that group the test runs.
#[test]
fn a_device_the_user_may_not_open_says_who_may() {
    use std::os::unix::fs::PermissionsExt;
    let l = LoopDev::new(16 << 20);
    let as_nobody = |groups: &str, mode: u32| {
        std::fs::set_permissions(&l.dev, std::fs::Permissions::from_mode(mode)).unwrap();
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", groups, bin(), "run", "--target", &l.dev])
            .args(["--time", "1s", "--ramp", "0s", "--no-history", "-q"])
            .output()
            .unwrap()
    };
    // The node is made group disk's here, as udev makes disks.
    let groups = std::fs::read_to_string("/etc/group").unwrap();
    let disk: u32 = groups.lines().find_map(|g| g.strip_prefix("disk:x:")?.split(':').next()?.parse().ok()).unwrap();
    std::os::unix::fs::chown(&l.dev, Some(0), Some(disk)).unwrap();
    for (mode, says) in
        [(0o660, "run as root, or as a member of group disk, which may read it"), (0o600, "run as root")]
    {
        let out = as_nobody("--clear-groups", mode);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.trim_end().ends_with(says) && err.lines().count() == 1, "mode {mode:o}: {err}");
    }
    let out = as_nobody(&format!("--groups={disk}"), 0o660);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
