//! Where a line's random offsets fall: uniform (Iometer's), or skewed as real systems make
//! them, with fio's parameters (`random_distribution`): `zipf:THETA`, `pareto:H`,
//! `normal:STDDEV_PCT[:CENTER_PCT]` and `zoned:IO_PCT/RANGE_PCT:...` (hot spots, vdbench's
//! hotband); or every place once per pass (`lfsr`, fio's `random_generator=lfsr`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::Unreadable;

/// One zone of `zoned`: `io_pct` % of the I/Os on the next `range_pct` % of the working set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Zone {
    /// Share of the line's random I/Os, %.
    pub io_pct: f64,
    /// Share of the working set, %, laid from its start in the order given.
    pub range_pct: f64,
}

/// The law of a line's random offsets over its aligned places in the working set.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Distribution {
    /// Every place equally likely.
    #[default]
    Uniform,
    /// The k-th hottest place with probability proportional to 1 / k^theta (fio's `zipf`).
    Zipf(f64),
    /// A share `h` of the places takes a share `1 - h` of the I/Os, recursively (fio's
    /// `pareto`: `pareto:0.2` is the 80/20 rule).
    Pareto(f64),
    /// A normal law around `center_pct` % of the working set with a standard deviation of
    /// `stddev_pct` % of it, cut at its ends (drawn again when outside).
    Normal {
        /// Standard deviation, % of the working set.
        stddev_pct: f64,
        /// Mean, % of the working set from its start.
        center_pct: f64,
    },
    /// Zones of the working set taking given shares of the I/Os, uniform within each.
    Zoned(Vec<Zone>),
    /// Every place exactly once per pass over the working set, in a scrambled order that
    /// changes each pass (fio's `random_generator=lfsr`: no offset repeats until all were done).
    Lfsr,
}

impl Distribution {
    /// Whether every place is equally likely.
    pub fn is_uniform(&self) -> bool {
        *self == Distribution::Uniform
    }
}

fn number(text: &str, what: &str) -> Result<f64, Unreadable> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| Unreadable(format!("{what} '{text}' is not a finite number")))
}

/// Shares with the empty ones given the rest of 100 %, equally.
fn filled(shares: &[Option<f64>]) -> Vec<f64> {
    let empty = shares.iter().filter(|s| s.is_none()).count().max(1);
    let rest = (100.0 - shares.iter().flatten().sum::<f64>()) / empty as f64;
    shares.iter().map(|s| s.unwrap_or(rest)).collect()
}

impl FromStr for Distribution {
    type Err = Unreadable;

    fn from_str(text: &str) -> Result<Self, Unreadable> {
        let t = text.trim().to_ascii_lowercase();
        let (law, args) = t.split_once(':').unwrap_or((t.as_str(), ""));
        let usage =
            "give uniform, lfsr, zipf:THETA, pareto:H, normal:STDDEV_PCT[:CENTER_PCT] or zoned:IO/RANGE:IO/RANGE...";
        match (law, args.is_empty()) {
            ("uniform" | "random", true) => Ok(Distribution::Uniform),
            ("lfsr" | "once", true) => Ok(Distribution::Lfsr),
            ("zipf", false) => {
                let theta = number(args, "zipf's theta")?;
                if !(theta > 0.0 && theta <= 100.0) {
                    // Beyond 100 every I/O goes to the first block in f64 (2^-100 of the rest): no skew
                    // a device sees differs.
                    return Err(Unreadable(format!(
                        "zipf:{args}: theta must be above 0 and at most 100 (1.2 is a common skew)"
                    )));
                }
                Ok(Distribution::Zipf(theta))
            }
            ("pareto", false) => {
                let h = number(args, "pareto's h")?;
                if !(h > 0.0 && h < 1.0) {
                    return Err(Unreadable(format!(
                        "pareto:{args}: h must be between 0 and 1 (0.2: 80 % of I/Os on 20 % of the blocks)"
                    )));
                }
                Ok(Distribution::Pareto(h))
            }
            ("normal" | "gauss", false) => {
                let (sd, center) = args.split_once(':').unwrap_or((args, "50"));
                let (stddev_pct, center_pct) = (number(sd, "normal's deviation")?, number(center, "normal's center")?);
                if !(stddev_pct > 0.0 && stddev_pct <= 100.0 && (0.0..=100.0).contains(&center_pct)) {
                    return Err(Unreadable(format!(
                        "normal:{args}: the deviation is a % of the working set above 0 up to 100, the center 0 to 100 %"
                    )));
                }
                Ok(Distribution::Normal { stddev_pct, center_pct })
            }
            ("zoned", false) => {
                // As fio parses it: a share left empty (`20/`) is the rest of 100 %, shared
                // equally among the empty ones.
                let share = |t: &str, what: &str| match t.trim() {
                    "" => Ok(None),
                    t => number(t, what).map(Some),
                };
                let (mut ios, mut ranges, mut texts) = (Vec::new(), Vec::new(), Vec::new());
                for z in args.split(':') {
                    let (io, range) =
                        z.split_once('/').ok_or_else(|| Unreadable(format!("zoned: '{z}' is not IO_PCT/RANGE_PCT")))?;
                    ios.push(share(io, "a zone's I/O %")?);
                    ranges.push(share(range, "a zone's range %")?);
                    texts.push(z);
                }
                let mut zones = Vec::new();
                for ((io_pct, range_pct), z) in filled(&ios).into_iter().zip(filled(&ranges)).zip(texts) {
                    let zone = Zone { io_pct, range_pct };
                    if zone.io_pct < 0.0 || zone.range_pct < 0.0 || (zone.io_pct > 0.0 && zone.range_pct == 0.0) {
                        return Err(Unreadable(format!(
                            "zoned: '{z}': shares are 0 to 100 %, and I/Os need a range to land in"
                        )));
                    }
                    zones.push(zone);
                }
                let (io, range): (f64, f64) =
                    zones.iter().fold((0.0, 0.0), |(a, b), z| (a + z.io_pct, b + z.range_pct));
                if (io - 100.0).abs() > 1e-9 || (range - 100.0).abs() > 1e-9 {
                    return Err(Unreadable(format!(
                        "zoned:{args}: the I/O shares sum to {io} % and the ranges to {range} %; both must sum to 100 \
                         (zoned:80/20:20/80 is 80 % of I/Os on 20 % of the working set)"
                    )));
                }
                Ok(Distribution::Zoned(zones))
            }
            _ => Err(Unreadable(format!("distribution '{text}': {usage}"))),
        }
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Distribution::Uniform => write!(f, "uniform"),
            Distribution::Lfsr => write!(f, "lfsr"),
            Distribution::Zipf(theta) => write!(f, "zipf:{theta}"),
            Distribution::Pareto(h) => write!(f, "pareto:{h}"),
            Distribution::Normal { stddev_pct, center_pct } => write!(f, "normal:{stddev_pct}:{center_pct}"),
            Distribution::Zoned(zones) => {
                let z: Vec<String> = zones.iter().map(|z| format!("{}/{}", z.io_pct, z.range_pct)).collect();
                write!(f, "zoned:{}", z.join(":"))
            }
        }
    }
}

impl Serialize for Distribution {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Distribution {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_as_written_and_written_back() {
        for text in [
            "uniform",
            "lfsr",
            "zipf:1.2",
            "pareto:0.2",
            "normal:10:50",
            "zoned:80/20:20/80",
            "zoned:60/10:30/20:10/70",
        ] {
            let d: Distribution = text.parse().unwrap();
            assert_eq!(d.to_string(), text);
        }
        assert_eq!(
            "normal:5".parse::<Distribution>().unwrap(),
            Distribution::Normal { stddev_pct: 5.0, center_pct: 50.0 }
        );
        // fio's empty shares: the rest of 100 %, shared equally among them.
        for (text, full) in [
            ("zoned:50/5:30/15:20/", "zoned:50/5:30/15:20/80"),
            ("zoned:50/10:25/:25/", "zoned:50/10:25/45:25/45"),
            ("zoned:60/10:/90", "zoned:60/10:40/90"),
        ] {
            assert_eq!(text.parse::<Distribution>().unwrap().to_string(), full, "{text}");
        }
        for bad in [
            "zipf",
            "zipf:0",
            "pareto:1",
            "normal:0",
            "zoned:80/20",
            "zoned:50/0:50/100",
            "hot",
            "zipf:x",
            "zoned:50/60:30/50:20/",
        ] {
            assert!(bad.parse::<Distribution>().is_err(), "{bad}");
        }
    }
}
