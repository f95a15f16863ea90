//! The machine and the process a test runs in: the host's description for the result
//! (`HostInfo`, here), its CPUs (`cpu`: the host's time, the kernel's threads', a thread's
//! waits; `cpu_latency`: CPUs held awake; `cpu_groups`: a CPU cgroup per worker; `placement`:
//! CPUs and NUMA nodes), the test's session and nice value (`session`), its stops (`stops`:
//! Ctrl-Z timed, SIGSTOP counted), what sysfs says of a block device (`sysblock`), what a path
//! is (`files`: a device, a size), the files a command reads (`inputs`) and where iogauge
//! keeps what outlives a run (`dirs`).

pub(crate) mod cpu;
pub(crate) mod cpu_groups;
pub(crate) mod cpu_latency;
pub(crate) mod dirs;
pub(crate) mod files;
pub(crate) mod inputs;
pub(crate) mod placement;
pub mod session;
pub(crate) mod stops;
pub(crate) mod sysblock;

use serde::{Deserialize, Serialize};

/// What the result document records about the machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    /// Host name.
    pub name: String,
    /// Kernel release and version (uname -r, -v).
    pub kernel: String,
    /// Distribution (os-release PRETTY_NAME).
    pub os: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Online CPUs.
    pub cpus: usize,
    /// Memory in bytes.
    pub memory_bytes: u64,
    /// The device model behind each target of the test.
    pub devices: Vec<DeviceModel>,
    /// Where the test's CPU time was grouped (crate::host::session): `own` session (the default),
    /// the caller's (`shared`), its CPU cgroup (`cgroup`: no autogroup applies), or `off` (no autogroups);
    /// empty in documents written before it was recorded.
    #[serde(default)]
    pub autogroup: String,
    /// How idle CPUs sleep while the test runs ([`crate::host::cpu_latency::describe`]): `haltpoll
    /// (guest_halt_poll_ns 0), held to wake within 0 µs`; empty in documents written before it
    /// was recorded.
    #[serde(default)]
    pub cpu_idle: String,
    /// Whether each worker ran in a CPU cgroup of its own, its io-wq threads with it
    /// ([`crate::host::cpu_groups`]); false in documents written before it was recorded.
    #[serde(default)]
    pub worker_cgroups: bool,
}

impl HostInfo {
    /// The machine as labelled facts, in the order a report lists them: what the document
    /// recorded (a fact recorded only by later versions is left out where empty).
    pub fn facts(&self) -> Vec<(&'static str, String)> {
        let facts = [
            ("host", self.name.clone()),
            ("system", self.os.clone()),
            ("kernel", self.kernel.clone()),
            ("CPU", format!("{} x {}", self.cpus, self.cpu_model)),
            ("idle CPUs", self.cpu_idle.clone()),
            ("CPU time grouped by", self.grouped()),
            ("memory", crate::units::human_size(self.memory_bytes)),
        ];
        facts.into_iter().filter(|(_, v)| !v.is_empty()).collect()
    }

    /// Where the test's CPU time was grouped, as a report says it.
    fn grouped(&self) -> String {
        match (self.autogroup.as_str(), self.worker_cgroups) {
            // A document from before either was recorded.
            ("", _) => String::new(),
            (g, true) => format!("{g}; each worker in a CPU cgroup of its own"),
            (g, false) => g.to_string(),
        }
    }
}

/// A target and the device behind it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceModel {
    /// Target path.
    pub target: String,
    /// Device model, or what backs a loop, zram or dm device or a file.
    pub model: String,
}

fn uname() -> (String, String, String) {
    // SAFETY: uname fills the zeroed struct; its fields are NUL-terminated.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        libc::uname(&mut u);
        let s = |f: &[libc::c_char]| std::ffi::CStr::from_ptr(f.as_ptr()).to_string_lossy().into_owned();
        (s(&u.nodename), s(&u.release), s(&u.version))
    }
}

/// This host's name (uname's nodename).
pub fn name() -> String {
    uname().0
}

/// Reads the host's description; `devices` names the test's targets and their devices.
pub fn current(devices: Vec<DeviceModel>) -> HostInfo {
    let (name, release, version) = uname();
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let field = |text: &str, key: &str| {
        text.lines()
            .find_map(|l| {
                l.strip_prefix(key).map(|v| v.trim_start_matches([' ', '\t', ':', '=']).trim_matches('"').to_string())
            })
            .unwrap_or_default()
    };
    let mem_kib: u64 = field(&read("/proc/meminfo"), "MemTotal").trim_end_matches(" kB").parse().unwrap_or(0);
    HostInfo {
        name,
        kernel: format!("{release} {version}"),
        os: field(&read("/etc/os-release"), "PRETTY_NAME"),
        cpu_model: field(&cpuinfo, "model name"),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes: mem_kib * 1024,
        devices,
        autogroup: crate::host::session::autogroup().to_string(),
        cpu_idle: crate::host::cpu_latency::describe(),
        worker_cgroups: false,
    }
}

/// Bytes of memory available for new allocations (MemAvailable), if the kernel says.
pub fn memory_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

/// About how many more threads this process may start: the tightest of the kernel's limit
/// (threads-max), its mappings (vm.max_map_count), this cgroup's (pids.max) and the user's
/// (RLIMIT_NPROC), less those in use.
/// None if no limit can be read.
pub fn threads_left() -> Option<u64> {
    let num = |path: &str| std::fs::read_to_string(path).ok()?.trim().parse::<u64>().ok();
    let mut left: Vec<u64> = Vec::new();
    // /proc/loadavg's 4th field: running/total scheduling entities (threads) on the system.
    let total = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().nth(3)?.split_once('/')?.1.parse::<u64>().ok());
    if let (Some(max), Some(total)) = (num("/proc/sys/kernel/threads-max"), total) {
        left.push(max.saturating_sub(total));
    }
    // Each thread maps its stack, a guard page and a signal stack with its own guard: about 4
    // of the process's vm.max_map_count mappings.
    let maps = std::fs::read_to_string("/proc/self/maps").map(|m| m.lines().count() as u64).ok();
    if let (Some(max), Some(maps)) = (num("/proc/sys/vm/max_map_count"), maps) {
        left.push(max.saturating_sub(maps) / 4);
    }
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok();
    if let Some(dir) = cgroup.as_deref().and_then(|c| c.lines().find_map(|l| l.strip_prefix("0::"))) {
        let base = format!("/sys/fs/cgroup{}", dir.trim_end_matches('/'));
        if let (Some(max), Some(cur)) = (num(&format!("{base}/pids.max")), num(&format!("{base}/pids.current"))) {
            left.push(max.saturating_sub(cur));
        }
    }
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit into the struct we own. Root is not held to it.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut lim) } == 0
        && lim.rlim_cur != libc::RLIM_INFINITY
        // SAFETY: as above.
        && unsafe { libc::geteuid() } != 0
    {
        left.push(lim.rlim_cur.saturating_sub(total.unwrap_or(0).min(lim.rlim_cur)));
    }
    left.into_iter().min()
}
