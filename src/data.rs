//! Contents of written data: random (incompressible), a repeated byte, or compressible.

use crate::config::DataPattern;
use crate::rng::Rng;

/// Fills `buf` with `pattern`, reproducibly from `seed`.
pub fn fill(buf: &mut [u8], pattern: DataPattern, seed: u64) {
    let mut rng = Rng::new(seed, 0xda7a);
    match pattern {
        DataPattern::Random => fill_random(buf, &mut rng),
        DataPattern::Repeat(b) => buf.fill(b),
        DataPattern::Compressible(pct) => {
            // Each 4 KiB chunk: `pct` % zeros then random bytes, like fio's buffer_compress_percentage.
            for chunk in buf.chunks_mut(4096) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let mut b = vec![0u8; 8192 + 3];
        fill(&mut b, DataPattern::Repeat(7), 1);
        assert!(b.iter().all(|&x| x == 7));
        fill(&mut b, DataPattern::Compressible(50), 1);
        assert!(b[..2048].iter().all(|&x| x == 0));
        assert!(b[2048..4096].iter().filter(|&&x| x == 0).count() < 64);
        fill(&mut b, DataPattern::Random, 1);
        let zeros = b.iter().filter(|&&x| x == 0).count();
        assert!(zeros < 100, "{zeros}");
    }
}
