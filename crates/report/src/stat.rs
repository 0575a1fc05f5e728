//! Statistics over repetitions: mean, sample standard deviation and
//! Welch's unequal-variance t-test (two-sided), with the Student t
//! distribution computed through the regularized incomplete beta function.

/// Mean and sample standard deviation (n − 1); std is 0 for one value.
pub fn mean_std(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// The outcome of Welch's t-test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TTest {
    /// Fewer than two repetitions on a side: no test possible.
    NotApplicable,
    /// Both sides have zero variance: the test is undefined; `equal` says
    /// whether the means are identical.
    NoVariance {
        /// The two constant values are equal.
        equal: bool,
    },
    /// The test statistic, Welch–Satterthwaite degrees of freedom and the
    /// two-sided p-value.
    Welch {
        /// t statistic (positive when `b` has the larger mean).
        t: f64,
        /// Degrees of freedom.
        df: f64,
        /// Two-sided p-value.
        p: f64,
    },
}

/// Welch's t-test of `a` (base) against `b` (new), two-sided.
pub fn welch(a: &[f64], b: &[f64]) -> TTest {
    if a.len() < 2 || b.len() < 2 {
        return TTest::NotApplicable;
    }
    let (ma, sa) = mean_std(a);
    let (mb, sb) = mean_std(b);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (va, vb) = (sa * sa / na, sb * sb / nb);
    let se2 = va + vb;
    if se2 <= 0.0 {
        return TTest::NoVariance { equal: ma == mb };
    }
    let t = (mb - ma) / se2.sqrt();
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    TTest::Welch {
        t,
        df,
        p: t_two_sided_p(t, df),
    }
}

/// Two-sided p-value of Student's t with `df` degrees of freedom:
/// P(|T| ≥ |t|) = I_{df/(df+t²)}(df/2, 1/2).
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    reg_inc_beta(df / 2.0, 0.5, x).clamp(0.0, 1.0)
}

/// ln Γ(x) for x > 0 (Lanczos approximation, g = 7, nine coefficients;
/// relative error below 1e-13 over the range used here).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Regularized incomplete beta I_x(a, b), by its continued fraction
/// (modified Lentz), using the symmetry I_x(a,b) = 1 − I_{1−x}(b,a) where
/// the fraction converges faster.
pub fn reg_inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = f64::from(m);
        // Even step.
        let num = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 + num * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + num / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        // Odd step.
        let num = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 + num * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + num / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn gamma_values() {
        assert!(close(ln_gamma(1.0), 0.0, 1e-12));
        assert!(close(ln_gamma(5.0), 24f64.ln(), 1e-12));
        assert!(close(
            ln_gamma(0.5),
            std::f64::consts::PI.sqrt().ln(),
            1e-12
        ));
    }

    #[test]
    fn t_distribution_known_quantiles() {
        // Two-sided critical values from the t table.
        assert!(close(t_two_sided_p(12.706, 1.0), 0.05, 1e-4));
        assert!(close(t_two_sided_p(2.776, 4.0), 0.05, 1e-4));
        assert!(close(t_two_sided_p(2.228, 10.0), 0.05, 1e-4));
        assert!(close(t_two_sided_p(3.169, 10.0), 0.01, 1e-4));
        assert!(close(t_two_sided_p(1.96, 1e7), 0.05, 1e-4));
        assert!(close(t_two_sided_p(0.0, 5.0), 1.0, 1e-12));
    }

    #[test]
    fn welch_example() {
        // Hand-computed: means 20 and 22, sample variances 2.5 and 2.5,
        // n = 5 each: t = 2 / sqrt(1) = 2, df = 8, p = 0.0805.
        let a = [18.0, 19.0, 20.0, 21.0, 22.0];
        let b = [20.0, 21.0, 22.0, 23.0, 24.0];
        match welch(&a, &b) {
            TTest::Welch { t, df, p } => {
                assert!(close(t, 2.0, 1e-12));
                assert!(close(df, 8.0, 1e-9));
                assert!(close(p, 0.0805, 5e-4), "{p}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(welch(&[1.0], &[2.0, 3.0]), TTest::NotApplicable);
        assert_eq!(
            welch(&[1.0, 1.0], &[1.0, 1.0]),
            TTest::NoVariance { equal: true }
        );
    }
}
