//! Paired significance tests for comparing two systems on the same queries: the two-sided
//! paired t-test and the two-sided paired randomization (sign-flip) test, as ranx offers.
//! Checked against scipy (engine/tests/golden/metrics/significance_cases.json).

/// Result of a paired test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TestResult {
    /// Two-sided p-value; `None` when undefined (fewer than 2 pairs, or all differences 0
    /// for the t-test).
    pub p_value: Option<f64>,
    /// The test statistic (t for the t-test, mean difference for the randomization test).
    pub statistic: f64,
}

/// Two-sided paired t-test of `a` against `b` (scipy's `ttest_rel`).
pub fn paired_t_test(a: &[f64], b: &[f64]) -> TestResult {
    assert_eq!(a.len(), b.len(), "paired test needs equal lengths");
    let n = a.len();
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let mean = d.iter().sum::<f64>() / n.max(1) as f64;
    if n < 2 {
        return TestResult {
            p_value: None,
            statistic: f64::NAN,
        };
    }
    let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    if var <= 0.0 {
        // All differences equal: undefined when they are 0, else infinitely significant
        // (scipy's answer too).
        return if mean == 0.0 {
            TestResult {
                p_value: None,
                statistic: f64::NAN,
            }
        } else {
            TestResult {
                p_value: Some(0.0),
                statistic: mean.signum() * f64::INFINITY,
            }
        };
    }
    let t = mean / (var / n as f64).sqrt();
    let df = (n - 1) as f64;
    // P(|T| >= |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2).
    let p = regularized_incomplete_beta(df / (df + t * t), df / 2.0, 0.5);
    TestResult {
        p_value: Some(p.clamp(0.0, 1.0)),
        statistic: t,
    }
}

/// Two-sided paired randomization test: the share of sign flips of the per-query differences
/// whose mean is at least as far from 0 as the observed one. Exact (all `2^n` flips) when
/// `2^n <= permutations`, else `permutations` random flips from `seed`, with p =
/// `(1 + hits) / (1 + permutations)` (never 0 for a sampled test).
pub fn randomization_test(a: &[f64], b: &[f64], permutations: usize, seed: u64) -> TestResult {
    let (d, mean, threshold) = sign_flip_setup(a, b);
    let n = d.len();
    if n == 0 {
        return TestResult {
            p_value: None,
            statistic: f64::NAN,
        };
    }
    if n < 63 && (1usize << n) <= permutations.max(1) {
        let total = 1u64 << n;
        let mut hits = 0u64;
        for mask in 0..total {
            let s: f64 = d
                .iter()
                .enumerate()
                .map(|(i, x)| if mask >> i & 1 == 1 { -x } else { *x })
                .sum();
            if s.abs() >= threshold {
                hits += 1;
            }
        }
        return TestResult {
            p_value: Some(hits as f64 / total as f64),
            statistic: mean,
        };
    }
    randomization_test_sampled(a, b, permutations, seed)
}

/// The sampled randomization test alone: `permutations` random sign flips from `seed`,
/// p = `(1 + hits) / (1 + permutations)`.
pub fn randomization_test_sampled(
    a: &[f64],
    b: &[f64],
    permutations: usize,
    seed: u64,
) -> TestResult {
    let (d, mean, threshold) = sign_flip_setup(a, b);
    let mut rng = crate::rng::SplitMix64::new(seed);
    let mut hits = 0usize;
    for _ in 0..permutations {
        let mut s = 0.0;
        let mut bits = 0u64;
        for (i, x) in d.iter().enumerate() {
            if i % 64 == 0 {
                bits = rng.next_u64();
            }
            s += if bits >> (i % 64) & 1 == 1 { -x } else { *x };
        }
        if s.abs() >= threshold {
            hits += 1;
        }
    }
    TestResult {
        p_value: Some((1 + hits) as f64 / (1 + permutations) as f64),
        statistic: mean,
    }
}

/// Differences `a - b`, their mean, and the |sum| a flipped sum must reach to count as extreme
/// (the observed |sum| less a floating-point tolerance).
fn sign_flip_setup(a: &[f64], b: &[f64]) -> (Vec<f64>, f64, f64) {
    assert_eq!(a.len(), b.len(), "paired test needs equal lengths");
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let observed = d.iter().sum::<f64>();
    let mean = observed / d.len().max(1) as f64;
    let threshold = observed.abs() - 1e-12 * (1.0 + d.iter().map(|x| x.abs()).sum::<f64>());
    (d, mean, threshold)
}

fn ln_gamma(x: f64) -> f64 {
    // Lanczos approximation (g = 7, n = 9), accurate to ~1e-15 for x > 0.
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
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularised incomplete beta function I_x(a, b) (continued fraction, Lentz's method).
pub fn regularized_incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_continued_fraction(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_continued_fraction(1.0 - x, b, a) / b
    }
}

/// Lentz's guard: a value this close to zero is replaced by it.
const TINY: f64 = 1e-300;

/// `v`, or `TINY` when `v` is closer to zero than that (Lentz's method).
fn off_zero(v: f64) -> f64 {
    if v.abs() < TINY {
        TINY
    } else {
        v
    }
}

/// One step of Lentz's method for the continued fraction's coefficient `aa`: the new `c` and
/// `d` from the previous ones; the value takes the factor `d * c`.
fn lentz_step(aa: f64, c: f64, d: f64) -> (f64, f64) {
    (off_zero(1.0 + aa / c), 1.0 / off_zero(1.0 + aa * d))
}

fn beta_continued_fraction(x: f64, a: f64, b: f64) -> f64 {
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / off_zero(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..10_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        (c, d) = lentz_step(aa, c, d);
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        (c, d) = lentz_step(aa, c, d);
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}
