"""Scaling by √d_k: the symbolic moments of q·k and their Monte Carlo check."""

import numpy as np
import pytest
import sympy as sp

from attention_math.derivations import scaling
from attention_math.derivations.scaling import d_k, dot_moments, monte_carlo
from attention_math.plot.curves import saturation_figure


def test_standard_case_mean_zero_variance_d_k():
    assert scaling.standard_moments() == (0, d_k)
    # Scaled scores have variance 1 for every d_k.
    assert sp.simplify(scaling.standard_moments()[1] / d_k) == 1


def test_general_moments_match_textbook_formulas():
    s_q, s_k = scaling.sigma_q, scaling.sigma_k
    m_q, m_k = scaling.mu_q, scaling.mu_k
    r_q, r_k = scaling.rho_q, scaling.rho_k
    m = dot_moments()
    assert sp.expand(m.mean - d_k * m_q * m_k) == 0
    assert sp.expand(m.term_variance - (s_q**2 * s_k**2 + m_q**2 * s_k**2 + m_k**2 * s_q**2)) == 0
    # Cov(q_l k_l, q_m k_m) = E[q_l q_m] E[k_l k_m] − μ_q² μ_k²
    e_qq, e_kk = r_q * s_q**2 + m_q**2, r_k * s_k**2 + m_k**2
    assert sp.expand(m.term_covariance - (e_qq * e_kk - m_q**2 * m_k**2)) == 0
    expected = d_k * m.term_variance + (d_k**2 - d_k) * m.term_covariance
    assert sp.expand(m.variance - expected) == 0


def test_correlated_entries_grow_quadratically():
    m = dot_moments(mu=(0, 0), sigma=(1, 1), rho=(sp.Rational(1, 2), sp.Rational(1, 2)))
    assert sp.degree(m.variance, d_k) == 2
    assert sp.expand(m.variance - (d_k + (d_k**2 - d_k) / 4)) == 0


@pytest.mark.parametrize("mu_val, sigma_val, rho_val", [(0.3, 1.5, 0.0), (0.0, 0.7, 0.4)])
def test_general_moments_against_sampling(mu_val, sigma_val, rho_val):
    d, n = 8, 40_000
    rng = np.random.default_rng(7)
    cov = sigma_val**2 * ((1 - rho_val) * np.eye(d) + rho_val * np.ones((d, d)))
    q = rng.multivariate_normal(np.full(d, mu_val), cov, size=n)  # (n, d)
    k = rng.multivariate_normal(np.full(d, mu_val), cov, size=n)  # (n, d)
    dots = np.einsum("nd,nd->n", q, k)
    m = dot_moments(mu=(mu_val, mu_val), sigma=(sigma_val, sigma_val), rho=(rho_val, rho_val), d=d)
    mean, var = float(m.mean), float(m.variance)
    # 5 standard errors; the variance of the sample variance is bounded loosely by 4·var²/n·3
    assert abs(dots.mean() - mean) <= 5 * np.sqrt(var / n)
    assert abs(dots.var(ddof=1) - var) <= 5 * np.sqrt(6 * var**2 / n)


@pytest.mark.parametrize("d", [1, 4, 16, 64, 256])
def test_monte_carlo_within_five_sigma(d):
    mc = monte_carlo(d, 20_000, np.random.default_rng(1000 + d))
    assert mc.within, mc


def test_monte_carlo_detects_wrong_variance():
    # The bound is tight enough to reject a variance off by a factor 2.
    mc = monte_carlo(64, 20_000, np.random.default_rng(3))
    assert abs(mc.variance - 2 * 64) > mc.variance_halfwidth


def test_unscaled_scores_saturate_scaled_do_not():
    ds = [1, 16, 256, 1024]
    c = scaling.saturation(ds, np.random.default_rng(0), n_samples=100)
    assert c["max_unscaled"][-1] > 0.9
    assert np.all(c["max_scaled"] < 0.4)
    assert c["grad_unscaled"][-1] < c["grad_scaled"][-1] / 3
    assert np.ptp(c["grad_scaled"]) < 0.1  # flat in d_k


def test_figure_has_titles_and_labels():
    ds = [1, 4]
    text = saturation_figure(ds, scaling.saturation(ds, np.random.default_rng(0), 16, 10))
    for s in ("Largest attention weight", "Softmax gradient norm", "d_k"):
        assert s in text


def test_fourth_moment_matches_the_monte_carlo_bound():
    m4, var_sq = scaling.fourth_moment()
    assert sp.expand(var_sq - (2 * d_k**2 + 6 * d_k)) == 0
    # and the sampled fourth moment agrees with it
    rng = np.random.default_rng(11)
    q, k = rng.standard_normal((2, 200_000, 4))
    dots = np.einsum("nd,nd->n", q, k)
    assert abs(np.mean(dots**4) / float(m4.subs(d_k, 4)) - 1) < 0.05


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9])
def test_sample_dots_matches_exact_variance(rho):
    d, n = 16, 20_000
    x = scaling.sample_dots(d, n, np.random.default_rng(21), sigma=1.5, rho=rho)
    exact = float(dot_moments(mu=(0, 0), sigma=(1.5, 1.5), rho=(rho, rho), d=d).variance)
    se = np.sqrt((np.mean((x - x.mean()) ** 4) - x.var() ** 2) / n)
    assert abs(x.var(ddof=1) - exact) <= 5 * se


def test_sample_dots_rejects_bad_rho():
    with pytest.raises(ValueError, match="rho"):
        scaling.sample_dots(4, 10, np.random.default_rng(0), rho=1.5)


def test_a_key_mean_only_shifts_the_row_and_a_query_mean_widens_it():
    from attention_math.derivations.mean_shift import row_moments
    from attention_math.derivations.scaling import mu_k, mu_q, sigma_k, sigma_q

    m = row_moments()
    # given q, the key mean is in the (row-constant) mean and absent from the spread
    assert mu_k in m.mean_given_q.free_symbols
    assert mu_k not in m.variance_given_q.free_symbols
    assert mu_k not in m.expected_variance.free_symbols
    assert sp.expand(m.expected_variance - d_k * sigma_k**2 * (sigma_q**2 + mu_q**2)) == 0
    # averaging the conditional variance over q and adding the variance of the conditional mean
    # gives back the unconditional variance (law of total variance), uncorrelated entries
    total = dot_moments(rho=(0, 0)).variance
    var_of_mean = mu_k**2 * d_k * sigma_q**2  # Var(μ_k Σ q_l) with independent q_l
    assert sp.expand(total - m.expected_variance - var_of_mean) == 0


def test_key_mean_leaves_weights_query_mean_sharpens_them():
    from attention_math.derivations.mean_shift import EXPERIMENT, mean_shift

    r = mean_shift(np.random.default_rng(1), shift=1.0, rows=500)
    assert r.weight_change_key < EXPERIMENT.key_bound_eps  # rounding only
    assert (r.d, r.n_keys, r.rows) == (EXPERIMENT.d, EXPERIMENT.n_keys, 500)
    assert r.spread["key mean"] == pytest.approx(r.spread["none"], rel=1e-9)
    assert r.spread["query mean"] == pytest.approx(2 * r.spread["none"], rel=0.1)
    assert r.largest_weight["query mean"] > 1.2 * r.largest_weight["none"]


def test_the_mean_shift_block_takes_its_sizes_from_package_data():
    """The page's Source tab reads d_k and the sizes from EXPERIMENT; it types none of them."""
    import re
    from pathlib import Path

    from attention_math.derivations.mean_shift import EXPERIMENT

    page = (Path(__file__).resolve().parents[2] / "docs" / "why" / "scaling.md").read_text("utf-8")
    (block,) = [
        b for b in re.findall(r"```python exec.*?\n(.*?)```", page, re.S) if "mean_shift(" in b
    ]
    sizes = {EXPERIMENT.d, EXPERIMENT.n_keys, EXPERIMENT.rows, int(EXPERIMENT.key_bound_eps)}
    typed = sorted(set(int(n) for n in re.findall(r"(?<![\w.])\d+(?![\w.])", block)) & sizes)
    assert not typed, f"why/scaling types {typed} in the mean-shift block: use EXPERIMENT"


def _frobenius_of_jacobian(p: np.ndarray) -> float:
    """‖diag(p) − p pᵀ‖_F by NumPy, independent of the SymPy side."""
    return float(np.linalg.norm(np.diag(p) - np.outer(p, p)))


@pytest.mark.parametrize("n", [2, 3, 16, 50])
def test_saturation_limits_are_the_jacobian_at_uniform_and_one_hot(n: int) -> None:
    lim = scaling.saturation_limits(n)
    uniform, one_hot = np.full(n, 1 / n), np.eye(n)[0]
    assert lim["max_uniform"] == sp.Rational(1, n) and lim["max_one_hot"] == 1
    assert lim["grad_one_hot"] == 0
    assert abs(float(lim["grad_uniform"]) - _frobenius_of_jacobian(uniform)) < 1e-15
    assert _frobenius_of_jacobian(one_hot) == 0.0


def test_the_scaled_curve_sits_between_its_limits() -> None:
    """The page says the scaled row is neither one-hot nor uniform at any width."""
    ds = [1, 64, 1024]
    c = scaling.saturation(ds, np.random.default_rng(0), n_keys=16, n_samples=100)
    lim = scaling.saturation_limits(16)
    assert np.all(c["max_scaled"] > float(lim["max_uniform"]))
    assert np.all(c["max_scaled"] < 0.5 * float(lim["max_one_hot"]))


@pytest.mark.parametrize("bad", [1, 0, -3])
def test_saturation_limits_reject_too_few_keys(bad: int) -> None:
    with pytest.raises(ValueError, match="n_keys"):
        scaling.saturation_limits(bad)


def test_saturation_limits_reject_a_non_integer() -> None:
    with pytest.raises(TypeError, match="n_keys"):
        scaling.saturation_limits(2.5)  # type: ignore[arg-type]


def test_the_saturation_figure_labels_its_ends() -> None:
    ds = [1, 4]
    curves = scaling.saturation(ds, np.random.default_rng(0), 16, 10)
    lim = {k: float(v) for k, v in scaling.saturation_limits(16).items()}
    text = saturation_figure(ds, curves, lim, n_keys=16)
    plain = saturation_figure(ds, curves)  # only when asked: no end drawn or labelled
    assert text.count("stroke-dasharray") > 0 == plain.count("stroke-dasharray")
    assert text.count("<text") > plain.count("<text")
