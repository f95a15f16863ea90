//! Which I/O a worker issues next: the access specification's line (by its share), the
//! operation (by its read, trim and flush percentages, or a flush every N writes), and the
//! offset, random (uniform over the line's aligned places in the working set) or sequential
//! (where the last I/O on the target ended, random or not, as in Iometer and fio, plus the
//! line's `skip`). A line with `seek_every` N draws random-or-sequential for the first I/O of
//! each run of N; the rest continue sequentially after it. A specification with
//! `random_map` takes each place of a uniform line once per pass ([`RandomMap`]). A line of
//! reads and writes alone, uniform, without runs or a map, takes the plain path; any other is
//! chosen apart (`special`), so the plain one pays a branch for them.

use super::law::Law;
use crate::plan::WorkerPlan;
use crate::rng::Rng;
use crate::spec::AccessSpec;
use crate::spec::random_map::{RandomMap, mapped, places};
use crate::stats::Op;
use crate::targets::TargetInfo;

/// One line of the spec, precomputed for the hot path.
pub(super) struct Line {
    /// Transfer size (bytes): of a line of sizes drawn in a range, the size of its last I/O.
    pub(super) size: u32,
    /// Sizes drawn between these two, as fio's `bsrange` (`size_max`).
    range: Option<(u32, u32)>,
    /// A read when the low 32 random bits are below this...
    read_below: u64,
    /// ...else a trim below this, a flush below `flush_below`, else a write.
    trim_below: u64,
    flush_below: u64,
    /// A flush of the target after every this many writes to it (0: never).
    flush_every: u32,
    /// Each trim is followed by a write of the same blocks.
    write_trimmed: bool,
    /// Writes carry RWF_DSYNC; flushes are fsync.
    pub(super) fua: bool,
    pub(super) fsync: bool,
    /// Random when the next 32 random bits are below this.
    random_below: u64,
    /// The worker pauses this long after each `burst` I/Os of this line (0: never).
    pub(super) delay_ns: u64,
    pub(super) burst: u32,
    /// I/Os per run; 1: every I/O drawn.
    seek_every: u32,
    /// Runs, a skewed law, a random map, a range of sizes, trims or flushes: the I/O is chosen
    /// apart from the plain path (`special`).
    special: bool,
    /// Bytes between a sequential I/O's end and the next one's start.
    skip: i64,
}

struct TargetState {
    start: u64,
    end: u64,
    /// Where the next sequential I/O starts: one place for every I/O (Iometer's), or one for
    /// each direction, read, write and trim, by the operation's number (fio's,
    /// `sequential_per_direction`).
    next_seq: [u64; 4],
    /// Which place an operation takes: its number masked by this, 0 (one place) or 3.
    direction_mask: usize,
    /// Writes since its last flush (for `flush_every`).
    writes_unflushed: u32,
}

impl TargetState {
    /// Which of `next_seq` an I/O of `op` follows and moves.
    #[inline(always)]
    fn stream(&self, op: Op) -> usize {
        op as usize & self.direction_mask
    }

    /// The next sequential offset for a `size`-byte I/O of `op`, `skip` bytes after the last
    /// one.
    #[inline(always)]
    fn next_sequential(&mut self, op: Op, size: u64, skip: i64) -> u64 {
        let s = self.stream(op);
        let o = self.next_seq[s];
        // One comparison for both sides: below the start wraps round to a huge distance.
        let o = if o.wrapping_sub(self.start) > self.end - self.start - size { self.wrap(size, skip) } else { o };
        self.next_seq[s] = (o + size).wrapping_add_signed(skip);
        o
    }

    /// A random I/O of `op` at `o`: the next sequential one follows it, as in Iometer (one
    /// offset per target, which a random seek moves: TargetDisk::Seek) and in fio.
    #[inline(always)]
    fn follow(&mut self, op: Op, o: u64, size: u64, skip: i64) {
        let s = self.stream(op);
        self.next_seq[s] = (o + size).wrapping_add_signed(skip);
    }

    /// Where a sequential stream that left the working set starts again: at the start going
    /// forwards; going backwards, as if the last I/O had ended at the end (fio's wrap).
    #[cold]
    fn wrap(&self, size: u64, skip: i64) -> u64 {
        let back = self.end.wrapping_add_signed(skip);
        if skip < 0 && back >= self.start && back <= self.end - size { back } else { self.start }
    }
}

/// Random offsets of one line on one target: `start + k x align` for k in `0..count`.
struct Placement {
    count: u64,
    align: u64,
    /// I/Os of this line on this target until the next draw (runs of `seek_every`).
    until_draw: u32,
    /// Which place a random I/O takes.
    law: Law,
    /// The places this pass has taken, where the specification keeps fio's random map and
    /// the law is uniform (a skewed law repeats places by design; fio drops its map for one).
    map: Option<RandomMap>,
    /// The offset of a trim whose write comes next (`write_trimmed`).
    trimmed: Option<u64>,
}

/// Chooses each I/O: line, direction, offset.
pub(super) struct Generator {
    rng: Rng,
    pub(super) lines: Vec<Line>,
    /// Cumulative line shares, scaled to 2^32.
    line_below: Vec<u64>,
    targets: Vec<TargetState>,
    /// Where random I/Os may land, per (target, line).
    placements: Vec<Placement>,
}

/// Scales a percentage to a threshold over 32 random bits.
fn pct_below(pct: u32) -> u64 {
    ((pct as u64) << 32) / 100
}

impl Generator {
    pub(super) fn new(spec: &AccessSpec, plan: &WorkerPlan, infos: &[TargetInfo], seed: u64) -> Self {
        let mut cum = 0;
        let mut line_below = Vec::new();
        let lines: Vec<Line> = spec
            .lines
            .iter()
            .map(|l| {
                cum += l.share;
                line_below.push(pct_below(cum));
                let ops = l.trim > 0 || l.flush > 0 || l.flush_every > 0;
                Line {
                    size: l.size as u32,
                    range: l.size_max.map(|max| (l.size as u32, max as u32)),
                    read_below: pct_below(l.read),
                    trim_below: pct_below(l.read + l.trim),
                    flush_below: pct_below(l.read + l.trim + l.flush),
                    flush_every: l.flush_every,
                    write_trimmed: l.write_trimmed,
                    fua: l.fua,
                    fsync: l.fsync,
                    random_below: pct_below(l.random),
                    delay_ns: l.delay_ms as u64 * 1_000_000,
                    burst: l.burst,
                    seek_every: l.seek_every,
                    special: ops
                        || l.seek_every > 1
                        || !l.distribution.is_uniform()
                        || mapped(spec, l)
                        || l.size_max.is_some(),
                    skip: l.skip,
                }
            })
            .collect();
        let mut placements = Vec::new();
        for (ws, info) in plan.targets.iter().zip(infos) {
            for l in &spec.lines {
                let (count, align) = places(l, ws.size, info.logical_block);
                let law = Law::new(&l.distribution, count, seed ^ placements.len() as u64);
                let map = mapped(spec, l).then(|| RandomMap::new(count));
                placements.push(Placement { count, align, until_draw: 1, law, map, trimmed: None });
            }
        }
        let targets = plan
            .targets
            .iter()
            .map(|ws| TargetState {
                start: ws.start,
                end: ws.start + ws.size,
                next_seq: [ws.start; 4],
                direction_mask: if spec.sequential_per_direction { 3 } else { 0 },
                writes_unflushed: 0,
            })
            .collect();
        Generator { rng: Rng::new(seed, 0), lines, line_below, targets, placements }
    }

    /// The next I/O on `target`: (line index, operation, offset; 0 for a flush).
    #[inline(always)]
    pub(super) fn next(&mut self, target: usize) -> (usize, Op, u64) {
        let r = self.rng.next_u64();
        let li = if self.lines.len() == 1 {
            0
        } else {
            let x = r >> 32;
            self.line_below.iter().position(|&b| x < b).unwrap_or(self.lines.len() - 1)
        };
        let l = &self.lines[li];
        let x = r & 0xffff_ffff;
        let random = (self.rng.next_u64() >> 32) < l.random_below;
        if l.special {
            return self.special(target, li, x, random);
        }
        let op = Op::data(x >= l.read_below);
        let t = &mut self.targets[target];
        let offset = if random {
            let p = &self.placements[target * self.lines.len() + li];
            let o = t.start + self.rng.below(p.count) * p.align;
            t.follow(op, o, l.size as u64, l.skip);
            o
        } else {
            t.next_sequential(op, l.size as u64, l.skip)
        };
        (li, op, offset)
    }

    /// The next I/O of a line with trims, flushes, runs of `seek_every` or a skewed law. Its
    /// operation: the write of the blocks the last trim trimmed (`write_trimmed`), a flush
    /// when the target has had `flush_every` writes, else by the percentages (`x`, 32 random
    /// bits). Its offset: the first of each run on a target is random if `drawn`, the rest
    /// follow the one before; a random one takes its place by the law.
    #[inline(never)]
    fn special(&mut self, target: usize, li: usize, x: u64, drawn: bool) -> (usize, Op, u64) {
        let l = &self.lines[li];
        let (t, p) = (&mut self.targets[target], &mut self.placements[target * self.lines.len() + li]);
        let op = if let Some(o) = p.trimmed.take() {
            t.writes_unflushed += 1;
            return (li, Op::Write, o);
        } else if l.flush_every > 0 && t.writes_unflushed >= l.flush_every {
            Op::Flush
        } else if x < l.read_below {
            Op::Read
        } else if x < l.trim_below {
            Op::Trim
        } else if x < l.flush_below {
            Op::Flush
        } else {
            Op::Write
        };
        match op {
            Op::Flush => {
                t.writes_unflushed = 0;
                return (li, op, 0);
            }
            Op::Write => t.writes_unflushed += 1,
            _ => {}
        }
        let write_trimmed = op == Op::Trim && l.write_trimmed;
        let range = l.range;
        if let Some((min, _)) = range {
            // Placed as its smallest size is, then sized to fit.
            self.lines[li].size = min;
        }
        let offset = self.offset(target, li, op, drawn);
        if let Some((min, max)) = range {
            self.lines[li].size = self.size_in_range(target, li, op, offset, min, max);
        }
        if write_trimmed {
            self.placements[target * self.lines.len() + li].trimmed = Some(offset);
        }
        (li, op, offset)
    }

    /// The size of an I/O of a line of sizes drawn in a range, at `offset`, as fio's
    /// `get_next_buflen` draws one: `min` plus a uniform share of `max`, rounded down to a
    /// multiple of `min`, at most `max`, drawn again until the I/O ends inside the working set
    /// (the smallest always does). The next sequential I/O follows it.
    #[cold]
    fn size_in_range(&mut self, target: usize, li: usize, op: Op, offset: u64, min: u32, max: u32) -> u32 {
        let t = &mut self.targets[target];
        let len = loop {
            let share = ((max as u128 * (self.rng.next_u64() >> 11) as u128) >> 53) as u32;
            let len = (min + share) / min * min;
            let len = len.min(max);
            if offset + len as u64 <= t.end {
                break len;
            }
        };
        t.follow(op, offset, len as u64, self.lines[li].skip);
        len
    }

    /// The offset of a special line's I/O: runs of `seek_every`, holes, a skewed law, the
    /// random map.
    #[inline(always)]
    fn offset(&mut self, target: usize, li: usize, op: Op, drawn: bool) -> u64 {
        let l = &self.lines[li];
        let p = &mut self.placements[target * self.lines.len() + li];
        let t = &mut self.targets[target];
        p.until_draw -= 1;
        if p.until_draw > 0 || !drawn {
            p.until_draw = if p.until_draw == 0 { l.seek_every } else { p.until_draw };
            return t.next_sequential(op, l.size as u64, l.skip);
        }
        p.until_draw = l.seek_every;
        let place = p.law.draw(&mut self.rng, p.count);
        let place = match &mut p.map {
            Some(map) => map.take(place),
            None => place,
        };
        let o = t.start + place * p.align;
        t.follow(op, o, l.size as u64, l.skip);
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::WorkingSet;
    use crate::spec::{SpecLine, find_builtin};
    use crate::targets;

    fn setup(spec: &str, start: u64, size: u64, lbs: u64) -> Generator {
        with_lines(find_builtin(spec).unwrap(), start, size, lbs, 1)
    }

    /// A generator over `targets` targets, each with the same working set.
    fn with_lines(spec: AccessSpec, start: u64, size: u64, lbs: u64, targets: usize) -> Generator {
        let plan = WorkerPlan {
            name: "w".into(),
            spec: spec.clone(),
            outstanding: 1,
            targets: (0..targets).map(|target| WorkingSet { target, start, size }).collect(),
            rate: Default::default(),
            cpus: Vec::new(),
            replay: None,
        };
        let mut info = targets::inspect_local("null", 0, false).unwrap();
        info.logical_block = lbs;
        Generator::new(&spec, &plan, &vec![info; targets], 7)
    }

    #[test]
    fn random_offsets_are_uniform_aligned_and_inside() {
        let (start, size) = (1 << 20, 64 << 20);
        let mut g = setup("random-read-8k", start, size, 4096);
        let n = 1_000_000;
        let mut buckets = [0u32; 64];
        for _ in 0..n {
            let (_, op, off) = g.next(0);
            assert_eq!(op, Op::Read);
            assert_eq!(off % 8192, start % 8192);
            assert!(off >= start && off + 8192 <= start + size, "{off}");
            buckets[((off - start) * 64 / size) as usize] += 1;
        }
        // Chi-square over 64 equal buckets: 63 degrees of freedom, p = 0.001 at about 103.
        let e = n as f64 / 64.0;
        let chi2: f64 = buckets.iter().map(|&b| (b as f64 - e).powi(2) / e).sum();
        assert!(chi2 < 103.0, "chi2 {chi2}: {buckets:?}");
    }

    #[test]
    fn sequential_offsets_are_contiguous_and_wrap() {
        let (start, size) = (4096, 64 * 1024 * 10);
        let mut g = setup("streaming-write-64k", start, size, 512);
        let mut expect = start;
        for _ in 0..35 {
            let (_, op, off) = g.next(0);
            assert_eq!(op, Op::Write);
            assert_eq!(off, expect);
            expect = if off + 65536 + 65536 > start + size { start } else { off + 65536 };
        }
    }

    #[test]
    fn line_shares_and_directions_follow_the_spec() {
        let spec = find_builtin("web-server").unwrap();
        let mut g = setup("web-server", 0, 1 << 30, 512);
        let n = 1_000_000;
        let mut per_line = vec![0u32; spec.lines.len()];
        for _ in 0..n {
            let (li, op, _) = g.next(0);
            assert_eq!(op, Op::Read);
            per_line[li] += 1;
        }
        for (l, c) in spec.lines.iter().zip(per_line) {
            let share = c as f64 / n as f64 * 100.0;
            assert!((share - l.share as f64).abs() < 0.5, "{} bytes: {share} % vs {} %", l.size, l.share);
        }
        let mut g = setup("web-file-server-4k", 0, 1 << 30, 512);
        let (mut reads, mut randoms, mut next_seq) = (0, 0, 0);
        for _ in 0..n {
            let (_, op, off) = g.next(0);
            reads += u32::from(op == Op::Read);
            // A sequential I/O lands where the I/O before it ended; a random one lands there
            // with probability 1/262144.
            randoms += u32::from(off != next_seq);
            next_seq = off + 4096;
        }
        assert!((reads as f64 / n as f64 - 0.95).abs() < 0.005);
        assert!((randoms as f64 / n as f64 - 0.75).abs() < 0.005, "{randoms}");
    }

    /// A sequential I/O follows the I/O before it on its target, random or not, as Iometer's
    /// (TargetDisk::Seek) and fio's do, on every path: a plain line, a skewed law's, a line
    /// with trims (the last two chosen apart).
    #[test]
    fn a_sequential_io_follows_the_io_before_it_random_or_not() {
        let lfsr = "lfsr".parse().unwrap();
        for line in [
            SpecLine::new(4096, 100, 100, 25),
            SpecLine { distribution: lfsr, ..SpecLine::new(4096, 100, 100, 25) },
            SpecLine { trim: 10, ..SpecLine::new(4096, 100, 90, 25) },
        ] {
            let mut g = with_lines(one_line(line.clone()), 0, 1 << 30, 512, 1);
            let (n, mut randoms, mut next) = (100_000, 0, 0);
            for _ in 0..n {
                let (_, _, off) = g.next(0);
                // A random I/O lands where the one before ended with probability 1/262144.
                randoms += i64::from(off != next);
                next = off + 4096;
            }
            // 25,000 expected, binomial sd 137: 1,000 off is over 7 sd (p < 1e-12).
            assert!((randoms - 25_000).abs() < 1_000, "{line:?}: {randoms} random of {n}");
        }
    }

    /// With `sequential_per_direction` (fio's way), a sequential read follows the last read and
    /// a write the last write; without, each I/O follows the one before, read or write.
    #[test]
    fn sequential_reads_and_writes_follow_their_own_direction_where_asked() {
        for per_direction in [false, true] {
            let spec =
                AccessSpec { sequential_per_direction: per_direction, ..one_line(SpecLine::new(4096, 100, 50, 0)) };
            let mut g = with_lines(spec, 0, 1 << 30, 512, 1);
            let (mut next, mut next_of) = (0, [0u64; 2]);
            for i in 0..10_000 {
                let (_, op, off) = g.next(0);
                let expected = if per_direction { next_of[op as usize] } else { next };
                assert_eq!(off, expected, "I/O {i} ({op:?}), per direction {per_direction}");
                (next, next_of[op as usize]) = (off + 4096, off + 4096);
            }
        }
    }

    fn one_line(line: SpecLine) -> AccessSpec {
        AccessSpec { name: "t".into(), lines: vec![line], ..Default::default() }
    }

    /// With `random_map`, each target's random I/Os take each of its places once per pass, pass
    /// after pass, whatever the order the targets are used in; without, places repeat within a
    /// pass (Iometer's draws: 1,000 draws over 1,000 places take about 632 of them).
    #[test]
    fn a_random_map_takes_each_place_once_per_pass_on_each_target() {
        let (start, size, places) = (8192, 4096 * 1000, 1000);
        for random_map in [true, false] {
            let spec = AccessSpec { random_map, ..one_line(SpecLine::new(4096, 100, 70, 100)) };
            let mut g = with_lines(spec, start, size, 512, 2);
            for pass in 0..3 {
                let (mut seen, mut n) = ([vec![false; places], vec![false; places]], [0; 2]);
                for i in 0..2 * places {
                    // Three on one target, three on the other, until each had its pass.
                    let t = if n[0] == places {
                        1
                    } else if n[1] == places {
                        0
                    } else {
                        (i / 3) % 2
                    };
                    n[t] += 1;
                    let (_, _, off) = g.next(t);
                    assert!(off >= start && off + 4096 <= start + size && (off - start) % 4096 == 0);
                    seen[t][((off - start) / 4096) as usize] = true;
                }
                let taken = seen.iter().map(|s| s.iter().filter(|&&x| x).count()).sum::<usize>();
                if random_map {
                    assert_eq!(taken, 2 * places, "pass {pass}: every place of both targets once");
                } else {
                    // Expected 1264 of 2000 places, sd about 15: 1,800 is over 30 sd away.
                    assert!(taken < 1800, "pass {pass}: {taken} of 2000 places taken without a map");
                }
            }
        }
    }

    /// A line of sizes in a range draws them as fio's bsrange does: `min + U x max` rounded
    /// down to a multiple of `min`, at most `max`. For 4 KiB to 10 KiB that is 4 KiB and 8 KiB
    /// with 40 % each and 10 KiB with 20 %; every I/O inside the working set, a sequential one
    /// right after the one before.
    #[test]
    fn sizes_in_a_range_are_drawn_as_fios_bsrange() {
        let (start, size) = (4096, 1 << 20);
        for random in [100, 0] {
            let line = SpecLine { size_max: Some(10240), ..SpecLine::new(4096, 100, 100, random) };
            let mut g = with_lines(one_line(line), start, size, 512, 1);
            let (n, mut count, mut next) = (200_000, [0u32; 3], start);
            for _ in 0..n {
                let (li, _, off) = g.next(0);
                let len = g.lines[li].size as u64;
                assert!(off >= start && off + len <= start + size, "{off} + {len}");
                assert!(random == 100 || off == next || off == start, "sequential: {off} after {next}");
                next = off + len;
                count[match len {
                    4096 => 0,
                    8192 => 1,
                    10240 => 2,
                    _ => panic!("{len} bytes: not a size of the range"),
                }] += 1;
            }
            // Binomial, sd at most 224 of 200,000: 2,000 off is about 9 sd.
            for (c, want) in count.iter().zip([0.4, 0.4, 0.2]) {
                assert!((*c as f64 - want * n as f64).abs() < 2000.0, "random {random}: {count:?}");
            }
        }
    }

    #[test]
    fn runs_of_seek_every_follow_each_seek_on_each_target() {
        let (start, size) = (1 << 20, 64 << 20);
        let spec = one_line(SpecLine { seek_every: 8, ..SpecLine::new(4096, 100, 100, 100) });
        let mut g = with_lines(spec.clone(), start, size, 512, 1);
        let mut prev = None;
        let mut seeks = 0;
        for i in 0..80_000 {
            let (_, _, off) = g.next(0);
            assert!(off >= start && off + 4096 <= start + size);
            if i % 8 == 0 {
                // A run's first I/O is a new random offset (the same as the last end with
                // probability 1/16384).
                seeks += u32::from(Some(off) != prev.map(|p| p + 4096));
            } else {
                let p = prev.unwrap();
                // Inside a run: right after the last I/O, or back at the start after the end.
                assert!(off == p + 4096 || (off == start && p + 8192 > start + size), "{i}: {p} -> {off}");
            }
            prev = Some(off);
        }
        assert!(seeks >= 9_990, "{seeks} seeks in 10,000 runs");
        // Two targets: each has runs of its own, whatever the order they are used in.
        let mut g = with_lines(spec, start, size, 512, 2);
        let mut last = [None::<u64>; 2];
        let mut n = [0u32; 2];
        for i in 0..8000 {
            let t = (i * 7 / 3) % 2;
            let (_, _, off) = g.next(t);
            if n[t] % 8 != 0 && off != start {
                assert_eq!(Some(off), last[t].map(|p| p + 4096), "target {t}, its I/O {}", n[t]);
            }
            (last[t], n[t]) = (Some(off), n[t] + 1);
        }
    }

    #[test]
    fn skip_leaves_holes_forwards_and_reads_backwards() {
        let (start, size) = (8192, 64 << 10);
        let mut g =
            with_lines(one_line(SpecLine { skip: 4096, ..SpecLine::new(4096, 100, 100, 0) }), start, size, 512, 1);
        let offs: Vec<u64> = (0..10).map(|_| g.next(0).2).collect();
        // Every other 4 KiB block, then back to the start.
        let holes: Vec<u64> = (0..8).map(|k| start + k * 8192).chain([start, start + 8192]).collect();
        assert_eq!(offs, holes);
        // Backwards: 4 KiB reads stepping 8 KiB back from each end: from the start, then as
        // if the last I/O had ended at the end (fio's wrap), down to the start again.
        let mut g =
            with_lines(one_line(SpecLine { skip: -8192, ..SpecLine::new(4096, 100, 100, 0) }), start, size, 512, 1);
        let offs: Vec<u64> = (0..18).map(|_| g.next(0).2).collect();
        let end = start + size;
        let back: Vec<u64> = [start]
            .into_iter()
            .chain((1..=15).map(|k| end - 4096 - k * 4096))
            .chain([end - 8192, end - 12288])
            .collect();
        assert_eq!(offs, back);
    }

    #[test]
    fn operations_follow_their_shares_and_flushes_come_every_n_writes() {
        let (start, size) = (0, 64 << 20);
        let line = SpecLine { trim: 10, flush: 5, ..SpecLine::new(4096, 100, 60, 100) };
        let mut g = with_lines(one_line(line), start, size, 512, 1);
        let n = 1_000_000;
        let mut count = [0u32; 4];
        for _ in 0..n {
            let (_, op, off) = g.next(0);
            count[op as usize] += 1;
            assert!(op == Op::Flush && off == 0 || off + 4096 <= size);
        }
        for (op, pct) in [(Op::Read, 60.0), (Op::Write, 25.0), (Op::Trim, 10.0), (Op::Flush, 5.0)] {
            let got = count[op as usize] as f64 / n as f64 * 100.0;
            assert!((got - pct).abs() < 0.2, "{op:?}: {got} % for {pct} %");
        }
        // Every 8 writes to a target, its flush, on each target apart.
        let line = SpecLine { flush_every: 8, ..SpecLine::new(4096, 100, 50, 100) };
        let mut g = with_lines(one_line(line), start, size, 512, 2);
        let mut writes = [0u32; 2];
        for i in 0..100_000 {
            let t = i % 2;
            let (_, op, _) = g.next(t);
            match op {
                Op::Write => writes[t] += 1,
                Op::Flush => {
                    assert_eq!(writes[t], 8, "target {t}: a flush after {} writes", writes[t]);
                    writes[t] = 0;
                }
                _ => assert!(writes[t] < 8, "target {t}: a read where its flush was due"),
            }
        }
    }

    #[test]
    fn write_trimmed_writes_each_trimmed_block_next() {
        let (start, size) = (1 << 20, 64 << 20);
        for random in [0, 100] {
            let line = SpecLine { trim: 100, write_trimmed: true, ..SpecLine::new(8192, 100, 0, random) };
            let mut g = with_lines(one_line(line), start, size, 512, 1);
            let mut prev_trim = None;
            for i in 0..10_000 {
                let (_, op, off) = g.next(0);
                if i % 2 == 0 {
                    assert_eq!(op, Op::Trim);
                    if random == 0 {
                        // Sequential trims step over the blocks written after them.
                        assert_eq!(off, start + (i / 2 * 8192) % size);
                    }
                    prev_trim = Some(off);
                } else {
                    assert_eq!((op, Some(off)), (Op::Write, prev_trim));
                }
            }
        }
    }
}
