//! Which of a line's `count` aligned places a random I/O takes, by the line's distribution.
//! Uniform is drawn in the generator itself; the skewed laws here cost a few floating-point
//! operations per I/O and only for the lines that ask for them.

use rand_distr::{Distribution as _, Normal, Zipf};

use crate::rng::{Rng, mix};
use crate::spec::Distribution;

/// A fixed permutation of `0..count` (k -> (a k + b) mod count, a prime to count), so a law's
/// hottest places are spread over the working set, as fio scatters them, without merging any
/// two (a hash modulo count would, changing the law).
#[derive(Debug, Clone, Copy)]
pub(super) struct Scatter {
    count: u64,
    a: u64,
    b: u64,
}

impl Scatter {
    fn new(count: u64, seed: u64) -> Scatter {
        let gcd = |mut x: u64, mut y: u64| {
            while y != 0 {
                (x, y) = (y, x % y);
            }
            x
        };
        // A step near count / golden ratio keeps neighbouring ranks far apart.
        let mut a = ((count as f64 * 0.618_033_988_75) as u64).max(1);
        while gcd(a, count) != 1 {
            a += 1;
        }
        Scatter { count, a, b: seed % count.max(1) }
    }

    /// The place of the law's `rank`-th value (0 the hottest).
    pub(super) fn place(&self, rank: u64) -> u64 {
        ((self.a as u128 * rank as u128 + self.b as u128) % self.count as u128) as u64
    }
}

/// A line's law on one target, ready to draw.
pub(super) enum Law {
    Uniform,
    Zipf(Zipf<f64>, Scatter),
    Pareto {
        pow: f64,
        count: u64,
        scatter: Scatter,
    },
    Normal {
        normal: Normal<f64>,
        count: u64,
    },
    /// Per zone: (cumulative share of I/Os scaled to 2^32, first place, places).
    Zoned(Vec<(u64, u64, u64)>),
    Lfsr(Pass),
}

/// Every place of `0..count` once per pass, in a keyed order: the pass's i-th place is a
/// permutation of i, a Feistel network over the next power of 4 at or above `count` that walks
/// on past values >= `count` (cycle walking: fewer than 4 steps on average). A Feistel network
/// is a permutation whatever its round function, so coverage is exact; its keys change each
/// pass. fio's lfsr gives the same guarantee with a shift register, whose consecutive values
/// are shifts of one another; these are not.
pub(super) struct Pass {
    count: u64,
    /// Bits in each half of the network's input.
    half: u32,
    keys: [u64; 4],
    /// Index of the next place in this pass.
    next: u64,
}

impl Pass {
    fn new(count: u64) -> Pass {
        let bits = 64 - count.saturating_sub(1).leading_zeros();
        Pass { count, half: bits.div_ceil(2).max(1), keys: [0; 4], next: 0 }
    }

    /// One trip through the network: a permutation of `0..4^half`.
    fn encrypt(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half) - 1;
        let (mut l, mut r) = (x >> self.half, x & mask);
        for k in self.keys {
            (l, r) = (r, l ^ (mix(r ^ k) & mask));
        }
        (l << self.half) | r
    }

    /// The place of the pass's `i`-th I/O.
    fn place(&self, i: u64) -> u64 {
        let mut x = self.encrypt(i);
        while x >= self.count {
            x = self.encrypt(x);
        }
        x
    }

    fn draw(&mut self, rng: &mut Rng) -> u64 {
        if self.next == 0 {
            self.keys = [rng.next_u64(), rng.next_u64(), rng.next_u64(), rng.next_u64()];
        }
        let p = self.place(self.next);
        self.next = (self.next + 1) % self.count;
        p
    }
}

/// A uniform number in [0, 1) with 53 random bits.
fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

impl Law {
    /// The law of `d` over `count` places (`seed` sets where the hot places land).
    pub(super) fn new(d: &Distribution, count: u64, seed: u64) -> Law {
        let n = count as f64;
        match d {
            Distribution::Uniform => Law::Uniform,
            Distribution::Lfsr => Law::Lfsr(Pass::new(count)),
            // Validated: theta > 0 and count >= 1 make both constructors succeed.
            Distribution::Zipf(theta) => Law::Zipf(Zipf::new(n, *theta).unwrap(), Scatter::new(count, seed)),
            Distribution::Pareto(h) => {
                Law::Pareto { pow: h.ln() / (1.0 - h).ln(), count, scatter: Scatter::new(count, seed) }
            }
            Distribution::Normal { stddev_pct, center_pct } => {
                Law::Normal { normal: Normal::new(n * center_pct / 100.0, n * stddev_pct / 100.0).unwrap(), count }
            }
            Distribution::Zoned(zones) => {
                let (mut io, mut range, mut out) = (0.0, 0.0, Vec::new());
                for z in zones {
                    let first = (n * range / 100.0).round() as u64;
                    (io, range) = (io + z.io_pct, range + z.range_pct);
                    let end = ((n * range / 100.0).round() as u64).min(count);
                    // A zone that takes I/Os has a place to put them, however small.
                    let first = first.min(count - 1);
                    let places = end.saturating_sub(first).max(u64::from(z.io_pct > 0.0));
                    out.push(((io / 100.0 * (1u64 << 32) as f64) as u64, first, places));
                }
                Law::Zoned(out)
            }
        }
    }

    /// The place of the next random I/O, in `0..count`.
    #[inline]
    pub(super) fn draw(&mut self, rng: &mut Rng, count: u64) -> u64 {
        match self {
            Law::Uniform => rng.below(count),
            Law::Lfsr(pass) => pass.draw(rng),
            Law::Zipf(zipf, scatter) => scatter.place(zipf.sample(rng) as u64 - 1),
            Law::Pareto { pow, count, scatter } => {
                // P(rank < x count) = x^(1/pow): a share h of the places takes 1 - h of the I/Os.
                scatter.place(((*count as f64 * unit(rng).powf(*pow)) as u64).min(*count - 1))
            }
            Law::Normal { normal, count } => loop {
                let x = normal.sample(rng);
                if x >= 0.0 && x < *count as f64 {
                    break x as u64;
                }
            },
            Law::Zoned(zones) => {
                let r = rng.next_u64() >> 32;
                let &(_, first, places) = zones.iter().find(|z| r < z.0 && z.2 > 0).unwrap_or(zones.last().unwrap());
                first + rng.below(places)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRAWS: u64 = 1_000_000;

    /// How often each place was drawn.
    fn counts(d: &str, count: u64) -> (Law, Vec<u64>) {
        let mut law = Law::new(&d.parse().unwrap(), count, 11);
        let mut rng = Rng::new(5, 0);
        let mut n = vec![0u64; count as usize];
        for _ in 0..DRAWS {
            n[law.draw(&mut rng, count) as usize] += 1;
        }
        (law, n)
    }

    /// Asserts that observed counts per bin fit the expected ones (`what` names them): a
    /// chi-square, bins merged until each expects at least 5, below df + 5 sqrt(2 df) (far
    /// beyond p = 0.001).
    fn assert_fits(observed: &[u64], expected: &[f64], what: &str) {
        let (mut chi2, mut df, mut o, mut e) = (0.0, 0usize, 0.0, 0.0);
        for (&ob, &ex) in observed.iter().zip(expected) {
            (o, e) = (o + ob as f64, e + ex);
            if e >= 5.0 {
                (chi2, df, o, e) = (chi2 + (o - e) * (o - e) / e, df + 1, 0.0, 0.0);
            }
        }
        let df = df.saturating_sub(1) as f64;
        let limit = df + 5.0 * (2.0 * df).sqrt();
        assert!(chi2 < limit, "{what}: chi-square {chi2:.1} over {df} degrees of freedom");
    }

    /// Share of the draws on the hottest tenth of the places.
    fn hottest_tenth(n: &[u64]) -> f64 {
        let mut sorted = n.to_vec();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        sorted[..n.len() / 10].iter().sum::<u64>() as f64 / DRAWS as f64
    }

    fn by_rank(law: &Law, n: &[u64]) -> Vec<u64> {
        let scatter = match law {
            Law::Zipf(_, s) | Law::Pareto { scatter: s, .. } => *s,
            _ => unreachable!(),
        };
        (0..n.len() as u64).map(|r| n[scatter.place(r) as usize]).collect()
    }

    #[test]
    fn lfsr_takes_every_place_once_per_pass() {
        for count in [1u64, 2, 3, 7, 1000, 4097, 1 << 16, 1_000_003] {
            let mut law = Law::new(&Distribution::Lfsr, count, 11);
            let mut rng = Rng::new(5, 0);
            let mut passes = Vec::new();
            for _ in 0..3 {
                let pass: Vec<u64> = (0..count).map(|_| law.draw(&mut rng, count)).collect();
                let mut sorted = pass.clone();
                sorted.sort_unstable();
                assert!(sorted.iter().enumerate().all(|(i, &p)| p == i as u64), "pass over {count} places not exact");
                passes.push(pass);
            }
            if count > 3 {
                assert_ne!(passes[0], passes[1], "each pass its own order");
                // Scrambled: few neighbours in a row (a sequential stream would be all of them).
                let steps = passes[0].windows(2).filter(|w| w[1] == w[0] + 1).count();
                assert!(steps as u64 <= 2 + count / 50, "{steps} sequential steps in {count}");
            }
        }
    }

    #[test]
    fn scatter_is_a_permutation() {
        for count in [1u64, 2, 7, 1000, 4096, 65_537] {
            let s = Scatter::new(count, 99);
            let mut seen = vec![false; count as usize];
            for r in 0..count {
                let p = s.place(r) as usize;
                assert!(!seen[p], "{count}: {p} twice");
                seen[p] = true;
            }
        }
    }

    #[test]
    fn zipf_follows_its_law() {
        let (theta, count) = (1.2, 1000u64);
        let (law, n) = counts("zipf:1.2", count);
        let weights: Vec<f64> = (1..=count).map(|k| (k as f64).powf(-theta)).collect();
        let total: f64 = weights.iter().sum();
        let expected: Vec<f64> = weights.iter().map(|w| w / total * DRAWS as f64).collect();
        assert_fits(&by_rank(&law, &n), &expected, "by rank");
        let predicted = weights[..100].iter().sum::<f64>() / total;
        let hot = hottest_tenth(&n);
        assert!((hot - predicted).abs() < 0.005, "hottest 10 %: {hot} vs {predicted}");
    }

    #[test]
    fn pareto_follows_its_law() {
        let (h, count) = (0.2f64, 10_000u64);
        let (law, n) = counts("pareto:0.2", count);
        // P(rank < x count) = x^(ln(1-h)/ln h).
        let cdf = |r: f64| (r / count as f64).powf((1.0 - h).ln() / h.ln());
        let bins = 50;
        let ranks = by_rank(&law, &n);
        let step = count as usize / bins;
        let observed: Vec<u64> = ranks.chunks(step).map(|c| c.iter().sum()).collect();
        let expected: Vec<f64> =
            (0..bins).map(|b| (cdf(((b + 1) * step) as f64) - cdf((b * step) as f64)) * DRAWS as f64).collect();
        assert_fits(&observed, &expected, "");
        let hot20: f64 = ranks[..2000].iter().sum::<u64>() as f64 / DRAWS as f64;
        assert!((hot20 - 0.8).abs() < 0.003, "20 % of the places take {hot20} of the I/Os, the 80/20 rule");
        assert!((hottest_tenth(&n) - cdf(1000.0)).abs() < 0.005);
    }

    /// erf, Abramowitz and Stegun 7.1.26 (error below 1.5e-7).
    fn erf(x: f64) -> f64 {
        let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
        let poly =
            t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
        (1.0 - poly * (-x * x).exp()).copysign(x)
    }

    #[test]
    fn normal_follows_its_law_cut_at_the_ends() {
        let count = 10_000u64;
        for (d, mean, sd) in [("normal:10", 0.5, 0.1), ("normal:20:10", 0.1, 0.2)] {
            let (_, n) = counts(d, count);
            let phi = |x: f64| 0.5 * (1.0 + erf((x - mean) / (sd * 2f64.sqrt())));
            let inside = phi(1.0) - phi(0.0);
            let bins = 100;
            let step = count as usize / bins;
            let observed: Vec<u64> = n.chunks(step).map(|c| c.iter().sum()).collect();
            let expected: Vec<f64> = (0..bins)
                .map(|b| (phi((b + 1) as f64 / bins as f64) - phi(b as f64 / bins as f64)) / inside * DRAWS as f64)
                .collect();
            assert_fits(&observed, &expected, d);
        }
    }

    #[test]
    fn zones_take_their_shares_uniformly() {
        let count = 10_000u64;
        let (_, n) = counts("zoned:60/10:30/20:10/70", count);
        let share = |a: usize, b: usize| n[a..b].iter().sum::<u64>() as f64 / DRAWS as f64;
        for (a, b, want) in [(0, 1000, 0.6), (1000, 3000, 0.3), (3000, 10_000, 0.1)] {
            assert!((share(a, b) - want).abs() < 0.003, "{a}..{b}: {} vs {want}", share(a, b));
            let expected = vec![want * DRAWS as f64 / (b - a) as f64; b - a];
            assert_fits(&n[a..b], &expected, &format!("zone {a}..{b}"));
        }
        assert!((hottest_tenth(&n) - 0.6).abs() < 0.003);
    }
}
