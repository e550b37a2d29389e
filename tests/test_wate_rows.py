"""WATE has one row path (issue 17 item 3): pandas frames and arrays become `PandasRows` at the entry, and the release,
the diagnostics and the non-private comparator run on the rows' operations, with no branch on the backend. The
in-memory and Dask results agree for the same seeds (tests/test_dask.py, `test_wate_on_dask_equals_in_memory`).
"""
import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privcausal.bayes_wate as bw
from privcausal.accounting import BudgetExceededError, PrivacyLedger
from privcausal.bayes_wate import (V_MODELS, nonprivate_effects, nonprivate_wate, simulate_wate, wate, wate_diagnostics,
                                   wate_estimands)
from privcausal.checks import ESTIMANDS

COVS = ['x1', 'x2', 'x3', 'x4']
BACKEND_NAMES = {'CausalRows', 'CausalData', 'Rows', 'PandasRows', 'DaskRows', 'DataFrame', 'Series'}


@pytest.fixture(scope='module')
def df():
    sim = simulate_wate(2000, eta=2, gamma=1, rng=np.random.default_rng(1))
    return pd.DataFrame(sim['X'], columns=COVS).assign(z=sim['z'].astype(int), y=sim['y'])


def test_no_backend_branch_in_the_module():
    "No `isinstance` on a row, frame or array type, and no `is_dask_frame`: the estimator never asks where the rows live."
    tree = ast.parse(Path(bw.__file__).read_text())
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call): continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, 'attr', None)
        assert name not in ('is_dask_frame', '_in_memory', 'as_rows'), f'line {node.lineno}: {name}'
        if name == 'isinstance':
            types = {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node.args[1]) if isinstance(n, (ast.Name, ast.Attribute))}
            assert not types & BACKEND_NAMES, f'line {node.lineno}: isinstance(..., {types & BACKEND_NAMES})'


def test_pandas_and_arrays_run_on_pandas_rows(df, monkeypatch):
    "The per-partition statistics of an in-memory release come from `partition_map` on `PandasRows`."
    seen, real = [], bw.partition_map
    def spy(rows, *a, **k):
        seen.append(type(rows).__name__)
        return real(rows, *a, **k)
    monkeypatch.setattr(bw, 'partition_map', spy)
    kw = dict(epsilon=1.0, n_partitions=20, draws=300)
    a = wate(df, outcome='y', treatment='z', rng=np.random.default_rng(3), **kw)
    b = wate(X=df[COVS].to_numpy(), outcome=df.y.to_numpy(), treatment=df.z.to_numpy(), rng=np.random.default_rng(3), **kw)
    wate_diagnostics(df, outcome='y', treatment='z', n_partitions=20, rng=np.random.default_rng(3))
    assert seen == ['PandasRows'] * 3
    assert (a.released_tau, a.released_variance, a.estimate) == (b.released_tau, b.released_variance, b.estimate)


def test_covariate_bounds_encode_on_the_frame(df):
    "Declared ranges: the release equals the release of the data encoded onto [-1, 1] beforehand (same partition, same noise)."
    bounds = {c: (-5.0, 5.0) for c in COVS}
    enc = df.assign(**{c: (df[c] / 5.0).clip(-1, 1) for c in COVS})
    kw = dict(outcome='y', treatment='z', epsilon=1.0, n_partitions=20, draws=300)
    a = wate(df, covariate_bounds=bounds, rng=np.random.default_rng(4), **kw)
    b = wate(enc, rng=np.random.default_rng(4), **kw)
    assert (a.released_tau, a.released_variance) == (b.released_tau, b.released_variance)
    assert df.x1.abs().max() < 5 and list(df.columns) == COVS + ['z', 'y']  # the caller's frame is untouched


@pytest.mark.parametrize('v_model', V_MODELS)
def test_comparator_on_rows_equals_the_stacked_arrays(df, v_model):
    "The comparator's Newton passes on the rows give the batched in-memory fits' numbers (`nonprivate_effects`)."
    ref = nonprivate_effects(df[COVS].to_numpy()[None], df.z.to_numpy(float)[None], df.y.to_numpy()[None], ESTIMANDS, v_model)
    for k in ESTIMANDS:
        got = nonprivate_wate(df, outcome='y', treatment='z', estimand=k, v_model=v_model)
        assert abs(got.estimate - ref[k][0][0]) <= 1e-8 and abs(got.variance - ref[k][1][0]) <= 1e-10


def test_values_are_checked_after_the_ledger_and_before_the_charge(df):
    "A bad value in a pandas frame: an unaffordable release is refused by the ledger first; an affordable one by the domain, uncharged."
    bad = df.assign(y=np.where(df.index == 7, 2.0, df.y))
    poor = PrivacyLedger(0.5)
    with pytest.raises(BudgetExceededError):
        wate(bad, outcome='y', treatment='z', epsilon=1.0, ledger=poor)
    rich = PrivacyLedger(5.0)
    with pytest.raises(ValueError, match='outcome must be binary'):
        wate_estimands(bad, outcome='y', treatment='z', epsilon=1.0, ledger=rich)
    assert poor.entries == rich.entries == ()


def test_no_covariates(df):
    "d = 0 (a Hájek difference of the arms' means) runs on the rows, from a frame and from arrays alike."
    kw = dict(epsilon=1.0, n_partitions=20, draws=300)
    a = wate(df[['z', 'y']], outcome='y', treatment='z', rng=np.random.default_rng(5), **kw)
    b = wate(X=np.zeros((len(df), 0)), outcome=df.y.to_numpy(), treatment=df.z.to_numpy(), rng=np.random.default_rng(5), **kw)
    assert a.plan.d == 0 and (a.released_tau, a.estimate) == (b.released_tau, b.estimate)
    raw = df.y[df.z == 1].mean() - df.y[df.z == 0].mean()
    assert abs(nonprivate_wate(df[['z', 'y']], outcome='y', treatment='z').estimate - raw) <= 1e-12
