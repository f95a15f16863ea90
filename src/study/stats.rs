//! The spread of a point's repeats: median (the headline, as seed 004 reports), min, max and
//! coefficient of variation.

use serde::{Deserialize, Serialize};

/// Above this coefficient of variation a point's repeats disagree enough to warn.
pub const CV_WARN: f64 = 0.05;

/// Median, extremes and coefficient of variation of some measurements.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// The middle value (the mean of the two middle ones for an even count).
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// Standard deviation (n - 1) / mean; 0 for one value or a zero mean.
    pub cv: f64,
}

impl Spread {
    /// The spread of `values` (not empty).
    pub fn of(values: &[f64]) -> Spread {
        assert!(!values.is_empty(), "a spread needs values");
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        let mean = v.iter().sum::<f64>() / n as f64;
        let cv = if n < 2 || mean == 0.0 {
            0.0
        } else {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt() / mean.abs()
        };
        Spread { median, min: v[0], max: v[n - 1], cv }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_min_max_cv() {
        let s = Spread::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        assert!((s.cv - 0.5).abs() < 1e-12); // sd 1, mean 2
        assert_eq!(Spread::of(&[4.0, 1.0, 3.0, 2.0]).median, 2.5);
        assert_eq!(Spread::of(&[7.0]), Spread { median: 7.0, min: 7.0, max: 7.0, cv: 0.0 });
        assert_eq!(Spread::of(&[0.0, 0.0]).cv, 0.0);
    }
}
