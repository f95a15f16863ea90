//! The theoretical maximum of the storage behind the targets, by seed 000's rules: a volume
//! (target) is a RAID set of identical drives, whose data drives each stream at the drive's
//! rate (RAID 0: all N; RAID 5: N - 1; RAID 6: N - 2; RAID 1 and 10: every drive reads, one
//! copy of each mirror writes), capped by the links in front of the volume (112 MB/s per
//! Gigabit Ethernet port, in the seed). N volumes give N times one.
//!
//! ```toml
//! [storage]
//! raid = "5"
//! drives = 4             # per volume
//! drive_read_mbps = 60
//! drive_write_mbps = 40
//! drive_iops = 150       # optional: random I/O
//! links = 2              # per volume, optional
//! link_mbps = 112
//! # or, instead of the drive_ figures: baseline = "baseline.json" (iogauge study baseline)
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Result, input};

/// The `[storage]` section: what is behind each target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Storage {
    /// RAID level of each volume: `jbod`, `0`, `1`, `5`, `6` or `10`.
    pub raid: String,
    /// Drives per volume.
    pub drives: u32,
    /// A baseline study document (`iogauge study baseline --json FILE`, relative to the job
    /// file) whose measured figures fill the drive rates not given here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// One drive's sequential read rate (10^6 bytes/s).
    #[serde(default)]
    pub drive_read_mbps: f64,
    /// One drive's sequential write rate (10^6 bytes/s).
    #[serde(default)]
    pub drive_write_mbps: f64,
    /// One drive's random I/Os per second, for random workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drive_iops: Option<f64>,
    /// Links in front of each volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<u32>,
    /// One link's rate (10^6 bytes/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_mbps: Option<f64>,
}

/// What limits a theoretical maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    /// The drives' own rate.
    Drives,
    /// The drives, less those holding parity (RAID 5 and 6) or second copies (writes to mirrors).
    Parity,
    /// The links in front of the volumes.
    Links,
}

/// A theoretical maximum and what sets it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Theory {
    /// The maximum, in the unit of the workload (MB/s for sequential, IOPS for random).
    pub value: f64,
    /// What sets it.
    pub limit: Limiter,
}

impl Storage {
    /// Checks the section; the message names the key.
    pub fn validate(&self) -> Result<()> {
        let min = match self.raid.as_str() {
            "jbod" => 1,
            "0" | "1" => 2,
            "5" => 3,
            "6" | "10" => 4,
            r => return Err(input(format!("raid = \"{r}\": give jbod, 0, 1, 5, 6 or 10"))),
        };
        if self.raid == "jbod" && self.drives != 1 {
            return Err(input(format!("drives = {}: a jbod volume is one drive", self.drives)));
        }
        if self.drives < min || (self.raid == "10" && self.drives % 2 != 0) {
            return Err(input(format!(
                "drives = {}: RAID {} needs at least {min}{}",
                self.drives,
                self.raid,
                if self.raid == "10" { ", an even number" } else { "" }
            )));
        }
        if self.drive_read_mbps == 0.0 || self.drive_write_mbps == 0.0 {
            return Err(input(
                "give drive_read_mbps and drive_write_mbps, or baseline = \"FILE\" from iogauge study baseline",
            ));
        }
        for (k, v) in [
            ("drive_read_mbps", Some(self.drive_read_mbps)),
            ("drive_write_mbps", Some(self.drive_write_mbps)),
            ("drive_iops", self.drive_iops),
            ("link_mbps", self.link_mbps),
        ] {
            if let Some(v) = v {
                if !(v > 0.0 && v.is_finite()) {
                    return Err(input(format!("{k} = {v}: give a positive rate")));
                }
            }
        }
        if self.links.is_some() != self.link_mbps.is_some() || self.links == Some(0) {
            return Err(input("links and link_mbps go together: give both, links at least 1"));
        }
        Ok(())
    }

    /// Data-carrying drives of a volume for reads and for writes.
    fn data_drives(&self) -> (f64, f64) {
        let n = self.drives as f64;
        match self.raid.as_str() {
            "5" => (n - 1.0, n - 1.0),
            "6" => (n - 2.0, n - 2.0),
            "1" => (n, 1.0),
            "10" => (n, n / 2.0),
            _ => (n, n), // jbod, 0
        }
    }

    /// The limiter when the drives set the maximum.
    fn drive_limit(&self, write: bool) -> Limiter {
        let (r, w) = self.data_drives();
        if (if write { w } else { r }) < self.drives as f64 { Limiter::Parity } else { Limiter::Drives }
    }

    /// Sequential MB/s of `volumes` volumes for a workload reading `read_share` (0..=1) of its
    /// bytes: each direction at its rate, mixed by time (bytes / rate summed).
    pub fn mbps(&self, volumes: u32, read_share: f64) -> Theory {
        let (r, w) = self.data_drives();
        let (read, write) = (r * self.drive_read_mbps, w * self.drive_write_mbps);
        let drives = match read_share {
            1.0 => read,
            0.0 => write,
            r => 1.0 / (r / read + (1.0 - r) / write),
        };
        let per_volume = match (self.links, self.link_mbps) {
            (Some(n), Some(rate)) if n as f64 * rate < drives => {
                Theory { value: n as f64 * rate, limit: Limiter::Links }
            }
            _ => Theory { value: drives, limit: self.drive_limit(read_share < 0.5) },
        };
        Theory { value: per_volume.value * volumes as f64, ..per_volume }
    }

    /// Random IOPS of `volumes` volumes for a workload with `read_share` of its I/Os reads;
    /// writes cost the usual RAID penalty (2 drive I/Os on mirrors, 4 on RAID 5, 6 on RAID 6).
    pub fn iops(&self, volumes: u32, read_share: f64) -> Option<Theory> {
        let d = self.drive_iops?;
        let penalty = match self.raid.as_str() {
            "1" | "10" => 2.0,
            "5" => 4.0,
            "6" => 6.0,
            _ => 1.0,
        };
        let per_io = read_share + (1.0 - read_share) * penalty; // drive I/Os per I/O
        let value = self.drives as f64 * d / per_io * volumes as f64;
        let limit = if penalty > 1.0 && read_share < 1.0 { Limiter::Parity } else { Limiter::Drives };
        Some(Theory { value, limit })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn storage(raid: &str, drives: u32, links: Option<u32>) -> Storage {
        Storage {
            raid: raid.into(),
            drives,
            baseline: None,
            drive_read_mbps: 60.0,
            drive_write_mbps: 40.0,
            drive_iops: Some(150.0),
            links,
            link_mbps: links.map(|_| 112.0),
        }
    }

    /// Seed 000's own arithmetic.
    #[test]
    fn reproduces_seed_000() {
        // Section 3: RAID 5 of 4 drives: 120 MB/s writes and 180 MB/s reads per volume, x 4.
        let r5 = storage("5", 4, None);
        assert_eq!(r5.mbps(1, 0.0), Theory { value: 120.0, limit: Limiter::Parity });
        assert_eq!(r5.mbps(4, 0.0).value, 480.0);
        assert_eq!(r5.mbps(4, 1.0).value, 720.0);
        // Section 4.1: RAID 0 of 4 drives behind 2 GbE ports: 160 MB/s writes, reads capped at 224.
        let r0 = storage("0", 4, Some(2));
        assert_eq!(r0.mbps(1, 0.0), Theory { value: 160.0, limit: Limiter::Drives });
        assert_eq!(r0.mbps(1, 1.0), Theory { value: 224.0, limit: Limiter::Links });
        assert_eq!(r0.mbps(4, 0.0).value, 640.0);
        // Section 4.3: 8 volumes of 2-drive RAID 0, one port each: 640 MB/s writes, 896 reads.
        let narrow = storage("0", 2, Some(1));
        assert_eq!(narrow.mbps(8, 0.0).value, 640.0);
        assert_eq!(narrow.mbps(8, 1.0), Theory { value: 896.0, limit: Limiter::Links });
        // Section 6.1: a 7-wide RAID 0 reads 420 MB/s, less than 4 ports (448).
        assert_eq!(storage("0", 7, Some(4)).mbps(1, 1.0), Theory { value: 420.0, limit: Limiter::Drives });
    }

    #[test]
    fn mixes_mirrors_and_random() {
        let r1 = storage("1", 2, None);
        assert_eq!(r1.mbps(1, 1.0).value, 120.0);
        assert_eq!(r1.mbps(1, 0.0), Theory { value: 40.0, limit: Limiter::Parity });
        // Half the bytes each way at 100 and 300 MB/s: 150 MB/s.
        let mut s = storage("0", 1, None);
        s.drive_read_mbps = 300.0;
        s.drive_write_mbps = 100.0;
        assert_eq!(s.mbps(1, 0.5).value, 150.0);
        // RAID 5 random: reads 4 x 150, writes a quarter of that.
        assert_eq!(r5_iops(1.0), 600.0);
        assert_eq!(r5_iops(0.0), 150.0);
    }

    fn r5_iops(read: f64) -> f64 {
        storage("5", 4, None).iops(1, read).unwrap().value
    }

    #[test]
    fn bad_sections_say_why() {
        assert!(storage("7", 4, None).validate().unwrap_err().to_string().contains("raid = \"7\""));
        assert!(storage("5", 2, None).validate().unwrap_err().to_string().contains("at least 3"));
        assert!(storage("10", 5, None).validate().unwrap_err().to_string().contains("even"));
        let mut s = storage("0", 2, Some(1));
        s.link_mbps = None;
        assert!(s.validate().unwrap_err().to_string().contains("go together"));
        assert!(storage("5", 4, Some(2)).validate().is_ok());
    }
}
