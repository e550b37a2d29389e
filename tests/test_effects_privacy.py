"""Privacy properties of the effect estimators (G-formula, AIPW, the difference in means, `effect`) that can fail:
the sensitivity of every released statistic under adversarial neighbours, computed through the library's own
statistics; every stage of the whole release within its sensitivity, with earlier releases fixed by the adversary;
a refusal of out-of-domain data before any spend or noise; a method choice that neighbouring data sets share; and
research-mode releases on neighbours that differ only in their released numbers. The derivations and the
full-size searches are in nbs/08_proofs_effects.ipynb."""
import functools
import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from privcausal.accounting import PrivacyLedger
from privcausal.backend import as_rows
from privcausal.bounds import column_moments, effect_columns, encoding_from_bounds, moment_sensitivity
from privcausal.choice import choose_method, effect
from privcausal.doubly_robust import (_score_chunk, aipw, aipw_statistics, plan_aipw, score_bounds,
                                      score_sensitivities)
from privcausal.mechanisms import NoiseSource
from privcausal.outcome import (SQUARES_SENSITIVITY, ArmModels, arm_statistics, cross_sensitivity,
                                curvature_sensitivity, gradient_sensitivity, gram_sensitivity,
                                logistic_step_statistics, sym_vector)
from privcausal.regression import dim, gformula, gformula_statistics, plan_gformula

TOL = 1 + 1e-12


# ---------------------------------------------------------------------------------------------------- helpers
def names(d): return tuple(f'x{j + 1}' for j in range(d))


def unit_encoding(d):
    "Every column declared in [-1, 1]: the identity map, a row is its own (z, u)."
    return encoding_from_bounds(names(d), ((-1.0, 1.0),) * d, (-1.0, 1.0))


def frame(rows, d):
    Z = np.array([np.asarray(z, float).reshape(d) for z, _, _ in rows]).reshape(len(rows), d)
    return pd.DataFrame(Z, columns=list(names(d))).assign(t=[int(t) for _, t, _ in rows], y=[float(u) for _, _, u in rows])


def change(release, r0, r1, base=()):
    "{name: ||release(base + [r1]) - release(base + [r0])||}, through the library function `release(rows)`."
    a, b = release(list(base) + [r0]), release(list(base) + [r1])
    return {k: float(np.linalg.norm(np.subtract(b[k], a[k]))) for k in a}


def corner_rows(rng, n, d):
    "n rows (z, t, u): each coordinate at -1, +1 or uniform (a third each), either arm."
    r = rng.random((n, d + 1))
    v = np.where(r < 1 / 3, -1.0, np.where(r < 2 / 3, 1.0, rng.uniform(-1, 1, (n, d + 1))))
    return [(v[i, :d], int(rng.integers(2)), v[i, d]) for i in range(n)]


def arm_release(d):
    enc = unit_encoding(d)
    return lambda rows: arm_statistics(as_rows(frame(rows, d)), names(d), 't', 'y', enc).vectors()


def moments_release(d):
    enc = unit_encoding(d)
    return lambda rows: {'moments': column_moments(as_rows(frame(rows, d)), names(d), 'y', enc, True)}


def newton_release(d, w):
    enc = unit_encoding(d)
    def release(rows):
        g, H = logistic_step_statistics(as_rows(frame(rows, d)), names(d), 't', enc, np.asarray(w, float))
        return {'gradient': g, 'curvature': sym_vector(H)}
    return release


def models(d, u_mean, slopes):
    "Released outcome models with chosen outcome means and slopes (covariate means 0)."
    return ArmModels(np.ones(2), np.zeros((2, d)), np.asarray(u_mean, float), np.zeros((2, d, d)),
                     np.asarray(slopes, float).reshape(2, d), np.zeros(2), np.zeros(2), np.zeros((2, d, d)))


def score_release(d, estimand, bounds, m, w):
    "The per-arm score sums and sums of squares, through the chunk function `aipw_statistics` uses."
    enc = unit_encoding(d)
    def release(rows):
        S, Q = as_rows(frame(rows, d)).map_reduce(functools.partial(
            _score_chunk, covariates=names(d), treatment='t', outcome='y', encoding=enc, models=m,
            w=np.asarray(w, float), estimand=estimand, lo=bounds[0], hi=bounds[1]), list(names(d)) + ['t', 'y'])
        return {'score': S, 'score squares': Q}
    return release


class Recorder(NoiseSource):
    "Records each Gaussian draw (exact input, sigma); draws seeded noise, or replays given outputs."
    name = 'recorder (NOT PRIVATE)'

    def __init__(self, seed=0, scale=1.0, outputs=None):
        self.rng, self.scale, self.outputs, self.calls, self.out = np.random.default_rng(seed), scale, outputs, [], []

    def _gaussian(self, value, sigma):
        v = np.atleast_1d(np.array(value, dtype=float))
        self.calls.append((v, sigma))
        o = self.outputs[len(self.calls) - 1] if self.outputs is not None else v + self.scale * sigma * self.rng.normal(size=v.shape)
        self.out.append(o)
        return float(o[0]) if np.ndim(value) == 0 else o


# ----------------------------------------------------------------------------- sensitivities of the statistics
@pytest.mark.parametrize('d', [1, 2, 3])
def test_outcome_statistics_within_their_sensitivities(d):
    "Gram sqrt(2)(1+d), cross-products 2 sqrt(1+d), squares sqrt(2), moments 2 sqrt(d+1): never exceeded, attained."
    rng = np.random.default_rng(d)
    arm, mom = arm_release(d), moments_release(d)
    bound = {'gram': gram_sensitivity(d), 'cross': cross_sensitivity(d), 'squares': SQUARES_SENSITIVITY,
             'moments': moment_sensitivity(d + 1)}
    worst = dict.fromkeys(bound, 0.0)
    rows = corner_rows(rng, 120, d)
    for r0, r1 in zip(rows[::2], rows[1::2]):
        for k, v in {**change(arm, r0, r1), **change(mom, r0, r1)}.items(): worst[k] = max(worst[k], v)
    assert all(worst[k] <= bound[k] * TOL for k in bound), (worst, bound)
    one = np.ones(d)
    attained = {'gram': change(arm, (one, 1, 0.5), (one, 0, 0.5))['gram'],  # a corner switches arm
                'cross': change(arm, (one, 1, 1.0), (one, 1, -1.0))['cross'],  # a corner's outcome flips
                'squares': change(arm, (one, 0, 1.0), (-one, 1, -1.0))['squares'],
                'moments': change(mom, (-one, 0, -1.0), (one, 0, 1.0))['moments']}
    for k in bound: assert math.isclose(attained[k], bound[k], rel_tol=1e-12), (k, attained[k], bound[k])
    # the other rows cancel: the same pair beside two ordinary rows
    base = [(np.full(d, 0.3), 1, 0.1), (np.full(d, -0.2), 0, -0.4)]
    assert math.isclose(change(arm, (one, 1, 0.5), (one, 0, 0.5), base)['gram'], attained['gram'], rel_tol=1e-12)


@pytest.mark.parametrize('d', [1, 3])
def test_newton_statistics_within_their_sensitivities(d):
    "Gradient 2 sqrt(1+d) (a supremum, approached) and curvature sqrt(2)(1+d)/4 (attained for odd d), at any w."
    rng = np.random.default_rng(10 + d)
    worst = {'gradient': 0.0, 'curvature': 0.0}
    for _ in range(12):
        w = rng.normal(size=d + 1) * rng.choice([0.0, 1.0, 20.0])
        rel = newton_release(d, w)
        rows = corner_rows(rng, 16, d)
        for r0, r1 in zip(rows[::2], rows[1::2]):
            for k, v in change(rel, r0, r1).items(): worst[k] = max(worst[k], v)
    assert worst['gradient'] <= gradient_sensitivity(d) * TOL and worst['curvature'] <= curvature_sensitivity(d) * TOL
    eta, M = 1e-4, 1e6
    z1 = np.ones(d); z0 = z1.copy(); z0[0] -= 2 * eta
    near = change(newton_release(d, M * np.r_[-(1 - eta), 1.0, np.zeros(d - 1)]), (z0, 1, 0.0), (z1, 0, 0.0))['gradient']
    assert gradient_sensitivity(d) * (1 - 1e-3) <= near <= gradient_sensitivity(d) * TOL
    z2 = np.where(np.arange(d) < (d + 1) // 2, -1.0, 1.0)  # z.z' = -1: orthogonal rows with the constant
    curv = change(newton_release(d, np.zeros(d + 1)), (np.ones(d), 1, 0.0), (z2, 0, 0.0))['curvature']
    assert math.isclose(curv, curvature_sensitivity(d), rel_tol=1e-12)


@pytest.mark.parametrize('estimand', ['ATE', 'ATT', 'ATC'])
@pytest.mark.parametrize('bounds', [(0.05, 0.95), (0.2, 0.7)])
def test_score_sums_within_their_sensitivities(estimand, bounds):
    "Per-arm score sums 2 max(m0, m1), sums of squares sqrt(m0^4 + m1^4): random models and w, then the attaining pairs."
    s_sum, s_sq = score_sensitivities(estimand, *bounds)
    rng = np.random.default_rng(20)
    worst = {'score': 0.0, 'score squares': 0.0}
    for _ in range(10):
        m = models(1, rng.normal(size=2) * 2, rng.normal(size=2) * rng.choice([1.0, 50.0]))
        rel = score_release(1, estimand, bounds, m, rng.normal(size=2) * rng.choice([0.0, 3.0, 40.0]))
        rows = corner_rows(rng, 16, 1)
        for r0, r1 in zip(rows[::2], rows[1::2]):
            for k, v in change(rel, r0, r1).items(): worst[k] = max(worst[k], v)
    assert worst['score'] <= s_sum * TOL and worst['score squares'] <= s_sq * TOL, (worst, s_sum, s_sq)
    steep = models(1, [0.0, 0.0], [50.0, 50.0])  # predictions sign(z) in both arms
    att = {'score': 0.0, 'score squares': 0.0}
    grid = list(itertools.product((-1.0, 1.0), (0, 1), (-1.0, 1.0)))
    for w in ([0.0, 40.0], [0.0, -40.0], [40.0, 0.0], [-40.0, 0.0]):  # propensities at a clip edge
        rel = score_release(1, estimand, bounds, steep, w)
        out = {r: rel([([r[0]], r[1], r[2])]) for r in grid}
        for a, b in itertools.product(grid, repeat=2):
            for k in att: att[k] = max(att[k], float(np.linalg.norm(out[b][k] - out[a][k])))
    assert math.isclose(att['score'], s_sum, rel_tol=1e-9) and math.isclose(att['score squares'], s_sq, rel_tol=1e-9)
    m0, m1 = score_bounds(estimand, *bounds)
    assert math.isclose(s_sum, 2 * max(m0, m1)) and math.isclose(s_sq, math.hypot(m0 ** 2, m1 ** 2))


# ------------------------------------------------------------------------------ the whole release, stage by stage
COV, BOUNDS, YB = ['x1', 'x2', 'b'], {'x1': (-3.0, 3.0), 'x2': (0.0, 10.0)}, (0.0, 100.0)
LO, HI = (-3.0, 0.0, 0.0, 0.0), (3.0, 10.0, 1.0, 100.0)


def base_frame(n=12, treated=None, seed=0):
    g = np.random.default_rng(seed)
    df = pd.DataFrame({'x1': g.uniform(-3, 3, n), 'x2': g.uniform(0, 10, n), 'b': (g.random(n) < 0.5).astype(float),
                       't': np.arange(n) % 2, 'y': g.uniform(0, 100, n)})
    if treated is not None: df['t'] = (np.arange(n) < treated).astype(int)
    return df


def put(df, i, row=None, **cols):
    out = df.copy()
    if row is not None: out.loc[out.index[i], ['x1', 'x2', 'b', 'y']] = row
    for c, v in cols.items(): out.loc[out.index[i], c] = v
    return out


def neighbours():
    "Edge pairs (name, D, D'): corners with and without a change of arm, the same point, arms of size 1 -> 0 and 2 -> 1."
    b = put(base_frame(), 0, HI, t=1)
    one, two = base_frame(treated=1), base_frame(treated=2)
    return [('corners, same arm', b, put(b, 0, LO)), ('corners, arm switch', b, put(b, 0, LO, t=0)),
            ('same point, arm switch', b, put(b, 0, t=0)), ('same point, outcome at both bounds', b, put(b, 0, y=0.0)),
            ('treated 1 -> 0', put(one, 0, HI), put(one, 0, LO, t=0)), ('treated 2 -> 1', put(two, 0, HI), put(two, 0, HI, t=0)),
            ('controls 1 -> 0', put(base_frame(treated=11), 11, LO), put(base_frame(treated=11), 11, HI, t=1))]


def stage_lengths(plan):
    p = plan.d + 1
    k = plan.d + (plan.standardise and plan.outcome_clip_sd is not None)
    out = {'moments': 2 * k, 'gram': p * (p + 1), 'cross': 2 * p, 'squares': 2, 'score': 2, 'score squares': 2}
    out.update({s.name: (p if s.name.startswith('gradient') else p * (p + 1) // 2) for s in plan.stages if s.name[-1].isdigit()})
    return out


RUNS = [('gformula', {}), ('gformula', dict(standardise=False, outcome_clip_sd=None)), ('dim', {}),
        ('aipw', {}), ('aipw', dict(estimand='ATT', propensity_bounds=(0.01, 0.99))), ('aipw', dict(estimand='ATC', newton_steps=1))]


@pytest.mark.parametrize('method,opts', RUNS, ids=[f'{m}-{o}' for m, o in RUNS])
def test_every_stage_of_the_release_within_its_sensitivity(method, opts):
    """Earlier releases fixed by the adversary (replayed on D'): each stage's exact vector moves by at most its
    sensitivity, and each draw uses exactly its stage's sigma, on a vector of the stage's length, in the plan's order."""
    cov = [] if method == 'dim' else COV
    plan_fn, stats_fn = (plan_aipw, aipw_statistics) if method == 'aipw' else (plan_gformula, gformula_statistics)
    for name, d0, d1 in neighbours():
        for scale in (1.0, 30.0):  # 30: wild earlier releases, predictions and propensities at their clips
            for a, b in ((d0, d1), (d1, d0)):
                plan = plan_fn(len(a), 1.0, 1e-6, YB, covariates=cov, covariate_bounds={} if method == 'dim' else BOUNDS, **opts)
                n0 = Recorder(seed=len(name), scale=scale)
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore')
                    s0 = stats_fn(plan, effect_columns(a, 'y', 't', cov), n0)
                    n1 = Recorder(outputs=n0.out)
                    s1 = stats_fn(plan, effect_columns(b, 'y', 't', cov), n1)
                L, stages = stage_lengths(plan), list(plan.stages)
                drawn, sealed = stages[:len(n0.calls)], stages[len(n0.calls):]
                assert [len(v) for v, _ in n0.calls] == [L[s.name] for s in drawn]
                for s, (v0, sig0), (v1, sig1) in zip(drawn, n0.calls, n1.calls):
                    assert sig0 == sig1 == s.sigma
                    assert np.linalg.norm(v1 - v0) <= s.sensitivity * TOL, (name, s.name, np.linalg.norm(v1 - v0), s.sensitivity)
                at = 0
                sig = np.broadcast_to(np.asarray(s0.sigma, float), np.shape(s0.vector))
                for s in sealed:
                    part = slice(at, at + L[s.name]); at += L[s.name]
                    assert np.all(sig[part] == s.sigma)
                    moved = np.linalg.norm(np.asarray(s1.vector)[part] - np.asarray(s0.vector)[part])
                    assert moved <= s.sensitivity * TOL, (name, s.name, moved, s.sensitivity)
                assert at == len(s0.vector)


# ------------------------------------------------------------------------------- refusal before any spend
def good_frame(n=40, seed=1):
    g = np.random.default_rng(seed)
    return pd.DataFrame({'x1': g.uniform(-3, 3, n), 'x2': g.uniform(0, 10, n), 'b': (g.random(n) < 0.5).astype(float),
                         't': np.arange(n) % 2, 'y': g.uniform(0, 100, n)})


BAD = {'covariate above its bound': dict(x1=3.5), 'covariate below its bound': dict(x2=-0.1), 'dummy outside [0, 1]': dict(b=2.0),
       'outcome above its bound': dict(y=100.5), 'NaN covariate': dict(x2=np.nan), 'infinite outcome': dict(y=np.inf),
       'treatment not 0/1': dict(t=2)}
ESTIMATORS = {
    'gformula': lambda df, **kw: gformula(df, outcome='y', treatment='t', covariates=COV, covariate_bounds=BOUNDS, **kw),
    'aipw': lambda df, **kw: aipw(df, outcome='y', treatment='t', covariates=COV, covariate_bounds=BOUNDS, **kw),
    'dim': lambda df, **kw: dim(df, outcome='y', treatment='t', **kw),
    'effect': lambda df, **kw: effect(df, outcome='y', treatment='t', covariates=COV, covariate_bounds=BOUNDS, **kw),
    'effect (trial)': lambda df, **kw: effect(df, outcome='y', treatment='t', randomised=True, **kw)}


@pytest.mark.parametrize('estimator', list(ESTIMATORS))
@pytest.mark.parametrize('bad', list(BAD))
def test_out_of_domain_data_is_refused_before_any_spend(estimator, bad):
    "A value outside the declared domain is refused by name: the ledger is unchanged and no noise was drawn."
    run = ESTIMATORS[estimator]
    if estimator in ('dim', 'effect (trial)') and bad.startswith(('covariate', 'dummy', 'NaN covariate')):
        pytest.skip('no covariates: the difference in means reads the treatment and the outcome only')
    ledger = PrivacyLedger(10.0, 1e-3, 'study')
    kw = dict(outcome_bounds=YB, epsilon=1.0, delta=1e-6, ledger=ledger)
    run(good_frame(), rng=np.random.default_rng(0), **kw)  # a release first: the ledger holds a spend
    before = ledger.spent
    noise = Recorder()
    bad_frame = put(good_frame(), 7, **BAD[bad])
    with pytest.raises(ValueError) as e, warnings.catch_warnings():
        warnings.simplefilter('ignore')
        run(bad_frame, rng=noise, **kw)
    assert ledger.spent == before and not noise.calls, (ledger.spent, before, len(noise.calls))
    value = next(iter(BAD[bad].values()))
    if math.isfinite(value) and value not in (2, 2.0): assert str(value) not in str(e.value), str(e.value)  # never the offending value
    with warnings.catch_warnings():  # the same data clipped instead (the domain extended) is released
        warnings.simplefilter('ignore')
        if not bad.startswith(('NaN', 'infinite', 'treatment', 'dummy')):
            run(bad_frame, rng=np.random.default_rng(0), clip=True, **kw)
            assert ledger.spent[0] > before[0]


# ------------------------------------------------------------------ the choice of method uses public inputs only
CHOICES = [dict(epsilon=e, n=n, estimand=est, randomised=rand) for e, n, est, rand in
           itertools.product((0.3, 5.0), (12, 400), ('ATE', 'ATT'), (False, True))]


@pytest.mark.parametrize('setting', CHOICES, ids=[str(tuple(c.values())) for c in CHOICES])
def test_effect_chooses_the_same_method_on_neighbours(setting):
    "effect(method='auto') on neighbouring data sets: the same method and the same reason, equal to choose_method's."
    n = setting['n']
    pairs = [(name, a, b) for name, a, b in neighbours()] if n == 12 else [
        ('arm switch', put(good_frame(n), 0, HI, t=1), put(good_frame(n), 0, LO, t=0)),
        ('treated 1 -> 0', put(good_frame(n).assign(t=(np.arange(n) < 1).astype(int)), 0, HI), put(good_frame(n).assign(t=0), 0, LO))]
    public = dict(epsilon=setting['epsilon'], delta=1e-6, estimand=setting['estimand'], randomised=setting['randomised'])
    expected = choose_method(n, outcome_bounds=YB, covariates=COV, covariate_bounds=BOUNDS, **public)
    for name, a, b in pairs:
        got = [effect(df, outcome='y', treatment='t', covariates=COV, covariate_bounds=BOUNDS, outcome_bounds=YB,
                      rng=np.random.default_rng(1), **public) for df in (a, b)]
        assert got[0].choice == got[1].choice == expected.reason, name
        assert got[0].method == got[1].method == {'gformula': 'G-formula', 'aipw': 'AIPW', 'dim': 'Difference in means'}[expected.method]
        assert got[0].plan.d == got[1].plan.d == (0 if expected.method == 'dim' else len(COV))


# ------------------------------------------------- research mode: neighbours differ in the released numbers only
def structure(v):
    "The shape of a to_dict(): keys and kinds, recursively, not values."
    if isinstance(v, dict): return {k: structure(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)): return [structure(x) for x in v]
    return type(v).__name__ if not isinstance(v, (int, float)) or isinstance(v, bool) else 'number'


RELEASES = {
    'gformula': lambda df, **kw: gformula(df, outcome='y', treatment='t', covariates=COV, covariate_bounds=BOUNDS, **kw),
    'gformula ATT, no standardisation': lambda df, **kw: gformula(df, outcome='y', treatment='t', covariates=COV, covariate_bounds=BOUNDS,
                                                                 estimand='ATT', standardise=False, outcome_clip_sd=None, **kw),
    'aipw ATE': lambda df, **kw: aipw(df, outcome='y', treatment='t', covariates=COV, covariate_bounds=BOUNDS, **kw),
    'aipw ATT': lambda df, **kw: aipw(df, outcome='y', treatment='t', covariates=COV, covariate_bounds=BOUNDS, estimand='ATT', **kw),
    'aipw ATC': lambda df, **kw: aipw(df, outcome='y', treatment='t', covariates=COV, covariate_bounds=BOUNDS, estimand='ATC', **kw),
    'dim': lambda df, **kw: dim(df, outcome='y', treatment='t', **kw),
    'effect auto': lambda df, **kw: effect(df, outcome='y', treatment='t', covariates=COV, covariate_bounds=BOUNDS, **kw),
    'effect trial': lambda df, **kw: effect(df, outcome='y', treatment='t', covariates=COV, covariate_bounds=BOUNDS, randomised=True, **kw)}


@pytest.mark.parametrize('release', list(RELEASES))
def test_neighbours_differ_only_in_released_numbers(release):
    "Same seed on D and D': the same keys, settings, privacy record, interval text, warnings and dict structure."
    run = RELEASES[release]
    for name, a, b in neighbours():
        out, said = [], []
        for df in (a, b):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter('always')
                out.append(run(df, outcome_bounds=YB, epsilon=1.0, delta=1e-6, rng=np.random.default_rng(7)))
            said.append(sorted(str(w.message) for w in caught))
        r0, r1 = out
        assert r0.released().keys() == r1.released().keys(), name
        assert r0.settings() == r1.settings() and r0.privacy == r1.privacy, name
        assert (r0.interval_covers, r0.choice, r0.method, r0.estimand) == (r1.interval_covers, r1.choice, r1.method, r1.estimand)
        assert structure(r0.to_dict()) == structure(r1.to_dict()), name
        assert said[0] == said[1], (name, said)
        assert r0.released() != r1.released(), name  # the numbers do move: the comparison above is not vacuous
