"""Checks of privcausal.ipw (PP-IPW): sensitivities under adversarial neighbours, accounting, the release contract,
validation before noise, and Monte Carlo properties in seeded research mode (deterministic: no false failures).
"""
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import expit
from statsmodels.treatment.treatment_effects import ate_ipw

from privcausal.accounting import BudgetExceededError, PrivacyLedger
from privcausal.mechanisms import NoiseSource, audit
from privcausal.ipw import (ESTIMANDS, IPWDiagnostics, IPWRelease, check_propensity_bounds, ipw_estimate,
                            ipw_sensitivity, ipw_unit_weights, max_unit_weight, pp_ipw, random_split, split_mask)


class Untouchable(NoiseSource):
    name = 'untouchable'
    def _gaussian(self, value, sigma): raise AssertionError('noise drawn before validation')
    _laplace = _gaussian


def synth(N=600, d=4, tau=1.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, d))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1)
    t = rng.binomial(1, expit(X @ np.linspace(1, -1, d)))
    y = np.clip(X.sum(1) + tau * t + 0.3 * rng.normal(size=N), -4, 4)
    return X, t, y


pytestmark = pytest.mark.filterwarnings('ignore:pp_ipw clipped')

BASE = dict(epsilon=0.5, delta=1e-6, outcome_bound=4.0, covariate_bound=1.0, clip=0.05)


# --- sensitivity ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('estimand', ESTIMANDS)
@pytest.mark.parametrize('bounds', [(0.05, 0.95), (0.2, 0.6), (0.5, 0.5)])
def test_sensitivity_bound_under_adversarial_replacement(estimand, bounds):
    rng = np.random.default_rng(hash((estimand, bounds)) % 2**32)
    n, C = 40, 3.0
    S = ipw_sensitivity(n, C, bounds, estimand)
    worst = 0.0
    for _ in range(300):
        p = rng.uniform(size=n); t = rng.binomial(1, .5, n); y = rng.uniform(-C, C, n)
        base = ipw_estimate(y, t, p, estimand, bounds)
        i = rng.integers(n)
        for p_new in (bounds[0], bounds[1], 0.0, 1.0):
            for t_new in (0, 1):
                for y_new in (-C, C):
                    p2, t2, y2 = p.copy(), t.copy(), y.copy()
                    p2[i], t2[i], y2[i] = p_new, t_new, y_new
                    worst = max(worst, abs(ipw_estimate(y2, t2, p2, estimand, bounds) - base))
    assert worst <= S * (1 + 1e-12)
    assert worst >= 0.7 * S  # adversarial enough to approach the bound


def test_sensitivity_equality_case():
    n, C, w1 = 20, 2.0, 0.1
    p = np.full(n, 0.5); p[0] = w1
    t = np.r_[np.ones(10), np.zeros(10)].astype(int)
    y = np.zeros(n); y[0] = C
    y2 = y.copy(); y2[0] = -C
    diff = abs(ipw_estimate(y, t, p, bounds=(w1, 0.8)) - ipw_estimate(y2, t, p, bounds=(w1, 0.8)))
    assert diff == pytest.approx(2 * C / (n * w1), rel=1e-12) == pytest.approx(ipw_sensitivity(n, C, (w1, .8)))


def test_unbounded_without_clipping():
    "Without clipping one record can move the estimate arbitrarily: why the bounds are required."
    n = 20
    p = np.full(n, .5); t = np.r_[np.ones(10), np.zeros(10)].astype(int); y = np.ones(n)
    p2 = p.copy(); p2[0] = 1e-9
    assert abs(ipw_estimate(y, t, p2) - ipw_estimate(y, t, p)) > 1e6 * ipw_sensitivity(n, 1.0, (0.05, 0.95))


def test_trim_matches_paper_estimator():
    rng = np.random.default_rng(1)
    p, t, y = rng.uniform(size=50), rng.binomial(1, .5, 50), rng.normal(size=50)
    xi = 0.1
    paper = (np.sum(y[t == 1] / np.maximum(xi, p[t == 1])) - np.sum(y[t == 0] / np.maximum(xi, 1 - p[t == 0]))) / 50
    assert ipw_estimate(y, t, p, bounds=(xi, 1 - xi), bounding='trim') == pytest.approx(paper, rel=1e-12)


@pytest.mark.parametrize('estimand,probt', [('ATE', None), ('ATT', 'p'), ('ATC', '1-p')])
def test_agrees_with_statsmodels(estimand, probt):
    rng = np.random.default_rng(2)
    p = rng.uniform(.1, .9, 500); t = rng.binomial(1, p); y = rng.normal(size=500) + t
    pt = {None: None, 'p': p, '1-p': 1 - p}[probt]
    assert ipw_estimate(y, t, p, estimand) == pytest.approx(ate_ipw(y, t, p, weighted=False, probt=pt)[0], rel=1e-12)


# --- the release ------------------------------------------------------------------------------------------------

def test_release_contract_and_accounting():
    X, t, y = synth()
    ledger = PrivacyLedger(1.0, 1e-5)
    rel = pp_ipw(X=X, outcome=y, treatment=t, ledger=ledger, rng=np.random.default_rng(0), epsilon_fit=0.3, **BASE)
    assert isinstance(rel, IPWRelease)
    assert (rel.epsilon, rel.delta) == (0.5, 1e-6)  # max over the stages (parallel composition)
    assert [s.epsilon for s in rel.stages] == [0.3, 0.5]
    assert ledger.spent == (0.5, 1e-6)
    assert rel.stages[0].sensitivity == pytest.approx(2 / (rel.m * 0.1))
    assert rel.stages[1].sensitivity == pytest.approx(2 * 4.0 / (0.05 * rel.n))
    d = rel.to_dict()
    for key in ('method', 'estimand', 'estimate', 'epsilon', 'delta', 'm', 'n', 'noise_source', 'stages'):
        assert key in d
    for s in d['stages']:
        assert {'name', 'epsilon', 'delta', 'sensitivity', 'noise_sd'} <= set(s)
    text = repr(rel) + rel.summary() + str(d) + rel._repr_html_()
    assert 'tau_hat' not in text and 'tau_n' not in text and 'w_hat' not in text
    import json; json.dumps(d)
    assert rel.noise == 'numpy-research' and not rel.is_secure and 'NOT floating-point safe' in rel.summary()


def test_secure_by_default():
    X, t, y = synth()
    rel = pp_ipw(X=X, outcome=y, treatment=t, **BASE)
    assert rel.noise == 'opendp' and rel.is_secure and rel.propensity.is_secure


def test_overspend_refused_before_noise():
    X, t, y = synth()
    ledger = PrivacyLedger(0.4, 1e-5)
    with pytest.raises(BudgetExceededError):
        pp_ipw(X=X, outcome=y, treatment=t, ledger=ledger, rng=Untouchable(), **BASE)
    assert ledger.entries == ()


def test_diagnostics_are_marked_and_consistent():
    X, t, y = synth()
    rel, diag = pp_ipw(X=X, outcome=y, treatment=t, rng=np.random.default_rng(1), diagnostics=True, **BASE)
    assert isinstance(diag, IPWDiagnostics) and 'NOT PRIVATE' in repr(diag) and diag.to_dict()['NOT_PRIVATE']
    split = random_split(len(y), 0.5, np.random.default_rng(1))
    assert sum(diag.arm_sizes.values()) == len(y)
    assert diag.fit.grad_norm <= 1e-10


def test_split_column_and_fractions():
    X, t, y = synth()
    labels = np.where(np.arange(len(y)) < 200, 'fit', 'estimate')
    rel = pp_ipw(X=X, outcome=y, treatment=t, split=labels, rng=np.random.default_rng(0), **BASE)
    assert (rel.m, rel.n) == (200, 400)
    rel = pp_ipw(X=X, outcome=y, treatment=t, fit_fraction=0.25, rng=np.random.default_rng(0), **BASE)
    assert (rel.m, rel.n) == (150, 450)
    assert split_mask(pd.Series(['fit', 'estimate']), 2).tolist() == [True, False]


def test_split_does_not_depend_on_values():
    m1 = random_split(100, 0.5, np.random.default_rng(3))
    m2 = random_split(100, 0.5, np.random.default_rng(3))
    assert (m1 == m2).all()
    X, t, y = synth(N=100)
    _, d1 = pp_ipw(X=X, outcome=y, treatment=t, split_rng=np.random.default_rng(5), rng=np.random.default_rng(0), diagnostics=True, **BASE)
    _, d2 = pp_ipw(X=X, outcome=-y, treatment=t, split_rng=np.random.default_rng(5), rng=np.random.default_rng(0), diagnostics=True, **BASE)
    assert d1.arm_sizes == d2.arm_sizes


@pytest.mark.parametrize('change,msg', [
    (dict(epsilon=0), 'epsilon'), (dict(epsilon=-1.), 'epsilon'), (dict(delta=0), 'delta'), (dict(delta=1.5), 'delta'),
    (dict(epsilon=1.0, calibration='classical'), 'epsilon must be < 1'), (dict(lam=0), 'lam'), (dict(lam=-1), 'lam'),
    (dict(clip=0), r'\(0, 1/2\]'), (dict(clip=0.51), r'\(0, 1/2\]'), (dict(clip=(0.6, 0.4)), 'omega1 <= omega2'),
    (dict(clip=None), 'state public propensity bounds'), (dict(outcome_bound=None), 'outcome_bound'),
    (dict(covariate_bound=None), 'covariate_bound'), (dict(outcome_bound=1.0), 'outcomes exceed'),
    (dict(covariate_bound=0.5), 'rows have a larger L2 norm'), (dict(estimand='ate'), 'estimand'),
    (dict(normalisation='arm'), 'applies to ATT and ATC'), (dict(estimand='ATT', bounding='trim'), 'ATE only'),
    (dict(fit_fraction=0.01), 'fitting part'), (dict(fit_fraction=0.99), 'estimation part'),
    (dict(epsilon_fit=0.6), 'exceeds the overall'), (dict(delta_estimate=0.0), 'delta_estimate'),
    (dict(split=['fit'] * 3), 'one entry per row'), (dict(rng=3), 'rng')])
def test_bad_input(change, msg):
    X, t, y = synth()
    ledger = PrivacyLedger(10, 0.1)
    args = {**BASE, 'rng': Untouchable(), 'ledger': ledger, **change}
    with pytest.raises((ValueError, TypeError), match=msg):
        pp_ipw(X=X, outcome=y, treatment=t, **args)
    assert ledger.entries == ()


def test_bad_data():
    X, t, y = synth()
    kw = {**BASE, 'rng': Untouchable()}
    Xn = X.copy(); Xn[0, 0] = np.inf
    with pytest.raises(ValueError, match='NaN/inf'): pp_ipw(X=Xn, outcome=y, treatment=t, **kw)
    yn = y.copy(); yn[1] = np.nan
    with pytest.raises(ValueError, match='outcome'): pp_ipw(X=X, outcome=yn, treatment=t, **kw)
    with pytest.raises(ValueError, match='binary'): pp_ipw(X=X, outcome=y, treatment=t + 1, **kw)
    with pytest.raises(ValueError, match='no treated'): pp_ipw(X=X, outcome=y, treatment=np.zeros_like(t), **kw)
    labels = np.where(t == 1, 'fit', 'estimate')  # every treated unit in the fitting part
    with pytest.raises(ValueError, match='empty arm'): pp_ipw(X=X, outcome=y, treatment=t, split=labels, **kw)
    with pytest.raises(ValueError, match='rows'): pp_ipw(X=X[:-1], outcome=y, treatment=t, **kw)


def test_announced_clipping():
    X, t, y = synth()
    with pytest.warns(UserWarning, match=r'clipped \d+ of 600 outcomes'):
        pp_ipw(X=X, outcome=y, treatment=t, **{**BASE, 'outcome_bound': 1.0}, clip_outcomes=True, rng=np.random.default_rng(0))
    with pytest.warns(UserWarning, match='rows'):
        pp_ipw(X=X, outcome=y, treatment=t, **{**BASE, 'covariate_bound': 0.5}, clip_rows=True, rng=np.random.default_rng(0))


def test_dataframe_input():
    X, t, y = synth()
    df = pd.DataFrame(X, columns=list('abcd')).assign(treat=t, out=y)
    rel = pp_ipw(df, outcome='out', treatment='treat', rng=np.random.default_rng(0), **BASE)
    assert rel.propensity.covariates == tuple('abcd')


# --- Monte Carlo ------------------------------------------------------------------------------------------------

def test_effect_noise_is_gaussian_with_stated_sd():
    X, t, y = synth(N=300)
    split = np.arange(300) % 3 == 0
    res = [pp_ipw(X=X, outcome=y, treatment=t, split=split, rng=np.random.default_rng(s), diagnostics=True, **BASE)
           for s in range(1500)]
    sd = res[0][0].stages[1].noise_sd
    e = np.array([r.estimate - d.tau_n for r, d in res]) / sd
    assert stats.kstest(e, 'norm').pvalue > 1e-4  # seeded, so deterministic


def test_estimate_tracks_truth_at_large_epsilon():
    "With a large budget and enough data the private ATE is close to the true effect (tolerance 0.25, sd ~ 0.06)."
    X, t, y = synth(N=20_000, tau=1.0, seed=3)
    ests = [pp_ipw(X=X, outcome=y, treatment=t, rng=np.random.default_rng(s), **{**BASE, 'epsilon': 5.0}).estimate
            for s in range(5)]
    assert abs(np.mean(ests) - 1.0) < 0.25


def test_audit_of_whole_release():
    "Empirical audit on an adversarial neighbour in D_n: no violation of the claimed epsilon."
    X, t, y = synth(N=40, d=2)
    y = np.clip(y, -4, 4)
    split = np.arange(40) < 20
    y2, t2 = y.copy(), t.copy()
    i = 39  # in D_n
    y2[i], t2[i] = -4.0 if y[i] > 0 else 4.0, 1 - t[i]
    eps = 0.5
    mech = lambda data, noise: pp_ipw(X=X, outcome=data[0], treatment=data[1], split=split, rng=noise,
                                      **{**BASE, 'epsilon': eps, 'clip': 0.2})
    res = audit(mech, (y, t), (y2, t2), n_samples=3000, rng=np.random.default_rng(0), epsilon=eps, delta=1e-6,
                statistic=lambda r: r.estimate)
    assert not res.violated
