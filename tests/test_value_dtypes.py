"""Inputs whose dtype their values decide (a list, an object array, a string or object column) are converted only after
the ledger check (review5 F3, review6 N6): against an unaffordable ledger every one gets the ledger's refusal; against an
affordable one a clean domain refusal (naming the argument, never the value) and nothing is charged."""
import warnings

import numpy as np
import pandas as pd
import pytest

from privcausal.accounting import BudgetExceededError, PrivacyLedger
from privcausal.anm import anm_direction
from privcausal.bayes_wate import wate, wate_estimands
from privcausal.choice import effect
from privcausal.doubly_robust import aipw
from privcausal.ipw import pp_ipw
from privcausal.propensity import private_propensity
from privcausal.regression import dim, gformula

N = 120
_r = np.random.default_rng(0)
X = _r.uniform(-.5, .5, (N, 2))
T = _r.integers(0, 2, N)
Y = _r.uniform(-1, 1, N)
YB = (Y > 0).astype(int)
HUGE = 2 ** 2000
SECRET = 'secret-value'


def _with(a, value):
    "`a` as objects, its last entry (its last row's first entry) replaced by `value`."
    a = np.array(a, dtype=object)
    a[(-1, 0) if a.ndim == 2 else -1] = value
    return a


def _list_with(a, value):
    out = a.tolist()
    if isinstance(out[-1], list): out[-1][0] = value
    else: out[-1] = value
    return out


# (name, X, treatment, outcome): each one is bad in one place, by a value that decides the dtype
ARRAY_CASES = [
    ('X object array, a string', _with(X, SECRET), T, Y),
    ('X list, a None', _list_with(X, None), T, Y),
    ('X object array, 2**2000', _with(X, HUGE), T, Y),
    ('X list, 2**2000', _list_with(X, HUGE), T, Y),
    ('X DataFrame, an object column with a string', pd.DataFrame(_with(X, SECRET), columns=['a', 'b']), T, Y),
    ('X DataFrame, a string column', pd.DataFrame({'a': X[:, 0], 'b': np.where(T == 1, SECRET, '0.1')}), T, Y),
    ('treatment list of strings', X, [SECRET if v else '0' for v in T], Y),
    ('treatment list, a None', X, _list_with(T, None), Y),
    ('treatment string array', X, np.where(T == 1, SECRET, '0'), Y),
    ('outcome list, a string', X, T, _list_with(Y, SECRET)),
    ('outcome object array, 2**2000', X, T, _with(Y, HUGE)),
]


def _entry_points(name, Xa, t, y):
    "The array entry points that read `Xa`, `t` and `y` (private_propensity has no outcome)."
    ybin = y if name.startswith('outcome') else YB
    names = dict(covariates=['x0', 'x1'])  # a list X needs its columns named (its width is not read from its values)
    calls = {
        'pp_ipw': lambda L: pp_ipw(X=Xa, **names, treatment=t, outcome=y, ledger=L, epsilon=1.0, delta=1e-6, propensity_bounds=0.05,
                                   outcome_bound=1.0, covariate_bound=1.0, rng=np.random.default_rng(1), split_rng=2),
        'pp_ipw n=N': lambda L: pp_ipw(X=Xa, **names, treatment=t, outcome=y, ledger=L, epsilon=1.0, delta=1e-6, n=N, propensity_bounds=0.05,
                                       outcome_bound=1.0, covariate_bound=1.0, rng=np.random.default_rng(1), split_rng=2),
        'wate': lambda L: wate(X=Xa, **names, treatment=t, outcome=ybin, epsilon=1, ledger=L, rng=np.random.default_rng(1)),
        'wate_estimands': lambda L: wate_estimands(X=Xa, **names, treatment=t, outcome=ybin, epsilon=1, ledger=L, rng=np.random.default_rng(1)),
    }
    if not name.startswith('outcome'):
        calls['private_propensity'] = lambda L: private_propensity(Xa, t, **names, epsilon=1, delta=1e-6, ledger=L, rng=np.random.default_rng(1))
    return calls


def _array_calls():
    return [pytest.param(fn, id=f'{entry}: {name}') for name, Xa, t, y in ARRAY_CASES
            for entry, fn in _entry_points(name, Xa, t, y).items()]


def _frame(column, value):
    "A frame of numbers whose column `column` holds `value` in its last row (an object column)."
    df = pd.DataFrame({'a': X[:, 0], 'b': X[:, 1], 't': T, 'y': Y})
    df[column] = _with(df[column].to_numpy(), value)
    return df


FRAME_KW = dict(outcome='y', treatment='t', covariates=['a', 'b'], outcome_bounds=(-1, 1),
                covariate_bounds={'a': (-1, 1), 'b': (-1, 1)}, epsilon=1, delta=1e-6)


def _frame_calls():
    out = []
    for column, value in (('a', SECRET), ('b', None), ('a', HUGE), ('t', SECRET), ('y', SECRET), ('y', HUGE)):
        df = _frame(column, value)
        calls = {'effect': lambda L, df=df: effect(df, **FRAME_KW, ledger=L, rng=np.random.default_rng(1)),
                 'gformula': lambda L, df=df: gformula(df, **FRAME_KW, ledger=L, rng=np.random.default_rng(1)),
                 'aipw': lambda L, df=df: aipw(df, **FRAME_KW, ledger=L, rng=np.random.default_rng(1)),
                 'effect(method=ipw)': lambda L, df=df: effect(df, **FRAME_KW, method='ipw', ledger=L, rng=np.random.default_rng(1)),
                 'pp_ipw': lambda L, df=df: pp_ipw(df, outcome='y', treatment='t', covariates=['a', 'b'], ledger=L, epsilon=1.0,
                                                   delta=1e-6, propensity_bounds=0.05, outcome_bound=1.0, covariate_bound=1.0,
                                                   rng=np.random.default_rng(1), split_rng=2)}
        if column in ('t', 'y'):
            calls['dim'] = lambda L, df=df: dim(df, outcome='y', treatment='t', outcome_bounds=(-1, 1), epsilon=1, delta=1e-6,
                                                ledger=L, rng=np.random.default_rng(1))
        if column != 'y':
            calls['private_propensity (frame)'] = lambda L, df=df: private_propensity(
                df[['a', 'b', 't']], 't', epsilon=1, delta=1e-6, ledger=L, rng=np.random.default_rng(1))
        out += [pytest.param(fn, id=f'{entry}: column {column} holds {type(value).__name__}') for entry, fn in calls.items()]
    return out


def _anm_calls():
    xa = _r.uniform(-1, 1, N)
    ya = np.tanh(xa) + .1 * _r.normal(size=N)
    cases = {'x list, a None': (_list_with(xa, None), ya), 'x list, a string': (_list_with(xa, SECRET), ya),
             'y list, a None': (xa, _list_with(ya, None)), 'y list, a string': (xa, _list_with(ya, SECRET)),
             'x object array, 2**2000': (_with(xa, HUGE), ya)}
    return [pytest.param(lambda L, x=x, y=y: anm_direction(x, y, epsilon=1, delta=1e-6, x_bounds=(-1, 1), y_bounds=(-2, 2),
                                                          ledger=L, rng=np.random.default_rng(1)), id=f'anm_direction: {name}')
            for name, (x, y) in cases.items()]


def _wate_frame_calls():
    "WATE on a frame with a binary outcome, directly and through `effect(method='wate')`, with declared covariate bounds."
    out = []
    for column, value in (('a', SECRET), ('t', None), ('y', HUGE)):
        df = pd.DataFrame({'a': X[:, 0], 'b': X[:, 1], 't': T, 'y': YB})
        df[column] = _with(df[column].to_numpy(), value)
        kw = dict(outcome='y', treatment='t', covariates=['a', 'b'], covariate_bounds={'a': (-1, 1), 'b': (-1, 1)}, epsilon=1)
        calls = {'wate (frame)': lambda L, df=df: wate(df, **kw, ledger=L, rng=np.random.default_rng(1)),
                 'effect(method=wate)': lambda L, df=df: effect(df, **kw, outcome_bounds=(0, 1), outcome_type='binary', method='wate',
                                                                delta=1e-6, ledger=L, rng=np.random.default_rng(1))}
        out += [pytest.param(fn, id=f'{entry}: column {column} holds {type(value).__name__}') for entry, fn in calls.items()]
    return out


CALLS = _array_calls() + _frame_calls() + _wate_frame_calls() + _anm_calls()


@pytest.mark.parametrize('call', CALLS)
def test_unaffordable_ledger_refuses_first(call):
    ledger = PrivacyLedger(0.01, 1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with pytest.raises(BudgetExceededError):
            call(ledger)
    assert ledger.spent == (0.0, 0.0)


@pytest.mark.parametrize('call', CALLS)
def test_affordable_ledger_gets_a_clean_domain_refusal_and_nothing_is_charged(call):
    ledger = PrivacyLedger(100, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with pytest.raises((TypeError, ValueError)) as info:
            call(ledger)
    assert ledger.spent == (0.0, 0.0) and ledger.entries == ()
    msg = str(info.value)
    assert not isinstance(info.value, OverflowError), msg
    assert SECRET not in msg and str(HUGE)[:30] not in msg, msg  # never the value
    assert any(a in msg for a in ('X', 'treatment', 'outcome', 'covariates', 'x ', 'y ', 'data')), msg  # names the argument


def test_valid_lists_and_object_arrays_release_the_same_numbers():
    "A list or an object array of numbers is converted after the ledger check to the very floats of the array."
    kw = dict(epsilon=1.0, delta=1e-6, propensity_bounds=0.05, outcome_bound=1.0, covariate_bound=1.0)
    a = pp_ipw(X=X, treatment=T, outcome=Y, rng=np.random.default_rng(1), split_rng=2, **kw)
    b = pp_ipw(X=X.tolist(), covariates=['x0', 'x1'], treatment=T.tolist(), outcome=Y.astype(object), rng=np.random.default_rng(1), split_rng=2, **kw)
    assert a.released() == b.released()
    p = private_propensity(X, T, epsilon=1, delta=1e-6, rng=np.random.default_rng(1))
    q = private_propensity(X.astype(object), T.tolist(), epsilon=1, delta=1e-6, rng=np.random.default_rng(1))
    assert np.array_equal(p.weights, q.weights)
    u = wate(X=X, treatment=T, outcome=YB, epsilon=1, rng=np.random.default_rng(1), draws=2000)
    v = wate(X=X.tolist(), covariates=['x0', 'x1'], treatment=list(T), outcome=YB.astype(object), epsilon=1, rng=np.random.default_rng(1), draws=2000)
    assert u.released() == v.released()
    df = pd.DataFrame({'a': X[:, 0], 'b': X[:, 1], 't': T, 'y': Y})
    e1 = effect(df, **FRAME_KW, rng=np.random.default_rng(1))
    e2 = effect(df.astype(object), **FRAME_KW, rng=np.random.default_rng(1))  # object columns of numbers
    assert e1.released() == e2.released()


RAGGED = [('a short row', [0.1]), ('a long row', [0.1, 0.2, 0.3]), ('a string row', SECRET), ('a row of pairs', [(0, 1), (1, 0)])]


@pytest.mark.parametrize('what, row', RAGGED)
def test_a_lists_shape_is_its_length_and_declared_width(what, row):
    "Reviews 8 F2 / A1: the nesting of a list is never read before the ledger check: a malformed last row (or a treatment of pairs) gets the ledger's refusal, and with budget a clean refusal after it, nothing charged; a list X without names is refused from public inputs."
    Xl = X.tolist(); Xl[-1] = row
    tl = [(v, 1 - v) for v in T.tolist()]  # a treatment whose every cell is a pair
    for Xa, t in ((Xl, T), (X, tl)):
        calls = _entry_points('ragged', Xa, t, Y)
        for name, fn in calls.items():
            L = PrivacyLedger(0.01, 1e-12)
            with pytest.raises(BudgetExceededError): fn(L)
            L = PrivacyLedger(100, 0.5)
            with pytest.raises((TypeError, ValueError)) as e: fn(L)
            assert 'must be numeric' in str(e.value) and SECRET not in str(e.value) and L.spent == (0, 0), (name, e.value)
    with pytest.raises(ValueError, match='X is a list: name its columns'):
        pp_ipw(X=X.tolist(), treatment=T, outcome=Y, ledger=PrivacyLedger(0.01, 1e-12), epsilon=1.0, delta=1e-6,
               propensity_bounds=0.05, outcome_bound=1.0, covariate_bound=1.0)
