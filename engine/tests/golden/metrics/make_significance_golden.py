#!/usr/bin/env python3
"""Writes the golden reference file for the engine's paired significance tests.

Usage:
    python make_significance_golden.py [OUT_DIR]      # OUT_DIR defaults to this script's folder

Environment (what produced the committed file):
    python3 -m venv ~/.cache/ifir/venv
    ~/.cache/ifir/venv/bin/pip install pytrec-eval-terrier numpy scipy   # numpy 2.4.6, scipy 1.17.1
    ~/.cache/ifir/venv/bin/python engine/tests/golden/metrics/make_significance_golden.py engine/tests/golden/metrics
(Python 3.11.7.)

The output is deterministic: every random case comes from numpy.random.default_rng(fixed seed),
values are rounded to 4 decimals before anything is computed from them, and the JSON is written
with a fixed key order. Re-running it produces a byte-identical file (given the same scipy).

Output: OUT_DIR/significance_cases.json
    {"generator", "scipy_version", "numpy_version", "conventions": [str],
     "cases": [{"name", "description", "n", "a": [float], "b": [float],
                "ttest_rel_p": float|null, "t_statistic": float|null,
                "t_statistic_nonfinite"?: "inf"|"-inf"|"nan",
                "exact_randomization_p": float|null}]}

* ttest_rel_p / t_statistic: scipy.stats.ttest_rel(a, b) (two-sided, df = n-1), exactly as scipy
  returns them. NaN (e.g. n = 1, or all differences d = a - b equal to 0) is written as null.
  +-inf (all differences equal to the same non-zero value, so the variance is exactly 0) is not
  representable in JSON: t_statistic is then null and "t_statistic_nonfinite" says "inf"/"-inf";
  ttest_rel_p is what scipy returns (0.0 in that case). When t is NaN, t_statistic_nonfinite is
  "nan". t_statistic_nonfinite is present only when t is not finite.
* exact_randomization_p: only for n <= 16, else null. The exact two-sided paired randomization
  (sign-flip) test:
      p = #{s in {-1,+1}^n : |mean(s*d)| >= |mean(d)| - 1e-12} / 2^n,   d = a - b
  computed here by full enumeration with numpy (the identity sign vector is included, so
  p >= 2^-n; for d == 0 every vector counts and p = 1). It is cross-checked against
  scipy.stats.permutation_test((a, b), mean(x - y), permutation_type='samples',
  alternative='two-sided', n_resamples=inf). scipy's two-sided p-value is defined differently,
  as min(2*P(T <= t), 2*P(T >= t)) clipped to 1, with a relative tolerance |t|*100*eps instead of
  our absolute 1e-12; because the sign-flip null distribution is symmetric around 0 the two
  definitions give the same number (for t = 0 both give 1). The script asserts they agree to
  1e-12 for every case with n >= 2 (scipy refuses n = 1: "each sample in `data` must contain two
  or more observations"); the value written is always the enumeration's.
* The t statistic is also cross-checked against a plain numpy formula
  mean(d) / (std(d, ddof=1) / sqrt(n)) (relative 1e-9) where it is finite.
"""
import itertools
import json
import math
import os
import sys
import warnings

import numpy as np
import scipy
import scipy.stats as st

EXACT_MAX_N = 16
TIE_EPS = 1e-12

CONVENTIONS = [
    "d = a - b, element-wise; a and b are per-query metric values of two systems on the same queries.",
    "ttest_rel_p and t_statistic are scipy.stats.ttest_rel(a, b) (two-sided, df = n - 1); NaN is written as null.",
    "When t is +-inf (all d equal to one non-zero value, variance exactly 0), t_statistic is null, "
    "t_statistic_nonfinite is 'inf' or '-inf', and ttest_rel_p is scipy's value (0.0). When t is NaN "
    "(n = 1, or all d = 0), t_statistic and ttest_rel_p are null and t_statistic_nonfinite is 'nan'. "
    "t_statistic_nonfinite is absent when t is finite.",
    "exact_randomization_p (n <= 16 only, else null) = #{s in {-1,1}^n : |mean(s*d)| >= |mean(d)| - 1e-12} / 2^n; "
    "the identity sign vector counts, so p >= 2^-n, and p = 1 when all d are 0.",
    "exact_randomization_p agrees with scipy.stats.permutation_test(permutation_type='samples', "
    "alternative='two-sided', n_resamples=inf) to 1e-12 for every case with n >= 2 (scipy refuses n = 1; "
    "the enumeration gives 1.0 there).",
    "Values in a and b are rounded to 4 decimals; compare p-values with a relative tolerance (about 1e-9) "
    "because some are very small.",
]


def r4(x):
    return np.round(np.clip(np.asarray(x, dtype=np.float64), 0.0, 1.0), 4)


def exact_randomization_p(d):
    n = len(d)
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)), dtype=np.float64)  # (2^n, n)
    null = (signs * d[None, :]).mean(axis=1)
    obs = abs(d.mean())
    count = int(np.count_nonzero(np.abs(null) >= obs - TIE_EPS))
    return count / float(2 ** n)


def scipy_randomization_p(a, b):
    def stat(x, y, axis):
        return np.mean(x - y, axis=axis)

    res = st.permutation_test((a, b), stat, permutation_type="samples", alternative="two-sided",
                              n_resamples=np.inf, vectorized=True)
    return float(res.pvalue)


def jnum(x):
    x = float(x)
    return None if math.isnan(x) else x


def make_case(name, description, a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape and a.ndim == 1 and len(a) >= 1
    assert np.all((a >= 0) & (a <= 1) & (b >= 0) & (b <= 1)), name
    n = len(a)
    d = a - b
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = st.ttest_rel(a, b)
    t = float(res.statistic)
    p = float(res.pvalue)
    case = {"name": name, "description": description, "n": n,
            "a": [float(x) for x in a], "b": [float(x) for x in b],
            "ttest_rel_p": jnum(p)}
    if math.isinf(t):
        case["t_statistic"] = None
        case["t_statistic_nonfinite"] = "inf" if t > 0 else "-inf"
    else:
        case["t_statistic"] = jnum(t)
        if math.isnan(t):
            case["t_statistic_nonfinite"] = "nan"
    # Independent check of the t statistic.
    if math.isfinite(t) and n >= 2:
        sd = d.std(ddof=1)
        own = d.mean() / (sd / math.sqrt(n))
        assert abs(own - t) <= 1e-9 * max(1.0, abs(t)), (name, own, t)
        own_p = 2.0 * st.t.sf(abs(own), n - 1)
        assert abs(own_p - p) <= 1e-9 * max(p, 1e-300) or abs(own_p - p) < 1e-15, (name, own_p, p)
    if n <= EXACT_MAX_N:
        ep = exact_randomization_p(d)
        if n >= 2:
            sp = scipy_randomization_p(a, b)
            assert abs(ep - sp) <= 1e-12, (name, ep, sp)
        # else: scipy.stats.permutation_test refuses n = 1 ("each sample in `data` must contain two
        # or more observations"); the enumeration gives 1.0 (both sign vectors have |mean| = |d|).
        case["exact_randomization_p"] = ep
    else:
        case["exact_randomization_p"] = None
    return case


def build_cases():
    cases = []
    add = lambda *args: cases.append(make_case(*args))

    # --- degenerate sizes -------------------------------------------------------------------
    add("n1_single_query", "n = 1: scipy returns NaN for t and p (df = 0); exact p = 1 (both sign vectors tie).",
        [0.75], [0.5])
    add("n2_dyadic", "n = 2, exactly representable values, d = [0.25, -0.125].",
        [0.75, 0.375], [0.5, 0.5])

    # --- identical systems / zero variance -------------------------------------------------
    rng = np.random.default_rng(101)
    x = r4(rng.random(10))
    add("identical_n10", "a == b, all d = 0: scipy gives NaN (0/0) -> null; exact p = 1.", x, x.copy())
    x = r4(rng.random(50))
    add("identical_n50", "a == b with n = 50: t and p null, no exact p (n > 16).", x, x.copy())
    b = np.array([0.0, 0.125, 0.25, 0.375, 0.5, 0.625], dtype=np.float64)
    add("constant_difference_dyadic_n6",
        "Every d is exactly 0.25 (dyadic values, so the variance is exactly 0): scipy gives t = +inf, p = 0.0; "
        "exact p = 2/64 (only the all-plus and all-minus sign vectors reach |mean|).",
        b + 0.25, b)

    # --- one non-zero difference --------------------------------------------------------------
    rng = np.random.default_rng(202)
    b = r4(rng.random(10))
    a = b.copy()
    a[3] = r4(b[3] + 0.3)
    add("one_difference_n10", "Only one query differs (d[3] = +0.3); t = 1 exactly in theory, exact p = 1.", a, b)
    b = r4(rng.random(40))
    a = b.copy()
    a[17] = r4(b[17] - 0.5) if b[17] >= 0.5 else r4(b[17] + 0.5)
    add("one_difference_n40", "Only one of 40 queries differs by 0.5.", a, b)
    b = np.array([0.5, 0.25], dtype=np.float64)
    add("one_difference_n2", "n = 2, one difference: d = [0.25, 0].", np.array([0.75, 0.25]), b)

    # --- random, no real difference ----------------------------------------------------------
    for seed, n in [(301, 2), (302, 3), (303, 5), (304, 8), (305, 12), (306, 16), (307, 30), (308, 100), (309, 200)]:
        rng = np.random.default_rng(seed)
        a = r4(rng.random(n))
        b = r4(rng.random(n))
        add(f"random_independent_n{n}", f"a and b independent uniform [0,1], n = {n}; no systematic difference.",
            a, b)

    # --- random, same system plus noise (no difference, correlated) ---------------------------
    for seed, n in [(401, 10), (402, 60)]:
        rng = np.random.default_rng(seed)
        base = rng.random(n)
        a = r4(base + rng.normal(0, 0.05, n))
        b = r4(base + rng.normal(0, 0.05, n))
        add(f"random_correlated_nodiff_n{n}", f"Shared per-query difficulty plus N(0, 0.05) noise, n = {n}.", a, b)

    # --- random, clear difference ------------------------------------------------------------
    for seed, n, delta in [(501, 6, 0.15), (502, 14, 0.1), (503, 16, 0.05), (504, 50, 0.05), (505, 200, 0.03)]:
        rng = np.random.default_rng(seed)
        base = rng.random(n) * 0.8 + 0.1
        a = r4(base + delta + rng.normal(0, 0.05, n))
        b = r4(base + rng.normal(0, 0.05, n))
        add(f"random_clear_diff_n{n}", f"a = b + {delta} + noise (shared difficulty, N(0, 0.05) noise), n = {n}.",
            a, b)

    # --- ties --------------------------------------------------------------------------------
    rng = np.random.default_rng(601)
    a = np.round(rng.integers(0, 11, 12) / 10.0, 1)
    b = np.round(rng.integers(0, 11, 12) / 10.0, 1)
    add("ties_tenths_n12", "Values on a 0.1 grid, so many |d| and d = 0 ties (float rounding of tenths).", a, b)
    rng = np.random.default_rng(602)
    a = rng.integers(0, 2, 16).astype(np.float64)
    b = rng.integers(0, 2, 16).astype(np.float64)
    add("ties_binary_n16", "Binary per-query values (like success@k): d in {-1, 0, 1}.", a, b)
    rng = np.random.default_rng(603)
    a = rng.integers(0, 2, 100).astype(np.float64)
    b = np.where(rng.random(100) < 0.8, a, 1.0 - a)
    add("ties_binary_n100", "Binary values, b equals a on about 80% of queries.", a, b)
    add("ties_symmetric_n4", "d = [0.25, -0.25, 0.5, -0.5]: mean 0, t = 0, exact p = 1.",
        [0.75, 0.25, 1.0, 0.0], [0.5, 0.5, 0.5, 0.5])
    add("ties_equal_magnitude_n8", "|d| = 0.25 for all, six positive, two negative (exact p = 2*(1+8+28)/256).",
        [0.75, 0.75, 0.75, 0.75, 0.75, 0.75, 0.25, 0.25], [0.5] * 8)
    return cases


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    cases = build_cases()
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names))
    # Sanity checks on hand-computable cases.
    by = {c["name"]: c for c in cases}
    assert by["n1_single_query"]["ttest_rel_p"] is None and by["n1_single_query"]["exact_randomization_p"] == 1.0
    assert by["identical_n10"]["ttest_rel_p"] is None and by["identical_n10"]["exact_randomization_p"] == 1.0
    assert by["constant_difference_dyadic_n6"]["t_statistic_nonfinite"] == "inf"
    assert by["constant_difference_dyadic_n6"]["exact_randomization_p"] == 2 / 64
    assert by["ties_symmetric_n4"]["exact_randomization_p"] == 1.0
    assert by["ties_equal_magnitude_n8"]["exact_randomization_p"] == 2 * (1 + 8 + 28) / 256
    assert by["one_difference_n10"]["exact_randomization_p"] == 1.0
    doc = {
        "generator": "engine/tests/golden/metrics/make_significance_golden.py",
        "scipy_version": scipy.__version__,
        "numpy_version": np.__version__,
        "conventions": CONVENTIONS,
        "cases": cases,
    }
    path = os.path.join(out_dir, "significance_cases.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {path}: {len(cases)} cases")
    for c in cases:
        print(f"  {c['name']:32s} n={c['n']:3d} t={c['t_statistic']!s:>24} p={c['ttest_rel_p']!s:>24} "
              f"exact={c['exact_randomization_p']}")


if __name__ == "__main__":
    main()
