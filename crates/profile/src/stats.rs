//! The statistics the analyses need, with no dependency: the chi-square test of homogeneity
//! on two binned distributions (with sparse bins merged), its p-value from the regularized
//! incomplete gamma function, and Pearson's correlation.

/// Cochran's rule: every expected count of a chi-square test at least this.
pub const MIN_EXPECTED: f64 = 5.0;

/// The chi-square test of homogeneity of two histograms over the same buckets.
#[derive(Clone, Debug, PartialEq)]
pub struct Homogeneity {
    /// The statistic, sum over bins and samples of (observed - expected)^2 / expected.
    pub chi2: f64,
    /// Degrees of freedom: bins - 1 (0: too few calls to test).
    pub df: u32,
    /// The probability of a statistic this large if both came from one distribution.
    pub p: f64,
    /// Bins after merging adjacent sparse buckets.
    pub bins: usize,
    /// Total variation distance between the two normalised histograms (bucket by bucket,
    /// unmerged): the share of calls that would have to move bucket to turn one into the
    /// other, 0..=1.
    pub shift: f64,
}

/// Test whether `a` and `b` (counts per bucket, same buckets) come from one distribution.
/// Adjacent buckets are merged, in bucket order, until every bin's smaller expected count is
/// at least [`MIN_EXPECTED`]; a short last bin joins the one before. With fewer than two
/// bins (or an empty side) there is nothing to test: `df` 0, `p` 1.
pub fn homogeneity(a: &[u64], b: &[u64]) -> Homogeneity {
    let na: f64 = a.iter().map(|&x| x as f64).sum();
    let nb: f64 = b.iter().map(|&x| x as f64).sum();
    let shift = if na > 0.0 && nb > 0.0 {
        a.iter().zip(b).map(|(&x, &y)| (x as f64 / na - y as f64 / nb).abs()).sum::<f64>() / 2.0
    } else if na == nb {
        0.0
    } else {
        1.0
    };
    let n = na + nb;
    let none = Homogeneity { chi2: 0.0, df: 0, p: 1.0, bins: 1, shift };
    if na == 0.0 || nb == 0.0 {
        return none;
    }
    let (fa, fb) = (na / n, nb / n);
    // Merge: (observed a, observed b) per bin.
    let mut bins: Vec<(f64, f64)> = Vec::new();
    let (mut ca, mut cb) = (0.0, 0.0);
    for (&x, &y) in a.iter().zip(b) {
        ca += x as f64;
        cb += y as f64;
        let t = ca + cb;
        if t * fa.min(fb) >= MIN_EXPECTED {
            bins.push((ca, cb));
            ca = 0.0;
            cb = 0.0;
        }
    }
    if ca + cb > 0.0 {
        match bins.last_mut() {
            Some(last) => {
                last.0 += ca;
                last.1 += cb;
            }
            None => bins.push((ca, cb)),
        }
    }
    if bins.len() < 2 {
        return Homogeneity { bins: bins.len(), ..none };
    }
    let chi2: f64 = bins
        .iter()
        .map(|&(x, y)| {
            let t = x + y;
            let (ea, eb) = (t * fa, t * fb);
            (x - ea).powi(2) / ea + (y - eb).powi(2) / eb
        })
        .sum();
    let df = (bins.len() - 1) as u32;
    Homogeneity { chi2, df, p: chi2_sf(chi2, df), bins: bins.len(), shift }
}

/// P(X >= x) for X chi-square distributed with `df` degrees of freedom.
pub fn chi2_sf(x: f64, df: u32) -> f64 {
    if df == 0 {
        return 1.0;
    }
    if x <= 0.0 {
        return 1.0;
    }
    gamma_q(f64::from(df) / 2.0, x / 2.0)
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: ~15 digits).
pub fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
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
        // Reflection.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut s = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        s += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + s.ln()
}

/// The regularized upper incomplete gamma function Q(a, x) = Γ(a, x) / Γ(a): the series
/// for x < a + 1, Lentz's continued fraction otherwise (Numerical Recipes 6.2).
pub fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let lead = a * x.ln() - x - ln_gamma(a);
    if x < a + 1.0 {
        let (mut ap, mut sum, mut del) = (a, 1.0 / a, 1.0 / a);
        for _ in 0..10_000 {
            ap += 1.0;
            del *= x / ap;
            sum += del;
            if del.abs() < sum.abs() * 1e-15 {
                break;
            }
        }
        (1.0 - sum * lead.exp()).clamp(0.0, 1.0)
    } else {
        const TINY: f64 = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / TINY;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < TINY {
                d = TINY;
            }
            c = b + an / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-15 {
                break;
            }
        }
        (lead.exp() * h).clamp(0.0, 1.0)
    }
}

/// Pearson's correlation of two equally long series; `None` with fewer than 3 points or when
/// either series is constant.
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len().min(y.len());
    if n < 3 {
        return None;
    }
    let mx = x[..n].iter().sum::<f64>() / n as f64;
    let my = y[..n].iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (dx, dy) = (x[i] - mx, y[i] - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return None;
    }
    Some((sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chi_square_tail_matches_tables() {
        // Critical values from the chi-square table: P(X >= x) = 0.05 and 0.001.
        for (x, df, p) in
            [(3.841, 1, 0.05), (5.991, 2, 0.05), (18.307, 10, 0.05), (10.828, 1, 0.001)]
        {
            let got = chi2_sf(x, df);
            assert!((got - p).abs() < p * 0.01, "df {df} x {x}: {got}");
        }
        assert!((chi2_sf(100.0, 3) - 0.0).abs() < 1e-15);
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
    }

    #[test]
    fn homogeneity_tells_shifts_from_noise() {
        let a = [0, 100, 400, 300, 50, 2, 1, 0];
        let same = [0, 98, 405, 296, 48, 3, 0, 0];
        let t = homogeneity(&a, &same);
        assert!(t.p > 0.5 && t.shift < 0.02, "{t:?}");
        // The sparse tail is merged: 4 bins of expected >= 5.
        assert_eq!(t.bins, 4);
        let shifted = [0, 0, 100, 400, 300, 50, 3, 0];
        let t = homogeneity(&a, &shifted);
        assert!(t.p < 1e-10 && t.shift > 0.4, "{t:?}");
        assert_eq!(homogeneity(&[0, 3, 0], &[0, 2, 0]).df, 0);
        assert_eq!(homogeneity(&[0, 0, 0], &[1, 0, 0]).p, 1.0);
    }

    #[test]
    fn pearson_signs() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert!((pearson(&x, &[2.0, 4.0, 6.0, 8.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((pearson(&x, &[8.0, 6.0, 4.0, 2.0]).unwrap() + 1.0).abs() < 1e-12);
        assert_eq!(pearson(&x, &[1.0, 1.0, 1.0, 1.0]), None);
    }
}
