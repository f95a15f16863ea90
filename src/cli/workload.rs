//! An access specification from flags, in Iometer's words (`--bs`, `--read`, `--random`,
//! `--align`) or fio's (`--rw`, `--rwmixread`): `iogauge run --bs 16K --read 70 --random 100`.

use clap::Args;

use crate::error::{Result, input};
use crate::import::fio;
use crate::spec::{AccessSpec, SpecLine, find_builtin};
use crate::units::{format_size, parse_size};

/// The flags that describe one access specification.
#[derive(Args, Debug, Default)]
pub struct SpecFlags {
    /// Transfer size, or a mix of sizes with their % of I/Os: 4K:60,64K:40 (fio's 4k/60:64k/40
    /// too). Default 4K.
    #[arg(long, value_name = "SIZE|MIX")]
    pub bs: Option<String>,
    /// % of I/Os that read (default 100; fio: --rwmixread).
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u32).range(0..=100))]
    pub read: Option<u32>,
    /// % of I/Os that trim (discard) their blocks; writes are what reads and trims leave
    /// (default 0; fio: --rw randtrim, trimwrite).
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u32).range(0..=100))]
    pub trim: Option<u32>,
    /// % of I/Os at random offsets, the rest sequential (default 100).
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u32).range(0..=100))]
    pub random: Option<u32>,
    /// Alignment of random offsets (default: the transfer size).
    #[arg(long, value_parser = parse_size, value_name = "SIZE")]
    pub align: Option<u64>,
    /// fio's pattern: read, write, randread, randwrite, rw (readwrite) or randrw; `:N` as fio's
    /// (randread:8, a new random offset every 8 I/Os; write:4K, a 4 KiB hole after each I/O).
    #[arg(long, value_name = "PATTERN")]
    pub rw: Option<String>,
    /// fio's % of reads in rw/randrw (default 50), as --read.
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u32).range(0..=100))]
    pub rwmixread: Option<u32>,
}

impl SpecFlags {
    /// Whether any of these flags is given.
    pub fn any(&self) -> bool {
        self.bs.is_some()
            || self.read.is_some()
            || self.trim.is_some()
            || self.random.is_some()
            || self.align.is_some()
            || self.rw.is_some()
            || self.rwmixread.is_some()
    }

    /// The access specification the flags describe, named by what it does: a built-in name
    /// where one fits (`random-read-16k`), else e.g. `16k-read70-random100`.
    pub fn spec(&self) -> Result<AccessSpec> {
        let pattern = self.pattern()?;
        let (read, random, trim) = (pattern.read.unwrap_or(100), pattern.random, pattern.trim);
        let plain = (pattern.seek_every, pattern.skip, self.align, trim) == (1, 0, None, 0);
        let sizes = match &self.bs {
            Some(bs) => mix(bs)?,
            None => vec![(4096, 100)],
        };
        let family = match (read, random) {
            (100, 100) => Some("random-read"),
            (0, 100) => Some("random-write"),
            (100, 0) => Some("streaming-read"),
            (0, 0) => Some("streaming-write"),
            _ => None,
        };
        if let (Some(family), [(size, _)], true) = (family, sizes.as_slice(), plain) {
            return find_builtin(&format!("{family}-{}", format_size(*size)));
        }
        if let ([(size, _)], 100) = (sizes.as_slice(), trim) {
            // fio's trim patterns: random-trim-64k, streaming-trim-then-write-4k.
            let how = if random == 100 { "random" } else { "streaming" };
            let then = if pattern.write_trimmed { "-then-write" } else { "" };
            let name = format!("{how}-trim{then}-{}", format_size(*size).to_lowercase());
            let line = SpecLine { trim, write_trimmed: pattern.write_trimmed, ..SpecLine::new(*size, 100, 0, random) };
            return Ok(AccessSpec {
                name,
                description: "from the command line".into(),
                lines: vec![line],
                ..Default::default()
            });
        }
        let sizes_name: Vec<String> = match sizes.as_slice() {
            [(size, _)] => vec![format_size(*size)],
            _ => sizes.iter().map(|(s, p)| format!("{}:{p}", format_size(*s))).collect(),
        };
        let trims = match (trim, pattern.write_trimmed) {
            (0, _) => String::new(),
            (t, false) => format!("-trim{t}"),
            (t, true) => format!("-trim{t}-then-write"),
        };
        let mut name = format!("{}-read{read}{trims}-random{random}", sizes_name.join(",")).to_lowercase();
        if let Some(a) = self.align {
            name.push_str(&format!("-align{}", format_size(a).to_lowercase()));
        }
        if pattern.seek_every > 1 {
            name.push_str(&format!("-seek{}", pattern.seek_every));
        }
        if pattern.skip != 0 {
            let sign = if pattern.skip < 0 { "-" } else { "" };
            name.push_str(&format!("-skip{sign}{}", format_size(pattern.skip.unsigned_abs()).to_lowercase()));
        }
        // fio's --rw keeps fio's sequential place per direction; Iometer's --read/--random its one.
        let per_direction = self.rw.is_some() && random < 100 && !matches!(read, 0 | 100);
        if per_direction {
            name.push_str("-per-direction");
        }
        let lines = sizes
            .iter()
            .map(|&(size, share)| SpecLine {
                align: self.align,
                seek_every: pattern.seek_every,
                skip: pattern.skip,
                trim,
                write_trimmed: pattern.write_trimmed,
                ..SpecLine::new(size, share, read, random)
            })
            .collect();
        let spec = AccessSpec {
            name,
            description: "from the command line".into(),
            lines,
            sequential_per_direction: per_direction,
            random_map: false,
        };
        spec.validate().map_err(|e| {
            let e = e.to_string();
            let why = e.split_once(": ").map_or(e.as_str(), |(_, why)| why);
            input(format!("--bs {}: {why}", self.bs.as_deref().unwrap_or("4K")))
        })?;
        Ok(spec)
    }

    /// % read and % random from Iometer's flags or fio's pattern (with its `:N`), `read` always
    /// given; contradictions refused.
    fn pattern(&self) -> Result<fio::Pattern> {
        if let (Some(r), Some(m)) = (self.read, self.rwmixread) {
            if r != m {
                return Err(input(format!("--read {r} and --rwmixread {m} say different things: give one")));
            }
        }
        let asked_read = self.read.or(self.rwmixread);
        let Some(rw) = &self.rw else {
            let trim = self.trim.unwrap_or(0);
            let read = asked_read.unwrap_or(100 - trim);
            if read + trim > 100 {
                return Err(input(format!("--read {read} and --trim {trim} make more than 100 %: lower one")));
            }
            let random = self.random.unwrap_or(100);
            return Ok(fio::Pattern { read: Some(read), random, seek_every: 1, skip: 0, trim, write_trimmed: false });
        };
        if self.trim.is_some() {
            return Err(input(format!(
                "--trim and --rw {rw} both say what to do: give --rw randtrim, or --trim with --read"
            )));
        }
        let pattern = fio::pattern(rw).map_err(|e| input(format!("--rw {rw}: {e}")))?;
        let random = pattern.random;
        if let Some(r) = self.random {
            if r != random {
                return Err(input(format!(
                    "--random {r} contradicts --rw {rw} ({random} % random): give --random with --read instead of --rw"
                )));
            }
        }
        let read = match (pattern.read, asked_read) {
            (Some(p), Some(a)) if p != a => {
                return Err(input(format!(
                    "--read/--rwmixread {a} contradicts --rw {rw}: use --rw {}rw to mix reads and writes",
                    if random == 100 { "rand" } else { "" }
                )));
            }
            (Some(p), _) => p,
            (None, a) => a.unwrap_or(50),
        };
        Ok(fio::Pattern { read: Some(read), ..pattern })
    }
}

/// A transfer size or a mix: `16K`, `4K:60,64K:40`, or fio's bssplit form `4k/60:64k/40`.
fn mix(text: &str) -> Result<Vec<(u64, u32)>> {
    let fio_form = text.contains('/');
    let (items, pair) = if fio_form { (text.split(':'), '/') } else { (text.split(','), ':') };
    let items: Vec<&str> = items.collect();
    if items.len() == 1 && !text.contains(pair) {
        let size = parse_size(text).map_err(|e| input(format!("--bs: {e}")))?;
        return Ok(vec![(size, 100)]);
    }
    let mut sizes = Vec::new();
    for item in items {
        let Some((size, share)) = item.split_once(pair) else {
            return Err(input(format!(
                "--bs {text}: '{item}' has no share; give every size its % of I/Os, e.g. 4K:60,64K:40 \
                 (fio's --bs READ,WRITE form is not supported)"
            )));
        };
        let size = parse_size(size).map_err(|e| input(format!("--bs {text}: {e}")))?;
        let share: u32 = share
            .trim()
            .trim_end_matches('%')
            .parse()
            .map_err(|_| input(format!("--bs {text}: '{share}' is not a % of I/Os")))?;
        if share == 0 {
            return Err(input(format!("--bs {text}: '{item}' has a share of 0 %: leave it out, or give it a share")));
        }
        sizes.push((size, share));
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(
        bs: Option<&str>,
        read: Option<u32>,
        random: Option<u32>,
        rw: Option<&str>,
        mix: Option<u32>,
    ) -> SpecFlags {
        SpecFlags {
            bs: bs.map(Into::into),
            read,
            random,
            align: None,
            rw: rw.map(Into::into),
            rwmixread: mix,
            trim: None,
        }
    }

    fn lines(f: &SpecFlags) -> (String, Vec<(u64, u32, u32, u32)>) {
        let s = f.spec().unwrap();
        (s.name, s.lines.iter().map(|l| (l.size, l.share, l.read, l.random)).collect())
    }

    #[test]
    fn iometer_words_and_fio_words_mean_the_same() {
        let a = lines(&flags(Some("16K"), Some(70), Some(100), None, None));
        assert_eq!(a, ("16k-read70-random100".into(), vec![(16384, 100, 70, 100)]));
        assert_eq!(lines(&flags(Some("16k"), None, None, Some("randrw"), Some(70))), a);
        assert_eq!(lines(&flags(Some("16k"), Some(70), None, Some("randrw"), None)), a);
        // fio's default mix is 50 %; a sequential mix is rw.
        assert_eq!(lines(&flags(None, None, None, Some("rw"), None)).1, vec![(4096, 100, 50, 0)]);
        // Plain patterns are the built-in families.
        assert_eq!(lines(&flags(Some("64k"), None, None, Some("write"), None)).0, "streaming-write-64k");
        assert_eq!(lines(&flags(Some("1m"), None, None, Some("READ"), None)).0, "streaming-read-1m");
        assert_eq!(lines(&flags(None, None, None, Some("randwrite"), None)).0, "random-write-4k");
        assert_eq!(lines(&flags(Some("16k"), None, None, None, None)).0, "random-read-16k");
        assert_eq!(lines(&flags(None, Some(0), Some(0), None, None)).0, "streaming-write-4k");
    }

    #[test]
    fn trims_from_fio_patterns_and_from_a_percentage() {
        let trims = |f: &SpecFlags| {
            let s = f.spec().unwrap();
            (s.name, s.lines.iter().map(|l| (l.read, l.trim, l.write(), l.random, l.write_trimmed)).collect::<Vec<_>>())
        };
        let f = |rw| flags(Some("64k"), None, None, Some(rw), None);
        assert_eq!(trims(&f("randtrim")), ("random-trim-64k".into(), vec![(0, 100, 0, 100, false)]));
        assert_eq!(trims(&f("trim")), ("streaming-trim-64k".into(), vec![(0, 100, 0, 0, false)]));
        assert_eq!(trims(&f("trimwrite")), ("streaming-trim-then-write-64k".into(), vec![(0, 100, 0, 0, true)]));
        assert_eq!(trims(&f("randtrimwrite")).1, vec![(0, 100, 0, 100, true)]);
        // --trim beside --read: writes are the rest; without --read, reads are.
        let mixed = SpecFlags { trim: Some(10), ..flags(Some("8k"), Some(60), None, None, None) };
        assert_eq!(trims(&mixed), ("8k-read60-trim10-random100".into(), vec![(60, 10, 30, 100, false)]));
        let no_read = SpecFlags { trim: Some(25), ..flags(Some("8k"), None, None, None, None) };
        assert_eq!(trims(&no_read).1, vec![(75, 25, 0, 100, false)]);
    }

    #[test]
    fn size_mixes_in_both_forms() {
        let want = vec![(4096, 60, 100, 100), (65536, 40, 100, 100)];
        let (name, got) = lines(&flags(Some("4K:60,64K:40"), None, None, None, None));
        assert_eq!((name.as_str(), got), ("4k:60,64k:40-read100-random100", want.clone()));
        assert_eq!(lines(&flags(Some("4k/60:64k/40"), None, None, None, None)).1, want);
    }

    #[test]
    fn contradictions_and_mistakes_say_what_to_do() {
        for (f, says) in [
            (flags(None, Some(70), None, Some("randread"), None), "use --rw randrw"),
            (flags(None, None, Some(50), Some("randread"), None), "contradicts --rw randread"),
            (flags(None, Some(70), None, None, Some(60)), "say different things"),
            (SpecFlags { trim: Some(10), ..flags(None, None, None, Some("randread"), None) }, "give --rw randtrim"),
            (SpecFlags { trim: Some(40), ..flags(None, Some(70), None, None, None) }, "more than 100 %"),
            (flags(None, None, None, Some("sequential"), None), "use read, write"),
            (flags(Some("4K:60,64K:30"), None, None, None, None), "sum to 90 %"),
            (flags(Some("4k,8k"), None, None, None, None), "READ,WRITE form"),
            (flags(Some("3000"), None, None, None, None), "multiple of 512"),
            (flags(Some("4X"), None, None, None, None), "is not a size"),
            (flags(Some("4K:abc"), None, None, None, None), "not a % of I/Os"),
        ] {
            let e = f.spec().unwrap_err().to_string();
            assert!(e.contains(says), "{f:?}: {e}");
        }
    }
}
