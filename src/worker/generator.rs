//! Which I/O a worker issues next: the access specification's line (by its share), the
//! direction (by its read percentage), and the offset, random (uniform over the line's aligned
//! places in the working set) or sequential (where the last sequential I/O on the target ended).

use crate::plan::WorkerPlan;
use crate::rng::Rng;
use crate::spec::AccessSpec;
use crate::targets::TargetInfo;

/// One line of the spec, precomputed for the hot path.
pub(super) struct Line {
    /// Transfer size (bytes).
    pub(super) size: u32,
    /// A read when the low 32 random bits are below this.
    read_below: u64,
    /// Random when the next 32 random bits are below this.
    random_below: u64,
    /// The worker pauses this long after each `burst` I/Os of this line (0: never).
    pub(super) delay_ns: u64,
    pub(super) burst: u32,
}

struct TargetState {
    start: u64,
    end: u64,
    next_seq: u64,
}

/// Random offsets of one line on one target: `start + k x align` for k in `0..count`.
struct Placement {
    count: u64,
    align: u64,
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
                Line {
                    size: l.size as u32,
                    read_below: pct_below(l.read),
                    random_below: pct_below(l.random),
                    delay_ns: l.delay_ms as u64 * 1_000_000,
                    burst: l.burst,
                }
            })
            .collect();
        let mut placements = Vec::new();
        for (ws, info) in plan.targets.iter().zip(infos) {
            for l in &spec.lines {
                let lbs = info.logical_block;
                let align = l.align.unwrap_or(l.size.div_ceil(lbs) * lbs);
                placements.push(Placement { count: (ws.size - l.size) / align + 1, align });
            }
        }
        let targets = plan
            .targets
            .iter()
            .map(|ws| TargetState { start: ws.start, end: ws.start + ws.size, next_seq: ws.start })
            .collect();
        Generator { rng: Rng::new(seed, 0), lines, line_below, targets, placements }
    }

    /// The next I/O on `target`: (line index, write, offset).
    #[inline(always)]
    pub(super) fn next(&mut self, target: usize) -> (usize, bool, u64) {
        let r = self.rng.next_u64();
        let li = if self.lines.len() == 1 {
            0
        } else {
            let x = r >> 32;
            self.line_below.iter().position(|&b| x < b).unwrap_or(self.lines.len() - 1)
        };
        let l = &self.lines[li];
        let write = (r & 0xffff_ffff) >= l.read_below;
        let random = (self.rng.next_u64() >> 32) < l.random_below;
        let t = &mut self.targets[target];
        let size = l.size as u64;
        let offset = if random {
            let p = &self.placements[target * self.lines.len() + li];
            t.start + self.rng.below(p.count) * p.align
        } else {
            // Sequential: continue where the last sequential I/O on this target ended.
            let o = if t.next_seq + size > t.end { t.start } else { t.next_seq };
            t.next_seq = o + size;
            o
        };
        (li, write, offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::WorkingSet;
    use crate::spec::find_builtin;
    use crate::targets;

    fn setup(spec: &str, start: u64, size: u64, lbs: u64) -> Generator {
        let spec = find_builtin(spec).unwrap();
        let plan = WorkerPlan {
            name: "w".into(),
            spec: spec.clone(),
            outstanding: 1,
            targets: vec![WorkingSet { target: 0, start, size }],
            rate_iops: None,
            rate_mbps: None,
        };
        let mut info = targets::inspect("null", 0, false).unwrap();
        info.logical_block = lbs;
        Generator::new(&spec, &plan, &[info], 7)
    }

    #[test]
    fn random_offsets_are_uniform_aligned_and_inside() {
        let (start, size) = (1 << 20, 64 << 20);
        let mut g = setup("random-read-8k", start, size, 4096);
        let n = 1_000_000;
        let mut buckets = [0u32; 64];
        for _ in 0..n {
            let (_, write, off) = g.next(0);
            assert!(!write);
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
            let (_, write, off) = g.next(0);
            assert!(write);
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
            let (li, write, _) = g.next(0);
            assert!(!write);
            per_line[li] += 1;
        }
        for (l, c) in spec.lines.iter().zip(per_line) {
            let share = c as f64 / n as f64 * 100.0;
            assert!((share - l.share as f64).abs() < 0.5, "{} bytes: {share} % vs {} %", l.size, l.share);
        }
        let mut g = setup("web-file-server-4k", 0, 1 << 30, 512);
        let (mut reads, mut randoms, mut next_seq) = (0, 0, 0);
        for _ in 0..n {
            let (_, write, off) = g.next(0);
            reads += u32::from(!write);
            // A sequential I/O lands where the previous sequential one ended; a random one
            // lands there with probability 1/262144.
            if off == next_seq {
                next_seq = off + 4096;
            } else {
                randoms += 1;
            }
        }
        assert!((reads as f64 / n as f64 - 0.95).abs() < 0.005);
        assert!((randoms as f64 / n as f64 - 0.75).abs() < 0.005, "{randoms}");
    }
}
