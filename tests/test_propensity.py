"""Checks of privcausal.propensity beyond the notebook: exactness, sensitivity, calibration, validation order.

All noise here is seeded research noise except `test_secure_default`, which only checks labels (no false failures).
"""
import math
import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from privcausal.accounting import BudgetExceededError, PrivacyLedger
from privcausal.mechanisms import NoiseSource, gaussian_delta
from privcausal.propensity import (ERMFit, PrivatePropensityModel, check_unit_ball, erm_sensitivity, fit_logistic_erm,
                                   gaussian_sigma, private_propensity, privatise_weights)


class Untouchable(NoiseSource):
    "A source that fails if any noise is drawn from it."
    name = 'untouchable'
    def _gaussian(self, value, sigma): raise AssertionError('noise drawn before validation')
    _laplace = _gaussian


def ball_data(m, d, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d)) * scale
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    t = rng.binomial(1, expit(X @ rng.normal(size=d) * 3))
    return X, t


@pytest.mark.parametrize('m,d,lam', [(50, 2, 1.0), (300, 10, 0.1), (1000, 25, 0.01), (200, 50, 0.001)])
def test_agrees_with_sklearn(m, d, lam):
    X, t = ball_data(m, d, seed=m + d)
    fit = fit_logistic_erm(X, t, lam)
    sk = LogisticRegression(C=1 / (m * lam), fit_intercept=False, tol=1e-14, max_iter=100_000).fit(X, t)
    assert fit.grad_norm <= 1e-10
    np.testing.assert_allclose(fit.weights, sk.coef_[0], atol=1e-6, rtol=0)
    # optimality: lam w = mean((t - p) x), hence ||w|| <= 1/lam
    p = expit(X @ fit.weights)
    np.testing.assert_allclose(lam * fit.weights, X.T @ (t - p) / m, atol=1e-10)
    assert np.linalg.norm(fit.weights) <= 1 / lam


def test_separable_data_still_exact():
    # perfectly separable: without regularisation the minimiser would not exist; with lam > 0 it does
    X = np.array([[1.0, 0], [0.9, 0.1], [-1.0, 0], [-0.8, -0.2]])
    fit = fit_logistic_erm(X, [1, 1, 0, 0], lam=1e-3)
    assert fit.grad_norm <= 1e-10


@pytest.mark.parametrize('seed', range(5))
def test_erm_sensitivity_adversarial_neighbours(seed):
    "||w(D) - w(D')|| <= 2/(m lam) when one record is replaced adversarially (unit-norm row, flipped label)."
    m, d, lam = 60, 4, 0.05
    X, t = ball_data(m, d, seed)
    w = fit_logistic_erm(X, t, lam).weights
    worst = 0.0
    rng = np.random.default_rng(100 + seed)
    for k in range(m):
        for x_new in (-X[k] / max(np.linalg.norm(X[k]), 1e-12), rng.normal(size=d)):
            x_new = x_new / np.linalg.norm(x_new)
            for t_new in (0, 1):
                X2, t2 = X.copy(), t.copy()
                X2[k], t2[k] = x_new, t_new
                worst = max(worst, np.linalg.norm(fit_logistic_erm(X2, t2, lam).weights - w))
    assert worst <= erm_sensitivity(m, lam)
    assert worst > 0.2 * erm_sensitivity(m, lam)  # the search is adversarial enough to come near the bound


def test_sensitivity_fails_for_rows_outside_ball():
    "The bound really needs ||x|| <= 1: with a row of norm 50 the change exceeds 2/(m lam). (Why we check.)"
    m, d, lam = 40, 2, 0.05
    X, t = ball_data(m, d, 3)
    w = fit_logistic_erm(X, t, lam).weights
    X2, t2 = X.copy(), t.copy()
    X2[0], t2[0] = np.array([50.0, 0]), 1 - t[0]
    change = np.linalg.norm(fit_logistic_erm(X2, t2, lam).weights - w)
    assert change > erm_sensitivity(m, lam)
    with pytest.raises(ValueError, match='rows have L2 norm > 1'):
        private_propensity(X2, t2, 0.5, 1e-6)


def test_classical_calibration_formula_and_privacy_profile():
    for m, lam, eps, delta in [(1000, .1, .01, 1e-6), (500, .1, .2, 1e-6), (500, .1, .99, 4e-6), (100, 1., .5, 1e-3)]:
        S = erm_sensitivity(m, lam)
        sig = gaussian_sigma(S, eps, delta, 'classical')
        assert sig == pytest.approx(math.sqrt(2 * math.log(1.25 / delta)) * S / eps, rel=1e-12)
        assert gaussian_delta(sig, S, eps) <= delta
        sa = gaussian_sigma(S, eps, delta)
        assert sa <= sig and gaussian_delta(sa, S, eps) <= delta * (1 + 1e-9)
        assert gaussian_delta(sa * 0.99, S, eps) > delta  # analytic is tight


def test_noise_distribution_research_mode():
    X, t = ball_data(200, 3, 1)
    fit = fit_logistic_erm(X, t, 0.1)
    sd = gaussian_sigma(erm_sensitivity(200, 0.1), 0.3, 1e-6)
    z = np.concatenate([privatise_weights(fit, 0.3, 1e-6, rng=np.random.default_rng(s)).weights - fit.weights
                        for s in range(3000)])
    assert stats.kstest(z / sd, 'norm').pvalue > 1e-4  # seeded: deterministic


def test_secure_default():
    X, t = ball_data(100, 3, 2)
    model = private_propensity(X, t, 0.5, 1e-6)
    assert model.noise == 'opendp' and model.is_secure


@pytest.mark.parametrize('kwargs,msg', [
    (dict(epsilon=0), 'epsilon'), (dict(epsilon=-1), 'epsilon'), (dict(epsilon=float('nan')), 'epsilon'),
    (dict(delta=0), 'delta'), (dict(delta=1), 'delta'), (dict(lam=0), 'lam'), (dict(lam=-0.1), 'lam'),
    (dict(epsilon=1.0, calibration='classical'), 'epsilon must be < 1'), (dict(calibration='exact'), 'calibration'),
    (dict(constant=0.99), 'constant'), (dict(constant=1.5), 'constant')])
def test_bad_input_before_noise_and_budget(kwargs, msg):
    X, t = ball_data(100, 3, 4)
    ledger = PrivacyLedger(10, 0.1)
    args = dict(epsilon=0.5, delta=1e-6, rng=Untouchable(), ledger=ledger) | kwargs
    with pytest.raises(ValueError, match=msg):
        private_propensity(X, t, **args)
    assert ledger.entries == ()


def test_bad_data():
    X, t = ball_data(100, 3, 5)
    Xn = X.copy(); Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match='NaN'):
        private_propensity(Xn, t, .5, 1e-6, rng=Untouchable())
    with pytest.raises(ValueError, match='binary'):
        private_propensity(X, t * 2, .5, 1e-6, rng=Untouchable())
    with pytest.raises(ValueError, match='rows'):
        private_propensity(X, t[:-1], .5, 1e-6, rng=Untouchable())
    with pytest.raises(ValueError, match='L2 norm > 1'):
        private_propensity(X * 3, t, .5, 1e-6, rng=Untouchable())
    with pytest.warns(UserWarning, match='clipped'):
        m = private_propensity(X * 3, t, .5, 1e-6, clip_rows=True, rng=np.random.default_rng(0))
    assert m.m == 100


def test_ledger_overspend_refused_before_noise():
    X, t = ball_data(100, 3, 6)
    ledger = PrivacyLedger(0.4, 1e-5)
    with pytest.raises(BudgetExceededError):
        private_propensity(X, t, 0.5, 1e-6, ledger=ledger, rng=Untouchable())
    private_propensity(X, t, 0.4, 1e-6, ledger=ledger, rng=np.random.default_rng(0))
    assert ledger.spent == (0.4, 1e-6)


def test_save_load_predict(tmp_path):
    X, t = ball_data(100, 3, 7)
    m = private_propensity(X, t, 0.5, 1e-6, rng=np.random.default_rng(0), covariates=('a', 'b', 'c'))
    m.save(tmp_path / 'm.json')
    back = PrivatePropensityModel.load(tmp_path / 'm.json')
    np.testing.assert_array_equal(back.predict_proba(X), m.predict_proba(X))
    assert back.covariates == ('a', 'b', 'c') and back.epsilon == 0.5 and back.m == 100
    (tmp_path / 'x.json').write_text('{"a": 1}')
    with pytest.raises(ValueError, match='not a saved'):
        PrivatePropensityModel.load(tmp_path / 'x.json')


def test_privatise_refuses_inexact_fit():
    X, t = ball_data(100, 3, 8)
    fit = fit_logistic_erm(X, t, 0.1)
    rough = ERMFit(fit.weights, fit.objective, 1e-3, 1, fit.m, fit.lam)
    with pytest.raises(ValueError, match='exact minimiser'):
        privatise_weights(rough, 0.5, 1e-6, rng=Untouchable())


def test_check_unit_ball_counts():
    X = np.array([[3.0, 4.0], [0.1, 0.1], [0, 2.0]])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        Z = check_unit_ball(X, clip=True)
    assert '2 of 3 rows' in str(w[0].message)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), [1, math.hypot(.1, .1), 1])


@pytest.mark.parametrize('arm', [0, 1])
def test_empty_arm_refused_before_charging(arm):
    # review finding: one arm empty used to charge the ledger and release a model
    X, _ = ball_data(100, 3, 7)
    ledger = PrivacyLedger(10, 0.1)
    with pytest.raises(ValueError, match='treatment has an empty arm'):
        private_propensity(X, np.full(100, arm), .5, 1e-6, rng=Untouchable(), ledger=ledger)
    assert ledger.entries == ()


def test_string_covariates_refused():
    # review finding: numeric strings in X were silently parsed by float()
    import pandas as pd
    X, t = ball_data(20, 2, 8)
    ledger = PrivacyLedger(10, 0.1)
    with pytest.raises(TypeError, match='X must be numeric'):
        private_propensity(X.astype(str), t, .5, 1e-6, rng=Untouchable(), ledger=ledger)
    frame = pd.DataFrame(X, columns=['a', 'b']).assign(b=lambda d: d.b.astype(str))
    with pytest.raises(TypeError, match="column 'b'"):
        private_propensity(frame, t, .5, 1e-6, rng=Untouchable(), ledger=ledger)
    with pytest.raises(TypeError, match='covariates must be numeric'):
        check_unit_ball(np.array([[0.1, '0.2']], dtype=object), name='covariates')
    assert ledger.entries == ()
    # numbers (ints, bools, object arrays of numbers, numeric frames) still pass
    check_unit_ball(np.array([[0, 1], [1, 0]])); check_unit_ball(np.array([[True, False]]))
    check_unit_ball(np.array([[0.1, 0.2]], dtype=object)); check_unit_ball(pd.DataFrame(X, columns=['a', 'b']))
