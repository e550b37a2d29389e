"""The Dask deployment paths of privcausal.backend: the library without Dask installed, a client connected by scheduler
address (as to a real cluster), Dask without `distributed`, Parquet files read by the workers, a worker process
killed mid-computation, and the scaling benchmark in its smoke mode.
"""
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from privcausal.accounting import PrivacyCost, PrivacyLedger
from privcausal.backend import arm_sums, as_rows, fit_logistic_rows, split_mask
from privcausal.method import Sealed, run_release
from plans import OnlyCost
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
import privcausal.backend as b, privcausal.propensity, privcausal.ipw, privcausal.bayes_wate
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
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address='127.0.0.1:0') as cluster:
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
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address='127.0.0.1:0') as cluster, \
                distributed.Client(cluster):
            rows = as_rows(dd.from_pandas(_frame(2000), npartitions=2))
            ledger, released = PrivacyLedger(1.0), []
            with pytest.raises(distributed.KilledWorker):
                run_release(OnlyCost(PrivacyCost(0.5, label='count', mechanism='laplace')), rows, statistics=lambda p, r, noise: Sealed(r.map_reduce(_die_on_one_partition, ['t']), 2.0, {},
                                                                          mechanism='laplace'),
                            release=lambda p, carry, noisy, privacy: released.append(noisy), ledger=ledger,
                            rng=np.random.default_rng(0))
            assert ledger.spent == (0.0, 0.0) and ledger.entries == () and released == []


def test_benchmark_smoke():
    "benchmarks/dask_scaling.py runs (tiny sizes) and its Dask and in-memory releases agree (same seeds, after noise)."
    pytest.importorskip('distributed')
    res = subprocess.run([sys.executable, str(ROOT / 'benchmarks' / 'dask_scaling.py'), '--smoke'], capture_output=True,
                         text=True, cwd=ROOT, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    out = res.stdout
    assert 'medians:' in out and 'load average' in out and 'dask x2' in out and 'memory' in out
    line = next(l for l in out.splitlines() if l.startswith('largest difference between backends'))
    di, dw = (float(line.split(key)[1].split(',')[0]) for key in ('pp_ipw released ', 'wate released '))
    assert di <= 1e-8 and dw <= 1e-8, line


# ---------------------------------------------------------------- the estimators on a Dask frame (issue 11, phase B)
# One in-process LocalCluster (2 workers, threads): the tasks go through the distributed scheduler and its workers, and
# it starts in well under a second. The process-based paths (a killed worker process, a client by address) are above.

import warnings

from privcausal.ipw import pp_ipw
from privcausal.mechanisms import NoiseSource, ResearchNoise
from privcausal.propensity import private_propensity
from privcausal.bayes_wate import nonprivate_wate, simulate_wate, wate, wate_estimands

try: import dask.dataframe as dd
except ImportError: dd = None  # the tests below are then skipped by their fixture


@pytest.fixture(scope='module')
def inproc_client():
    pytest.importorskip('dask.dataframe')
    distributed = pytest.importorskip('distributed')
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address='127.0.0.1:0') as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _ipw_frame(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * 0.5
    t = rng.binomial(1, expit(X @ [1.0, -1.0, 0.5]))
    return pd.DataFrame(X, columns=['a', 'b', 'c']).assign(t=t, y=np.clip(X[:, 0] + t + rng.normal(size=n), -4, 4))


def _wate_frame(n=3000, seed=1):
    sim = simulate_wate(n, eta=2, gamma=1, rng=np.random.default_rng(seed))
    return pd.DataFrame(sim['X'], columns=['x1', 'x2', 'x3', 'x4']).assign(z=sim['z'], y=sim['y'])


IPW = dict(outcome='y', treatment='t', covariates=['a', 'b', 'c'], epsilon=1.0, delta=1e-6, outcome_bound=4.0,
           covariate_bound=4.0, propensity_bounds=0.05)


class Untouchable(NoiseSource):
    "A source that fails if any noise is drawn from it."
    name = 'untouchable'
    def _gaussian(self, value, sigma): raise AssertionError('noise drawn')
    _laplace = _gaussian


def _max_diff(a, b): return float(np.max(np.abs(np.subtract(a, b))))


@pytest.mark.parametrize('extra', [{}, {'estimator': 'ht'}, {'estimand': 'ATT', 'variance_share': 0.2}, {'debias': True}])
def test_pp_ipw_on_dask_equals_in_memory(inproc_client, extra):
    "Same data, same seed: the same split, fit, sums before noise and released numbers after it (Hájek is the default)."
    pdf = _ipw_frame()
    ddf = dd.from_pandas(pdf, npartitions=4)
    with pytest.warns(UserWarning, match='clip_rows requested'):
        mem, dm = pp_ipw(pdf, **{**IPW, 'covariate_bound': 1.0}, **extra, clip_rows=True, rng=np.random.default_rng(5), diagnostics=True)
    with pytest.warns(UserWarning, match='clip_rows requested'):
        dsk, dk = pp_ipw(ddf, **{**IPW, 'covariate_bound': 1.0}, **extra, clip_rows=True, rng=np.random.default_rng(5), diagnostics=True, n=4000)
    assert type(dsk) is type(mem) and dsk.plan.m == mem.plan.m == 2000
    assert _max_diff(dk.exact_vector, dm.exact_vector) <= 1e-8  # before noise
    assert _max_diff(dk.fit.weights, dm.fit.weights) <= 1e-8
    assert _max_diff(dsk.propensity.weights, mem.propensity.weights) <= 1e-8  # after noise, the same research rng
    assert abs(dsk.estimate - mem.estimate) <= 1e-8 and _max_diff(dsk.conf_int(), mem.conf_int()) <= 1e-8
    rd, rm = dsk.released(), mem.released()
    assert rd.keys() == rm.keys() and all((rd[k] is None and rm[k] is None) or abs(rd[k] - rm[k]) <= 1e-8 for k in rd)
    assert dk.arm_sizes == dm.arm_sizes and dk.n_clipped_rows == dm.n_clipped_rows > 0
    assert dk.n_clipped_propensity == dm.n_clipped_propensity and abs(dk.tau_hat - dm.tau_hat) <= 1e-8


def test_pp_ipw_declared_ranges_on_dask_equal_in_memory(inproc_client):
    "Per-column ranges: the map onto the paper's bounds is applied per chunk on both backends; the same release."
    pdf = _ipw_frame().assign(a=lambda f: f['a'] * 10 + 40)
    kw = {k: v for k, v in IPW.items() if k not in ('covariate_bound', 'outcome_bound')}
    kw.update(covariate_bounds={'a': (35.0, 45.0), 'b': (-2.0, 2.0), 'c': (-2.0, 2.0)}, outcome_bounds=(-3.0, 4.0),
              clip_rows=True, clip_outcomes=True, diagnostics=True)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # the announced clipping
        mem, dm = pp_ipw(pdf, **kw, rng=np.random.default_rng(2))
        dsk, dk = pp_ipw(dd.from_pandas(pdf, npartitions=3), **kw, rng=np.random.default_rng(2))
    assert _max_diff(dk.exact_vector, dm.exact_vector) <= 1e-8 and _max_diff(dk.fit.weights, dm.fit.weights) <= 1e-8
    assert abs(dsk.estimate - mem.estimate) <= 1e-8 and _max_diff(dsk.conf_int(), mem.conf_int()) <= 1e-8
    assert dk.n_clipped_rows == dm.n_clipped_rows > 0 and dk.n_clipped_outcomes == dm.n_clipped_outcomes > 0


def test_private_propensity_on_dask_equals_in_memory(inproc_client):
    pdf = _ipw_frame(3000, seed=2)
    X = pdf[['a', 'b', 'c']].to_numpy() / 4.0
    ddf = dd.from_pandas(pdf, npartitions=3)
    dX = (ddf[['a', 'b', 'c']] / 4.0).assign(t=ddf['t'])  # divided by the public bound on the workers, lazily
    mem = private_propensity(X, pdf['t'].to_numpy(), 0.8, 1e-6, rng=np.random.default_rng(3), covariates=('a', 'b', 'c'))
    dsk = private_propensity(dX, 't', 0.8, 1e-6, rng=np.random.default_rng(3))
    assert type(dsk) is type(mem) and dsk.m == mem.m == 3000 and dsk.lam == mem.lam and dsk.covariates == ('a', 'b', 'c')
    assert _max_diff(dsk.weights, mem.weights) <= 1e-8 and dsk.to_dict()['settings'] == mem.to_dict()['settings']


def test_wate_on_dask_equals_in_memory(inproc_client):
    "The same keyed partition from the same seed: the same M statistics, hence the same released numbers and posterior."
    pdf = _wate_frame()
    ddf = dd.from_pandas(pdf, npartitions=3)
    kw = dict(outcome='y', treatment='z', epsilon=1.0, n_partitions=30)
    for k in ('ATE', 'ATT'):
        mem = wate(pdf, estimand=k, rng=np.random.default_rng(9), **kw)
        dsk = wate(ddf, estimand=k, rng=np.random.default_rng(9), n=3000, **kw)
        assert type(dsk) is type(mem)
        assert abs(dsk.released_tau - mem.released_tau) <= 1e-8 and abs(dsk.released_variance - mem.released_variance) <= 1e-8
        assert abs(dsk.estimate - mem.estimate) <= 1e-8 and _max_diff(dsk.ci, mem.ci) <= 1e-8
    # NOT PRIVATE diagnostics of the same partition, and the full-data comparator, computed where the rows live
    (_, dg_d), (_, dg_m) = (wate(f, estimand='ATT', rng=np.random.default_rng(2), diagnostics=True, **kw) for f in (ddf, pdf))
    assert abs(dg_d.tau_bar - dg_m.tau_bar) <= 1e-8 and dg_d.n_failed == dg_m.n_failed and dg_d.n_truncated == dg_m.n_truncated
    for k in ('ATE', 'ATT', 'ATC'):
        a, b = (nonprivate_wate(f, outcome='y', treatment='z', estimand=k) for f in (pdf, ddf))
        assert abs(a.estimate - b.estimate) <= 1e-8 and abs(a.variance - b.variance) <= 1e-10 and b.n == a.n
    assert abs(dg_d.nonprivate.estimate - nonprivate_wate(pdf, outcome='y', treatment='z', estimand='ATT').estimate) <= 1e-8
    both_m = wate_estimands(pdf, estimands=('ATE', 'ATC'), rng=np.random.default_rng(4), **kw)
    both_d = wate_estimands(ddf, estimands=('ATE', 'ATC'), rng=np.random.default_rng(4), **kw)
    for k in ('ATE', 'ATC'): assert abs(both_d[k].estimate - both_m[k].estimate) <= 1e-8


def test_wate_one_row_path_equals_on_both_backends(inproc_client):
    "Declared covariate ranges (clipped), every v_model's diagnostics, arrays and no covariates: the same numbers on pandas and Dask."
    pdf = _wate_frame()
    ddf = dd.from_pandas(pdf, npartitions=3)
    cols, kw = dict(outcome='y', treatment='z'), dict(epsilon=1.0, n_partitions=30, draws=500)
    bounds = {c: (-1.5, 1.5) for c in ('x1', 'x2', 'x3', 'x4')}  # some rows outside: clipped (announced)
    with pytest.warns(UserWarning, match='clipped'):
        mem = wate(pdf, covariate_bounds=bounds, clip=True, rng=np.random.default_rng(6), **cols, **kw)
    with pytest.warns(UserWarning, match='clipped'):
        dsk = wate(ddf, covariate_bounds=bounds, clip=True, rng=np.random.default_rng(6), **cols, **kw)
    assert abs(dsk.released_tau - mem.released_tau) <= 1e-8 and abs(dsk.estimate - mem.estimate) <= 1e-8
    arr = wate(X=pdf[['x1', 'x2', 'x3', 'x4']].to_numpy(), outcome=pdf.y.to_numpy(), treatment=pdf.z.to_numpy(),
               rng=np.random.default_rng(7), **kw)
    dsk = wate(ddf, rng=np.random.default_rng(7), **cols, **kw)
    assert abs(dsk.released_tau - arr.released_tau) <= 1e-8 and abs(dsk.released_variance - arr.released_variance) <= 1e-8
    for v_model in ('pooled_logit', 'arm_mean'):  # the comparator on a Dask frame: every v_model (per_arm_logit above)
        (rm, dm), (rd, dd_) = (wate(f, estimand='ATC', v_model=v_model, diagnostics=True, rng=np.random.default_rng(8), **cols, **kw)
                               for f in (pdf, ddf))
        assert abs(rd.released_tau - rm.released_tau) <= 1e-8 and abs(dd_.tau_bar - dm.tau_bar) <= 1e-8
        assert abs(dd_.nonprivate.estimate - dm.nonprivate.estimate) <= 1e-8 and abs(dd_.nonprivate.variance - dm.nonprivate.variance) <= 1e-10
    none_m, none_d = (wate(f[['z', 'y']], rng=np.random.default_rng(9), **cols, **kw) for f in (pdf, ddf))  # d = 0
    assert abs(none_d.released_tau - none_m.released_tau) <= 1e-8


def _with(pdf, row, col, value):
    bad = pdf.copy()
    bad.loc[row, col] = value
    return bad


IPW_BAD = [('NaN covariate', 'a', np.nan, 'NaN/inf'), ('non-binary treatment', 't', 2, 'treatment must be binary'),
           ('outcome beyond its bound', 'y', 9.0, 'outcome_bound'), ('covariate row beyond its bound', 'b', 5.0, 'covariate_bound')]


@pytest.mark.parametrize('what,col,value,msg', IPW_BAD, ids=[b[0] for b in IPW_BAD])
@pytest.mark.parametrize('row', [5, 3990])  # in the fitting part or not; in the first or the last Dask partition
def test_pp_ipw_bad_input_refused_before_any_spend(inproc_client, what, col, value, msg, row):
    ddf = dd.from_pandas(_with(_ipw_frame(), row, col, value), npartitions=4)
    ledger = PrivacyLedger(5.0, 1e-3)
    with pytest.raises(ValueError, match=msg):
        pp_ipw(ddf, **IPW, rng=Untouchable(), ledger=ledger)  # Untouchable: any noise drawn would fail differently
    assert ledger.spent == (0.0, 0.0) and ledger.entries == ()


@pytest.mark.parametrize('col,value,msg', [('x2', np.inf, 'NaN/inf'), ('z', 0.5, 'treatment must be binary'),
                                           ('y', 2.0, 'outcome must be binary')])
def test_wate_bad_input_refused_before_any_spend(inproc_client, col, value, msg):
    ddf = dd.from_pandas(_with(_wate_frame(), 2990, col, value), npartitions=3)  # in the last Dask partition only
    ledger = PrivacyLedger(5.0)
    with pytest.raises(ValueError, match=msg):
        wate(ddf, outcome='y', treatment='z', epsilon=1.0, n_partitions=30, rng=Untouchable(), ledger=ledger)
    assert ledger.spent == (0.0, 0.0) and ledger.entries == ()


def test_private_propensity_bad_input_refused_before_any_spend(inproc_client):
    pdf = _ipw_frame(2000)
    for col, value, msg in [('a', 20.0, 'clip_rows=True'), ('t', -1, 'treatment must be binary'), ('b', np.nan, 'NaN/inf')]:
        ddf = dd.from_pandas(_with(pdf, 1999, col, value), npartitions=2)
        ledger = PrivacyLedger(5.0, 1e-3)
        with pytest.raises(ValueError, match=msg):
            private_propensity((ddf[['a', 'b', 'c']] / 4.0).assign(t=ddf['t']), 't', 1.0, 1e-6, rng=Untouchable(), ledger=ledger)
        assert ledger.entries == ()


def test_declared_n_rows_is_checked(inproc_client):
    ddf = dd.from_pandas(_ipw_frame(1000), npartitions=2)
    with pytest.raises(ValueError, match='declared number of rows'):
        pp_ipw(ddf, **IPW, n=999, rng=Untouchable())
    with pytest.raises(ValueError, match='split: a split column is not supported'):
        pp_ipw(ddf, **IPW, split=np.ones(1000, bool), rng=Untouchable())
    with pytest.raises(ValueError, match="normalisation='arm' is not supported"):
        pp_ipw(ddf, **IPW, estimator='ht', estimand='ATT', normalisation='arm', rng=Untouchable())


# a worker failure after some passes have run: a partition that can be read a given number of times, then fails
_READS = {'left': 10**9}


def _flaky_partition(i, pdf, parts):
    if i == parts - 1:
        _READS['left'] -= 1
        if _READS['left'] < 0: raise OSError('cannot read part-0003.parquet')
    n = len(pdf) // parts
    return pdf.iloc[i * n:(i + 1) * n]


class FailAfterFirstDraw(ResearchNoise):
    "Seeded noise that makes the data unreadable once the first noise has been drawn (the propensity weights')."
    def _gaussian(self, value, sigma):
        _READS['left'] = 0
        return super()._gaussian(value, sigma)


def test_worker_failure_mid_computation_leaves_ledger_uncharged(inproc_client):
    pdf, parts = _ipw_frame(4000), 4
    ddf = dd.from_map(_flaky_partition, range(parts), pdf=pdf, parts=parts, meta=pdf.iloc[:0])  # not persisted: re-read each pass
    # PP-IPW: the data fail after the propensity stage (its noise drawn, kept on the driver), during the effect sums
    _READS['left'] = 10**9
    ledger = PrivacyLedger(5.0, 1e-3)
    with pytest.raises(OSError, match='cannot read part-0003'):
        pp_ipw(ddf, **IPW, rng=FailAfterFirstDraw(np.random.default_rng(0)), ledger=ledger)
    assert ledger.spent == (0.0, 0.0) and ledger.entries == ()
    # WATE: the data fail while the partition statistics are computed (the lengths were read once, when wrapped)
    wdf = _wate_frame(3000)
    wd = dd.from_map(_flaky_partition, range(3), pdf=wdf, parts=3, meta=wdf.iloc[:0])
    _READS['left'] = 1
    with pytest.raises(OSError, match='cannot read part-0003'):
        wate(wd, outcome='y', treatment='z', epsilon=1.0, n_partitions=30, rng=Untouchable(), ledger=ledger)
    assert ledger.entries == ()
    # private_propensity: during the Newton passes
    _READS['left'] = 3
    with pytest.raises(OSError, match='cannot read part-0003'):
        private_propensity((ddf[['a', 'b', 'c']] / 4.0).assign(t=ddf['t']), 't', 1.0, 1e-6, rng=Untouchable(), ledger=ledger)
    assert ledger.entries == ()
    _READS['left'] = 10**9  # and when nothing fails, the same call charges once
    pp_ipw(ddf, **IPW, rng=np.random.default_rng(0), ledger=ledger)
    assert len(ledger.entries) == 1


@pytest.mark.parametrize('fail_on', ['arm_sums', 'logistic_hessian_rows'])
def test_diagnostics_passes_run_before_the_charge(inproc_client, monkeypatch, fail_on):
    "With diagnostics (the CLI's --non-private) and the debiasing step, every pass over the rows precedes the charge."
    import privcausal.ipw as ipw_module
    real, calls = getattr(ipw_module, fail_on), {'n': 0}
    def flaky(*a, **k):  # the last pass of this kind (the non-private model's) fails, as a lost worker would
        calls['n'] += 1
        if calls['n'] == 2: raise OSError('worker lost')
        return real(*a, **k)
    monkeypatch.setattr(ipw_module, fail_on, flaky)
    ledger = PrivacyLedger(5.0, 1e-3)
    with pytest.raises(OSError, match='worker lost'):
        pp_ipw(dd.from_pandas(_ipw_frame(4000), npartitions=4), **IPW, debias=True, diagnostics=True,
               rng=np.random.default_rng(0), ledger=ledger)
    assert ledger.spent == (0.0, 0.0) and ledger.entries == ()


# ---------------------------------------------------------------- the command line: --dask on a Parquet glob

def _cli(argv):
    import contextlib, io
    from privcausal import cli
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try: cli.main(argv)
        except SystemExit as e: code = e.code
    return code, out.getvalue(), err.getvalue()


def _parquet_parts(tmp_path, pdf, parts=3):
    size = -(-len(pdf) // parts)
    for i in range(parts): pdf.iloc[i * size:(i + 1) * size].to_parquet(tmp_path / f'part-{i}.parquet')
    pdf.to_csv(tmp_path / 'all.csv', index=False)
    return str(tmp_path / 'part-*.parquet')


def test_cli_dask_local_on_a_parquet_glob(tmp_path):
    "`privcausal ipw --dask local DATA-GLOB`: a LocalCluster of 2 worker processes reads the files; same release as in memory."
    pytest.importorskip('distributed')
    pdf = _ipw_frame(3000, seed=4)
    glob_ = _parquet_parts(tmp_path, pdf)
    args = ['--treatment', 't', '--outcome', 'y', '--covariates', 'a,b,c', '--epsilon', '1', '--delta', '1e-6', '--seed', '3',
            '--outcome-bound', '4', '--covariate-bound', '4', '--propensity-bound', '0.05', '--json']
    code, out, err = _cli(['ipw', glob_, '--dask', 'local', '--n-rows', '3000'] + args)
    assert code == 0, err
    code_m, out_m, err_m = _cli(['ipw', str(tmp_path / 'all.csv')] + args)
    assert code_m == 0, err_m
    d, m = json.loads(out), json.loads(out_m)
    assert d['type'] == m['type'] == 'IPWRelease' and d['input']['data'] == glob_
    assert abs(d['estimate'] - m['estimate']) <= 1e-8 and _max_diff(d['ci'], m['ci']) <= 1e-8


def test_cli_dask_address_wate_and_errors(inproc_client, tmp_path):
    "`--dask tcp://...` (a running scheduler) for wate, CSV as well as Parquet; what --dask cannot do is refused naming the flag."
    distributed = pytest.importorskip('distributed')
    pdf = _wate_frame(2000, seed=3)
    glob_ = _parquet_parts(tmp_path, pdf.rename(columns={'z': 't'}))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol='tcp://',
                                  dashboard_address='127.0.0.1:0') as cluster:
        addr = cluster.scheduler_address
        args = ['--treatment', 't', '--outcome', 'y', '--covariates', 'x1,x2,x3,x4', '--epsilon', '1', '--seed', '5',
                '--partitions', '20', '--json']
        code, out, err = _cli(['wate', glob_, '--dask', addr] + args)
        assert code == 0, err
        code_c, out_c, err_c = _cli(['wate', str(tmp_path / 'all.csv'), '--dask', addr] + args)
        code_m, out_m, err_m = _cli(['wate', str(tmp_path / 'all.csv')] + args)
        assert code_c == 0 and code_m == 0, err_c + err_m
        d, c, m = json.loads(out), json.loads(out_c), json.loads(out_m)
        assert abs(d['estimate'] - m['estimate']) <= 1e-8 and abs(c['estimate'] - m['estimate']) <= 1e-8
        code, out_np, err = _cli(['wate', glob_, '--dask', addr, '--non-private'] + args)
        assert code == 0 and 'NOT PRIVATE' in err
        assert json.loads(out_np)['non_private']['estimate'] == pytest.approx(
            nonprivate_wate(pdf, outcome='y', treatment='z').estimate, abs=1e-8)
        for extra, msg in [(['--categorical', 'x1=a,b'], '--dask: --categorical'),
                           (['--n-rows', '1999'], 'declared number of rows (1999)')]:
            code, out, err = _cli(['wate', glob_, '--dask', addr] + args + extra)
            assert code == 2 and msg in err, err
        code, out, err = _cli(['wate', str(tmp_path / 'none-*.parquet'), '--dask', addr] + args)
        assert code == 2 and 'DATA: no file matches' in err
        code, out, err = _cli(['wate', glob_, '--dask', 'my-laptop'] + args)
        assert code == 2 and '--dask takes' in err
        code, out, err = _cli(['wate', glob_, '--dask', addr, '--dry-run'] + args)
        assert code == 0 and json.loads(out)['n'] == 2000
