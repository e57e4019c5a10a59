//! A small seedable generator (SplitMix64): the same seed gives the same run, so a failure is
//! reproduced from the seed it prints.

/// The generator's state.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    /// One element of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_replays_its_sequence_and_stays_in_range() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let one: Vec<u64> = (0..20).map(|_| a.next_u64()).collect();
        let two: Vec<u64> = (0..20).map(|_| b.next_u64()).collect();
        assert_eq!(one, two);
        assert!((0..1000).all(|_| a.below(3) < 3));
        assert_ne!(Rng::new(8).next_u64(), Rng::new(7).next_u64());
    }
}
