"""Bayesian post-processing (models M1/M2): the exact truncated-Laplace sampler and emcee against each other."""
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from privcausal.posterior import (NoisyStatistics, compare_samplers, sample_posterior, sample_truncated_laplace,
                                  truncated_laplace_cdf)


@pytest.mark.parametrize('o,b,lo,hi', [(0.2, 0.04, -1, 1), (0.97, 0.04, -1, 1), (-1.2, 0.04, -1, 1),
                                       (0.0123, 0.004, 0, 0.001), (-0.002, 0.004, 0, 0.001), (0.0003, 0.0004, 0, 0.01)])
def test_exact_sampler_matches_truncated_laplace(o, b, lo, hi):
    d = sample_truncated_laplace(o, b, lo, hi, 20_000, np.random.default_rng(0))
    assert lo <= d.min() and d.max() <= hi
    # seeded, so deterministic; p > 1e-4 at the chosen seed
    assert stats.kstest(d, lambda x: truncated_laplace_cdf(x, o, b, lo, hi)).pvalue > 1e-4


def test_exact_sampler_far_outside_is_truncated_exponential():
    # o far below the support: the density is proportional to exp(-(x - lo)/b) on [lo, hi]
    o, b, lo, hi = -3.0, 0.04, -1.0, 1.0
    d = sample_truncated_laplace(o, b, lo, hi, 20_000, np.random.default_rng(0))
    assert stats.kstest(d, stats.truncexpon(b=(hi - lo) / b, loc=lo, scale=b).cdf).pvalue > 1e-4
    d = sample_truncated_laplace(0.5, 0.004, 0.0, 0.001, 20_000, np.random.default_rng(1))  # far above: mirrored
    assert stats.kstest(0.001 - d, stats.truncexpon(b=0.001 / 0.004, loc=0, scale=0.004).cdf).pvalue > 1e-4


def test_exact_sampler_ks_has_power():
    d = sample_truncated_laplace(0.2, 0.04, -1, 1, 20_000, np.random.default_rng(1))
    assert stats.kstest(d, lambda x: truncated_laplace_cdf(x, 0.2, 0.05, -1, 1)).pvalue < 1e-6


def test_exact_sampler_vectorised_shapes_and_validation():
    d = sample_truncated_laplace(np.zeros(7), 0.1, -1, 1, 11, np.random.default_rng(2))
    assert d.shape == (7, 11)
    with pytest.raises(ValueError, match='scale'): sample_truncated_laplace(0, -1, 0, 1, 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match='upper'): sample_truncated_laplace(0, 1, 1, 0, 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match='observed'): sample_truncated_laplace(np.nan, 1, 0, 1, 5, np.random.default_rng(0))


def test_log_prob_support_and_value():
    s = NoisyStatistics(0.1, 0.0005, 0.04, 0.004, 0.001)
    lp = s.log_prob(np.array([[0.1, 0.0005], [0.0, 0.0002], [-1.0, 0.0005], [0.1, 0.0], [0.1, 0.001]]))
    assert lp[0] == 0.0
    assert np.isclose(lp[1], -0.1 / 0.04 - 0.0003 / 0.004)
    assert np.isinf(lp[2:]).all()


@pytest.mark.parametrize('obs', [(0.23, -0.0021, 0.04, 0.004, 0.001),  # variance released below the support
                                 (0.21, 0.0123, 0.04, 0.004, 0.001),  # ... and above it (the 'paper' mode typical case)
                                 (-0.05, 0.0042, 0.04, 0.04, 0.01)])  # ATT-like, inside
def test_emcee_agrees_with_exact(obs):
    s = NoisyStatistics(*obs)
    mc = sample_posterior(s, 5000, 'emcee', np.random.default_rng(10))
    ex = sample_posterior(s, 20000, 'exact', np.random.default_rng(11))
    cmp = compare_samplers(mc, ex)
    # emcee draws are thinned by 10 steps with an autocorrelation time ~10: nearly independent; seeded, deterministic
    assert (cmp.ks_pvalue > 1e-3).all(), cmp
    assert (np.abs(cmp.mean_a - cmp.mean_b) < 0.1 * cmp.sd).all(), cmp
    assert (cmp.max_quantile_diff < 0.25 * cmp.sd).all(), cmp
    assert 0.1 < mc.acceptance_fraction < 0.9 and max(mc.autocorr_time) < 25
    assert np.all((mc.tau_bar > -1) & (mc.tau_bar < 1) & (mc.variance_bar > 0) & (mc.variance_bar < s.variance_upper))


def test_sampler_comparison_can_fail():
    good = sample_posterior(NoisyStatistics(0.23, -0.0021, 0.04, 0.004, 0.001), 5000, 'exact', np.random.default_rng(3))
    wrong = sample_posterior(NoisyStatistics(0.23, -0.0021, 0.04, 0.0004, 0.001), 5000, 'exact', np.random.default_rng(4))
    assert compare_samplers(good, wrong).set_index('quantity').loc['variance_bar', 'ks_pvalue'] < 1e-6


def test_effect_draws_use_variance_not_sd():
    # with tau fixed (tiny scale) and V pinned near its bound, the draws have SD sqrt(V), not V
    s = NoisyStatistics(0.0, 0.25, 1e-6, 1e-6, 0.25)
    p = sample_posterior(s, 20000, 'exact', np.random.default_rng(5))
    assert abs(np.std(p.tau) - 0.5) < 0.02
    assert abs(p.estimate - p.tau.mean()) < 1e-15
    assert np.allclose(p.ci, np.quantile(p.tau, [0.025, 0.975]))


def test_validation():
    s = NoisyStatistics(0.1, 0.0, 0.04, 0.004, 0.001)
    with pytest.raises(ValueError, match='draws'): sample_posterior(s, 10)
    with pytest.raises(ValueError, match='sampler'): sample_posterior(s, 1000, 'slice')
    with pytest.raises(ValueError, match='scale_tau must be > 0'): NoisyStatistics(0.1, 0.0, 0.0, 0.004, 0.001)
    with pytest.raises(ValueError, match='variance_upper must be > 0'): NoisyStatistics(0.1, 0.0, 0.04, 0.004, 0.0)


def test_posterior_does_not_import_wate():
    code = 'import sys, privcausal.posterior; assert "privcausal.bayes_wate" not in sys.modules'
    subprocess.run([sys.executable, '-c', code], check=True)


@pytest.mark.parametrize('o', [np.inf, -np.inf, 1.8e308, -1.8e308, 0.3])
@pytest.mark.parametrize('b', [2.3e-308, 1e-6, 0.04, 1e300])
def test_exact_sampler_never_fails_and_stays_in_support(o, b):
    # issue 8: sampling runs after the budget is spent, so any released value and any allowed scale must work
    d = sample_truncated_laplace(o, b, -1.0, 1.0, 500, np.random.default_rng(0))
    assert np.isfinite(d).all() and (d >= -1).all() and (d <= 1).all()


def test_exact_sampler_extremes_have_the_right_law():
    # beyond the support the posterior is that of the nearest end (exactly): identical draws for the same seed
    far = sample_truncated_laplace(1.8e308, 0.04, -1, 1, 2000, np.random.default_rng(1))
    assert np.array_equal(far, sample_truncated_laplace(1.0, 0.04, -1, 1, 2000, np.random.default_rng(1)))
    # a huge scale: the uniform prior; a tiny one: a point mass at the clamped centre
    assert stats.kstest(sample_truncated_laplace(0.2, 1e300, -1, 1, 20_000, np.random.default_rng(2)),
                        stats.uniform(-1, 2).cdf).pvalue > 1e-4
    assert np.all(sample_truncated_laplace(0.2, 1e-300, -1, 1, 100, np.random.default_rng(3)) == 0.2)
    # a scale 1e16 times the width: an inverse CDF written with F(x) = 1 - exp(-(x - o)/b)/2 rounds to a grid of
    # b * 2.2e-16 = 2.2e-3, wider than the support, and puts every draw on an end; this sampler stays uniform
    d = sample_truncated_laplace(0.0, 1e13, 0.0, 1e-3, 20_000, np.random.default_rng(4))
    assert stats.kstest(d, stats.uniform(0, 1e-3).cdf).pvalue > 1e-4


@pytest.mark.parametrize('sampler', ['exact', 'emcee'])
@pytest.mark.parametrize('obs', [(1.8e308, -1.8e308, 2.3e-308, 2.3e-308, 1e-3), (-1.8e308, 1.8e308, 1e300, 1e300, 1e-3),
                                 (0.3, 5e-4, 0.04, 1e-12, 1e-3), (np.inf, -np.inf, 0.04, 0.004, 1e-3)])
def test_sample_posterior_never_fails(sampler, obs):
    s = NoisyStatistics(*obs)
    p = sample_posterior(s, 300, sampler, np.random.default_rng(5), burn=100)
    assert np.isfinite([p.estimate, *p.ci]).all()
    assert ((p.tau_bar >= -1) & (p.tau_bar <= 1) & (p.variance_bar >= 0) & (p.variance_bar <= 1e-3)).all()
    assert p.sampler == 'exact' or p.fallback is None  # emcee either works or says it was replaced


def test_emcee_fallback_is_recorded(monkeypatch):
    import privcausal.posterior as post
    def broken(*a, **k): raise RuntimeError('injected')
    monkeypatch.setattr(post, '_run_emcee', broken)
    p = sample_posterior(NoisyStatistics(0.2, 5e-4, 0.04, 4e-4, 1e-3), 500, 'emcee', np.random.default_rng(6))
    assert p.sampler == 'exact' and 'injected' in p.fallback and 'replaced' in repr(p)


def test_conf_int_and_draws_bound():
    p = sample_posterior(NoisyStatistics(0.2, 5e-4, 0.04, 4e-4, 1e-3), 4000, 'exact', np.random.default_rng(7))
    assert p.conf_int() == p.ci
    lo, hi = p.conf_int(0.5)
    assert p.ci[0] < lo < p.estimate < hi < p.ci[1]
    with pytest.raises(ValueError, match='alpha'): p.conf_int(1.5)
    with pytest.raises(ValueError, match=r'draws must be an integer in \[100, 1000000\]'):
        sample_posterior(NoisyStatistics(0.2, 5e-4, 0.04, 4e-4, 1e-3), 10**11)
    with pytest.raises(TypeError, match='rng'):
        sample_posterior(NoisyStatistics(0.2, 5e-4, 0.04, 4e-4, 1e-3), 100, rng=3)
