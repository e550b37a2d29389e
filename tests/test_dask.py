"""The Dask deployment paths of privcausal.backend: the library without Dask installed, a client connected by scheduler
address (as to a real cluster), Dask without `distributed`, Parquet files read by the workers, a worker process
killed mid-computation, and the scaling benchmark in its smoke mode.
"""
import functools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from privcausal.accounting import PrivacyCost, PrivacyLedger
from privcausal.backend import arm_sums, as_rows, fit_logistic_rows, release_from_statistics, split_mask
from privcausal.propensity import fit_logistic_erm

ROOT = Path(__file__).resolve().parents[1]

BLOCK_DASK = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('dask', 'distributed'): raise ImportError('dask is not installed (blocked)')
sys.meta_path.insert(0, _Block())
"""


def test_library_works_without_dask():
    "privcausal.backend (and the estimators) import and run on pandas when Dask cannot be imported."
    code = BLOCK_DASK + """
import numpy as np, pandas as pd
import privcausal.backend as b, privcausal.propensity, privcausal.ipw, privcausal.wate
rng = np.random.default_rng(0)
df = pd.DataFrame(rng.normal(size=(500, 2)) * 0.15, columns=['a', 'b']).assign(t=rng.integers(0, 2, 500))
fit = b.fit_logistic_rows(df, covariates=['a', 'b'], treatment='t', lam=0.1)
ref = privcausal.propensity.fit_logistic_erm(df[['a', 'b']].to_numpy(), df['t'].to_numpy(), 0.1)
assert np.abs(fit.weights - ref.weights).max() < 1e-8
try: b.as_rows(object())
except TypeError as e: assert 'pandas or Dask DataFrame' in str(e)
assert not any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules), 'dask was imported'
print('ok')
"""
    res = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0 and res.stdout.strip() == 'ok', res.stderr[-2000:]


def _frame(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * 0.15  # rows well inside the unit ball
    t = rng.binomial(1, expit(X @ [1.0, -1.0, 0.5]))
    return pd.DataFrame(X, columns=['a', 'b', 'c']).assign(t=t, y=X[:, 0] + t + rng.normal(size=n))


def test_client_by_scheduler_address(tmp_path):
    "Connected by address, as to a real cluster; the data read by the workers from Parquet files (a glob)."
    dd = pytest.importorskip('dask.dataframe')
    distributed = pytest.importorskip('distributed')
    pdf = _frame(3000)
    for i in range(3): pdf.iloc[i * 1000:(i + 1) * 1000].to_parquet(tmp_path / f'part-{i}.parquet')
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster.scheduler_address) as client:  # a string address, as Client("tcp://scheduler:8786")
            assert client.scheduler.address == cluster.scheduler_address
            ddf = dd.read_parquet(str(tmp_path / 'part-*.parquet'))
            rows = as_rows(ddf, columns=['a', 'b', 'c', 't'], n=3000)  # a projection, then a fixed partitioning
            assert rows.n == 3000 and rows.columns == ['a', 'b', 'c', 't']
            select = functools.partial(split_mask, n=3000, m=1200, key=3)
            fit = fit_logistic_rows(rows, covariates=['a', 'b', 'c'], treatment='t', lam=0.1, select=select)
            sel = select(np.arange(3000))
            ref = fit_logistic_erm(pdf[['a', 'b', 'c']].to_numpy()[sel], pdf['t'].to_numpy()[sel], 0.1)
            np.testing.assert_allclose(fit.weights, ref.weights, atol=1e-8, rtol=0)
            # persisted on the workers: the same numbers
            rows_p = as_rows(dd.read_parquet(str(tmp_path / 'part-*.parquet')).persist())
            kw = dict(outcome='y', treatment='t', covariates=['a', 'b', 'c'], weights=[0.5, -0.5, 0.2], bounds=(0.1, 0.9))
            np.testing.assert_allclose(arm_sums(rows_p, **kw).hy, arm_sums(pdf, **kw).hy, rtol=1e-12)


def test_dask_without_distributed():
    "Dask's local threaded scheduler (no cluster at all) gives the same numbers."
    dask = pytest.importorskip('dask')
    dd = pytest.importorskip('dask.dataframe')
    pdf = _frame(2000, seed=1)
    with dask.config.set(scheduler='threads'):
        fit = fit_logistic_rows(dd.from_pandas(pdf, npartitions=3), covariates=['a', 'b'], treatment='t', lam=0.2)
    ref = fit_logistic_erm(pdf[['a', 'b']].to_numpy(), pdf['t'].to_numpy(), 0.2)
    np.testing.assert_allclose(fit.weights, ref.weights, atol=1e-8, rtol=0)


def _die_on_one_partition(chunk, index):
    if index.size and index[0] >= 1000: os._exit(1)  # the worker process dies, as when a machine is lost
    return np.array([len(chunk)])


def test_killed_worker_leaves_ledger_uncharged():
    dask = pytest.importorskip('dask')
    dd = pytest.importorskip('dask.dataframe')
    distributed = pytest.importorskip('distributed')
    with dask.config.set({'distributed.scheduler.allowed-failures': 0}):  # fail at once instead of retrying elsewhere
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                distributed.Client(cluster):
            rows = as_rows(dd.from_pandas(_frame(2000), npartitions=2))
            ledger, drawn = PrivacyLedger(1.0), []
            with pytest.raises(distributed.KilledWorker):
                release_from_statistics(PrivacyCost(0.5), lambda: rows.map_reduce(_die_on_one_partition, ['t']), ledger,
                                        drawn.append)
            assert ledger.spent == (0.0, 0.0) and ledger.entries == () and drawn == []


def test_benchmark_smoke():
    "benchmarks/dask_scaling.py runs (tiny sizes) and its Dask and in-memory statistics agree."
    pytest.importorskip('distributed')
    res = subprocess.run([sys.executable, str(ROOT / 'benchmarks' / 'dask_scaling.py'), '--smoke'], capture_output=True,
                         text=True, cwd=ROOT, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    out = res.stdout
    assert 'medians:' in out and 'load average' in out and 'dask x2' in out and 'memory' in out
    line = next(l for l in out.splitlines() if l.startswith('largest difference between backends'))
    dw, de = (float(line.split(key)[1].split(',')[0]) for key in ('ERM weights ', 'WATE effects '))
    assert dw <= 1e-8 and de <= 1e-8, line
