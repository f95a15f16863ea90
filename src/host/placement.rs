//! Where work runs: the CPUs a worker may use (its affinity) and the NUMA node of a CPU or a
//! device, read from sysfs as `numactl --hardware` and `lstopo` do.

use std::path::PathBuf;

/// The most CPUs the kernel numbers (its `NR_CPUS` at most): a CPU number is below it, so a
/// list is at most this long however wide a range it gives (`0-4294967295` would be 16 GiB).
const MOST_CPUS: u32 = 8192;

/// Parses a CPU list as the kernel writes one (`0-3,6,8-9`): sorted, without repeats.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, String> {
    let mut cpus = Vec::new();
    let text = text.trim();
    for part in text.split(',').filter(|_| !text.is_empty()) {
        let number = |s: &str| match s.trim().parse::<u32>() {
            Ok(n) if n < MOST_CPUS => Ok(n),
            Ok(n) => Err(format!("CPU {n}: the kernel numbers CPUs from 0 to {}", MOST_CPUS - 1)),
            Err(_) => Err(format!("'{part}' is not a CPU number or range")),
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b)?);
                if a > b {
                    return Err(format!("'{part}': a range goes from low to high"));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(number(part)?),
        }
    }
    if cpus.is_empty() {
        return Err("no CPU given".into());
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Writes `cpus` as the kernel does (`0-3,6`).
pub fn cpu_list(cpus: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    out.join(",")
}

/// The CPUs this process may run on (its affinity: a container's or taskset's limit, not the
/// whole machine's).
pub fn usable_cpus() -> Vec<u32> {
    thread_cpus().unwrap_or_default()
}

/// The host's online CPUs, whatever this process may use.
pub fn online_cpus() -> Vec<u32> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| parse_cpu_list(&t).ok())
        .unwrap_or_default()
}

/// The CPUs the calling thread may run on.
pub fn thread_cpus() -> std::io::Result<Vec<u32>> {
    // SAFETY: cpu_set_t is plain bits; sched_getaffinity writes at most its size into it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: CPU_ISSET reads a bit of the set, in range below CPU_SETSIZE.
    Ok((0..libc::CPU_SETSIZE as u32).filter(|&c| unsafe { libc::CPU_ISSET(c as usize, &set) }).collect())
}

/// Restricts the calling thread to `cpus`.
pub fn pin_thread(cpus: &[u32]) -> std::io::Result<()> {
    let set = crate::host::cpu::cpu_set(cpus);
    // SAFETY: sched_setaffinity reads the set it is given.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The NUMA nodes that have CPUs or memory; empty where the kernel has no NUMA support.
fn online_nodes() -> Vec<u32> {
    std::fs::read_to_string("/sys/devices/system/node/online")
        .ok()
        .and_then(|t| parse_cpu_list(&t).ok())
        .unwrap_or_default()
}

/// The NUMA node of `cpu` (its `nodeN` link in sysfs).
pub fn node_of_cpu(cpu: u32) -> Option<u32> {
    let dir = std::fs::read_dir(format!("/sys/devices/system/cpu/cpu{cpu}")).ok()?;
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("node")?.parse().ok()).next()
}

/// The NUMA nodes of `cpus`, sorted, without repeats.
pub fn nodes_of_cpus(cpus: &[u32]) -> Vec<u32> {
    let mut nodes: Vec<u32> = cpus.iter().filter_map(|&c| node_of_cpu(c)).collect();
    nodes.sort_unstable();
    nodes.dedup();
    nodes
}

/// The NUMA node of block device `rdev`: the `numa_node` of the nearest device above it
/// in sysfs (the PCI function of an NVMe or SCSI controller; a partition's disk's), or on a
/// machine of one node, that node. None for a virtual device (loop, zram) on a machine of
/// several nodes, or one whose bus has no affinity (`-1`) there.
pub fn node_of_device(rdev: u64) -> Option<u32> {
    let nodes = online_nodes();
    let mut at: Option<PathBuf> = std::fs::canonicalize(crate::host::sysblock::dir(rdev)).ok();
    while let Some(dir) = at {
        if let Ok(text) = std::fs::read_to_string(dir.join("numa_node"))
            .or_else(|_| std::fs::read_to_string(dir.join("device/numa_node")))
        {
            if let Ok(n) = text.trim().parse::<u32>() {
                return Some(n);
            }
            break;
        }
        at = dir.parent().filter(|p| p.starts_with("/sys/devices")).map(PathBuf::from);
    }
    (nodes.len() == 1).then(|| nodes[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_read_and_write_as_the_kernel_does() {
        assert_eq!(parse_cpu_list("0-3,6,8-9\n").unwrap(), vec![0, 1, 2, 3, 6, 8, 9]);
        assert_eq!(parse_cpu_list("2,0,2").unwrap(), vec![0, 2]);
        assert_eq!(cpu_list(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(cpu_list(&[5]), "5");
        assert!(parse_cpu_list("3-1").unwrap_err().contains("low to high"));
        assert!(parse_cpu_list("a").unwrap_err().contains("not a CPU"));
        assert!(parse_cpu_list("").is_err());
        // An empty item is a slip, not a list's end; a range is bounded before it is made (one
        // to 4294967295 took 21 GB and the OOM killer).
        assert!(parse_cpu_list("0,,1").unwrap_err().contains("not a CPU"));
        assert!(
            parse_cpu_list("0-4294967295")
                .unwrap_err()
                .contains("CPU 4294967295: the kernel numbers CPUs from 0 to 8191")
        );
        assert_eq!(parse_cpu_list("8191").unwrap(), vec![8191]);
    }
}
