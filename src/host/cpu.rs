//! CPU over the recorded window, from /proc/stat (the whole machine, per CPU),
//! /proc/interrupts (interrupts per CPU), cpuidle's counts (how often the CPUs slept) and
//! getrusage (iogauge itself).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// /proc/stat's per-CPU fields we use, in its order: user nice system idle iowait irq softirq steal.
type Ticks = [u64; 8];

/// A reading of the counters at one instant.
#[derive(Debug, Clone)]
pub struct CpuSnapshot {
    /// When /proc/stat was read: the wall clock a window's shares are of ([`window`]).
    at: std::time::Instant,
    total: Ticks,
    per_cpu: Vec<Ticks>,
    interrupts: u64,
    /// Interrupts each CPU has taken, all sources together.
    per_cpu_interrupts: Vec<u64>,
    own_user_us: u64,
    own_system_us: u64,
    /// Times any CPU went to sleep ([`sleeps`]).
    sleeps: u64,
    /// The kernel's own threads' CPU time so far, in /proc/stat's ticks, where read
    /// ([`CpuSnapshot::read_kernel_threads`]: at the ends of recording, not every interval).
    kernel_ticks: Option<u64>,
}

impl CpuSnapshot {
    /// Adds the kernel's own threads' CPU time so far ([`kernel_thread_ticks`]), read now: for a
    /// snapshot that bounds recording, read right after it.
    pub fn read_kernel_threads(&mut self) {
        self.kernel_ticks = Some(kernel_thread_ticks());
    }
}

/// The CPU time so far of the kernel's own threads (tasks flagged `PF_KTHREAD`: kworkers,
/// ksoftirqd, a device's threads), in clock ticks (/proc/PID/stat, the unit of /proc/stat).
/// Their time is no process's, and while a test runs most of it is the kernel's work for its
/// I/Os: a loop device's copies, completions deferred to ksoftirqd. Other processes are what
/// make a host busy; these are the storage path (a loop device at 32 outstanding on 2 CPUs:
/// 47 % of the CPUs). One read of each /proc/PID/stat, some ms on a host of thousands.
fn kernel_thread_ticks() -> u64 {
    const PF_KTHREAD: u64 = 0x0020_0000;
    let Ok(dir) = std::fs::read_dir("/proc") else { return 0 };
    let pids = dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok());
    let ticks = |pid: u32| -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // After the command name: state (field 3), ..., flags (9), ..., utime (14), stime (15).
        let f: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().take(13).collect();
        let flags: u64 = f.get(6)?.parse().ok()?;
        if flags & PF_KTHREAD == 0 {
            return None;
        }
        Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
    };
    pids.filter_map(ticks).sum()
}

/// `cpus` as the kernel's CPU set (`sched_setaffinity`, io-wq's affinity); numbers past
/// `CPU_SETSIZE` are left out.
pub fn cpu_set(cpus: &[u32]) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is plain bits; CPU_SET writes one bit below CPU_SETSIZE (checked).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus.iter().filter(|&&c| (c as usize) < libc::CPU_SETSIZE as usize) {
        // SAFETY: as above.
        unsafe { libc::CPU_SET(c as usize, &mut set) };
    }
    set
}

/// A thread's waits for a CPU so far: how long it was ready to run but did not (the kernel's
/// run delay, ns: a wake-up's latency, and time in which other work held the CPUs it may run
/// on) and how many times it was then given one.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuWaits {
    pub ns: u64,
    pub times: u64,
}

impl CpuWaits {
    /// Those of thread `tid` of this process (/proc/self/task/TID/schedstat's second and third
    /// fields). None for a thread that has ended, or a kernel that keeps no count
    /// (CONFIG_SCHED_INFO).
    pub fn of_thread(tid: u32) -> Option<CpuWaits> {
        let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
        let mut f = text.split_whitespace().skip(1).map(str::parse::<u64>);
        Some(CpuWaits { ns: f.next()?.ok()?, times: f.next()?.ok()? })
    }

    /// The waits between `before` and these.
    pub fn since(&self, before: &CpuWaits) -> CpuWaits {
        CpuWaits { ns: self.ns.saturating_sub(before.ns), times: self.times.saturating_sub(before.times) }
    }
}

/// Reads /proc/stat and this process's CPU time.
pub fn snapshot() -> CpuSnapshot {
    let at = std::time::Instant::now();
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let mut s = CpuSnapshot {
        at,
        total: [0; 8],
        per_cpu: Vec::new(),
        interrupts: 0,
        per_cpu_interrupts: per_cpu_interrupts(&std::fs::read_to_string("/proc/interrupts").unwrap_or_default()),
        own_user_us: 0,
        own_system_us: 0,
        sleeps: sleeps(),
        kernel_ticks: None,
    };
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let Some(key) = f.next() else { continue };
        if key.starts_with("cpu") {
            let mut t = [0u64; 8];
            for (slot, v) in t.iter_mut().zip(f) {
                *slot = v.parse().unwrap_or(0);
            }
            if key == "cpu" { s.total = t } else { s.per_cpu.push(t) }
        } else if key == "intr" {
            s.interrupts = f.next().and_then(|v| v.parse().ok()).unwrap_or(0);
        }
    }
    // SAFETY: getrusage fills the zeroed struct we pass.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    s.own_user_us = us(ru.ru_utime);
    s.own_system_us = us(ru.ru_stime);
    s
}

/// The usage counts of every CPU's idle states that sleep (all but `POLL`, where an idle CPU
/// spins and wakes at once), found once.
fn sleep_counters() -> &'static [PathBuf] {
    static FILES: OnceLock<Vec<PathBuf>> = OnceLock::new();
    FILES.get_or_init(|| {
        let dirs = |p: &Path| std::fs::read_dir(p).into_iter().flatten().flatten().map(|e| e.path());
        let cpus = dirs(Path::new("/sys/devices/system/cpu"))
            .filter(|p| p.file_name().and_then(|n| n.to_str()?.strip_prefix("cpu")?.parse::<u32>().ok()).is_some());
        cpus.flat_map(|c| dirs(&c.join("cpuidle")).collect::<Vec<_>>())
            .filter(|state| std::fs::read_to_string(state.join("name")).is_ok_and(|n| n.trim() != "POLL"))
            .map(|state| state.join("usage"))
            .collect()
    })
}

/// How many times, so far, a CPU of the host went to sleep: entered an idle state it must
/// wake from (cpuidle's counts; 0 without cpuidle). Work sent to a sleeping CPU waits for its
/// wake-up: at few outstanding I/Os, in the response times (crate::host::cpu_latency).
fn sleeps() -> u64 {
    sleep_counters().iter().filter_map(|f| std::fs::read_to_string(f).ok()?.trim().parse::<u64>().ok()).sum()
}

/// Each CPU's interrupts from /proc/interrupts: its column summed over every source (numbered
/// lines and the architecture's own, LOC, RES...; ERR and MIS have no per-CPU columns).
fn per_cpu_interrupts(text: &str) -> Vec<u64> {
    let mut lines = text.lines();
    let cpus = lines.next().map_or(0, |h| h.split_whitespace().count());
    let mut sum = vec![0u64; cpus];
    for line in lines {
        let mut fields = line.split_whitespace();
        if matches!(fields.next(), Some("ERR:" | "MIS:")) {
            continue;
        }
        let counts = fields.take(cpus).map_while(|v| v.parse::<u64>().ok());
        for (slot, v) in sum.iter_mut().zip(counts) {
            *slot += v;
        }
    }
    sum
}

/// How one CPU (or all of them) spent the window, in % of its time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuShare {
    /// Busy: everything but idle and iowait (iowait is idle time on Linux).
    pub utilization_pct: f64,
    /// User and nice.
    pub user_pct: f64,
    /// Kernel (Iometer's "privileged").
    pub system_pct: f64,
    /// Idle with I/O outstanding.
    pub iowait_pct: f64,
    /// Hard interrupts.
    pub irq_pct: f64,
    /// Soft interrupts (the closest to Iometer's DPC time).
    pub softirq_pct: f64,
    /// Stolen by the hypervisor.
    pub steal_pct: f64,
}

/// Each field's ticks from `a` to `b`.
fn elapsed(a: &Ticks, b: &Ticks) -> Ticks {
    std::array::from_fn(|i| b[i].saturating_sub(a[i]))
}

/// /proc/stat's ticks per second (`USER_HZ`).
fn ticks_per_sec() -> f64 {
    static HZ: OnceLock<f64> = OnceLock::new();
    // SAFETY: sysconf reads a constant of the system.
    *HZ.get_or_init(|| match unsafe { libc::sysconf(libc::_SC_CLK_TCK) } {
        n if n > 0 => n as f64,
        _ => 100.0,
    })
}

/// The ticks one CPU had between two readings: the wall clock's. A tickless kernel counts idle
/// time exactly but busy time only where a tick finds a CPU busy, so work done between two
/// idle periods that no tick saw is in no field: on a VM whose idle vCPUs halt, the fields
/// summed to 83-94 % of the wall clock while a test ran, and a share of their sum put the host
/// under iogauge's own exact CPU time.
fn window(a: &CpuSnapshot, b: &CpuSnapshot) -> f64 {
    span_s(a, b) * ticks_per_sec()
}

/// Seconds between two readings.
fn span_s(a: &CpuSnapshot, b: &CpuSnapshot) -> f64 {
    b.at.saturating_duration_since(a.at).as_secs_f64()
}

/// The ticks all the CPUs had between two readings ([`window`] for each).
fn window_of_all(a: &CpuSnapshot, b: &CpuSnapshot) -> f64 {
    window(a, b) * b.per_cpu.len().max(1) as f64
}

/// The ticks a window's shares are of: its wall clock's `wall`, never less than the fields'
/// own sum `ticked` (a tick's rounding); None for a window no tick ended in.
fn of_ticks(ticked: f64, wall: f64) -> Option<f64> {
    (ticked > 0.0).then(|| ticked.max(wall))
}

/// How a CPU (or all of them) spent a window of `wall` ticks ([`of_ticks`]): busy is what was
/// not idle; the parts are the fields' ticks, which may sum to less ([`window`]).
fn share(a: &Ticks, b: &Ticks, wall: f64) -> CpuShare {
    let d = elapsed(a, b).map(|t| t as f64);
    let Some(all) = of_ticks(d.iter().sum(), wall) else { return CpuShare::default() };
    // The ratio first: all of a fractional window is then exactly 100 %, never a rounding over.
    let pct = |v: f64| 100.0 * (v / all);
    CpuShare {
        utilization_pct: pct(all - d[3] - d[4]),
        user_pct: pct(d[0] + d[1]),
        system_pct: pct(d[2]),
        iowait_pct: pct(d[4]),
        irq_pct: pct(d[5]),
        softirq_pct: pct(d[6]),
        steal_pct: pct(d[7]),
    }
}

/// CPU over a window, as the result document holds it under `totals.cpu`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUsage {
    /// All CPUs together.
    #[serde(flatten)]
    pub all: CpuShare,
    /// Each CPU.
    pub per_cpu: Vec<CpuShare>,
    /// Interrupts per second, machine-wide.
    pub interrupts_per_sec: f64,
    /// Interrupts per second taken by each CPU (Iometer's PROCESSOR rows); empty when merged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_cpu_interrupts_per_sec: Vec<f64>,
    /// Times per second a CPU of the host went to sleep (an idle state other than polling:
    /// cpuidle's counts over all CPUs, machines added; 0 without cpuidle, and in documents
    /// written before it was recorded).
    #[serde(default)]
    pub sleeps_per_sec: f64,
    /// iogauge's own user + system CPU seconds.
    pub own_cpu_s: f64,
    /// The user part of `own_cpu_s` (the rest is system time).
    #[serde(default)]
    pub own_user_s: f64,
    /// iogauge's own CPU microseconds per completed I/O.
    pub own_us_per_io: f64,
    /// iogauge's own CPU time as % of all the host's CPUs (the scale of `utilization_pct`:
    /// the rest of that is other processes and the kernel's work for them).
    #[serde(default)]
    pub own_pct: f64,
    /// The kernel's own threads' CPU time (kworkers, ksoftirqd: the storage path's part
    /// outside iogauge, a loop device's copies among it) as % of all the host's CPUs, on the
    /// scale of `utilization_pct`; none in documents written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_threads_pct: Option<f64>,
    /// Iometer's CPU effectiveness: IOPS / utilisation %.
    pub effectiveness: f64,
}

/// /proc/stat counts in 10 ms ticks: over a shorter window than this a CPU % is not given at
/// all (one tick is 2 % of a CPU over 0.5 s).
pub const MIN_WINDOW_S: f64 = 0.5;

/// CPU between two snapshots, with `ios` completed at `iops`. Rates and iogauge's own share
/// are over the time between the snapshots, which their counters span: a recorded window
/// of 1 µs, read when the monitor woke a millisecond later, made own % 69,250.
pub fn usage(a: &CpuSnapshot, b: &CpuSnapshot, ios: u64, iops: f64) -> CpuUsage {
    let wall = window(a, b);
    let secs = span_s(a, b);
    let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let all = share(&a.total, &b.total, window_of_all(a, b));
    let own_us = (b.own_user_us + b.own_system_us).saturating_sub(a.own_user_us + a.own_system_us) as f64;
    CpuUsage {
        per_cpu: a.per_cpu.iter().zip(&b.per_cpu).map(|(x, y)| share(x, y, wall)).collect(),
        interrupts_per_sec: per_sec(b.interrupts.saturating_sub(a.interrupts)),
        per_cpu_interrupts_per_sec: a
            .per_cpu_interrupts
            .iter()
            .zip(&b.per_cpu_interrupts)
            .map(|(x, y)| per_sec(y.saturating_sub(*x)))
            .collect(),
        sleeps_per_sec: per_sec(b.sleeps.saturating_sub(a.sleeps)),
        own_cpu_s: own_us / 1e6,
        own_user_s: b.own_user_us.saturating_sub(a.own_user_us) as f64 / 1e6,
        own_us_per_io: if ios > 0 { own_us / ios as f64 } else { 0.0 },
        own_pct: if secs > 0.0 { own_us / 1e4 / (secs * b.per_cpu.len().max(1) as f64) } else { 0.0 },
        kernel_threads_pct: kernel_threads_pct(a, b),
        effectiveness: if all.utilization_pct > 0.0 { iops / all.utilization_pct } else { 0.0 },
        all,
    }
}

/// The kernel's threads' share of all the CPUs' time between `a` and `b` (in %, on the scale
/// of [`share`]: 0 over a window no tick ended in), where both were read.
fn kernel_threads_pct(a: &CpuSnapshot, b: &CpuSnapshot) -> Option<f64> {
    let ticks = b.kernel_ticks?.saturating_sub(a.kernel_ticks?) as f64;
    let ticked: u64 = elapsed(&a.total, &b.total).iter().sum();
    // Read after /proc/stat at each end: never more than all the CPUs' time.
    Some(of_ticks(ticked as f64, window_of_all(a, b)).map_or(0.0, |all| (100.0 * ticks / all).min(100.0)))
}

impl CpuUsage {
    /// Whether the host's CPU was measured: an empty usage is one not measured (fio's results
    /// read back); iogauge's own always has each CPU's share.
    pub fn measured(&self) -> bool {
        *self != CpuUsage::default()
    }

    /// Several machines' CPU as one: shares averaged over all their CPUs, interrupts and
    /// iogauge's own time added, per-I/O figures for `ios` I/Os at `iops`. Each machine keeps
    /// its own per-CPU figures; the merged one lists none.
    pub fn merge(parts: &[&CpuUsage], ios: u64, iops: f64) -> CpuUsage {
        let weights: Vec<f64> = parts.iter().map(|p| p.per_cpu.len().max(1) as f64).collect();
        let total: f64 = weights.iter().sum();
        // Each machine's % weighed by its CPUs: a % of all their CPUs together.
        let mean = |f: fn(&CpuUsage) -> f64| parts.iter().zip(&weights).map(|(p, w)| f(p) * w).sum::<f64>() / total;
        let all = CpuShare {
            utilization_pct: mean(|p| p.all.utilization_pct),
            user_pct: mean(|p| p.all.user_pct),
            system_pct: mean(|p| p.all.system_pct),
            iowait_pct: mean(|p| p.all.iowait_pct),
            irq_pct: mean(|p| p.all.irq_pct),
            softirq_pct: mean(|p| p.all.softirq_pct),
            steal_pct: mean(|p| p.all.steal_pct),
        };
        let own_cpu_s: f64 = parts.iter().map(|p| p.own_cpu_s).sum();
        CpuUsage {
            per_cpu: Vec::new(),
            interrupts_per_sec: parts.iter().map(|p| p.interrupts_per_sec).sum(),
            per_cpu_interrupts_per_sec: Vec::new(),
            sleeps_per_sec: parts.iter().map(|p| p.sleeps_per_sec).sum(),
            own_cpu_s,
            own_user_s: parts.iter().map(|p| p.own_user_s).sum(),
            own_us_per_io: if ios > 0 { own_cpu_s * 1e6 / ios as f64 } else { 0.0 },
            own_pct: mean(|p| p.own_pct),
            kernel_threads_pct: parts
                .iter()
                .zip(&weights)
                .map(|(p, w)| p.kernel_threads_pct.map(|k| k * w))
                .sum::<Option<f64>>()
                .map(|k| k / total),
            effectiveness: if all.utilization_pct > 0.0 { iops / all.utilization_pct } else { 0.0 },
            all,
        }
    }
}

/// Busy % of all CPUs between two snapshots (for interval samples and the live line).
pub fn utilization(a: &CpuSnapshot, b: &CpuSnapshot) -> f64 {
    share(&a.total, &b.total, window_of_all(a, b)).utilization_pct
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up() {
        let a = [100, 0, 50, 800, 50, 0, 0, 0];
        let b = [200, 0, 150, 1500, 150, 0, 0, 0];
        let s = share(&a, &b, 0.0);
        // 100 user + 100 system of 1000 ticks busy; 700 idle, 100 iowait.
        assert!((s.utilization_pct - 20.0).abs() < 1e-9);
        assert!((s.iowait_pct - 10.0).abs() < 1e-9);
        // The same fields over 1250 ticks of wall clock (a tickless host whose short bursts of
        // work no tick saw): busy is all that was not idle, the parts what the ticks saw.
        let s = share(&a, &b, 1250.0);
        assert!((s.utilization_pct - 36.0).abs() < 1e-9, "{s:?}");
        assert!((s.user_pct - 8.0).abs() < 1e-9 && (s.system_pct - 8.0).abs() < 1e-9, "{s:?}");
        // Never of less than the fields' own sum (a tick's rounding), nor of a window no tick
        // ended in.
        assert_eq!(share(&a, &b, 990.0), share(&a, &b, 0.0));
        assert_eq!(share(&a, &a, 50.0), CpuShare::default());
        // A whole busy window of a fractional number of ticks is 100 %, not a hair over it
        // (a report's percent axis then ran to 120).
        let busy = share(&[0; 8], &[57, 0, 0, 0, 0, 0, 0, 0], 57.0161);
        assert!(busy.utilization_pct <= 100.0, "{busy:?}");
        let snap = snapshot();
        assert!(!snap.per_cpu.is_empty() && snap.total.iter().sum::<u64>() > 0);
        assert_eq!(snap.per_cpu_interrupts.len(), snap.per_cpu.len(), "a column per CPU");
    }

    #[test]
    fn interrupts_are_summed_per_cpu_column() {
        let text = "           CPU0       CPU1\n  0:         10          2   IO-APIC   2-edge      timer\n\
                    LOC:        100        200   Local timer interrupts\nERR:          3\nMIS:          0\n";
        assert_eq!(per_cpu_interrupts(text), [110, 202]);
    }
}
