//! Tolerance-driven key selection for curves that are read between keys (straight lines,
//! blends, cubics).
//!
//! [`select_keys`] is a greedy pass: from each key it finds the furthest later sample that can
//! be the next key with every sample between within tolerance, probing by doubling and then
//! by bisection (so a segment of length L costs O(L log L) checks, not O(L²)). Samples marked
//! as forced are always keys and end a segment. The caller's `fits(a, b)` says whether keys
//! at samples `a` and `b` keep every sample strictly between within tolerance; it is where the
//! measure (distance, angle, cubic) and the rounding a reader will see are applied. The pass
//! does not assume `fits` is monotone: the key it picks always satisfies it.

/// Indices of the samples to keep as keys, always including the first and the last sample
/// and every sample with `forced[i]` set. `n` is the number of samples (0 gives none).
pub fn select_keys(
    n: usize,
    forced: &dyn Fn(usize) -> bool,
    fits: &mut dyn FnMut(usize, usize) -> bool,
) -> Vec<usize> {
    let mut keys = Vec::new();
    if n == 0 {
        return keys;
    }
    keys.push(0);
    let mut a = 0usize;
    while a + 1 < n {
        // The segment may not run past the next forced sample (or the last one).
        let mut limit = a + 1;
        while limit < n - 1 && !forced(limit) {
            limit += 1;
        }
        let mut good = a + 1; // two neighbours always fit: nothing between them
        let mut step = 1usize;
        let mut bad = None;
        while good < limit {
            let probe = (a + step * 2).min(limit);
            if fits(a, probe) {
                good = probe;
                step *= 2;
            } else {
                bad = Some(probe);
                break;
            }
        }
        if let Some(mut hi) = bad {
            while hi - good > 1 {
                let mid = good + (hi - good) / 2;
                if fits(a, mid) {
                    good = mid;
                } else {
                    hi = mid;
                }
            }
        }
        keys.push(good);
        a = good;
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(v: &[f64], tol: f64, forced: &[usize]) -> Vec<usize> {
        select_keys(v.len(), &|i| forced.contains(&i), &mut |a, b| {
            (a + 1..b).all(|i| {
                let t = (i - a) as f64 / (b - a) as f64;
                (v[a] + (v[b] - v[a]) * t - v[i]).abs() <= tol
            })
        })
    }

    #[test]
    fn line_keeps_ends_only() {
        let v: Vec<f64> = (0..100).map(|i| i as f64 * 0.5).collect();
        assert_eq!(run(&v, 0.01, &[]), vec![0, 99]);
        assert_eq!(run(&v, 0.01, &[40]), vec![0, 40, 99]);
    }

    #[test]
    fn corner_is_kept_and_every_sample_fits() {
        let v: Vec<f64> = (0..50)
            .map(|i| if i < 20 { 0.0 } else { (i - 20) as f64 })
            .collect();
        let k = run(&v, 0.1, &[]);
        assert_eq!(k, vec![0, 20, 49]);
        let v: Vec<f64> = (0..200).map(|i| (i as f64 * 0.1).sin() * 10.0).collect();
        let k = run(&v, 0.05, &[]);
        for w in k.windows(2) {
            let (a, b) = (w[0], w[1]);
            for i in a + 1..b {
                let t = (i - a) as f64 / (b - a) as f64;
                assert!((v[a] + (v[b] - v[a]) * t - v[i]).abs() <= 0.05);
            }
        }
    }
}
