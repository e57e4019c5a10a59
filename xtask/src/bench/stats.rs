//! Samples and their summary: median and p95 by the nearest-rank rule, plus min and max.

use serde::Serialize;

/// What one measure's samples come to, in the row's unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// How many samples.
    pub n: usize,
    pub median: f64,
    pub p95: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    /// The summary of `samples` (at least one).
    pub fn of(samples: &[f64]) -> Summary {
        assert!(!samples.is_empty(), "a measure has at least one sample");
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        Summary {
            n: sorted.len(),
            median: rank(&sorted, 0.5),
            p95: rank(&sorted, 0.95),
            min: sorted[0],
            max: sorted[sorted.len() - 1],
        }
    }

    /// One sample.
    pub fn one(value: f64) -> Summary {
        Summary::of(&[value])
    }
}

/// The nearest-rank quantile `q` of sorted samples: the smallest sample with at least a
/// fraction `q` of the samples at or below it.
fn rank(sorted: &[f64], q: f64) -> f64 {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Milliseconds of a duration.
pub fn ms(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_p95_are_nearest_rank() {
        let samples: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let s = Summary::of(&samples);
        assert_eq!(
            (s.n, s.median, s.p95, s.min, s.max),
            (100, 50.0, 95.0, 1.0, 100.0)
        );
        let one = Summary::one(7.0);
        assert_eq!((one.median, one.p95), (7.0, 7.0));
        let three = Summary::of(&[3.0, 1.0, 2.0]);
        assert_eq!((three.median, three.p95), (2.0, 3.0));
    }
}
