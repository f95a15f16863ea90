//! Regression guards for iogauge's own cost per I/O, in counts rather than seconds so that a
//! noisy 2-core CI machine cannot make them flaky: heap allocations (exact, in-process) and
//! instructions (valgrind, on the real binary). Both on the null target, where every cycle is
//! iogauge's. docs/performance.md has the measured figures these bounds sit above.

use crate::common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use iogauge::config::Test;
use iogauge::managers::Solo;
use iogauge::{job, plan, run};

/// Counts every allocation of this test process, from every thread.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by one whole test (plan, threads, run, result) of `ios` I/Os, and the
/// I/Os it did. The counter is the whole process's, and the suite runs its tests side by side
/// in one process: the count is taken in a process of its own, this binary run again for
/// `allocations_of_one_test` alone.
fn allocations_for(ios: u64, outstanding: u32) -> (u64, u64) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "cost::allocations_of_one_test", "--ignored", "--nocapture", "--test-threads=1"])
        .env(PROBE, format!("{ios} {outstanding}"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the allocation count's own process failed: {text}");
    // The harness prints the test's name on the line the count goes on.
    let line = text.split("allocations ").nth(1).and_then(|l| l.lines().next()).expect("the count's line");
    let mut n = line.split(' ').map(|v| v.parse::<u64>().unwrap());
    (n.next().unwrap(), n.next().unwrap())
}

/// The test `allocations_for` runs in a process of its own: "IOS OUTSTANDING".
const PROBE: &str = "IOGAUGE_COUNT_ALLOCATIONS";

/// Not a test of its own (ignored): `allocations_for`'s count, in the process it starts.
#[test]
#[ignore = "run by no_allocation_per_io in a process of its own"]
fn allocations_of_one_test() {
    // One interval sample however long the run: each sample allocates its histogram, and 2M
    // I/Os on a loaded host take several seconds (a sample each) where 2K take one.
    let asked = std::env::var(PROBE).expect("run by no_allocation_per_io, which sets IOGAUGE_COUNT_ALLOCATIONS");
    let (ios, outstanding) = asked.split_once(' ').unwrap();
    let text = format!(
        "[test]\nios = {ios}\nrun = [\"oltp-8k\"]\ninterval = \"1h\"\n[[worker]]\ncount = 2\n\
         outstanding = {outstanding}\ntargets = [\"null\", \"null\"]\n"
    );
    let test = Test::from_job(&job::parse(&text, "cost.toml").unwrap()).unwrap();
    let before = ALLOCATIONS.load(Relaxed);
    let solo = Solo::new();
    let prep = plan::prepare_for(&solo, test).unwrap();
    let doc = run::run_test(&prep, &solo, &mut run::Silent).unwrap().doc;
    let allocations = ALLOCATIONS.load(Relaxed) - before;
    println!("allocations {allocations} {}", doc.results[0].totals.metrics.ios);
}

/// No allocation per I/O: a test of 2,000,000 I/Os allocates no more than one of 2,000 (the
/// same threads, buffers and result), whatever the depth.
#[test]
fn no_allocation_per_io() {
    for outstanding in [1, 32] {
        let (small, small_ios) = allocations_for(2_000, outstanding);
        let (large, large_ios) = allocations_for(2_000_000, outstanding);
        assert_eq!((small_ios, large_ios), (2_000, 2_000_000));
        // A few allocations may differ with timing (the monitor's interval samples, thread
        // start-up); a per-I/O allocation would add about 2,000,000.
        assert!(
            large <= small + 64,
            "{outstanding} outstanding: {large} allocations for 2M I/Os vs {small} for 2K: something allocates per I/O"
        );
    }
}

/// Instructions valgrind counts for `iogauge run --target null --ios N` with `args`.
fn instructions(ios: u64, args: &[&str]) -> u64 {
    let ios = ios.to_string();
    let out = Command::new("valgrind")
        .args(["--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", common::bin()])
        .args(["run", "--target", "null", "--spec", "oltp-8k", "--ios", &ios, "-q"])
        .args(args)
        .output()
        .expect("valgrind runs (scripts/test installs it)");
    assert!(out.status.success(), "valgrind iogauge failed: {}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err.lines().find(|l| l.contains("I   refs:") || l.contains("I refs:")).expect("valgrind summary");
    line.rsplit(':').next().unwrap().trim().replace(',', "").parse().expect("instruction count")
}

/// Instructions per I/O on the null target (generation, engine, latency histogram, counters),
/// as the difference between two run lengths so start-up and reporting cancel out.
fn per_io(args: &[&str]) -> f64 {
    per_io_between(args, 100_000, 600_000)
}

/// [`per_io`] over the I/Os between runs of `a` and `b` I/Os.
fn per_io_between(args: &[&str], a: u64, b: u64) -> f64 {
    (instructions(b, args) - instructions(a, args)) as f64 / (b - a) as f64
}

/// The bounds sit about 1.15x above what is measured in the build the suite runs (the `suite`
/// profile: release without LTO, 16 codegen units): 336 instructions per I/O at 32
/// outstanding, 575 at 1, where the clock read is per I/O (320 and 532 before the local
/// ThinLTO across codegen units was turned off; 307 and 514 with the profile before
/// debug info was dropped and the runs halved; 299 and 509 before the live per-target counts,
/// issue 32). (A release build with LTO does
/// 238 and 435; 204 and 392 when first measured, before error handling, time-outs and
/// verification joined the loop.) A lock, a system call or an allocation per I/O would break
/// them.
#[test]
fn instructions_per_io_stay_bounded() {
    if cfg!(debug_assertions) {
        eprintln!("instruction bounds hold for release builds only (scripts/test builds with --release)");
        return;
    }
    for (qd, bound) in [("32", 390.0), ("1", 660.0)] {
        let n = per_io(&["--qd", qd]);
        eprintln!("{qd} outstanding: {n:.0} instructions per I/O");
        assert!(n <= bound, "{qd} outstanding: {n:.0} instructions per I/O, bound {bound}");
        assert!(n > 20.0, "{qd} outstanding: {n:.0} instructions per I/O is implausibly low");
    }
}

/// The random map's cost per I/O (fio's default: each block once per pass) over a whole pass of
/// 1 M blocks (an 8 GiB working set of 8 KiB places), the difference between runs one pass
/// apart, so the pass's fill, its draws on taken blocks and its clearing all count. A search
/// for the next free block that scanned the map would cost thousands of instructions near the
/// pass's end. The bound sits about 1.15x above what is measured in the suite's build, as the
/// others: 536 instructions per I/O at 32 outstanding, where the plain path without the map
/// does 349 in the same build (the line chosen apart, `special`, and the map, about 190).
#[test]
fn instructions_per_io_with_the_random_map_stay_bounded() {
    if cfg!(debug_assertions) {
        eprintln!("instruction bounds hold for release builds only (scripts/test builds with --release)");
        return;
    }
    let n = per_io_between(&["--qd", "32", "--random-map", "--working-set", "8g"], 100_000, 100_000 + (1 << 20));
    eprintln!("32 outstanding, random map over 1 M blocks: {n:.0} instructions per I/O");
    let bound = 620.0;
    assert!(n <= bound, "random map: {n:.0} instructions per I/O, bound {bound}");
    assert!(n > 20.0, "random map: {n:.0} instructions per I/O is implausibly low");
}
