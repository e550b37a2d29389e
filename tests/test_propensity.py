"""Checks of privcausal.propensity beyond the notebook: certified solutions, sensitivity, calibration, validation order,
degenerate data released like any other.

All noise here is seeded research noise except `test_secure_default`, which only checks labels (no false failures).
"""
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from privcausal.accounting import BudgetExceededError, PrivacyLedger
from privcausal.mechanisms import NoiseSource, gaussian_delta
from privcausal.release import KEYS, NoIntervalError, PrivateRelease, load
from privcausal.propensity import (INTERCEPT_CONSTANT, LAM_RANGE, ROW_NORM, ERMFit, PrivatePropensityModel,
                                   augment_constant, default_lam,
                                   erm_sensitivity, fit_logistic_erm, gaussian_sigma, private_propensity,
                                   privatise_weights)
from privcausal.backend import accelerated_steps
from privcausal.checks import check_calibration, check_lam, check_unit_ball, project_to_unit_ball


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


# --- the certified solver ----------------------------------------------------------------------------------------

@pytest.mark.parametrize('m,d,lam', [(50, 2, 1.0), (300, 10, 0.1), (1000, 25, 0.01), (200, 50, 0.001)])
def test_agrees_with_sklearn(m, d, lam):
    X, t = ball_data(m, d, seed=m + d)
    fit = fit_logistic_erm(X, t, lam)
    sk = LogisticRegression(C=1 / (m * lam), fit_intercept=False, tol=1e-14, max_iter=100_000).fit(X, t)
    assert fit.certified and fit.grad_norm <= 1e-10
    np.testing.assert_allclose(fit.weights, sk.coef_[0], atol=1e-6, rtol=0)
    # optimality: lam w = mean((t - p) x), hence ||w|| <= 1/lam
    p = expit(X @ fit.weights)
    np.testing.assert_allclose(lam * fit.weights, X.T @ (t - p) / m, atol=1e-10)
    assert np.linalg.norm(fit.weights) <= 1 / lam


@pytest.mark.parametrize('kind', ['separable', 'one class (treated)', 'one class (control)', 'one row', 'constant rows',
                                  'rows on the sphere'])
@pytest.mark.parametrize('max_iter', [0, 1, 50])
def test_fit_always_certified(kind, max_iter):
    "Every input in the domain ends at ||grad J|| <= tol within the precomputed step count; nothing raises."
    X, t = ball_data(60, 3, 1)
    if kind == 'separable': t = (X[:, 0] > 0).astype(int)
    elif kind == 'one class (treated)': t = np.ones(60, int)
    elif kind == 'one class (control)': t = np.zeros(60, int)
    elif kind == 'one row': X, t = X[:1], t[:1]
    elif kind == 'constant rows': X = np.tile(X[:1], (60, 1))
    else: X = X / np.linalg.norm(X, axis=1, keepdims=True)
    for lam in (1e-4, 1e-2, 1.0):
        fit = fit_logistic_erm(X, t, lam, max_iter=max_iter)
        assert fit.certified, (kind, lam, fit)
        bound = accelerated_steps(lam, lam + 0.25, 1 + math.sqrt(2 * lam * math.log(2)), fit.tol)
        assert fit.fallback_steps <= bound
        if max_iter == 0: assert fit.n_iter == 0


def test_newton_steps_limit_never_raises():
    X, t = ball_data(100, 3, 8)
    fit = fit_logistic_erm(X, t, 0.1, max_iter=1)  # used to raise RuntimeError
    assert fit.certified and fit.fallback_steps > 0
    np.testing.assert_allclose(fit.weights, fit_logistic_erm(X, t, 0.1).weights, atol=2e-10 / 0.1)


@pytest.mark.parametrize('seed', range(4))
@pytest.mark.parametrize('tol,max_iter', [(1e-10, 50), (1e-3, 50), (1e-3, 0)])
def test_erm_sensitivity_adversarial_neighbours(seed, tol, max_iter):
    "||w(D) - w(D')|| <= 2/(m lam) + 2 tol/lam when one record is replaced adversarially (unit-norm row, flipped label)."
    m, d, lam = 60, 4, 0.05
    X, t = ball_data(m, d, seed)
    w = fit_logistic_erm(X, t, lam, tol, max_iter).weights
    worst = 0.0
    rng = np.random.default_rng(100 + seed)
    for k in range(0, m, 3):
        for x_new in (-X[k] / max(np.linalg.norm(X[k]), 1e-12), rng.normal(size=d)):
            x_new = x_new / np.linalg.norm(x_new)
            for t_new in (0, 1):
                X2, t2 = X.copy(), t.copy()
                X2[k], t2[k] = x_new, t_new
                worst = max(worst, np.linalg.norm(fit_logistic_erm(X2, t2, lam, tol, max_iter).weights - w))
    assert worst <= erm_sensitivity(m, lam, tol)
    assert worst > 0.2 * erm_sensitivity(m, lam)  # the search is adversarial enough to come near the bound


def test_sensitivity_fails_for_rows_outside_ball():
    "The bound really needs ||x|| <= 1: with a row of norm 50 the change exceeds 2/(m lam). (Why we check.)"
    m, d, lam = 40, 2, 0.05
    X, t = ball_data(m, d, 3)
    w = fit_logistic_erm(X, t, lam).weights
    X2, t2 = X.copy(), t.copy()
    X2[0], t2[0] = np.array([50.0, 0]), 1 - t[0]
    assert np.linalg.norm(fit_logistic_erm(X2, t2, lam).weights - w) > erm_sensitivity(m, lam)
    with pytest.raises(ValueError, match='outside the ball'):
        private_propensity(X2, t2, 0.5, 1e-6)


# --- intercept, lambda, calibration --------------------------------------------------------------------------------

def test_intercept_stays_in_ball_and_is_never_refused():
    X, _ = ball_data(500, 4, 2)
    X[0] /= np.linalg.norm(X[0])  # a row on the sphere
    for c in (0.1, INTERCEPT_CONSTANT, 0.99):
        Z = augment_constant(X, c)
        assert np.all(np.linalg.norm(Z, axis=1) <= 1 + 1e-12)
        np.testing.assert_allclose(Z[:, -1], c)
        np.testing.assert_allclose(Z[:, :-1], X * math.sqrt(1 - c * c))
    assert augment_constant(X, None) is X
    with pytest.raises(ValueError, match='constant'):
        augment_constant(X, 1.0)


def test_intercept_recovers_imbalance():
    "With 20% treated and covariates near 0, the intercept model's mean propensity matches the share; no intercept: 1/2."
    rng = np.random.default_rng(4)
    X = rng.normal(size=(20_000, 3)) * 0.05
    t = rng.binomial(1, 0.2, size=20_000)
    for c, target in ((INTERCEPT_CONSTANT, 0.2), (None, 0.5)):
        fit = fit_logistic_erm(augment_constant(X, c), t, 1e-4)
        assert abs(expit(augment_constant(X, c) @ fit.weights).mean() - target) < 0.02


def test_default_lam_is_the_proxy_minimiser_and_public():
    for m, d, eps, c in ((300, 5, 0.5, INTERCEPT_CONSTANT), (5000, 10, 1.0, None), (10**5, 50, 5.0, INTERCEPT_CONSTANT)):
        lam = default_lam(m, d, eps, 1e-6, constant=c)
        k = gaussian_sigma(1.0, eps, 1e-6)
        grid = np.geomspace(*LAM_RANGE, 20001)
        sr = ROW_NORM * (1.0 if c is None else math.sqrt(1 - c * c))
        kappa = sr * sr / (4 * d)
        mse = (grid / (kappa + grid)) ** 2 + (2 * k * sr / (m * grid)) ** 2
        assert abs(math.log(lam / grid[np.argmin(mse)])) < 0.01
    assert default_lam(10**12, 5, 1e8, 1e-6) == LAM_RANGE[0]
    assert default_lam(10, 5, 1e-3, 1e-6) <= LAM_RANGE[1]


def test_classical_calibration_formula_and_privacy_profile():
    for m, lam, eps, delta in [(1000, .1, .01, 1e-6), (500, .1, .2, 1e-6), (500, .1, .99, 4e-6), (100, 1., .5, 1e-3)]:
        S = erm_sensitivity(m, lam)
        sig = gaussian_sigma(S, eps, delta, 'classical')
        assert sig == pytest.approx(math.sqrt(2 * math.log(1.25 / delta)) * S / eps, rel=1e-12)
        assert gaussian_delta(sig, S, eps) <= delta
        sa = gaussian_sigma(S, eps, delta)
        assert sa <= sig and gaussian_delta(sa, S, eps) <= delta * (1 + 1e-9)
        assert gaussian_delta(sa * 0.99, S, eps) > delta  # analytic is tight


def test_sensitivity_includes_the_tolerance():
    assert erm_sensitivity(100, 0.1, 0.0) == pytest.approx(0.2)
    assert erm_sensitivity(100, 0.1, 1e-3) == pytest.approx(0.2 + 0.02)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match='m'):
            erm_sensitivity(bad, 0.1)
    with pytest.raises(ValueError, match='tol'):
        erm_sensitivity(10, 0.1, -1e-3)


def test_noise_distribution_research_mode():
    X, t = ball_data(200, 3, 1)
    fit = fit_logistic_erm(X, t, 0.1)
    sd = gaussian_sigma(erm_sensitivity(200, 0.1, fit.tol), 0.3, 1e-6)
    z = np.concatenate([privatise_weights(fit, 0.3, 1e-6, rng=np.random.default_rng(s)).weights - fit.weights
                        for s in range(3000)])
    assert stats.kstest(z / sd, 'norm').pvalue > 1e-4  # seeded: deterministic


def test_privatise_calibrates_to_the_fits_public_tolerance():
    "An ERMFit carries its public tolerance; the noise is calibrated to it, never to the measured gradient norm."
    X, t = ball_data(100, 3, 8)
    fit = fit_logistic_erm(X, t, 0.1)
    rough = ERMFit(fit.weights, fit.objective, 5e-4, 1, fit.m, fit.lam, tol=1e-3)
    model = privatise_weights(rough, 0.5, 1e-6, rng=np.random.default_rng(0))
    assert model.sensitivity == pytest.approx(erm_sensitivity(100, 0.1, 1e-3))
    model2 = privatise_weights(ERMFit(fit.weights, fit.objective, 9e-4, 1, fit.m, fit.lam, tol=1e-3), 0.5, 1e-6,
                               rng=np.random.default_rng(0))
    assert model2.noise_sd == model.noise_sd  # the measured grad_norm changed nothing


def test_secure_default():
    X, t = ball_data(100, 3, 2)
    model = private_propensity(X, t, 0.5, 1e-6)
    assert model.noise == 'opendp' and model.is_secure


# --- validation before any noise or charge -----------------------------------------------------------------------

@pytest.mark.parametrize('kwargs,msg', [
    (dict(epsilon=0), 'epsilon'), (dict(epsilon=-1), 'epsilon'), (dict(epsilon=float('nan')), 'epsilon'),
    (dict(delta=0), 'delta'), (dict(delta=1), 'delta'), (dict(lam=0), 'lam'), (dict(lam=-0.1), 'lam'),
    (dict(epsilon=1.0, calibration='classical'), 'epsilon must be < 1'), (dict(calibration='exact'), 'calibration'),
    (dict(constant=1.0), 'constant'), (dict(constant=1.5), 'constant'), (dict(tol=0), 'tol'),
    (dict(epsilon=1e-320, calibration='classical'), 'epsilon'), (dict(epsilon=1e308, calibration='classical'), 'epsilon')])
def test_bad_input_before_noise_and_budget(kwargs, msg):
    X, t = ball_data(100, 3, 4)
    ledger = PrivacyLedger(10, 0.1)
    args = dict(epsilon=0.5, delta=1e-6, rng=Untouchable(), ledger=ledger) | kwargs
    with pytest.raises(ValueError, match=msg):
        private_propensity(X, t, **args)
    assert ledger.entries == ()


def test_absurd_epsilon_analytic_is_an_ordinary_release():
    "The analytic calibration stays usable at both ends: a release, not an error (and nothing after the charge fails)."
    X, t = ball_data(50, 2, 4)
    for eps in (1e-320, 1e308):
        m = private_propensity(X, t, eps, 1e-6, rng=np.random.default_rng(0))
        assert np.all(np.isfinite(m.weights)) and m.noise_sd > 0


def test_bad_data():
    X, t = ball_data(100, 3, 5)
    Xn = X.copy(); Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match='NaN'):
        private_propensity(Xn, t, .5, 1e-6, rng=Untouchable())
    with pytest.raises(ValueError, match='binary'):
        private_propensity(X, t * 2, .5, 1e-6, rng=Untouchable())
    with pytest.raises(ValueError, match='rows'):
        private_propensity(X, t[:-1], .5, 1e-6, rng=Untouchable())
    with pytest.raises(ValueError, match='outside the ball'):
        private_propensity(X * 3, t, .5, 1e-6, rng=Untouchable())
    private_propensity(X * 3, t, .5, 1e-6, covariate_bound=3.0, rng=np.random.default_rng(0))  # the bound stated
    with pytest.raises(TypeError, match='numeric'):
        private_propensity(X + 1j, t, .5, 1e-6, rng=Untouchable())
    with pytest.warns(UserWarning, match='projected onto the unit sphere'):
        m = private_propensity(X * 3, t, .5, 1e-6, clip_rows=True, rng=np.random.default_rng(0))
    assert m.m == 100


@pytest.mark.parametrize('bad', ['NaN', 'inf', 'outside the ball', 'treatment 2', 'treatment NaN'])
def test_ledger_refusal_comes_before_any_value_is_read(bad):
    "The values are checked by the fit (the statistics): a budget that cannot pay is refused first, whatever the data hold."
    X, t = ball_data(100, 3, 6)
    X, t = X.copy(), t.astype(float)
    if bad == 'NaN': X[5, 1] = np.nan
    elif bad == 'inf': X[5, 1] = np.inf
    elif bad == 'outside the ball': X[5] = [3.0, 0, 0]
    elif bad == 'treatment 2': t[5] = 2
    else: t[5] = np.nan
    says = {'NaN': 'NaN/inf', 'inf': 'NaN/inf', 'outside the ball': 'outside the ball'}.get(bad, 'treatment must be binary')
    for data in ((X, t), (pd.DataFrame(X, columns=list('abc')).assign(t=t), 't')):
        poor = PrivacyLedger(0.4, 1e-5)
        with pytest.raises(BudgetExceededError):  # the ledger's refusal: the values were not read
            private_propensity(*data, 0.5, 1e-6, ledger=poor, rng=Untouchable())
        rich = PrivacyLedger(1.0, 1e-5)
        with pytest.raises(ValueError, match=says):  # affordable: the values' refusal, nothing spent
            private_propensity(*data, 0.5, 1e-6, ledger=rich, rng=Untouchable())
        assert poor.entries == rich.entries == ()


def test_values_are_read_by_the_fit_only(monkeypatch):
    "No value check runs before the ledger: with the fit stubbed out, even NaN data reach the statistics step."
    import privcausal.propensity as propensity
    calls = []
    def stub(rows, **kw):
        calls.append(rows.n)
        raise RuntimeError('the fit')
    monkeypatch.setattr(propensity, 'fit_logistic_rows', stub)
    X, t = ball_data(50, 2, 1)
    X[0] = np.nan
    with pytest.raises(RuntimeError, match='the fit'):
        private_propensity(X, t * 7, 0.5, 1e-6, rng=Untouchable())
    assert calls == [50]


def test_rows_are_not_copied():
    "Arrays in memory become pandas rows over the same memory (the one row path of `privcausal.backend.arrays_rows`, zero-copy)."
    from privcausal.propensity import _propensity_rows
    X, t = ball_data(100, 3, 2)
    rows, names = _propensity_rows(X, t, (), None)
    assert np.shares_memory(rows.rows.frame.iloc[:, :3].to_numpy(dtype=float), X) and names == ()
    assert rows.rows.backend == 'pandas' and rows.covariates == ('x0', 'x1', 'x2')
    frame = pd.DataFrame(X, columns=['treatment', 'b', 'c'])  # a covariate called 'treatment'
    rows, _ = _propensity_rows(frame, t, ('x', 'y', 'z'), 100)
    assert rows.covariates == ('treatment', 'b', 'c') and rows.treatment == '_treatment'


def test_n_is_the_public_number_of_rows():
    X, t = ball_data(100, 3, 2)
    assert private_propensity(X, t, 0.5, 1e-6, n=100, rng=np.random.default_rng(0)).m == 100
    with pytest.raises(ValueError, match='declared number of rows'):
        private_propensity(X, t, 0.5, 1e-6, n=99, rng=Untouchable())
    with pytest.raises(TypeError, match="'n_rows'.*called 'n' now"):
        private_propensity(X, t, 0.5, 1e-6, n_rows=100, rng=Untouchable())
    frame = pd.DataFrame(X, columns=list('abc')).assign(t=t)
    with pytest.raises(ValueError, match='declared number of rows'):
        private_propensity(frame, 't', 0.5, 1e-6, n=101, rng=Untouchable())
    m = private_propensity(frame, 't', 0.5, 1e-6, rng=np.random.default_rng(0))
    assert m.covariates == ('a', 'b', 'c')
    np.testing.assert_array_equal(m.weights, private_propensity(X, t, 0.5, 1e-6, rng=np.random.default_rng(0)).weights)


def test_ledger_overspend_refused_before_noise():
    X, t = ball_data(100, 3, 6)
    ledger = PrivacyLedger(0.4, 1e-5)
    with pytest.raises(BudgetExceededError):
        private_propensity(X, t, 0.5, 1e-6, ledger=ledger, rng=Untouchable())
    private_propensity(X, t, 0.4, 1e-6, ledger=ledger, rng=np.random.default_rng(0))
    assert ledger.spent == (0.4, 1e-6)


@pytest.mark.parametrize('t_kind', ['all treated', 'all control', 'one treated', 'two treated'])
def test_degenerate_arms_are_ordinary_releases(t_kind):
    "An empty (or tiny) arm changes neither whether a release happens nor its noise: same calibration as any data."
    X, t = ball_data(100, 3, 7)
    tt = {'all treated': np.ones(100, int), 'all control': np.zeros(100, int),
          'one treated': (np.arange(100) == 0).astype(int), 'two treated': (np.arange(100) < 2).astype(int)}[t_kind]
    ledger = PrivacyLedger(10, 0.1)
    ref = private_propensity(X, t, .5, 1e-6, rng=np.random.default_rng(1))
    m = private_propensity(X, tt, .5, 1e-6, rng=np.random.default_rng(1), ledger=ledger)
    assert len(ledger.entries) == 1 and m.noise_sd == ref.noise_sd and m.lam == ref.lam
    assert np.all(np.isfinite(m.weights))


def test_save_load_predict(tmp_path):
    X, t = ball_data(100, 3, 7)
    m = private_propensity(X, t, 0.5, 1e-6, rng=np.random.default_rng(0), covariates=('a', 'b', 'c'))
    m.save(tmp_path / 'm.json')
    back = PrivatePropensityModel.load(tmp_path / 'm.json')
    np.testing.assert_array_equal(back.predict_proba(X), m.predict_proba(X))
    np.testing.assert_allclose(m.predict_proba(X), expit(augment_constant(X) @ m.weights))
    assert back.covariates == ('a', 'b', 'c') and back.epsilon == 0.5 and back.m == 100
    assert back.to_dict() == m.to_dict() == json.loads(m.to_json())
    (tmp_path / 'x.json').write_text('{"a": 1}')
    with pytest.raises(ValueError, match='not a saved'):
        PrivatePropensityModel.load(tmp_path / 'x.json')


def test_messages_carry_no_counts():
    X = np.array([[3.0, 4.0], [0.1, 0.1], [0, 2.0]])
    with pytest.raises(ValueError) as e:
        check_unit_ball(X)
    assert '2' not in str(e.value).replace('L2', '')
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        Z = check_unit_ball(X, clip=True)
        check_unit_ball(X[1:2], clip=True)  # nothing to move: announced all the same
    assert len(w) == 2 and str(w[0].message) == str(w[1].message)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), [1, math.hypot(.1, .1), 1])
    assert project_to_unit_ball(X)[1] == 2  # the count, for the NOT PRIVATE diagnostics


def test_public_checks():
    assert check_lam(0.5) == 0.5 and check_calibration('classical', 0.5) == 'classical'
    with pytest.raises(ValueError, match='lam'):
        check_lam(float('inf'))
    with pytest.raises(ValueError, match='epsilon_fit must be < 1'):
        check_calibration('classical', 1.0, 'epsilon_fit')


def test_string_covariates_refused():
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
    check_unit_ball(np.array([[0, 1], [1, 0]])); check_unit_ball(np.array([[True, False]]))
    check_unit_ball(np.array([[0.1, 0.2]], dtype=object)); check_unit_ball(pd.DataFrame(X, columns=['a', 'b']))


def test_shared_release_interface(tmp_path):
    "The model is a PrivateRelease: weights as the estimate, no interval, one privacy record, JSON that round-trips."
    X, t = ball_data(100, 3, 7)
    m = private_propensity(X, t, 0.5, 1e-6, rng=np.random.default_rng(0), covariates=('a', 'b', 'c'))
    d = m.to_dict()
    assert isinstance(m, PrivateRelease) and set(d) == set(KEYS) and d['estimand'] == 'propensity model'
    assert d['estimate'] == m.weights.tolist() and d['ci'] is None and d['intervals'] == {}
    assert list(m.released().values()) == m.weights.tolist() and list(m.released())[-1] == 'weight[(constant)]'
    p = d['privacy']
    assert (p['epsilon'], p['delta'], p['noise_source'], p['is_secure']) == (0.5, 1e-6, 'numpy-research', False)
    assert p['public'] == {'m': 100, 'd': 3, 'lam': m.lam, 'tol': 1e-10, 'covariate_bound': 1.0, 'constant': m.constant}
    assert p['guarantee_holds'] and p['caveats'] == []
    assert load(m.save(tmp_path / 'm.json')).to_dict() == json.loads(m.to_json())
    with pytest.raises(NoIntervalError):
        m.conf_int()
    assert m.to_frame().iloc[0]['value'] == m.estimate and m.to_frame().index[0] == 'propensity model (estimate)'
    assert repr(m).startswith('PrivatePropensityModel(private propensity weights=[')


# --- one solver, one record ----------------------------------------------------------------------------------------

def test_one_solver_one_record():
    "`fit_logistic_erm` is a thin call of `backend.fit_logistic_rows`; both return the one `ERMFit`; the old name is gone."
    import privcausal.backend as backend
    import privcausal.propensity as propensity
    assert propensity.ERMFit is backend.ERMFit and not hasattr(backend, 'LogisticERM')
    assert not hasattr(propensity, 'fit_erm_rows')  # one name for the one solver
    X, t = ball_data(3000, 4, seed=3)
    fit = fit_logistic_erm(X, t, 0.05)
    rows = backend.fit_logistic_rows(pd.DataFrame(X, columns=list('abcd')).assign(t=t), covariates=list('abcd'),
                                     treatment='t', lam=0.05, covariate_bound=None)
    assert type(fit) is type(rows) is ERMFit and fit.passes >= fit.n_iter + 1
    np.testing.assert_allclose(fit.weights, rows.weights, atol=1e-14, rtol=0)  # the same computation (memory order aside)


@pytest.mark.parametrize('m', [20_001, 60_000])
def test_subsample_start_same_certified_point(m):
    "Above 10,000 rows the start comes from a subsample; the certified point is the cold start's within 2 tol/lam."
    import privcausal.backend as backend
    X, t = ball_data(m, 6, seed=m)
    frame = pd.DataFrame(X).assign(t=t)
    kw = dict(covariates=list(range(6)), treatment='t', lam=0.01, covariate_bound=None)
    warm, cold = backend.fit_logistic_rows(frame, **kw), backend.fit_logistic_rows(frame, sample_rows=0, **kw)
    assert warm.certified and cold.certified and warm.m == cold.m == m
    np.testing.assert_allclose(warm.weights, cold.weights, atol=2e-10 / 0.01, rtol=0)
    np.testing.assert_allclose(fit_logistic_erm(X, t, 0.01).weights, warm.weights, atol=1e-14, rtol=0)


def test_in_memory_fit_does_not_copy_the_rows():
    "The array-in entry wraps X without a copy: the fit allocates far less than X (blocks of 2,048 rows, d-vectors)."
    import tracemalloc
    X, t = ball_data(200_000, 10, seed=1)
    fit_logistic_erm(X, t, 0.01)  # warm up imports and caches
    tracemalloc.start()
    fit_logistic_erm(X, t, 0.01)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 0.5 * X.nbytes, (peak, X.nbytes)  # a copy of X alone would be 1.0; a few length-m vectors remain


def test_unpenalised_fit_is_the_same_solver():
    "`fit_logistic_unpenalised_rows` (NOT PRIVATE, WATE's comparator) is the one solver with lam = 0, an intercept and an arm."
    from privcausal.backend import fit_logistic_unpenalised_rows
    rng = np.random.default_rng(4)
    X = rng.normal(size=(3000, 3))
    z = rng.binomial(1, expit(X @ [1.0, -0.5, 0.2] + 0.3))
    y = rng.binomial(1, expit(X @ [0.3, 0.4, -0.6] - 0.2 + z))
    df = pd.DataFrame(X, columns=['a', 'b', 'c']).assign(z=z, y=y)
    for arm in (0, 1):
        b = fit_logistic_unpenalised_rows(df, covariates=['a', 'b', 'c'], response='y', arm_column='z', arm=arm)
        rows = z == arm
        sk = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(X[rows], y[rows])
        np.testing.assert_allclose(b, np.r_[sk.intercept_, sk.coef_[0]], atol=1e-6)
    with pytest.raises(ValueError, match='response must be binary'):
        fit_logistic_unpenalised_rows(df.assign(y=2.0), covariates=['a'], response='y')
