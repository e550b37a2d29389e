"""Checks of privcausal.ipw (PP-IPW): sensitivities under adversarial neighbours, the plan, the release contract,
validation before noise, degenerate data released like any other, and Monte Carlo properties (noise, planner, bias at
large epsilon, interval coverage) in seeded research mode (deterministic: no false failures).
"""
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import expit
from statsmodels.treatment.treatment_effects import ate_ipw

from privcausal.accounting import BudgetExceededError, PrivacyLedger
from privcausal.mechanisms import NoiseSource, PrivacyLeakWarning, audit
from privcausal.checks import ESTIMANDS
from privcausal.method import solve_plan
from privcausal.ipw import (IPWDiagnostics, IPWPlan, IPWRelease, arm_weight_range, hajek_estimate,
                            hajek_from_sums, hajek_sensitivity, hajek_sums, ht_sensitivity, ipw_estimate, ipw_sensitivity,
                            max_unit_weight, plan_ipw, pp_ipw, random_split, split_column_mask, variance_scale)
from privcausal.release import KEYS, NotPrivate, PrivateRelease, load
from privcausal.theory_ipw import imbalanced_design, paper_design


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


BASE = dict(epsilon=0.5, delta=1e-6, outcome_bound=4.0, covariate_bound=1.0, propensity_bounds=0.05)
PAPER = dict(estimator='ht', intercept=False, lam=0.1)  # the paper's Algorithm 1


# --- sensitivities ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize('estimand', ESTIMANDS)
@pytest.mark.parametrize('bounds', [(0.05, 0.95), (0.2, 0.6), (0.5, 0.5)])
def test_ht_sensitivity_bound_under_adversarial_replacement(estimand, bounds):
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


@pytest.mark.parametrize('estimand', ESTIMANDS)
@pytest.mark.parametrize('bounds', [(0.05, 0.95), (0.1, 0.6), (0.5, 0.5)])
@pytest.mark.parametrize('share', [0.0, 0.1, 0.5])
def test_hajek_sensitivity_never_exceeded_and_attained(estimand, bounds, share):
    "Replace one record (any arm, weight, outcome; arm sizes 0/1/2 included): the sums move by at most S, and by S."
    (l1, H1), (l0, H0) = arm_weight_range(bounds, estimand)
    g = variance_scale(bounds, estimand, share)
    S = hajek_sensitivity(bounds, estimand, g)
    grid = [(arm, w, u) for arm, (lo, hi) in ((1, (l1, H1)), (0, (l0, H0))) for w in np.linspace(lo, hi, 4)
            for u in np.linspace(-1, 1, 5)]
    rng = np.random.default_rng(0)
    worst, H = 0.0, max(H1, H0)
    for n_other_treated in (0, 1, 2, 5):  # the other records: arms of size 0, 1, 2, 5
        t = (np.arange(6) < n_other_treated).astype(int); u = rng.uniform(-1, 1, 6)
        w = np.where(t == 1, rng.uniform(l1, H1, 6), rng.uniform(l0, H0, 6))
        for old in grid:
            t0, w0, u0 = np.r_[old[0], t], np.r_[old[1], w], np.r_[old[2], u]
            base = hajek_sums(u0, t0, w0, g, H)
            for new in grid:
                t0b, w0b, u0b = t0.copy(), w0.copy(), u0.copy()
                t0b[0], w0b[0], u0b[0] = new
                worst = max(worst, np.linalg.norm(hajek_sums(u0b, t0b, w0b, g, H) - base))
    assert worst <= S * (1 + 1e-12)
    # attained exactly without the variance block or when H_1 = H_0 (the arm switch is the worst case); else within
    # 5% at the default share and 14% at share 0.5
    assert worst >= S * (1 - 1e-12 if share == 0 or H1 == H0 else 0.94 if share <= 0.1 else 0.86)


@pytest.mark.parametrize('share', [0.0, 0.1, 0.5, 0.9])
def test_ht_vector_sensitivity(share):
    for est in ESTIMANDS:
        g = variance_scale((0.05, 0.9), est, share, 'ht')
        H = max_unit_weight((0.05, 0.9), est)
        a = np.linspace(-H, H, 1201)
        A, B = np.meshgrid(a, a)
        brute = np.sqrt(((A - B) ** 2 + g ** 2 * (A ** 2 - B ** 2) ** 2).max())
        assert brute <= ht_sensitivity((0.05, 0.9), est, g) * (1 + 1e-12)
        assert brute >= ht_sensitivity((0.05, 0.9), est, g) * (1 - 1e-5)


def test_unbounded_without_clipping():
    "Without clipping one record can move the estimate arbitrarily: why the bounds are required."
    n = 20
    p = np.full(n, .5); t = np.r_[np.ones(10), np.zeros(10)].astype(int); y = np.ones(n)
    p2 = p.copy(); p2[0] = 1e-9
    assert abs(ipw_estimate(y, t, p2) - ipw_estimate(y, t, p)) > 1e6 * ipw_sensitivity(n, 1.0, (0.05, 0.95))


@pytest.mark.parametrize('estimand,probt', [('ATE', None), ('ATT', 'p'), ('ATC', '1-p')])
def test_agrees_with_statsmodels(estimand, probt):
    rng = np.random.default_rng(2)
    p = rng.uniform(.1, .9, 500); t = rng.binomial(1, p); y = rng.normal(size=500) + t
    pt = {None: None, 'p': p, '1-p': 1 - p}[probt]
    assert ipw_estimate(y, t, p, estimand) == pytest.approx(ate_ipw(y, t, p, weighted=False, probt=pt)[0], rel=1e-12)
    assert hajek_estimate(y, t, p, estimand) == pytest.approx(ate_ipw(y, t, p, weighted=True, probt=pt)[0], rel=1e-12)


def test_hajek_postprocessing_never_fails():
    C, b = 5.0, (0.1, 0.9)
    g = variance_scale(b, 'ATE', 0.1)
    rng = np.random.default_rng(3)
    for scale in (1e-3, 1.0, 1e3, 1e9):
        for _ in range(200):
            r = hajek_from_sums(rng.normal(size=8) * scale, C, b, 'ATE', scale, g)
            assert np.isfinite([r.estimate, r.std_error, r.noise_sd]).all() and abs(r.estimate) <= 2 * C


# --- the release ------------------------------------------------------------------------------------------------

def test_release_contract_and_accounting():
    X, t, y = synth()
    ledger = PrivacyLedger(1.0, 1e-5)
    rel = pp_ipw(X=X, outcome=y, treatment=t, ledger=ledger, rng=np.random.default_rng(0), epsilon_fit=0.3, **BASE)
    assert isinstance(rel, IPWRelease) and isinstance(rel.plan, IPWPlan)
    assert (rel.epsilon, rel.delta) == (0.5, 1e-6)  # max over the stages (parallel composition)
    assert [s.epsilon for s in rel.stages] == [0.3, 0.5]
    assert ledger.spent == (0.5, 1e-6)
    lam = rel.plan.lam
    assert rel.stages[0].sensitivity == pytest.approx(2 / (rel.m * lam) + 2e-10 / lam)
    g = variance_scale((0.05, 0.95), 'ATE', 0.1)
    assert rel.stages[1].sensitivity == pytest.approx(hajek_sensitivity((0.05, 0.95), 'ATE', g))
    d = rel.to_dict()
    assert set(d) == set(KEYS) and d['method'] == 'PP-IPW' and d['estimand'] == 'ATE' and d['type'] == 'IPWRelease'
    assert d['estimate'] == rel.estimate and d['ci'] == list(rel.conf_int()) and d['direction'] is None
    p = d['privacy']
    assert (p['epsilon'], p['delta'], p['noise_source'], p['is_secure']) == (0.5, 1e-6, 'numpy-research', False)
    assert p['guarantee_holds'] and p['caveats'] == [] and 'replace one record' in p['privacy_unit']
    assert p['public'] == {'n': 600, 'm': rel.m, 'n_estimate': rel.n_estimate, 'd': 4, 'outcome_bound': 4.0, 'covariate_bound': 1.0,
                           'propensity_bounds': [0.05, 0.95], 'lam': lam, 'tol': 1e-10, 'constant': rel.plan.constant}
    st = d['settings']
    assert (st['estimator'], st['epsilon_fit'], st['epsilon_estimate']) == ('hajek', 0.3, 0.5)
    assert st['fit_sensitivity'] == rel.stages[0].sensitivity and st['effect_noise_sd'] == rel.stages[1].noise_sd
    r = d['released']
    assert r['estimate'] == rel.estimate and r['std_error'] == rel.std_error and set(rel.sums) <= set(r)
    assert [r[f'propensity_weight[{k}]'] for k in ('x0', 'x1', 'x2', 'x3', '(constant)')] == rel.propensity.weights.tolist()
    text = repr(rel) + rel.summary() + str(d) + rel._repr_html_() + rel.to_frame().to_string()
    assert 'tau_hat' not in text and 'tau_n' not in text and 'w_hat' not in text and 'exact' not in text
    json.dumps(d)
    assert rel.noise == 'numpy-research' and not rel.is_secure and 'NOT floating-point safe' in rel.summary()
    lo, hi = rel.conf_int(); lo90, hi90 = rel.conf_int(0.1)
    assert -8 <= lo <= lo90 <= hi90 <= hi <= 8 and lo < hi  # nested; [-2C, 2C] is the whole range (uninformative release)
    with pytest.raises(ValueError, match='alpha'):
        rel.conf_int(1.5)
    assert rel.to_frame().index[0] == 'ATE (estimate)' and rel.to_frame().iloc[0]['value'] == rel.estimate
    assert repr(rel).startswith('IPWRelease(PP-IPW ATE = ')


def test_shared_release_interface(tmp_path):
    "The shared interface: strict JSON that round-trips through save/load, one privacy record, nested intervals."
    X, t, y = synth(N=4000)
    for kw in ({}, dict(estimand='ATT'), PAPER):
        rel = pp_ipw(X=X, outcome=y, treatment=t, rng=np.random.default_rng(3), **{**BASE, 'epsilon': 4.0}, **kw)
        assert isinstance(rel, PrivateRelease) and set(rel.to_dict()) == set(KEYS)
        back = load(rel.save(tmp_path / 'ipw.json'))
        assert back.to_dict() == json.loads(rel.to_json())
        assert back.conf_int(0.1) == pytest.approx(rel.conf_int(0.1)) and back.estimate == rel.estimate
        json.loads(rel.to_json(), parse_constant=lambda c: pytest.fail(f'non-strict JSON constant {c}'))
        (lo5, hi5), (lo10, hi10) = rel.conf_int(0.05), rel.conf_int(0.1)
        assert -8 < lo5 < lo10 < rel.estimate < hi10 < hi5 < 8
        frame = rel.to_frame()
        assert frame.iloc[0]['value'] == rel.estimate and frame.iloc[0]['ci_lower'] == lo5
        assert rel.privacy.noise_source == rel.noise == 'numpy-research' and not rel.privacy.is_secure


def test_release_executes_its_public_plan():
    X, t, y = synth()
    split = np.arange(600) < 200
    rel = pp_ipw(X=X, outcome=y, treatment=t, split=split, rng=np.random.default_rng(0), **BASE)
    plan = plan_ipw(600, 4, 0.5, 1e-6, 4.0, 0.05, m=200, covariate_bound=1.0)
    assert rel.plan == plan
    # the plan never sees the data: other data of the same shape give the same plan
    rel2 = pp_ipw(X=X[::-1], outcome=-y, treatment=1 - t, split=split, rng=np.random.default_rng(0), **BASE)
    assert rel2.plan == plan


def test_paper_algorithm_1_as_before():
    "estimator='ht', intercept=False, lam=0.1 is the paper's release: sensitivity 2 C max|h| / n, noise added to tau_n."
    X, t, y = synth()
    split = np.arange(600) % 2 == 1
    rel, dg = pp_ipw(X=X, outcome=y, treatment=t, split=split, rng=np.random.default_rng(0), diagnostics=True, **BASE, **PAPER)
    assert rel.stages[1].sensitivity == pytest.approx(2 * 4.0 / (0.05 * rel.n_estimate))
    assert rel.plan.lam == 0.1 and rel.propensity.constant is None and len(rel.propensity.weights) == 4
    assert rel.sums['estimate'] == rel.estimate == rel.released()['estimate']
    e = ~split
    tau_n = ipw_estimate(y[e], t[e], rel.propensity.predict_proba(X[e]), bounds=(0.05, 0.95))
    assert dg.tau_n == pytest.approx(tau_n, rel=1e-9)
    assert rel.target == 'ATE = E[Y(1) - Y(0)]'
    att = pp_ipw(X=X, outcome=y, treatment=t, split=split, rng=np.random.default_rng(0), estimand='ATT', normalisation='n',
                 **BASE, **PAPER)
    assert att.target.startswith('P(T=1) x ATT')


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
    assert isinstance(diag, IPWDiagnostics) and isinstance(diag, NotPrivate) and diag.to_dict()['NOT_PRIVATE'] is True
    assert repr(diag).startswith('IPWDiagnostics[NOT PRIVATE](')
    assert sum(diag.arm_sizes.values()) == len(y)
    assert diag.fit.certified
    assert set(diag.exact_sums) == set(rel.sums)


def test_split_column_and_fractions():
    X, t, y = synth()
    labels = np.where(np.arange(len(y)) < 200, 'fit', 'estimate')
    rel = pp_ipw(X=X, outcome=y, treatment=t, split=labels, rng=np.random.default_rng(0), **BASE)
    assert (rel.m, rel.n_estimate, rel.n) == (200, 400, 600)
    rel = pp_ipw(X=X, outcome=y, treatment=t, fit_fraction=0.25, rng=np.random.default_rng(0), **BASE)
    assert (rel.m, rel.n_estimate, rel.n) == (150, 450, 600)
    assert split_column_mask(pd.Series(['fit', 'estimate']), 2).tolist() == [True, False]
    with pytest.raises(ValueError) as e:
        split_column_mask(["fit", "secret-label"], 2)
    assert 'secret' not in str(e.value)


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
    (dict(epsilon=1e-320, calibration='classical'), 'epsilon'), (dict(epsilon=1e308, calibration='classical'), 'epsilon'),
    (dict(epsilon=0.5, epsilon_fit=1e-320, calibration='classical'), 'epsilon_fit'),
    (dict(propensity_bounds=0), r'\(0, 1/2\]'), (dict(propensity_bounds=0.51), r'\(0, 1/2\]'), (dict(propensity_bounds=(0.6, 0.4)), 'omega1 <= omega2'),
    (dict(propensity_bounds=None), 'state public propensity bounds'), (dict(outcome_bound=None), 'outcome_bound'),
    (dict(covariate_bound=None), 'covariate_bound'), (dict(outcome_bound=1.0), 'some outcomes exceed'),
    (dict(covariate_bound=0.5), 'rows lie outside the ball'), (dict(estimand='ate'), 'estimand'),
    (dict(estimator='aipw'), 'estimator'), (dict(normalisation='arm'), "applies to estimator='ht'"),
    (dict(estimator='ht', normalisation='arm'), 'applies to ATT and ATC'),
    (dict(estimand='ATT', estimator='ht', bounding='trim'), 'ATE only'), (dict(bounding='trim'), "applies to estimator='ht'"),
    (dict(variance_share=1.0), 'variance_share'), (dict(variance_share=-0.1), 'variance_share'),
    (dict(fit_fraction=0.01), 'fitting part'), (dict(fit_fraction=0.99), 'estimation part'),
    (dict(epsilon_fit=0.6), 'exceeds the overall'), (dict(delta_estimate=0.0), 'delta_estimate'),
    (dict(split=['fit'] * 3), 'one entry per row'), (dict(rng=3), 'rng'), (dict(tol=0), 'tol')])
def test_bad_input(change, msg):
    X, t, y = synth()
    ledger = PrivacyLedger(10, 0.1)
    args = {**BASE, 'rng': Untouchable(), 'ledger': ledger, **change}
    with pytest.raises((ValueError, TypeError), match=msg):
        pp_ipw(X=X, outcome=y, treatment=t, **args)
    assert ledger.entries == ()


def _bad_arrays(X, t, y):
    "Arrays holding out-of-domain values, one kind each (the last row's)."
    last = np.arange(len(t)) == len(t) - 1
    return {'X nan': (np.where(last[:, None], np.nan, X), t, y), 'X inf': (np.where(last[:, None], np.inf, X), t, y),
            't = 2': (X, np.where(last, 2, t), y), 't nan': (X, np.where(last, np.nan, t), y),
            'y nan': (X, t, np.where(last, np.nan, y))}


@pytest.mark.parametrize('case', ['X nan', 'X inf', 't = 2', 't nan', 'y nan'])
def test_arrays_values_after_the_ledger(case):
    "Arrays, like a frame, are checked from metadata before the ledger: an unaffordable ledger refuses first; an affordable one sees the value refusal and spends nothing."
    X, t, y = _bad_arrays(*synth())[case]
    poor = PrivacyLedger(0.01, 1e-9)
    with pytest.raises(BudgetExceededError): pp_ipw(X=X, outcome=y, treatment=t, **BASE, rng=Untouchable(), ledger=poor)
    rich = PrivacyLedger(10, 0.1)
    with pytest.raises(ValueError, match='NaN/inf|binary'):
        pp_ipw(X=X, outcome=y, treatment=t, **BASE, rng=np.random.default_rng(0), ledger=rich)
    assert poor.entries == () and rich.entries == ()


def test_bad_data():
    X, t, y = synth()
    kw = {**BASE, 'rng': Untouchable()}
    Xn = X.copy(); Xn[0, 0] = np.inf
    with pytest.raises(ValueError, match='NaN/inf'): pp_ipw(X=Xn, outcome=y, treatment=t, **kw)
    yn = y.copy(); yn[1] = np.nan
    with pytest.raises(ValueError, match='outcome'): pp_ipw(X=X, outcome=yn, treatment=t, **kw)
    with pytest.raises(ValueError, match='binary'): pp_ipw(X=X, outcome=y, treatment=t + 1, **kw)
    with pytest.raises(ValueError, match='rows'): pp_ipw(X=X[:-1], outcome=y, treatment=t, **kw)
    with pytest.raises(TypeError, match='complex'): pp_ipw(X=X + 1j, outcome=y, treatment=t, **kw)
    df = pd.DataFrame(np.c_[X, X[:, 0]], columns=['a', 'b', 'c', 'd', 'a']).assign(t=t, y=y)
    with pytest.raises(ValueError, match='duplicated column names'): pp_ipw(df, outcome='y', treatment='t', **kw)
    # pandas inputs with different indexes are refused, not paired by position
    with pytest.raises(ValueError, match='index'):
        pp_ipw(X=pd.DataFrame(X), outcome=pd.Series(y, index=np.arange(1, 601)), treatment=t, **kw)
    df2 = pd.DataFrame(X, columns=list('abcd'), index=np.arange(600) * 2).assign(t=t, y=y)
    with pytest.raises(ValueError, match='index'):
        pp_ipw(df2, outcome='y', treatment='t', split=pd.Series(np.arange(600) < 300), **kw)


@pytest.mark.parametrize('case', ['no treated in D_n', 'no control in D_n', 'one treated in D_n', 'two treated in D_n',
                                  'one arm overall', 'no treated in D_m', 'constant covariates'])
@pytest.mark.parametrize('estimator', ['hajek', 'ht'])
def test_degenerate_data_are_ordinary_releases(case, estimator):
    "Arm sizes 0/1/2 in either part, one arm overall, degenerate X: a release with the same calibration, never a refusal."
    X, t, y = synth(N=100)
    split = np.arange(100) < 50
    t2, X2 = t.copy(), X.copy()
    if case == 'no treated in D_n': t2[50:] = 0
    elif case == 'no control in D_n': t2[50:] = 1
    elif case == 'one treated in D_n': t2[50:] = 0; t2[99] = 1
    elif case == 'two treated in D_n': t2[50:] = 0; t2[98:] = 1
    elif case == 'one arm overall': t2[:] = 0
    elif case == 'no treated in D_m': t2[:50] = 0
    else: X2 = np.full_like(X, 0.3)
    kw = dict(split=split, estimator=estimator, **BASE)
    if estimator == 'ht': kw['estimand'] = 'ATT'  # the arm-normalised ATT: its public arm size may be 0
    ledger = PrivacyLedger(10, 0.1)
    ref = pp_ipw(X=X, outcome=y, treatment=t, rng=np.random.default_rng(0), **kw)
    rel = pp_ipw(X=X2, outcome=y, treatment=t2, rng=np.random.default_rng(0), ledger=ledger, **kw)
    assert len(ledger.entries) == 1 and np.isfinite([rel.estimate, rel.std_error]).all()
    assert rel.stages[0] == ref.stages[0]
    if estimator == 'hajek': assert rel.stages == ref.stages  # the arm size is not public here: nothing depends on it
    lo, hi = rel.conf_int(); assert lo <= hi and (estimator == 'ht' or lo <= rel.estimate <= hi)


def test_announcements_do_not_depend_on_the_data():
    "Clipping that was asked for is announced on every call, with the same text; counts only in the diagnostics."
    X, t, y = synth()
    msgs = []
    for ob, cb in ((100.0, 10.0), (1.0, 0.5)):  # nothing to clip, then plenty to clip
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            _, dg = pp_ipw(X=X, outcome=y, treatment=t, **{**BASE, 'outcome_bound': ob, 'covariate_bound': cb},
                           clip_outcomes=True, clip_rows=True, rng=np.random.default_rng(0), diagnostics=True)
        msgs.append(sorted(str(m.message).replace(f'{ob:g}', 'C').replace(f'{cb:g}', 'R') for m in w))
        assert all(m.filename == __file__ for m in w)  # stacklevel points at the caller's line
    assert msgs[0] == msgs[1] and len(msgs[0]) == 2
    assert dg.n_clipped_outcomes > 0 and dg.n_clipped_rows > 0
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # no clipping requested: no warning at all
        pp_ipw(X=X, outcome=y, treatment=t, rng=np.random.default_rng(0), **BASE)


def test_dataframe_input():
    X, t, y = synth()
    df = pd.DataFrame(X, columns=list('abcd')).assign(treat=t, out=y)
    rel = pp_ipw(df, outcome='out', treatment='treat', covariates=list('abcd'), rng=np.random.default_rng(0), **BASE)
    assert rel.propensity.covariates == tuple('abcd')
    np.testing.assert_allclose(rel.propensity.predict_proba(X[:3]), rel.propensity.predict_proba(df[list('abcd')].to_numpy()[:3]))


# --- the plan ---------------------------------------------------------------------------------------------------

def test_plan_contract_and_inversion():
    p = plan_ipw(4000, 5, 1.0, 1e-6, 12.0, 0.05, treated_share=0.24)
    d = p.to_dict()
    assert d['planned'] is True and {'noise_sd', 'ci_halfwidth'} <= set(d) and json.dumps(d)
    assert p.ci_halfwidth == pytest.approx(1.959964 * math.hypot(p.noise_sd, p.sampling_sd), rel=1e-6)
    a = dict(treated_share=0.24, outcome_sd=2.0)  # the planning assumptions
    pn = solve_plan(plan_ipw, 0.5, 'n', d=5, epsilon=1.0, delta=1e-6, outcome_bound=12.0, propensity_bounds=0.05, **a)
    assert pn.ci_halfwidth <= 0.5 < plan_ipw(pn.n - 1, 5, 1.0, 1e-6, 12.0, 0.05, **a).ci_halfwidth
    pe = solve_plan(plan_ipw, 0.5, 'epsilon', n=4000, d=5, delta=1e-6, outcome_bound=12.0, propensity_bounds=0.05, **a)
    assert pe.ci_halfwidth <= 0.5 and plan_ipw(4000, 5, pe.epsilon * 0.99, 1e-6, 12.0, 0.05, **a).ci_halfwidth > 0.5
    with pytest.raises(ValueError, match='not reached even at'):
        solve_plan(plan_ipw, 0.01, 'epsilon', n=4000, d=5, delta=1e-6, outcome_bound=12.0, propensity_bounds=0.05)
    with pytest.raises(ValueError, match='epsilon'):
        plan_ipw(4000, 5, 1e-320, 1e-6, 12.0, 0.05, calibration='classical')


@pytest.mark.parametrize('eps,estimator,estimand', [(1.0, 'hajek', 'ATE'), (5.0, 'hajek', 'ATE'), (1.0, 'hajek', 'ATT'),
                                                    (5.0, 'hajek', 'ATT'), (1.0, 'ht', 'ATE')])
def test_planned_noise_sd_matches_realised(eps, estimator, estimand):
    """Over 250 seeded releases on one data set, the estimate's spread around its noise-free value is the plan's (to 10%).
    The plan assumes weight sums near their expectation, i.e. a well-estimated propensity model: epsilon_fit = 50, and it
    is given a well-informed planner's guesses about the design: the arm means and the spread of the true logit (1.28).
    At epsilon = 5 the debiasing step is on (the public rule), so its share of the budget is in the plan too."""
    X, t, y, _ = imbalanced_design(4000, np.random.default_rng(1))
    kw = dict(X=X, outcome=y, treatment=t, epsilon=50.0, epsilon_estimate=eps, delta=1e-6, outcome_bound=12.0,
              covariate_bound=5.0, propensity_bounds=0.05, split=np.arange(4000) % 2 == 0, estimator=estimator, estimand=estimand,
              clip_rows=True, clip_outcomes=True)
    if estimator == 'ht': kw.update(intercept=False, lam=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        draws = [pp_ipw(rng=np.random.default_rng(s), diagnostics=True, **kw) for s in range(250)]
    realised = np.std([r.estimate - dg.tau_n for r, dg in draws])
    planned = plan_ipw(4000, 5, 50.0, 1e-6, 12.0, 0.05, estimator=estimator, estimand=estimand, epsilon_estimate=eps,
                       treated_share=0.24, outcome_mean={'ATE': (3.3, 0.85), 'ATT': (4.1, 1.7)}[estimand], propensity_sd=1.28,
                       **({'intercept': False, 'lam': 0.1} if estimator == 'ht' else {})).noise_sd
    assert abs(realised / planned - 1) < 0.10, (realised, planned)


# --- what the default estimates -----------------------------------------------------------------------------------

def test_default_at_large_epsilon_is_within_10_percent_of_the_truth():
    "Imbalanced (24% treated) confounded design, ATE = ATT = ATC = 2: the default release at epsilon = 1e6."
    X, t, y, truth = imbalanced_design(20_000, np.random.default_rng(5))
    kw = dict(X=X, outcome=y, treatment=t, epsilon=1e6, delta=1e-6, outcome_bound=12.0, covariate_bound=5.0, propensity_bounds=0.01,
              clip_rows=True, clip_outcomes=True)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for est in ESTIMANDS:
            rel = pp_ipw(estimand=est, rng=np.random.default_rng(0), **kw)
            assert abs(rel.estimate / truth[est] - 1) < 0.10, (est, rel.estimate)
            paper = pp_ipw(estimand=est, rng=np.random.default_rng(0), normalisation='n', **kw, **PAPER)
            assert abs(paper.estimate / truth[est] - 1) > 0.10  # the paper's settings miss it on this design


def test_interval_coverage_reduced():
    "200 data sets of the imbalanced design at epsilon = 1: coverage of the true ATE within 4 binomial se of 0.95."
    X, t, y, truth = imbalanced_design(2000, np.random.default_rng(11), reps=200)
    hits = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for k in range(200):
            r = pp_ipw(X=X[k], outcome=y[k], treatment=t[k], epsilon=1.0, delta=1e-6, outcome_bound=12.0, covariate_bound=5.0,
                       propensity_bounds=0.05, clip_rows=True, clip_outcomes=True, rng=np.random.default_rng(k))
            lo, hi = r.conf_int(); hits.append(lo <= truth['ATE'] <= hi)
    assert abs(np.mean(hits) - 0.95) <= 4 * math.sqrt(0.95 * 0.05 / 200)


# --- noise and privacy --------------------------------------------------------------------------------------------

def test_effect_noise_is_gaussian_with_stated_sd():
    X, t, y = synth(N=300)
    split = np.arange(300) % 3 == 0
    res = [pp_ipw(X=X, outcome=y, treatment=t, split=split, rng=np.random.default_rng(s), diagnostics=True, **BASE)
           for s in range(600)]
    sd = res[0][0].stages[1].noise_sd
    C = 4.0
    e = np.array([[r.sums['treated_weighted_outcome_sum'] / C - d.exact_vector[0],
                   r.sums['control_weight_sum'] - d.exact_vector[3]] for r, d in res]).ravel() / sd
    assert stats.kstest(e, 'norm').pvalue > 1e-4  # seeded, so deterministic


def test_audit_of_whole_release():
    "Empirical audit on the equality case of the Hájek release (omega = 1/2, a record switching arm): no violation."
    X, t, y = synth(N=40, d=2)
    y = np.clip(y, -4, 4)
    split = np.arange(40) < 20
    y0, t0, y1, t1 = y.copy(), t.copy(), y.copy(), t.copy()
    y0[39], t0[39], y1[39], t1[39] = 4.0, 1, -4.0, 0
    kw = dict(X=X, split=split, **{**BASE, 'epsilon': 1.0, 'propensity_bounds': 0.5})
    mech = lambda data, noise: pp_ipw(outcome=data[0], treatment=data[1], rng=noise, **kw)
    g0 = pp_ipw(outcome=y0, treatment=t0, rng=np.random.default_rng(0), diagnostics=True, **kw)
    g1 = pp_ipw(outcome=y1, treatment=t1, rng=np.random.default_rng(0), diagnostics=True, **kw)
    diff = np.subtract(g1[1].exact_vector, g0[1].exact_vector)
    assert np.linalg.norm(diff) == pytest.approx(g0[0].stages[1].sensitivity)  # the arm switch attains S (H_1 = H_0)
    keys = ['treated_weighted_outcome_sum', 'treated_weight_sum', 'control_weighted_outcome_sum', 'control_weight_sum']
    stat = lambda r: float(np.dot([r.sums[k] / (4.0 if 'outcome' in k else 1.0) for k in keys], diff[:4]))
    res = audit(mech, (y0, t0), (y1, t1), n_samples=3000, rng=np.random.default_rng(0), epsilon=1.0, delta=1e-6, statistic=stat)
    assert not res.violated


def test_hajek_post_processing_never_fails_on_extreme_released_vectors():
    "Nothing after the charge can fail: the estimate and the interval are finite for any released vector (a fuzz)."
    from privcausal.ipw import hajek_from_sums, hajek_interval, variance_scale, MAX_OUTCOME_BOUND, MIN_SHARE
    rng = np.random.default_rng(3)
    for _ in range(300):
        C = float(rng.choice([1e-12, 1.0, 1e6, MAX_OUTCOME_BOUND]))
        est = str(rng.choice(['ATE', 'ATT', 'ATC']))
        bounds = [(1e-6, 1 - 1e-6), (0.05, 0.95), (0.5, 0.5), (0.01, 0.3)][rng.integers(4)]
        share = float(rng.choice([0.0, MIN_SHARE, 0.1, 0.999]))
        gamma = variance_scale(bounds, est, share)
        v = rng.normal(size=8) * 10.0 ** rng.uniform(-300, 300, size=8)
        sigma = float(10.0 ** rng.uniform(-10, 200))
        r = hajek_from_sums(v, C, bounds, est, sigma, gamma)
        lo, hi = hajek_interval(v, C, bounds, est, sigma, gamma, 0.05, r.dof)
        assert np.isfinite([r.estimate, lo, hi]).all() and r.std_error >= 0 and -2 * C <= lo <= hi <= 2 * C, (C, est, bounds, share, v, sigma)


# --- the debiasing step ------------------------------------------------------------------------------------------

def test_debias_rule_is_public_and_switches_with_m_epsilon():
    "The default step is decided from n, d, epsilon and delta only: off at small n*epsilon, on at large; given values win."
    small, large = plan_ipw(4000, 5, 1.0, 1e-6, 12.0, 0.02), plan_ipw(4000, 5, 50.0, 1e-6, 12.0, 0.02)
    assert not small.debias and small.debias_rule.startswith('auto: off') and small.hessian_share == 0
    assert large.debias and large.debias_rule.startswith('auto: share') and 0.2 < large.hessian_share < 0.25
    shares = [plan_ipw(4000, 5, e, 1e-6, 12.0, 0.02).hessian_share for e in np.geomspace(1, 1000, 40)]
    assert all(a <= b for a, b in zip(shares, shares[1:])) and shares[0] == 0 and shares[-1] > 0.24  # grows with epsilon
    budgets = [plan_ipw(4000, 5, e, 1e-6, 12.0, 0.02).epsilon_effect for e in np.geomspace(1, 1000, 40)]
    assert all(a < b for a, b in zip(budgets, budgets[1:]))  # the sums' own budget never falls as epsilon grows
    assert not plan_ipw(4000, 5, 50.0, 1e-6, 12.0, 0.02, estimator='ht').debias  # the paper's release never steps by default
    assert not plan_ipw(4000, 5, 50.0, 1e-6, 12.0, 0.02, debias=False).debias
    forced = plan_ipw(4000, 5, 1.0, 1e-6, 12.0, 0.02, debias=True, hessian_share=0.1)
    assert forced.debias and forced.debias_rule == 'given: on' and forced.epsilon_hessian == pytest.approx(0.1)
    assert forced.effect_noise_sd > small.effect_noise_sd  # the sums get the rest of the effect stage
    assert forced.noise_sd > small.noise_sd
    c = forced.cost
    assert (c.epsilon, c.delta) == (1.0, 1e-6) and c.components[1].composition == 'sequential'
    for bad in (0.0, 1.0, -0.2, 'a'):
        with pytest.raises(ValueError, match='hessian_share'): plan_ipw(4000, 5, 1.0, 1e-6, 12.0, 0.02, debias=True, hessian_share=bad)
    with pytest.raises(ValueError, match='debias'): plan_ipw(4000, 5, 1.0, 1e-6, 12.0, 0.02, debias='yes')
    assert not plan_ipw(4000, 5, 1.0, 1e-6, 12.0, 0.02, debias=False, hessian_share=0.0).debias  # an unused share is not checked


def test_debias_release_contract_and_budget():
    "With the step on: the ledger is charged once, exactly the guarantee; the curvature and the step are released; refusals come first."
    X, t, y = synth(N=2000)
    ledger = PrivacyLedger(5.0, 1e-5)
    kw = dict(BASE, epsilon=5.0, debias=True)
    rel, dg = pp_ipw(X=X, outcome=y, treatment=t, ledger=ledger, rng=np.random.default_rng(0), diagnostics=True, **kw)
    assert ledger.spent == (5.0, 1e-6) and len(ledger.entries) == 1
    assert [s.name for s in rel.stages] == ['propensity', 'curvature', 'ATE']
    assert math.fsum(s.epsilon for s in rel.stages[1:]) <= 5.0
    r = rel.released()
    k = rel.propensity.d + 1
    assert sum(key.startswith('propensity_curvature[') for key in r) == k * (k + 1) // 2
    assert [r[f'debiased_weight[{n}]'] for n in ('x0', 'x1', 'x2', 'x3', '(constant)')] == rel.effect_weights.tolist()
    assert rel.to_dict()['settings']['debias'] is True and 'tau_hat' not in rel.summary()
    assert np.isfinite([rel.estimate, dg.tau_hat, dg.tau_n]).all()
    # bad input: refused before any noise (the untouchable source) and before any charge; the spent ledger refuses
    # first, before the rows are checked against the bounds
    before = ledger.spent
    with pytest.raises(BudgetExceededError):
        pp_ipw(X=X, outcome=y * 10, treatment=t, ledger=ledger, rng=Untouchable(), **kw)
    roomy = PrivacyLedger(10.0, 1e-5)
    with pytest.raises(ValueError, match='outcome_bound'):
        pp_ipw(X=X, outcome=y * 10, treatment=t, ledger=roomy, rng=Untouchable(), **kw)
    with pytest.raises(ValueError, match='hessian_share'):
        pp_ipw(X=X, outcome=y, treatment=t, ledger=ledger, rng=Untouchable(), hessian_share=2.0, **kw)
    assert ledger.spent == before and roomy.entries == ()


@pytest.mark.parametrize('case', ['no treated in D_n', 'one arm overall', 'constant covariates', 'huge separation'])
def test_debias_degenerate_data_are_ordinary_releases(case):
    "Nothing about the data changes whether the step runs, its calibration or the release's shape."
    X, t, y = synth(N=400)
    split = np.arange(400) < 200
    t2, X2 = t.copy(), X.copy()
    if case == 'no treated in D_n': t2[200:] = 0
    elif case == 'one arm overall': t2[:] = 1
    elif case == 'constant covariates': X2 = np.full_like(X, 0.3)
    else: X2 = np.where(t[:, None] == 1, 1, -1) * np.eye(4)[0] * 0.999  # the treatment is a function of the rows
    kw = dict(BASE, epsilon=5.0, split=split, debias=True)
    ref = pp_ipw(X=X, outcome=y, treatment=t, rng=np.random.default_rng(0), **kw)
    rel = pp_ipw(X=X2, outcome=y, treatment=t2, rng=np.random.default_rng(0), **kw)
    assert rel.stages == ref.stages and rel.released().keys() == ref.released().keys()
    assert np.isfinite(rel.effect_weights).all() and np.isfinite([rel.estimate, rel.std_error]).all()


def test_debias_step_removes_most_of_the_shrinkage_with_a_known_curvature():
    "With no curvature noise and no ridge the step is the Newton step from the penalised fit: much closer to the unpenalised fit."
    from privcausal.ipw import debias_weights
    from privcausal.propensity import augment_constant, fit_logistic_erm
    rng = np.random.default_rng(4)
    X = rng.normal(size=(20_000, 3)) / 4
    Z = augment_constant(X / np.maximum(np.linalg.norm(X, axis=1), 1)[:, None])
    t = rng.binomial(1, expit(Z @ np.array([4.0, -3.0, 2.0, -1.5])))
    pen, unpen = fit_logistic_erm(Z, t, 0.003), fit_logistic_erm(Z, t, 1e-7)
    p = expit(Z @ pen.weights)
    S = (Z.T * (p * (1 - p))) @ Z
    step = debias_weights(pen.weights, S, len(Z), 0.003, 1e-9)
    gap = lambda w: np.linalg.norm(w - unpen.weights)
    assert gap(step) < 0.2 * gap(pen.weights)


def test_one_row_path_no_backend_branch():
    "Issue 17 item 3: ipw.py has one implementation over `Rows`; no statistic branches on where the rows live."
    import ast, inspect
    import privcausal.ipw as ipw
    tree = ast.parse(inspect.getsource(ipw))
    backend_types = {'CausalRows', '_RowsPrepared', 'Rows', 'PandasRows', 'DaskRows', 'MappedRows', 'CausalData'}
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    for c in calls:
        if c.func.id == 'isinstance':
            named = {n.id for n in ast.walk(c.args[1]) if isinstance(n, ast.Name)}
            outer = next(f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and c in ast.walk(f))
            assert not named & backend_types or outer == '_ipw_rows', (outer, named)  # the entry turns any input into rows
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == 'backend']
    users = {f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
             for c in ast.walk(f) if isinstance(c, ast.Call) and getattr(c.func, 'id', '') == 'is_dask_frame'}
    assert users <= {'_ipw_rows', 'pp_ipw', '_ipw_split'}, users  # the entry: building the rows and choosing the split
    for gone in ('_design_parts', '_effect_sums_rows', 'fit_logistic_erm', '_RowsPrepared'):
        assert not hasattr(ipw, gone), gone


def test_in_memory_release_makes_no_copy_of_the_data():
    "Issue 17 item 7: the in-memory release reads the rows in chunks (no full-size float copy, no design matrix)."
    import tracemalloc
    X, t, y = synth(400_000, 10, seed=3)
    df = pd.DataFrame(X, columns=[f'x{j}' for j in range(10)]).assign(t=t, y=y)
    kw = dict(outcome='y', treatment='t', epsilon=1.0, delta=1e-6, outcome_bound=4.0, covariate_bound=1.0, propensity_bounds=0.05,
              rng=np.random.default_rng(0), diagnostics=True)
    pp_ipw(df, **kw)  # warm-up (imports, caches)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        pp_ipw(df, **kw)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally: tracemalloc.stop()
    data = df.memory_usage(index=True).sum()
    assert peak < 0.25 * data, (peak, data)  # a float copy of the covariates alone would be 0.83x the data


def test_cases_of_input_give_the_same_release():
    "A DataFrame, a CausalData and arrays are the same rows: the same release for the same seeds."
    from privcausal.data import as_causal_data
    X, t, y = synth()
    df = pd.DataFrame(X, columns=list('abcd')).assign(t=t, y=y)
    kw = dict(epsilon=1.0, delta=1e-6, outcome_bound=4.0, covariate_bound=1.0, propensity_bounds=0.05, debias=True)
    runs = [pp_ipw(df, outcome='y', treatment='t', **kw, rng=np.random.default_rng(1)),
            pp_ipw(as_causal_data(df, outcome='y', treatment='t'), **kw, rng=np.random.default_rng(1)),
            pp_ipw(X=X, outcome=y, treatment=t, **kw, rng=np.random.default_rng(1))]
    for r in runs[1:]:
        assert r.estimate == runs[0].estimate and r.sums == runs[0].sums


def test_arm_normalisation_announced_once_per_call():
    "The PrivacyLeakWarning of normalisation='arm' comes once per pp_ipw or plan_ipw call (the release makes its plan twice), pointing at the caller."
    X, t, y = synth()
    arm = dict(estimator='ht', estimand='ATT', normalisation='arm')
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter('always')
        pp_ipw(X=X, outcome=y, treatment=t, **BASE, **arm, rng=np.random.default_rng(0))
        plan_ipw(600, 4, 0.5, 1e-6, 4.0, 0.05, **arm)
        plan_ipw(600, 4, 0.5, 1e-6, 4.0, 0.05, estimator='ht', estimand='ATT')  # the default unit: no warning
    leaks = [w for w in seen if issubclass(w.category, PrivacyLeakWarning)]
    assert len(leaks) == 2 and all("normalisation='arm'" in str(w.message) and w.filename == __file__ for w in leaks)


def test_part_size_refusal_names_what_set_the_split():
    "Audit 13: a part too small points to fit_fraction for a random split and to m (--fit-rows) for a declared one."
    with pytest.raises(ValueError, match='see fit_fraction'):
        plan_ipw(400, 2, 1.0, 1e-6, outcome_bound=1.0, propensity_bounds=0.05, fit_fraction=0.01)
    with pytest.raises(ValueError, match=r'see m, the declared rows .*--fit-rows') as e:
        plan_ipw(400, 2, 1.0, 1e-6, outcome_bound=1.0, propensity_bounds=0.05, m=6)
    assert 'fit_fraction' not in str(e.value)


def test_part_size_refusal_of_a_release_names_what_set_the_split():
    "Audit 14 F: pp_ipw passed the split's m to its plan, so a random split's refusal pointed to m / --fit-rows."
    X, t, y = synth()
    with pytest.raises(ValueError, match='see fit_fraction') as e:
        pp_ipw(X=X, outcome=y, treatment=t, **{**BASE, 'rng': Untouchable(), 'fit_fraction': 0.001})
    assert 'fit-rows' not in str(e.value)
    with pytest.raises(ValueError, match="see m, the declared rows of the fitting part"):
        pp_ipw(X=X, outcome=y, treatment=t, **{**BASE, 'rng': Untouchable(), 'split': ['fit'] * 5 + ['estimate'] * (len(y) - 5)})
