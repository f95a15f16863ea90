//! Sizes and durations as people type them (`4K`, `1M`, `500ms`, `2m`), and their serde forms.
//!
//! Sizes are binary (`1K` = 1024 bytes), as in Iometer and fio. Job files may give a size as a
//! number of bytes or a string; the resolved configuration always writes bytes.

use std::time::Duration;

use crate::error::Unreadable;

/// A size with an optional leading `-` (`-8K`): a step back.
pub fn parse_signed_size(text: &str) -> Result<i64, Unreadable> {
    let (negative, rest) = match text.trim().strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let n = i64::try_from(parse_size(rest)?).map_err(|_| Unreadable(format!("size '{text}' is too large")))?;
    Ok(if negative { -n } else { n })
}

/// Parses a count a flag gives (workers, outstanding I/Os): a whole number that fits 32 bits.
/// Clap's own parser calls -1 "too large".
pub fn parse_count(text: &str) -> Result<u32, Unreadable> {
    text.trim().parse().map_err(|_| Unreadable(format!("'{text}' is not a whole number from 0 to {}", u32::MAX)))
}

/// Parses a size: `512`, `4K`, `4k`, `4KB`, `4KiB`, `1.5G`, `2T`. Every multiple is binary
/// (`K`, `KB` and `KiB` all mean 1024), as in Iometer and fio's default; a fraction must come to
/// whole bytes (`1.5K` = 1536).
pub fn parse_size(text: &str) -> Result<u64, Unreadable> {
    let t = text.trim();
    let digits_end = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits_end);
    let bad =
        || Unreadable(format!("'{text}' is not a size: use bytes or a number with K, M, G or T (e.g. 4K, 1M, 1.5G)"));
    let shift = match suffix.trim_start().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "p" | "pb" | "pib" => 50,
        _ => return Err(bad()),
    };
    let too_large = || Unreadable(format!("size '{text}' is too large"));
    match num.split_once('.') {
        None if !num.is_empty() => {
            num.parse::<u64>().map_err(|_| too_large())?.checked_mul(1 << shift).ok_or_else(too_large)
        }
        Some((whole, frac)) if (whole, frac) != ("", "") && !frac.contains('.') => {
            // Exact arithmetic: whole and fraction apart, so 1.5G is exactly 1610612736.
            let whole: u64 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| too_large())? };
            let digits = frac.len() as u32;
            let frac_n: u128 = if frac.is_empty() { 0 } else { frac.parse().map_err(|_| bad())? };
            let scale = 10u128.checked_pow(digits).ok_or_else(bad)?;
            let frac_bytes = frac_n * (1u128 << shift);
            if frac_bytes % scale != 0 {
                return Err(Unreadable(format!(
                    "size '{text}' is not a whole number of bytes: give it in a smaller unit"
                )));
            }
            let bytes = (whole as u128) * (1u128 << shift) + frac_bytes / scale;
            u64::try_from(bytes).map_err(|_| too_large())
        }
        _ => Err(bad()),
    }
}

/// Parses a duration: `500ms`, `10s`, `2m`, `1h`, `1d`, or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, Unreadable> {
    let t = text.trim();
    let digits_end = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits_end);
    let bad = || Unreadable(format!("'{text}' is not a duration: use e.g. 500ms, 10s, 2m or 1h"));
    let n: f64 = num.parse().map_err(|_| bad())?;
    // fio's spellings too (usec, msec, sec, d), so its job files read the same.
    let secs = match unit {
        "us" | "usec" => n / 1e6,
        "ms" | "msec" => n / 1e3,
        "" | "s" | "sec" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86400.0,
        _ => return Err(bad()),
    };
    // A billion seconds (31 years) is longer than any test: what is beyond is a slip.
    if secs.is_finite() && secs > 1e9 {
        return Err(Unreadable(format!("'{text}' is too long a duration: give at most 31 years (1000000000s)")));
    }
    if !secs.is_finite() || secs < 0.0 {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Formats a size the short way: `4K`, `1M`, `512`, `1536` (only exact binary multiples get a suffix).
pub fn format_size(bytes: u64) -> String {
    for (shift, suffix) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{}{suffix}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// Formats a size for people to read in a message: `64 KiB`, `1.5 GiB`, `512 bytes`
/// (powers of 1024, as sizes are given).
pub fn human_size(bytes: u64) -> String {
    match bytes {
        1 => return "1 byte".into(),
        0..1024 => return format!("{bytes} bytes"),
        _ => {}
    }
    let (mut v, mut unit, mut size) = (bytes as f64, "bytes", 1u64);
    for u in ["KiB", "MiB", "GiB", "TiB", "PiB"] {
        if v < 1024.0 {
            break;
        }
        (v, unit, size) = (v / 1024.0, u, size << 10);
    }
    // Whole only where it is a whole number of the unit, else to a tenth (`16384.0 PiB`, 2^64 - 1
    // bytes: "16384 PiB" would read as a multiple of 512 in a message about alignment).
    if bytes % size == 0 { format!("{v} {unit}") } else { format!("{v:.1} {unit}") }
}

/// Formats a duration the way [`parse_duration`] reads it back.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if d.subsec_nanos() % 1_000_000 != 0 {
        format!("{}us", d.as_micros())
    } else if ms % 1000 != 0 {
        format!("{ms}ms")
    } else {
        format!("{}s", ms / 1000)
    }
}

/// Serde helpers so a job file may say `time = "10s"` and the resolved config writes the same.
pub mod serde_duration {
    use super::*;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes a duration as text such as `"10s"`.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(*d))
    }

    /// Reads `"10s"`-style text or a number of seconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged, expecting = "a duration such as \"10s\" or \"500ms\"")]
        enum Raw {
            Text(String),
            Secs(f64),
        }
        match Raw::deserialize(d)? {
            Raw::Text(t) => parse_duration(&t).map_err(serde::de::Error::custom),
            Raw::Secs(n) => parse_duration(&n.to_string()).map_err(serde::de::Error::custom),
        }
    }

    /// The same for an optional duration.
    pub mod option {
        use super::*;

        /// Writes `"10s"`-style text or nothing.
        pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
            match d {
                Some(d) => s.serialize_some(&format_duration(*d)),
                None => s.serialize_none(),
            }
        }

        /// Reads text, a number of seconds, or nothing.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
            #[derive(Deserialize)]
            struct Wrap(#[serde(deserialize_with = "super::deserialize")] Duration);
            Ok(Option::<Wrap>::deserialize(d)?.map(|w| w.0))
        }
    }
}

/// Serde helpers for sizes: a number of bytes or text such as `"4K"`.
pub mod serde_size {
    use super::*;
    use serde::{Deserialize, Deserializer, Serializer};

    #[derive(Deserialize)]
    #[serde(untagged, expecting = "a size such as \"4K\" or \"1G\", or a whole number of bytes")]
    enum Raw {
        Bytes(u64),
        Text(String),
    }

    fn from_raw<E: serde::de::Error>(raw: Raw) -> Result<u64, E> {
        match raw {
            Raw::Bytes(n) => Ok(n),
            Raw::Text(t) => parse_size(&t).map_err(E::custom),
        }
    }

    /// Writes bytes.
    pub fn serialize<S: Serializer>(n: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(*n)
    }

    /// Reads bytes or text.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        from_raw(Raw::deserialize(d)?)
    }

    /// The same for an optional size.
    pub mod option {
        use super::*;

        /// Writes bytes or nothing.
        pub fn serialize<S: Serializer>(n: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
            match n {
                Some(n) => s.serialize_some(n),
                None => s.serialize_none(),
            }
        }

        /// Reads bytes, text or nothing.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
            Option::<Raw>::deserialize(d)?.map(from_raw).transpose()
        }
    }

    /// The same for a signed size (`-8K`).
    pub mod signed {
        use super::*;

        #[derive(Deserialize)]
        #[serde(untagged)]
        enum SignedRaw {
            Bytes(i64),
            Text(String),
        }

        /// Writes bytes.
        pub fn serialize<S: Serializer>(n: &i64, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_i64(*n)
        }

        /// Reads bytes or text, with an optional leading `-`.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
            match SignedRaw::deserialize(d)? {
                SignedRaw::Bytes(n) => Ok(n),
                SignedRaw::Text(t) => parse_signed_size(&t).map_err(serde::de::Error::custom),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human_size(0), "0 bytes");
        assert_eq!(human_size(512), "512 bytes");
        assert_eq!(human_size(64 << 10), "64 KiB");
        assert_eq!(human_size(1536 << 20), "1.5 GiB");
        assert_eq!(human_size(1 << 30), "1 GiB");
        assert_eq!(human_size(1), "1 byte");
        assert_eq!(human_size(u64::MAX), "16384.0 PiB");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("4kib").unwrap(), 4096);
        assert_eq!(parse_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
        assert_eq!(parse_size("4KB").unwrap(), 4096);
        assert_eq!(parse_size("1.5G").unwrap(), 1_610_612_736);
        assert_eq!(parse_size("1.5K").unwrap(), 1536);
        assert_eq!(parse_size("0.5M").unwrap(), 512 << 10);
        assert_eq!(parse_size("2.25 MiB").unwrap(), 2_359_296);
        for bad in ["", "K", ".", "4Q", "-1", "1.2.3K", "0.3K", "1.5", "99999999999T", "16385P"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        for n in [512, 1024, 1536, 4096, 1 << 20, 3 << 30] {
            assert_eq!(parse_size(&format_size(n)).unwrap(), n);
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        for bad in ["", "s", "10x", "-1s", "1e999"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        // A duration, only too long, is said so.
        assert!(parse_duration("99999999h").unwrap_err().0.contains("too long a duration"));
        for d in [Duration::from_millis(1500), Duration::from_secs(7), Duration::from_micros(250)] {
            assert_eq!(parse_duration(&format_duration(d)).unwrap(), d);
        }
    }
}
