//! fio's random map: which of a line's places on a target a pass has taken, so a random I/O
//! takes each place once per pass (fio's default, `norandommap=0`). A draw that lands on a
//! place taken already takes the next free one after it, round to the start (fio's
//! `axmap_next_free`); when every place is taken, the map is cleared and a new pass starts.
//!
//! Bits in levels of 64-bit words, as fio's axmap keeps them: level 0 has a bit per place,
//! each level above a bit per word of the level below, set when that word is full. Finding
//! the next free place climbs while words are full and comes down through the first word
//! that is not, so it reads at most two words a level: 4 levels for 16 M places, whatever
//! the map holds.

use super::{AccessSpec, SpecLine};

/// Bits per word.
const BITS: u64 = 64;

/// The places a pass has taken, of `0..count`.
pub(crate) struct RandomMap {
    /// Level 0 first; the last level is one word. Bits past the end of a level are set, so
    /// they are never free and a word of the last places can be full.
    levels: Vec<Vec<u64>>,
    count: u64,
    /// Places taken this pass.
    taken: u64,
    /// Words the searches for a free place read (what the tests bound).
    #[cfg(test)]
    words_read: std::cell::Cell<u64>,
}

impl RandomMap {
    pub(crate) fn new(count: u64) -> RandomMap {
        let mut map = RandomMap {
            levels: Vec::new(),
            count,
            taken: 0,
            #[cfg(test)]
            words_read: Default::default(),
        };
        let mut bits = count.max(1);
        loop {
            map.levels.push(vec![0; bits.div_ceil(BITS) as usize]);
            if bits <= BITS {
                break;
            }
            bits = bits.div_ceil(BITS);
        }
        map.clear();
        map
    }

    /// Bytes the map of `count` places takes (about 1.016 bits a place).
    pub(crate) fn bytes_for(count: u64) -> u64 {
        let (mut bits, mut words) = (count.max(1), 0);
        loop {
            words += bits.div_ceil(BITS);
            if bits <= BITS {
                return words * 8;
            }
            bits = bits.div_ceil(BITS);
        }
    }

    /// Every place free again: a new pass.
    fn clear(&mut self) {
        let mut bits = self.count.max(1);
        for level in &mut self.levels {
            level.fill(0);
            // The bits past the end of this level, set for good.
            let used = bits % BITS;
            if used != 0 {
                *level.last_mut().expect("a word") = !0 << used;
            }
            bits = bits.div_ceil(BITS);
        }
        self.taken = 0;
    }

    /// The place a random I/O drawn at `place` takes: `place` if free this pass, else the
    /// next free one after it, round to the start; a full map starts a new pass first.
    #[inline]
    pub(crate) fn take(&mut self, place: u64) -> u64 {
        if self.taken == self.count {
            self.clear();
        }
        let free = if self.is_free(place) {
            place
        } else {
            self.free_from(place + 1).or_else(|| self.free_from(0)).expect("a free place while the pass is not full")
        };
        self.set(free);
        free
    }

    fn is_free(&self, place: u64) -> bool {
        self.levels[0][(place / BITS) as usize] >> (place % BITS) & 1 == 0
    }

    /// Marks `place` taken; a word that fills marks its bit in the level above.
    fn set(&mut self, place: u64) {
        self.taken += 1;
        let mut bit = place;
        for level in &mut self.levels {
            let word = &mut level[(bit / BITS) as usize];
            *word |= 1 << (bit % BITS);
            if *word != !0 {
                return;
            }
            bit /= BITS;
        }
    }

    /// The first free place at or after `from`, if any before the end.
    fn free_from(&self, from: u64) -> Option<u64> {
        // Up: the first free bit at or after `bit` in its word at this level, else the next
        // word at this level, which is a bit of the level above.
        let (mut level, mut bit) = (0, from);
        let found = loop {
            let words = &self.levels[level];
            let w = (bit / BITS) as usize;
            if w >= words.len() {
                return None;
            }
            #[cfg(test)]
            self.words_read.set(self.words_read.get() + 1);
            let free = !words[w] & (!0 << (bit % BITS));
            if free != 0 {
                break w as u64 * BITS + free.trailing_zeros() as u64;
            }
            if level + 1 == self.levels.len() {
                return None;
            }
            (level, bit) = (level + 1, w as u64 + 1);
        };
        // Down: a clear bit above is a word below with a free bit; its first one.
        let mut bit = found;
        for words in self.levels[..level].iter().rev() {
            bit = bit * BITS + (!words[bit as usize]).trailing_zeros() as u64;
            #[cfg(test)]
            self.words_read.set(self.words_read.get() + 1);
        }
        Some(bit)
    }
}

/// A line's random places in a working set of `size` bytes on a target of logical blocks of
/// `lbs` bytes: how many, and the bytes between them (its `align`, by default its transfer
/// size rounded up to the logical block).
pub(crate) fn places(l: &SpecLine, size: u64, lbs: u64) -> (u64, u64) {
    let align = l.align.unwrap_or(l.size.div_ceil(lbs) * lbs);
    ((size - l.size) / align + 1, align)
}

/// The bytes the random maps of `spec` take on one target of logical blocks of `lbs` bytes
/// with a working set of `size` bytes (none without `random_map`): about a bit per place.
pub fn random_map_bytes(spec: &AccessSpec, size: u64, lbs: u64) -> u64 {
    let mapped = spec.lines.iter().filter(|l| mapped(spec, l) && l.size <= size);
    mapped.map(|l| RandomMap::bytes_for(places(l, size, lbs).0)).sum()
}

/// Whether a line's random I/Os take their places through a random map: asked by the
/// specification, on a uniform law.
pub(crate) fn mapped(spec: &AccessSpec, l: &SpecLine) -> bool {
    spec.random_map && l.random > 0 && l.distribution.is_uniform()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Every place once per pass, whatever the draws, for counts at the edges of words and
    /// levels; and the next free place, not any: a draw on a taken place takes the first free
    /// one after it, as fio's axmap_next_free.
    #[test]
    fn each_place_once_per_pass_and_the_next_free_one() {
        for count in [1u64, 2, 63, 64, 65, 4095, 4096, 4097, 262_145] {
            let mut map = RandomMap::new(count);
            let mut rng = Rng::new(3, 0);
            for pass in 0..2 {
                let mut seen = vec![false; count as usize];
                for _ in 0..count {
                    let drawn = rng.below(count);
                    let took = map.take(drawn);
                    if count < 5000 {
                        let expect = (drawn..count).chain(0..drawn).find(|&p| !seen[p as usize]).unwrap();
                        assert_eq!(took, expect, "{count} places, pass {pass}: drawn {drawn}");
                    }
                    assert!(!seen[took as usize], "{count} places, pass {pass}: {took} twice");
                    seen[took as usize] = true;
                }
                assert!(seen.iter().all(|&s| s), "{count} places, pass {pass}: a place missed");
            }
        }
    }

    /// The search for a free place reads a few words a level wherever the place is, never a
    /// run of the map: the one free place of 16 M, at the far end from the draw, in at most
    /// 4 words a level (up and down, then again from the start); a whole pass over 1 M places
    /// at random in under 2 words an I/O on average (0.76 here; a scan of level 0 word by word,
    /// put in by hand, read 262,144 words for the first and 9.7 an I/O for the second).
    #[test]
    fn a_free_place_is_found_in_a_few_words_wherever_it_is() {
        let count = 1u64 << 24;
        let mut map = RandomMap::new(count);
        for place in 0..count - 1 {
            map.set(place);
        }
        map.words_read.set(0);
        assert_eq!(map.take(1), count - 1);
        let levels = map.levels.len() as u64;
        assert!(map.words_read.get() <= 4 * levels, "{} words read for one search", map.words_read.get());
        let count = 1u64 << 20;
        let (mut map, mut rng) = (RandomMap::new(count), Rng::new(9, 0));
        for _ in 0..count {
            map.take(rng.below(count));
        }
        let per_io = map.words_read.get() as f64 / count as f64;
        assert!(per_io < 2.0, "{per_io} words read per I/O over a pass");
    }

    #[test]
    fn its_size_is_about_a_bit_a_place() {
        assert_eq!(RandomMap::bytes_for(1 << 20), (16384 + 256 + 4 + 1) * 8);
        assert_eq!(RandomMap::bytes_for(1), 8);
    }
}
