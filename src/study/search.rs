//! The maximum at a response-time limit (seed 001): raise outstanding I/Os, doubling from 1,
//! until the response time goes over the limit, then bisect between the last depth under it
//! and the first over it. The answer is the deepest depth measured at or under the limit whose
//! next depth (one more) was measured over it.

use crate::error::Result;

/// What a search measured and found.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Every depth measured, in order, with its response time (ms).
    pub measured: Vec<(u32, f64)>,
    /// The most outstanding I/Os at or under the limit; None if even 1 was over.
    pub found: Option<u32>,
    /// The depth just above `found`, measured over the limit; None if `max` never was.
    pub over: Option<u32>,
}

/// Searches depths 1..=`max` with `measure` (depth -> response time in ms).
pub fn search(limit_ms: f64, max: u32, measure: &mut dyn FnMut(u32) -> Result<f64>) -> Result<Outcome> {
    let mut measured = Vec::new();
    let mut probe = |q: u32, measured: &mut Vec<(u32, f64)>| -> Result<bool> {
        let v = measure(q)?;
        measured.push((q, v));
        Ok(v <= limit_ms)
    };
    // Doubling: lo is under the limit, hi (if any) over it.
    if !probe(1, &mut measured)? {
        return Ok(Outcome { measured, found: None, over: Some(1) });
    }
    let (mut lo, mut hi) = (1u32, None);
    while lo < max {
        let q = (lo * 2).min(max);
        if probe(q, &mut measured)? {
            lo = q;
        } else {
            hi = Some(q);
            break;
        }
    }
    // Bisecting until the two are neighbours.
    if let Some(mut h) = hi {
        while h - lo > 1 {
            let mid = lo + (h - lo) / 2;
            if probe(mid, &mut measured)? {
                lo = mid;
            } else {
                h = mid;
            }
        }
        hi = Some(h);
    }
    Ok(Outcome { measured, found: Some(lo), over: hi })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device whose response time is `per_io` ms per outstanding I/O (a saturated queue).
    fn linear(per_io: f64, limit: f64, max: u32) -> Outcome {
        search(limit, max, &mut |q| Ok(q as f64 * per_io)).unwrap()
    }

    #[test]
    fn doubles_then_bisects_to_neighbours() {
        let o = linear(0.4, 20.0, 4096); // 50 outstanding give exactly 20 ms
        assert_eq!(o.found, Some(50));
        assert_eq!(o.over, Some(51));
        let depths: Vec<u32> = o.measured.iter().map(|m| m.0).collect();
        assert_eq!(depths, [1, 2, 4, 8, 16, 32, 64, 48, 56, 52, 50, 51]);
    }

    #[test]
    fn edges() {
        let over_at_once = linear(30.0, 20.0, 4096);
        assert_eq!((over_at_once.found, over_at_once.over), (None, Some(1)));
        let never = linear(0.001, 20.0, 100);
        assert_eq!((never.found, never.over), (Some(100), None));
        assert_eq!(never.measured.last().unwrap().0, 100, "the last doubling stops at max");
        let one = linear(15.0, 20.0, 4096);
        assert_eq!((one.found, one.over), (Some(1), Some(2)));
    }
}
