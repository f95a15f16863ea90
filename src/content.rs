//! Contents of written data: random (incompressible), a repeated byte, or compressible; every
//! written 4 KiB block unlike any other, or a share of them repeating earlier ones (dedupe).

use crate::config::{Content, DataPattern};
use crate::rng::{Rng, mix};

/// The unit of deduplication: storage that dedupes compares blocks of this size (or larger
/// multiples of it), aligned.
const BLOCK: usize = 4096;
/// Bytes at the end of each block that make it its own.
const STAMP: usize = 16;
/// Distinct block bodies a deduping worker copies from.
const POOL_BLOCKS: usize = 256;
/// Earlier blocks a repeat may copy: the last this many made.
const RECENT: usize = 4096;

/// Fills `buf` with `content`, reproducibly from `seed`.
pub fn fill(buf: &mut [u8], content: Content, seed: u64) {
    let mut rng = Rng::new(seed, 0xda7a);
    match content {
        Content::Random => fill_random(buf, &mut rng),
        Content::Repeat(b) => buf.fill(b),
        Content::Compressible(pct) => {
            // Each 4 KiB chunk: `pct` % zeros then random bytes, like fio's buffer_compress_percentage.
            for chunk in buf.chunks_mut(BLOCK) {
                let zeros = chunk.len() * pct as usize / 100;
                chunk[..zeros].fill(0);
                fill_random(&mut chunk[zeros..], &mut rng);
            }
        }
    }
}

fn fill_random(buf: &mut [u8], rng: &mut Rng) {
    let mut words = buf.chunks_exact_mut(8);
    for w in &mut words {
        w.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    let rest = words.into_remainder();
    let last = rng.next_u64().to_le_bytes();
    rest.copy_from_slice(&last[..rest.len()]);
}

/// Makes each write's blocks what the pattern asks, fresh for every write: each 4 KiB block
/// (or a write's shorter end) is the block of a number, new or (with dedupe) an earlier one's.
/// Block `n` is a body drawn from a pool of random bytes, XORed word by word with a key mixed
/// from `n` (so no compressor finds one block's bytes in another's: blocks are as random to it
/// as fio's refilled buffers), its first `compress` % zeros, its last 16 bytes a stamp of `n`
/// (so two numbers never make the same block). Rewriting one buffer over and over, as the
/// worker does, so never writes the same block twice unless dedupe asks.
pub struct Blocks {
    /// Mixed into every key and stamp: unlike any other worker's, rank's or run's.
    salt: u64,
    /// % of each block that is zeros.
    zeros_pct: usize,
    /// The number of the next new block.
    next: u64,
    /// A block repeats an earlier one when 32 random bits are below this (0: never).
    repeat_below: u64,
    rng: Rng,
    /// The bodies' random bytes.
    pool: Vec<u8>,
    /// With dedupe, the recent new blocks a repeat may copy: (number, length).
    recent: Vec<(u64, u16)>,
}

impl Blocks {
    /// None when blocks are alike by design (a repeated byte, all zeros).
    pub fn new(pattern: DataPattern, salt: u64) -> Option<Blocks> {
        let zeros_pct = match pattern.content {
            Content::Repeat(_) | Content::Compressible(100..) => return None,
            Content::Random => 0,
            Content::Compressible(p) => p as usize,
        };
        let mut pool = vec![0u8; POOL_BLOCKS * BLOCK];
        fill(&mut pool, Content::Random, salt);
        Some(Blocks {
            salt: mix(salt),
            zeros_pct,
            next: 0,
            repeat_below: ((pattern.dedupe_pct as u64) << 32) / 100,
            rng: Rng::new(salt, 0xded0),
            pool,
            recent: Vec::new(),
        })
    }

    /// Makes `buf`, the data of the next write, its blocks.
    pub fn prepare(&mut self, buf: &mut [u8]) {
        for block in buf.chunks_mut(BLOCK).filter(|b| b.len() >= STAMP) {
            let n = self.number(block.len());
            self.make(block, n);
        }
    }

    /// The number of the next block of `len` bytes: with the dedupe share an earlier block's
    /// (of the same length, among the last RECENT new ones), else a new one.
    fn number(&mut self, len: usize) -> u64 {
        if self.repeat_below > 0 {
            let r = self.rng.next_u64();
            if (r >> 32) < self.repeat_below && !self.recent.is_empty() {
                let (n, l) = self.recent[(r & 0xffff_ffff) as usize % self.recent.len()];
                if l as usize == len {
                    return n;
                }
            }
        }
        self.next += 1;
        let n = self.next;
        if self.repeat_below > 0 {
            match self.recent.get_mut(n as usize % RECENT) {
                Some(slot) => *slot = (n, len as u16),
                None => self.recent.push((n, len as u16)),
            }
        }
        n
    }

    /// Writes block `n` into `block`.
    fn make(&self, block: &mut [u8], n: u64) {
        let key = mix(n ^ self.salt);
        let from = (key as usize % POOL_BLOCKS) * BLOCK;
        let (zeros, body) = (block.len() * self.zeros_pct / 100, block.len() - STAMP);
        let zeros = zeros.min(body);
        block[..zeros].fill(0);
        let src = &self.pool[from + zeros..from + body];
        let mut d = block[zeros..body].chunks_exact_mut(8);
        let mut s = src.chunks_exact(8);
        for (d, s) in (&mut d).zip(&mut s) {
            let w = u64::from_ne_bytes(s.try_into().expect("8 bytes")) ^ key;
            d.copy_from_slice(&w.to_ne_bytes());
        }
        for (d, s) in d.into_remainder().iter_mut().zip(s.remainder()) {
            *d = s ^ key as u8;
        }
        block[body..body + 8].copy_from_slice(&key.to_le_bytes());
        block[body + 8..].copy_from_slice(&self.salt.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn patterns() {
        let mut b = vec![0u8; 8192 + 3];
        fill(&mut b, Content::Repeat(7), 1);
        assert!(b.iter().all(|&x| x == 7));
        fill(&mut b, Content::Compressible(50), 1);
        assert!(b[..2048].iter().all(|&x| x == 0));
        assert!(b[2048..4096].iter().filter(|&&x| x == 0).count() < 64);
        fill(&mut b, Content::Random, 1);
        let zeros = b.iter().filter(|&&x| x == 0).count();
        assert!(zeros < 100, "{zeros}");
    }

    /// The share of 4 KiB blocks equal to an earlier one, over `writes` writes of `len` bytes.
    fn repeated(pattern: &str, writes: usize, len: usize) -> f64 {
        let mut blocks = Blocks::new(pattern.parse().unwrap(), 9).unwrap();
        let mut buf = vec![0u8; len];
        fill(&mut buf, Content::Random, 3);
        let (mut seen, mut total, mut again) = (HashSet::new(), 0, 0);
        for _ in 0..writes {
            blocks.prepare(&mut buf);
            for b in buf.chunks(BLOCK) {
                total += 1;
                again += usize::from(!seen.insert(b.to_vec()));
            }
        }
        again as f64 / total as f64
    }

    #[test]
    fn blocks_are_unique_or_repeat_the_share_asked() {
        // The same buffer written again and again: every block its own.
        assert_eq!(repeated("random", 20_000, 8192), 0.0);
        assert_eq!(repeated("compress:60", 20_000, 4096), 0.0);
        assert_eq!(repeated("compress:60", 20_000, 512), 0.0);
        for (pct, len) in [(10, 4096), (30, 16384), (75, 4096)] {
            let share = repeated(&format!("compress:40,dedupe:{pct}"), 40_000, len);
            assert!((share - pct as f64 / 100.0).abs() < 0.01, "dedupe:{pct}: {share}");
        }
        assert!(Blocks::new("repeat".parse().unwrap(), 1).is_none());
    }
}
