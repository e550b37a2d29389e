"""The edge-seeking privacy audit (privcausal.audit_suite): its neighbours reach their edges, its runner flags what it
must, every case of the full suite releases on both sides or on neither, and the negative controls (the earlier IQR
bins, an injected data-dependent refusal) are caught. The audit with many draws runs in nbs/08_audit.ipynb."""
import contextlib
import dataclasses
import math
import warnings

import numpy as np
import pytest

from privcausal import anm, ipw, mechanisms, propensity, regression
from privcausal import bayes_wate as wate
from privcausal import audit_suite as A

# (function, pair) cases that still fail on the current code (issue #8); the same list as nbs/08_audit.ipynb
KNOWN_OPEN = set()


@pytest.fixture(scope='module')
def cases():
    return A.suite_cases()


@contextlib.contextmanager
def old_iqr_bins():
    "The earlier bins: k = floor(ln v), B2 = [e^(k-1/2), e^(k+1/2)), which need not contain v."
    def bins(value):
        k = math.floor(math.log(value))
        return (math.exp(k), math.exp(k + 1)), (math.exp(k - 0.5), math.exp(k + 0.5))
    saved = anm.iqr_bins
    anm.iqr_bins = bins
    try: yield
    finally: anm.iqr_bins = saved


# ---------- the neighbours
def test_every_pair_is_a_replace_one_neighbour(cases):
    for c in cases:
        A.check_neighbours(c.pair, 1.0, 'L2' if 'gaussian' in c.function else 'L1')  # raises if not neighbours


def test_iqr_pairs_straddle_every_edge_of_both_grids():
    edges = dict(A.iqr_edges())
    assert any(abs(math.log(e) - round(math.log(e))) < 1e-12 for e in edges.values())  # integer exponents: first grid
    assert any(abs(math.log(e) % 1 - 0.5) < 1e-12 for e in edges.values())  # half-integer: the second grid
    for p, (label, edge) in zip(A.iqr_edge_pairs(), A.iqr_edges()):
        assert anm.iqr(p.d0['a']) < edge <= anm.iqr(p.d1['a'])
    for p, (label, edge) in zip(A.anm_iqr_pairs(), A.iqr_edges(range(-4, 2))):
        te = p.d0['split'] == 'test'
        assert anm.iqr(p.d0['x'][te]) < edge <= anm.iqr(p.d1['x'][te]) and p.part == 'test'


def test_training_pairs_straddle_with_the_residual_iqr():
    for p, (label, edge) in zip(A.anm_train_iqr_pairs(), A.iqr_edges((-2, -1, 0))):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            r = [anm.iqr(anm.anm_fit(d['x'], d['y'], 1.0, 1.0, lam=1.0, split=d['split']).r_y) for d in (p.d0, p.d1)]
        assert min(r) < edge <= max(r) and p.part == 'train'


def test_arm_and_degenerate_edges_are_reached():
    ip = {p.name: p for p in A.ipw_pairs()}
    treated = lambda d, part: int(d['treatment'][d['split'] if part == 'fit' else ~d['split']].sum())
    assert (treated(ip['D_n: treated 1 -> 0'].d1, 'estimate'), treated(ip['D_m: treated 1 -> 0'].d1, 'fit')) == (0, 0)
    assert int(ip['whole: treated 1 -> 0'].d1['treatment'].sum()) == 0
    assert np.abs(ip['D_n: y = +C_y -> -C_y'].d1['outcome']).max() == 1.0  # at the bound
    wp = {p.name: p for p in A.wate_pairs()}
    assert [int(wp[k].d1['treatment'].sum()) for k in ('whole: treated 2 -> 1', 'whole: treated 1 -> 0')] == [1, 0]
    assert np.ptp(wp['constant X except one row'].d1['X']) == 0
    ap = {p.name: p for p in A.anm_pairs()}
    assert np.ptp(ap['x constant except one test record'].d1['x']) == 0
    with pytest.raises(ValueError):  # the check can fail: two records changed
        A.check_neighbours(A.NeighbourPair('two', {'a': np.zeros(4)}, {'a': np.r_[1.0, 1.0, 0, 0]}, ''))
    ep = {p.name: p for p in A.effect_pairs() + A.effect_standardise_pairs() + A.effect_clip_pairs()}
    arm = lambda d, a: int((d['treatment'] == a).sum())
    assert (arm(ep['treated 1 -> 0'].d1, 1), arm(ep['treated 2 -> 1'].d1, 1), arm(ep['controls 1 -> 0'].d1, 0)) == (0, 1, 0)
    lo, hi = np.array([-3.0, 0.0, 0.0]), np.array([3.0, 10.0, 1.0])
    sw = ep['corners, arm switch']
    assert np.array_equal(sw.d0['X'][0], hi) and np.array_equal(sw.d1['X'][0], lo) and not sw.same_arms  # corners, switching arm
    assert (sw.d0['outcome'][0], sw.d1['outcome'][0]) == (100.0, 0.0)  # the outcome at its bounds
    same = ep['same point, arm switch']
    assert np.array_equal(same.d0['X'], same.d1['X']) and same.d0['treatment'][0] != same.d1['treatment'][0]
    assert np.ptp(ep['constant covariates except one row'].d1['X'], axis=0).max() == 0
    beyond = ep['beyond the bounds (clipped)'].d1
    assert (beyond['X'][0] > hi).any() and beyond['outcome'][0] > 100  # only audited with clip=True


# ---------- coverage of the public API
def test_every_release_function_and_option_is_covered(cases):
    funcs = {c.function for c in cases}
    assert funcs == {'mechanisms.laplace_mechanism', 'mechanisms.gaussian_mechanism', 'mechanisms.propose_test_release',
                     'anm.iqr_ptr', 'propensity.private_propensity', 'ipw.pp_ipw', 'wate.wate', 'wate.wate_estimands',
                     'anm.anm_direction', 'regression.gformula', 'regression.dim', 'doubly_robust.aipw', 'choice.effect'}
    opts = lambda f: [c.options for c in cases if c.function == f]
    an = opts('anm.anm_direction')
    assert {(o['score'], o['privacy']) for o in an} >= {(s, p) for s in ('spearman', 'kendall', 'hsic', 'iqr') for p in ('test', 'train')} | {('hsic', 'both')}
    assert {o.get('iqr_accounting') for o in an if o['score'] == 'iqr' and o['privacy'] == 'test'} >= {'record', 'paper', 'advanced'}
    assert any(o.get('clip') for o in an)  # clipping requested
    ip = opts('ipw.pp_ipw')
    assert {o.get('estimand', 'ATE') for o in ip} == set(ipw.ESTIMANDS)
    assert any(o.get('debias') for o in ip)  # the curvature release of the debiasing step
    assert {c.pair.name for c in cases if c.function == 'ipw.pp_ipw' and c.options.get('debias')} >= {A.IPW_CURVATURE_PAIR}
    sets = A.ipw_option_sets()
    used = sets[sets.status == 'audited'].options.tolist() + sets[sets.status.str.startswith('same as')].options.tolist()
    assert sets[sets.status == 'audited'].label.tolist() == list(dict.fromkeys(A._fmt_options(o) for o in ip))
    for axis in ('estimator', 'normalisation'):  # whatever the current pp_ipw offers, audited or shown to be the same
        if axis in A._params(ipw.pp_ipw):
            offered = set(getattr(ipw, {'estimator': 'ESTIMATORS', 'normalisation': 'NORMALISATIONS'}[axis]))
            assert {o[axis] for o in used if axis in o} == offered, axis
    assert sets.status.str.startswith('invalid').sum() < len(sets) / 2  # most candidate option sets are real
    assert {o.get('calibration') for o in ip} >= {'classical'}
    assert {o.get('calibration') for o in opts('propensity.private_propensity')} >= {'analytic', 'classical'}
    assert any(o.get('clip_outcomes') for o in ip) and any(o.get('clip_rows') for o in ip)
    assert {o.get('calibration') for o in opts('mechanisms.gaussian_mechanism')} == {'analytic', 'classical'}
    wo = opts('wate.wate')
    assert {o.get('estimand', 'ATE') for o in wo} == set(wate.ESTIMANDS) and {o.get('variance', 'paper') for o in wo} == {'paper', 'mean'}
    assert {o.get('v_model', 'per_arm_logit') for o in wo} == set(wate.V_MODELS)
    go = opts('regression.gformula')
    assert {o.get('estimand', 'ATE') for o in go} == {'ATE', 'ATT'}
    assert {(o.get('standardise', True), o.get('outcome_clip_sd', 5.0) is not None) for o in go} >= {(True, True), (True, False), (False, False)}
    assert {o.get('estimand', 'ATE') for o in opts('doubly_robust.aipw')} == {'ATE', 'ATT', 'ATC'}
    assert {o.get('outcome_clip_sd', 5.0) is None for o in opts('regression.dim')} == {True, False}
    assert {o.get('randomised', False) for o in opts('choice.effect')} == {True, False}
    for f in ('regression.gformula', 'regression.dim', 'doubly_robust.aipw', 'choice.effect'):
        assert any(o.get('clip') for o in opts(f))  # clipping requested, on the row beyond the bounds
        pairs = {c.pair.name for c in cases if c.function == f}
        assert pairs >= {'corners, arm switch', 'treated 1 -> 0', 'controls 1 -> 0', 'standardisation clip flips',
                         'beyond the bounds (clipped)'}, (f, pairs)
        assert all(c.max_samples == A.EFFECT_MAX_SAMPLES for c in cases if c.function == f)
        assert all((c.epsilon, c.delta) == (1.0, 1e-5) for c in cases if c.function == f)  # the claim the release states
    ci = A.suite_cases('ci')
    assert {c.function for c in ci} == funcs and len(ci) < len(cases)


# ---------- the runner
def test_runner_verdicts_on_mechanisms_we_understand():
    lp = A.value_pairs('L1')[0]
    lap = lambda b: (lambda d, nz: mechanisms.laplace_mechanism(d['value'], b, 1.0, rng=nz))
    good, loose = (A.AuditCase('laplace', {}, lp, lap(b), 1.0) for b in (1.0, 0.25))
    rows = A.run_suite([good, loose], n_samples=3000, alpha=0.05)
    assert list(rows.verdict) == ['ok', 'violation: epsilon']
    assert 0.5 < rows.eps_lower_bound[0] <= 1.0 and rows.eps_lower_bound[1] > 1.5  # tight, and the loose one 4x off


def test_refusal_of_an_option_on_both_sides_is_not_a_violation():
    rows = A.run_suite([c for c in A.mechanism_cases() if c.options.get('threshold', '').startswith('0')], n_samples=200)
    assert set(rows.verdict) <= {'no release', 'ok'}  # refused as an unsafe option, or (older code) released safely


# ---------- (a) release on both or neither, on every case of the full suite
def test_release_on_both_or_neither_on_every_case(cases):
    rows = A.run_suite(cases, n_samples=20, bounds=False)
    assert (rows.verdict != 'audit error').all(), rows[rows.verdict == 'audit error'].error.tolist()
    bad = rows[rows.verdict.isin(['violation: refusal', 'unexpected refusal'])]
    found = set(zip(bad.function, bad.pair))
    assert found <= KNOWN_OPEN, sorted(found - KNOWN_OPEN)


# ---------- negative controls: the suite must catch them
def _iqr_controls():
    names = {('anm.iqr_ptr', 'IQR across e^1'), ('anm.iqr_ptr', 'issue #8 reproduction'),
             ('anm.anm_direction', 'test x IQR across e^0'), ('anm.anm_direction', 'residual IQR across e^0')}
    cs = A.iqr_cases(exponents=(2,)) + A.anm_cases(test_exponents=(0,), train_exponents=(0,))
    out = [c for c in cs if (c.function, c.pair.name) in names and c.options.get('iqr_accounting', 'record') == 'record']
    assert len(out) == 4
    return out


def test_old_iqr_bins_are_caught():
    with old_iqr_bins():
        rows = A.run_suite(_iqr_controls(), n_samples=1000)
    assert rows.verdict.str.startswith('violation').all(), rows[['function', 'pair', 'eps_lower_bound', 'shape_lb', 'verdict']]


def test_current_iqr_bins_hold_their_claim_on_the_same_cases():
    rows = A.run_suite(_iqr_controls(), n_samples=1000)
    assert (rows.verdict == 'ok').all(), rows[['function', 'pair', 'eps_lower_bound', 'shape_lb', 'verdict']]


# The injected refusal (an exact and a silent one) and the under-noised G-formula are checked where they are shown,
# in nbs/08_audit.ipynb (its tests run with every notebook); they were run here a second time (66 s of CI).


def test_data_dependent_message_is_caught():
    "A release that announces clipping only when something is clipped, with the count, leaks through its message."
    base = next(c for c in A.propensity_cases() if c.options.get('clip_rows'))
    def run(d, nz):
        k = int((np.linalg.norm(d['X'], axis=1) > 1).sum())
        if k: warnings.warn(f'clipped {k} rows')
        return base.run(d, nz)
    rows = A.run_suite([base, dataclasses.replace(base, run=run)], n_samples=500)
    assert list(rows.verdict) == ['ok', 'violation: message'] and rows.message_lb[1] > 3
