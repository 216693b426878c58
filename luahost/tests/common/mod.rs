//! Shared by the cross-tests: a seeded generator (splitmix64), so every sweep is the same on
//! every run.
#![allow(dead_code)]

/// Deterministic generator (splitmix64).
pub struct Rng(pub u64);

impl Rng {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f64 {
        self.f64() * 2.0 - 1.0
    }
    /// Uniform in `lo..hi` (integers).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo) as u64) as i64
    }
    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
    /// A unit quaternion uniform over rotations, as f32 components (x, y, z, w).
    pub fn quat(&mut self) -> glam::Quat {
        loop {
            let v = [self.unit(), self.unit(), self.unit(), self.unit()];
            let n2: f64 = v.iter().map(|c| c * c).sum();
            if n2 > 1e-6 && n2 <= 1.0 {
                let n = n2.sqrt();
                return glam::Quat::from_xyzw(
                    (v[0] / n) as f32,
                    (v[1] / n) as f32,
                    (v[2] / n) as f32,
                    (v[3] / n) as f32,
                );
            }
        }
    }
}

/// Prints a cross-test count in one recognisable form (collected for the reports).
pub fn report(what: &str, count: usize) {
    println!("cross-test {what}: {count} cases agree with the Rust runtime");
}
