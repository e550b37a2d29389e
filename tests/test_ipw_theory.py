"""privcausal.theory_ipw: the bias g, Lemma 6 and the bounds, each against a seeded Monte Carlo (deterministic), with
the papers' wrong versions shown to fail."""
import math

import numpy as np
import pytest
from scipy.special import expit

from privcausal.ipw import ipw_estimate
from privcausal.theory_ipw import (bias_g, bias_g_privacy, corollary7_paper_bound, fully_private_sign_flip_bound,
                                   lemma6_eta, markov_error_bound, paper_sigma, partially_private_estimates,
                                   replicate_pp_ipw, sign_flip_bound)


@pytest.fixture(scope='module')
def setup():
    rng = np.random.default_rng(7)
    n, d = 150, 4
    X = rng.normal(size=(n, d)); X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1)
    w = rng.normal(size=d) * .5
    t = rng.binomial(1, expit(X @ w)); y = X.sum(1) + 2 * t + 0.1 * rng.normal(size=n)
    return X, t, y, w


@pytest.mark.parametrize('estimand', ['ATE', 'ATT', 'ATC'])
def test_lemma3_corrected_holds_paper_fails(setup, estimand):
    X, t, y, w = setup
    sigma, K = 0.7, 100_000
    draws = partially_private_estimates(X, t, y, w, np.random.default_rng(1).normal(size=(K, X.shape[1])) * sigma, estimand)
    bias = draws.mean() - ipw_estimate(y, t, expit(X @ w), estimand)
    se = draws.std() / math.sqrt(K)
    assert abs(bias - bias_g(X, t, y, w, sigma, estimand)) <= 4 * se
    if estimand != 'ATT':  # for ATT the paper's sign is harmless
        assert abs(bias - bias_g(X, t, y, w, sigma, estimand, paper_sign=True)) > 20 * se


def test_g_at_paper_sigma(setup):
    X, t, y, w = setup
    assert bias_g_privacy(X, t, y, w, .3, 500, .1, 1e-6) == pytest.approx(bias_g(X, t, y, w, paper_sigma(.3, 500, .1, 1e-6)))
    assert paper_sigma(0.2, 500, 0.1, 1e-6) == pytest.approx(1.05976, rel=1e-4)


def test_lemma6(setup):
    X, t, y, w = setup
    rng = np.random.default_rng(3)
    sigma, gamma, K = 0.3, 0.05, 20_000
    a = partially_private_estimates(X, t, y, w, rng.normal(size=(K, 4)) * sigma)
    b = partially_private_estimates(X, t, y, w, rng.normal(size=(K, 4)) * sigma)
    eta, claim = lemma6_eta(X, t, y, w, sigma, gamma)
    assert np.mean(np.abs(a - b) <= eta) >= claim
    # mixed-sign outcomes can make the paper's eta <= 0, where coverage fails
    s = X @ w
    c = np.where(t == 1, np.exp(-s), np.exp(s))
    y2 = np.where(np.arange(len(t)) % 2 == 0, 1.0, -1.0)
    y2 = y2 - (c * y2).sum() / c.sum()
    eta_p, _ = lemma6_eta(X, t, y2, w, sigma, gamma, 'paper')
    assert eta_p <= 1e-12
    with pytest.raises(ValueError, match='version'):
        lemma6_eta(X, t, y, w, sigma, gamma, 'other')


def test_bounds_formulas():
    assert sign_flip_bound(1.0, 2.0) == pytest.approx(math.exp(-0.5))
    assert fully_private_sign_flip_bound(1.0, 2.0, 0.0, 1.0) == pytest.approx(0.5 * math.exp(-0.5))
    assert fully_private_sign_flip_bound(1.0, 2.0, 1e9, 1.0) == pytest.approx(math.exp(-0.5))
    assert corollary7_paper_bound(-0.2, 0.5) == pytest.approx(0.4) and markov_error_bound(0.3, 0.5) == pytest.approx(0.6)


def test_corollary7_fails_small_sigma(setup):
    X, t, y, w = setup
    sigma = 0.01
    dev = partially_private_estimates(X, t, y, w, np.random.default_rng(4).normal(size=(50_000, 4)) * sigma) - \
        ipw_estimate(y, t, expit(X @ w))
    Delta = dev.std() / 2
    p = np.mean(np.abs(dev) >= Delta)
    assert p > 10 * corollary7_paper_bound(bias_g(X, t, y, w, sigma, paper_sign=True), Delta)
    assert p <= markov_error_bound(np.abs(dev).mean(), Delta)


def test_replicate_shapes_and_noise(setup):
    X, t, y, w = setup
    r = replicate_pp_ipw(X[:70], t[:70], X[70:], t[70:], y[70:], [0.2, 0.9], 1e-6, np.random.default_rng(0),
                         outcome_bound=4.0, bounds=(0.1, 0.9))
    assert r['tau_n'].shape == (2,) and r['sigma_n'][0] > r['sigma_n'][1]
    assert r['sigma_n'][0] == pytest.approx(math.sqrt(2 * math.log(1.25e6)) * 2 * 4 / (80 * 0.1) / 0.2)
