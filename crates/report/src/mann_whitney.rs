//! The Mann-Whitney U test (Wilcoxon rank-sum; Mann & Whitney 1947) of two
//! samples, two-sided, and the Hodges-Lehmann estimate of the shift
//! between them with its distribution-free confidence interval (Hollander
//! & Wolfe, "Nonparametric Statistical Methods", 3rd ed., 4.3). Without
//! ties and with at most [`EXACT_MAX`] pairs the p-value is exact (the
//! null distribution of U counted); otherwise the normal approximation
//! with the tie and continuity corrections.

/// The most pairs (n·m) for which the exact distribution is counted.
pub const EXACT_MAX: usize = 2_500;

/// A test's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UTest {
    /// U of the first sample: pairs (a, b) with a > b, ties counted half.
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Tests whether `a` and `b` come from one distribution (two-sided).
/// Empty samples give p = 1.
pub fn u_test(a: &[f64], b: &[f64]) -> UTest {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return UTest { u: 0.0, p: 1.0 };
    }
    // Ranks of the pooled samples, ties at their mean rank.
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let (mut rank_sum_a, mut tie_term, mut ties) = (0.0, 0.0, false);
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        if t > 1.0 {
            ties = true;
            tie_term += t * t * t - t;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        rank_sum_a += rank * all[i..=j].iter().filter(|x| x.1).count() as f64;
        i = j + 1;
    }
    let (nf, mf) = (n as f64, m as f64);
    let u = rank_sum_a - nf * (nf + 1.0) / 2.0;
    let p = if !ties && n * m <= EXACT_MAX {
        exact_p(n, m, u)
    } else {
        let mean = nf * mf / 2.0;
        let total = nf + mf;
        let var = nf * mf / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)));
        if var <= 0.0 {
            1.0
        } else {
            let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt();
            (2.0 * normal_upper(z)).min(1.0)
        }
    };
    UTest { u, p }
}

/// Null distributions of U counted, by sizes.
type Counted = std::collections::HashMap<(usize, usize), std::rc::Rc<Vec<f64>>>;

/// The exact two-sided p-value of U for sizes `n`, `m` without ties: twice
/// the smaller tail's probability.
fn exact_p(n: usize, m: usize, u: f64) -> f64 {
    thread_local! {
        /// The distributions counted so far, by sizes (a scan over a
        /// series tests the same sizes again and again).
        static COUNTED: std::cell::RefCell<Counted> = Default::default();
    }
    let counts = COUNTED.with(|c| {
        c.borrow_mut()
            .entry((n, m))
            .or_insert_with(|| std::rc::Rc::new(u_counts(n, m)))
            .clone()
    });
    let total: f64 = counts.iter().sum();
    let u = u.round() as usize;
    let lower: f64 = counts[..=u.min(n * m)].iter().sum();
    let upper: f64 = counts[u.min(n * m)..].iter().sum();
    (2.0 * lower.min(upper) / total).min(1.0)
}

/// How many arrangements of `n` and `m` items give each U (0..=n·m): the
/// recursion f(n, m, u) = f(n-1, m, u-m) + f(n, m-1, u).
fn u_counts(n: usize, m: usize) -> Vec<f64> {
    // row[j][u] holds f(i, j, u) for the current i.
    let max = n * m;
    let mut prev: Vec<Vec<f64>> = (0..=m)
        .map(|_| {
            let mut v = vec![0.0; max + 1];
            v[0] = 1.0;
            v
        })
        .collect();
    for _ in 1..=n {
        let mut cur: Vec<Vec<f64>> = vec![vec![0.0; max + 1]; m + 1];
        cur[0][0] = 1.0;
        for j in 1..=m {
            for u in 0..=max {
                let from_a = if u >= j { prev[j][u - j] } else { 0.0 };
                cur[j][u] = from_a + cur[j - 1][u];
            }
        }
        prev = cur;
    }
    prev.swap_remove(m)
}

/// P(Z > z) of the standard normal (Abramowitz & Stegun 7.1.26 through
/// erfc, |error| < 1.5e-7).
pub fn normal_upper(z: f64) -> f64 {
    if z < 0.0 {
        return 1.0 - normal_upper(-z);
    }
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    0.5 * poly * (-x * x).exp()
}

/// The Hodges-Lehmann shift of `b` over `a` (the median of the pairwise
/// differences b - a) and its two-sided confidence interval at `level`
/// (e.g. 0.95), from the order statistics of those differences.
pub fn shift(a: &[f64], b: &[f64], level: f64) -> (f64, f64, f64) {
    let mut d: Vec<f64> = b
        .iter()
        .flat_map(|&y| a.iter().map(move |&x| y - x))
        .collect();
    if d.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    d.sort_by(f64::total_cmp);
    let k = d.len();
    let median = if k % 2 == 1 {
        d[k / 2]
    } else {
        (d[k / 2 - 1] + d[k / 2]) / 2.0
    };
    let (nf, mf) = (a.len() as f64, b.len() as f64);
    let z = normal_quantile(1.0 - (1.0 - level) / 2.0);
    let c = (nf * mf / 2.0 - z * (nf * mf * (nf + mf + 1.0) / 12.0).sqrt()).floor();
    let c = (c.max(0.0) as usize).min((k - 1) / 2);
    (median, d[c], d[k - 1 - c])
}

/// The standard normal's quantile (Acklam's rational approximation,
/// relative error < 1.2e-9).
fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known values: sizes 3 and 3, completely separated: U = 0, exact
    /// two-sided p = 2/20; the normal tail and quantile at 1.96.
    #[test]
    fn known_values() {
        let t = u_test(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
        assert_eq!(t.u, 0.0);
        assert!((t.p - 0.1).abs() < 1e-12, "{t:?}");
        // Interleaved: no evidence.
        assert_eq!(u_test(&[1.0, 4.0, 5.0], &[2.0, 3.0, 6.0]).p, 1.0);
        assert!((normal_upper(1.959_964) - 0.025).abs() < 1e-6);
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
        // Five against five, separated: 2 / C(10, 5).
        let t = u_test(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]);
        assert!((t.p - 2.0 / 252.0).abs() < 1e-12, "{t:?}");
        // The shift of b over a and an interval around it.
        let (s, lo, hi) = shift(&[1.0, 2.0, 3.0, 4.0], &[11.0, 12.0, 13.0, 14.0], 0.95);
        assert_eq!(s, 10.0);
        assert!(
            lo <= 10.0 && hi >= 10.0 && lo >= 7.0 && hi <= 13.0,
            "{lo} {hi}"
        );
    }
}
