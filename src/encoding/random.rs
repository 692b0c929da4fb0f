//! A small seeded generator (splitmix64) for the random parts of encodings and views: rope-vit's
//! random mixed frequencies, random query and key vectors. Our own, not torch's: the same seed
//! gives the same numbers on every machine, not the numbers a torch run would.

/// splitmix64 (Steele, Lea and Flood 2014).
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1]`.
    pub fn next_unit(&mut self) -> f64 {
        self.next_u64() as f64 / u64::MAX as f64
    }
}
