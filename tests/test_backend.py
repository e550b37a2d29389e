"""Checks of privcausal.backend beyond the notebook: the keyed permutation (bijection, exact part sizes, uniformity over
keys), and the pandas and Dask backends on a real `LocalCluster` (2 worker processes): equality of the estimators'
sufficient statistics with the in-memory building blocks, bad input refused before anything is computed, and a failure
on a worker leaving the ledger uncharged.
"""
import functools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import expit

from privcausal.accounting import BudgetExceededError, PrivacyCost, PrivacyLedger
from privcausal.backend import (PermutationKey, ROUNDS, arm_sums, as_rows, check_rows, fit_logistic_rows, keyed_permutation,
                                mapped_rows, partition_index, partition_labels, partition_map, permutation_key, split_mask,
                                stack_groups)
from privcausal import backend, ipw
from privcausal.ipw import ipw_unit_weights
from privcausal.mechanisms import NoiseSource
from privcausal.method import Sealed, run_release
from plans import OnlyCost
from privcausal.checks import project_to_unit_ball
from privcausal.propensity import augment_constant, fit_logistic_erm
from privcausal.bayes_wate import partition_indices, partition_statistics, simulate_wate, stacked_partition_statistics

dd = pytest.importorskip('dask.dataframe')
distributed = pytest.importorskip('distributed')


class Untouchable(NoiseSource):
    "A source that fails if any noise is drawn from it."
    name = 'untouchable'
    def _gaussian(self, value, sigma): raise AssertionError('noise drawn')
    _laplace = _gaussian


def release_after(cost, compute, ledger, release=lambda plan, carry, noisy, privacy: noisy, rng=None, sigma=1.0,
                  mechanism='gaussian'):
    "`run_release` with `compute()` as the statistics step (its value is the vector the last noise goes on)."
    stats_step = lambda plan, data, noise: Sealed(np.atleast_1d(np.asarray(compute(), dtype=float)), sigma, {}, mechanism=mechanism)
    return run_release(OnlyCost(cost), None, statistics=stats_step, release=release, ledger=ledger, rng=rng)


# ---------------------------------------------------------------- the keyed permutation

SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100, 127, 128, 129, 1000, 1023, 1024, 1025, 4095,
         4097, 65_535, 65_537, 99_991, 262_145, 1_000_000]


@pytest.mark.parametrize('seed', [0, 1, 12345])
def test_bijection_for_many_sizes(seed):
    key = permutation_key(seed)
    rng = np.random.default_rng(seed)
    for n in SIZES + list(rng.integers(2, 200_000, 20)):
        n = int(n)
        p = keyed_permutation(np.arange(n), n, key)
        assert p.dtype == np.int64 and p.min() >= 0 and p.max() < n
        assert np.array_equal(np.bincount(p, minlength=n), np.ones(n, dtype=np.int64)), n


def test_pointwise_and_reproducible():
    n, key = 77_777, permutation_key(3)
    whole = keyed_permutation(np.arange(n), n, key)
    rng = np.random.default_rng(0)
    idx = rng.integers(0, n, size=(40, 5))  # any subset, any order, any shape
    assert np.array_equal(keyed_permutation(idx, n, key), whole[idx])
    assert np.array_equal(keyed_permutation(np.arange(n), n, 3), whole)  # the same seed gives the same key
    assert np.array_equal(keyed_permutation(np.arange(n), n, np.random.SeedSequence(3)), whole)
    assert not np.array_equal(keyed_permutation(np.arange(n), n, 4), whole)
    # a key drawn from a Generator is reproducible from the Generator's seed
    k1, k2 = permutation_key(np.random.default_rng(9)), permutation_key(np.random.default_rng(9))
    assert k1 == k2 and len(k1.round_keys) == ROUNDS
    assert permutation_key(None) != permutation_key(None)  # fresh entropy
    # not the identity, nor a shift
    assert (whole == np.arange(n)).mean() < 1e-3 and len(np.unique(np.diff(whole))) > 1000


def test_split_of_a_range_is_remembered_but_never_shared():
    "Newton's passes ask for the same range of rows again: the cached mask equals the direct one and is a fresh copy."
    n, key = 100_003, permutation_key(5)
    r = np.arange(20_000, 70_000)
    direct = keyed_permutation(r, n, key) < 40_000
    for part, want in (('fit', direct), ('estimate', ~direct)):
        a = split_mask(r, n, 40_000, key, part)
        assert np.array_equal(a, want)
        a[:] = ~a  # mutating a result changes nothing for the next caller
        assert np.array_equal(split_mask(r, n, 40_000, key, part), want)
        assert np.array_equal(split_mask(r[::-1].copy(), n, 40_000, key, part), want[::-1])  # not a range: computed
        assert np.array_equal(split_mask(r.astype(np.uint32), n, 40_000, key, part), want)


def test_permutation_refuses_bad_arguments():
    key = permutation_key(0)
    for bad in [0, -1, 1.5, True, 2**62]:
        with pytest.raises(ValueError, match='n must be an integer'): keyed_permutation([0], bad, key)
    with pytest.raises(ValueError, match=r'row_index must lie in \[0, n\)'): keyed_permutation([5], 5, key)
    with pytest.raises(ValueError, match=r'row_index must lie in \[0, n\)'): keyed_permutation([-1], 5, key)
    with pytest.raises(TypeError, match='row_index must hold integers'): keyed_permutation([0.5], 5, key)
    for bad in [-1, 'a', 1.5, True]:
        with pytest.raises(TypeError, match='seed must be'): permutation_key(bad)
    with pytest.raises(ValueError, match='part must be'): split_mask([0], 5, 2, key, part='test')
    with pytest.raises(ValueError, match='m must be at most n'): split_mask([0], 5, 6, key)
    with pytest.raises(ValueError, match='n_partitions must be at most n'): partition_labels([0], 5, 6, key)


@pytest.mark.parametrize('n', [1, 2, 10, 101, 1024, 1025, 99_991])
def test_exact_part_sizes(n):
    key = permutation_key(n)
    rows = np.arange(n)
    for m in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        fit = split_mask(rows, n, m, key)
        assert fit.sum() == m
        assert np.array_equal(split_mask(rows, n, m, key, 'estimate'), ~fit)
    for M in sorted({1, 2, 3, 7, min(n, 97), n}):
        if M > n: continue
        sizes = np.bincount(partition_labels(rows, n, M, key), minlength=M)
        assert np.array_equal(sizes, [len(b) for b in np.array_split(rows, M)]), (n, M)
        assert sizes.max() - sizes.min() <= 1


@pytest.mark.parametrize('n,M', [(10, 3), (1000, 7), (12_345, 100)])
def test_partition_index_has_the_layout_of_partition_indices(n, M):
    key = permutation_key(1)
    idx = partition_index(n, M, key)
    blocks = np.array_split(np.arange(n), M)  # the layout wate.partition_indices always had: np.array_split's sizes
    assert idx.shape == (M, len(blocks[0])) and idx.dtype == np.int64
    assert np.array_equal((idx >= 0).sum(1), [len(b) for b in blocks])  # the same sizes, in the same order
    assert np.all(idx[(idx >= 0).sum(1)[:, None] <= np.arange(idx.shape[1])] == -1)  # padded with -1 at the end
    # wate.partition_indices IS this partition now (in memory == on Dask from the same seed)
    assert np.array_equal(partition_indices(n, M, np.random.default_rng(0)), partition_index(n, M, permutation_key(np.random.default_rng(0))))
    assert np.array_equal(np.sort(idx[idx >= 0]), np.arange(n))
    labels = partition_labels(np.arange(n), n, M, key)
    for k in range(M):
        rows = idx[k][idx[k] >= 0]
        assert np.all(labels[rows] == k) and np.all(np.diff(rows) > 0)


def _split_chi2(n, m, K, key_of):
    counts = np.zeros(n)
    for k in range(K): counts += split_mask(np.arange(n), n, m, key_of(k))
    p = m / n
    return stats.chi2.sf(((counts - K * p) ** 2).sum() / (K * p * (1 - p) * n / (n - 1)), n - 1)


def _position_chi2(n, K, key_of):
    "Pearson test of the n x n table (row, position) over K keys: uniform for a uniformly random permutation."
    table = np.zeros((n, n))
    for k in range(K): table[np.arange(n), keyed_permutation(np.arange(n), n, key_of(k))] += 1
    return stats.chi2.sf(((table - K / n) ** 2 / (K / n)).sum(), (n - 1) ** 2)


def test_split_and_positions_are_uniform_over_keys():
    key_of = lambda k: np.random.SeedSequence([2024, k])
    # the three tests are independent of each other and have exact (or near-exact) null distributions: at 1e-3 a false
    # failure has probability about 0.003
    assert _split_chi2(13, 5, 3000, key_of) > 1e-3
    assert _split_chi2(64, 17, 1500, key_of) > 1e-3
    assert _position_chi2(9, 3000, key_of) > 1e-3


def test_the_uniformity_test_has_power():
    "The same test rejects a keyed permutation with too few rounds (4 half-rounds): it can fail."
    weak = lambda k: PermutationKey(permutation_key(np.random.SeedSequence([7, k])).round_keys[:4])
    assert _split_chi2(13, 5, 3000, weak) < 1e-3 or _position_chi2(9, 3000, weak) < 1e-3


def test_partition_labels_uniform_over_keys():
    n, M, K = 10, 3, 3000
    table = np.zeros((n, M))
    for k in range(K): table[np.arange(n), partition_labels(np.arange(n), n, M, np.random.SeedSequence([5, k]))] += 1
    expected = K * np.array([4, 3, 3]) / n
    chi = ((table - expected) ** 2 / expected).sum()
    assert stats.chi2.sf(chi, (n - 1) * (M - 1)) > 1e-3
    # two rows share a partition with probability sum_k s_k (s_k - 1) / (n (n - 1)) = 24/90
    same = np.zeros(n * (n - 1) // 2)
    iu = np.triu_indices(n, 1)
    for k in range(K):
        lab = partition_labels(np.arange(n), n, M, np.random.SeedSequence([6, k]))
        same += (lab[:, None] == lab[None, :])[iu]
    assert abs(same.mean() / K - 24 / 90) < 4 * math.sqrt(24 / 90 * 66 / 90 / K)


# ---------------------------------------------------------------- the Rows backends

def _frame(n, d=3, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    t = rng.binomial(1, expit(X @ np.linspace(1, -1, d) + 0.4))
    y = X @ np.linspace(-0.5, 0.5, d) + 1.5 * t + rng.normal(size=n)
    return pd.DataFrame(X, columns=[f'x{j}' for j in range(d)]).assign(t=t, y=y)


def _gen(i, sizes):
    "A partition made on the worker (its size may be 0)."
    rng = np.random.default_rng(i)
    return pd.DataFrame({'a': rng.normal(size=sizes[i]), 'b': np.arange(sizes[i], dtype=float)})


def test_rows_on_the_cluster_equal_pandas(client):
    sizes = [5, 0, 17, 1, 0, 40]  # empty partitions included
    ddf = dd.from_map(functools.partial(_gen, sizes=sizes), range(len(sizes)))
    pdf = pd.concat([_gen(i, sizes) for i in range(len(sizes))], ignore_index=True)
    rd, rp = as_rows(ddf), as_rows(pdf, chunk_rows=7)
    assert rd.n == rp.n == sum(sizes) and rd.backend == 'dask' and rp.backend == 'pandas'
    fn = lambda chunk, index: (np.array([len(chunk), chunk['a'].sum()]), {'rows': index.sum(), 'sq': chunk['a'] @ chunk['a']})
    a, b = rd.map_reduce(fn, ['a']), rp.map_reduce(fn, ['a'])
    assert a[1]['rows'] == b[1]['rows'] == sum(range(sum(sizes)))
    np.testing.assert_allclose(a[0], b[0], rtol=1e-12); np.testing.assert_allclose(a[1]['sq'], b[1]['sq'], rtol=1e-12)
    # row positions agree with the concatenated frame: sum of index * value
    fn2 = lambda chunk, index: np.array([index @ chunk['a'].to_numpy()])
    np.testing.assert_allclose(rd.map_reduce(fn2, ['a']), [np.arange(len(pdf)) @ pdf['a']], rtol=1e-12)
    # group_map with an empty group (label 5 never occurs): fn sees it with no rows, on both transports
    labels = lambda index: index % 5
    fn3 = lambda v, b: (np.diff(b), np.array([v[i:j, 0].sum() for i, j in zip(b[:-1], b[1:])]))
    lp, sp = rp.group_map(labels, fn3, 6, ['a'])
    assert lp[5] == 0 and lp.sum() == rd.n
    np.testing.assert_allclose(sp[:5], [pdf['a'].to_numpy()[np.arange(len(pdf)) % 5 == k].sum() for k in range(5)], rtol=1e-12)
    for direct in (10**6, 0):
        rd.max_direct_partitions = direct
        ld, sd = rd.group_map(labels, fn3, 6, ['a'])
        assert np.array_equal(ld, lp)
        np.testing.assert_allclose(sd, sp, rtol=1e-12)


@pytest.mark.parametrize("direct", [10**6, 0])  # the direct transport, and Dask's shuffle
def test_group_rows_keep_global_order(client, direct):
    pdf = _frame(500)
    rows = as_rows(dd.from_pandas(pdf, npartitions=6))
    rows.max_direct_partitions = direct
    key = permutation_key(4)
    labels = functools.partial(partition_labels, n=500, n_partitions=9, key=key)
    first_rows = lambda v, b: np.stack([v[i:i + 55] for i in b[:-1]])
    got = rows.group_map(labels, first_rows, 9, ['x0', 'x1'])
    idx = partition_index(500, 9, key)[:, :55]
    np.testing.assert_array_equal(got, pdf[['x0', 'x1']].to_numpy()[idx])
    in_memory = as_rows(pdf, chunk_rows=120).group_map(labels, first_rows, 9, ['x0', 'x1'])  # groups in several calls
    np.testing.assert_array_equal(in_memory, got)


# ---------------------------------------------------------------- (a) the logistic ERM

@pytest.mark.parametrize('d,lam,constant,clip', [(2, 1.0, None, False), (5, 0.1, 0.5, True), (8, 0.01, 0.3, True)])
def test_erm_equals_in_memory(client, d, lam, constant, clip):
    n, R = 6000, 3.0
    pdf = _frame(n, d, seed=d, scale=1.0 if clip else 0.4)
    ddf = dd.from_pandas(pdf, npartitions=7)
    cov = [f'x{j}' for j in range(d)]
    key = permutation_key(d)
    select = functools.partial(split_mask, n=n, m=2500, key=key)
    kw = dict(covariates=cov, treatment='t', lam=lam, select=select, covariate_bound=R, constant=constant, clip_rows=clip)
    fd, fp = fit_logistic_rows(ddf, **kw), fit_logistic_rows(pdf, **kw)
    sel = select(np.arange(n))
    X, n_over = project_to_unit_ball(pdf[cov].to_numpy()[sel] / R)  # pp_ipw's in-memory rows
    assert (n_over > 0) == clip
    ref = fit_logistic_erm(augment_constant(X, constant), pdf['t'].to_numpy()[sel], lam)
    for f in (fd, fp):
        assert f.m == 2500 and f.grad_norm <= 1e-10 and f.n_clipped == n_over
        np.testing.assert_allclose(f.weights, ref.weights, atol=1e-8, rtol=0)
        assert abs(f.objective - ref.objective) <= 1e-10
    assert fd.passes <= fd.n_iter + 3  # about one pass over the rows per Newton step


def test_erm_subsample_start_on_partitions(client):
    "Above 10,000 rows the start comes from the rows at fixed positions, gathered from the partitions: same certified point."
    n, cov = 24_000, ['x0', 'x1', 'x2', 'x3']
    pdf = _frame(n, 4, seed=21, scale=0.4)
    select = functools.partial(split_mask, n=n, m=15_000, key=permutation_key(3))
    kw = dict(covariates=cov, treatment='t', lam=0.02, select=select, covariate_bound=3.0, constant=0.5)
    fd, fp = fit_logistic_rows(dd.from_pandas(pdf, npartitions=6), **kw), fit_logistic_rows(pdf, **kw)
    cold = fit_logistic_rows(pdf, sample_rows=0, **kw)
    sel = select(np.arange(n))
    ref = fit_logistic_erm(augment_constant(pdf[cov].to_numpy()[sel] / 3.0, 0.5), pdf['t'].to_numpy()[sel], 0.02)
    for f in (fd, fp, cold):
        assert f.m == 15_000 and f.certified
        np.testing.assert_allclose(f.weights, ref.weights, atol=2e-10 / 0.02, rtol=0)
    np.testing.assert_allclose(fd.weights, fp.weights, atol=1e-12, rtol=0)  # the same path on both backends


@pytest.mark.parametrize('backend', ['pandas', 'dask'])
def test_erm_accelerated_fallback_certifies(client, backend):
    "With no Newton step allowed, the accelerated-gradient fallback reaches the certificate and the same minimiser."
    pdf = _frame(1500, 3, seed=5, scale=0.2)
    data = pdf if backend == 'pandas' else dd.from_pandas(pdf, npartitions=3)
    kw = dict(covariates=['x0', 'x1', 'x2'], treatment='t', lam=0.5, constant=0.6)
    fb, newton = fit_logistic_rows(data, max_iter=0, **kw), fit_logistic_rows(data, **kw)
    assert fb.n_iter == 0 and fb.fallback_steps > 0 and fb.certified and newton.fallback_steps == 0 and newton.certified
    ref = fit_logistic_erm(augment_constant(pdf[['x0', 'x1', 'x2']].to_numpy(), 0.6), pdf['t'].to_numpy(), 0.5)
    np.testing.assert_allclose(fb.weights, ref.weights, atol=1e-9, rtol=0)  # both within tol/lam = 2e-10 of the minimiser
    np.testing.assert_allclose(newton.weights, ref.weights, atol=1e-9, rtol=0)


def test_erm_all_rows_without_selection(client):
    pdf = _frame(3000, 4, seed=11, scale=0.15)
    fd = fit_logistic_rows(dd.from_pandas(pdf, npartitions=3), covariates=['x0', 'x1', 'x2', 'x3'], treatment='t', lam=0.05)
    ref = fit_logistic_erm(pdf[['x0', 'x1', 'x2', 'x3']].to_numpy(), pdf['t'].to_numpy(), 0.05)
    assert fd.m == 3000
    np.testing.assert_allclose(fd.weights, ref.weights, atol=1e-8, rtol=0)


# ---------------------------------------------------------------- (b) per-arm sums

@pytest.mark.parametrize('estimand', ['ATE', 'ATT', 'ATC'])
def test_arm_sums_equal_in_memory(client, estimand):
    n = 5000
    pdf = _frame(n, 3, seed=2, scale=0.5)
    ddf = dd.from_pandas(pdf, npartitions=5)
    cov = ['x0', 'x1', 'x2']
    w = np.array([2.0, -1.5, 0.7, 1.2])  # a released model with a constant feature
    select = functools.partial(split_mask, n=n, m=2000, key=permutation_key(8), part='estimate')
    kw = dict(outcome='y', treatment='t', covariates=cov, weights=w, bounds=(0.15, 0.8), estimand=estimand, select=select,
              covariate_bound=2.0, constant=0.4, clip_rows=True, outcome_bound=2.5, clip_outcomes=True)
    sd, sp = arm_sums(ddf, **kw), arm_sums(pdf, **kw)
    e = select(np.arange(n))
    X, n_over = project_to_unit_ball(pdf[cov].to_numpy()[e] / 2.0)
    p = expit(augment_constant(X, 0.4) @ w)
    t, y0 = pdf['t'].to_numpy()[e], pdf['y'].to_numpy()[e]
    y = np.clip(y0, -2.5, 2.5)
    h = np.abs(ipw_unit_weights(p, t, estimand, (0.15, 0.8)))  # the in-memory weights
    for s in (sd, sp):
        for arm in (0, 1):
            a = t == arm
            np.testing.assert_allclose([s.hy[arm], s.h[arm], s.hy2[arm], s.h2y2[arm], s.h2y[arm], s.h2[arm]],
                                       [h[a] @ y[a], h[a].sum(), h[a] @ y[a] ** 2, (h[a] * y[a]) @ (h[a] * y[a]), (h[a] ** 2) @ y[a],
                                        h[a] @ h[a]], rtol=1e-10)
        assert np.array_equal(s.count, np.bincount(t, minlength=2))
        assert s.n_clipped_rows == n_over and s.n_clipped_outcomes == int((np.abs(y0) > 2.5).sum()) > 0
    # the Hajek contrast of the exact sums equals the weighted-mean difference
    ref = h[t == 1] @ y[t == 1] / h[t == 1].sum() - h[t == 0] @ y[t == 0] / h[t == 0].sum()
    assert abs(sd.hajek() - ref) <= 1e-10
    # the same numbers as the exact sums of pp_ipw's Hajek release (outcomes divided by C_y, weights by H)
    if hasattr(ipw, 'hajek_sums'):
        C, gamma, H = 2.5, 0.3, ipw.max_unit_weight((0.15, 0.8), estimand)
        want = ipw.hajek_sums(y / C, t, h, gamma, H)
        got = np.r_[sd.hy[1] / C, sd.h[1], sd.hy[0] / C, sd.h[0],
                    gamma * np.r_[sd.hy2[1] / C ** 2, sd.h2[1] / H, sd.hy2[0] / C ** 2, sd.h2[0] / H]]
        np.testing.assert_allclose(got, want, rtol=1e-10)


# ---------------------------------------------------------------- (c) WATE per-partition statistics

@pytest.mark.parametrize('n,M,estimands,direct', [(2003, 40, ('ATE', 'ATT', 'ATC'), 10**6), (1200, 7, ('ATE',), 10**6),
                                                  (1500, 30, ('ATE', 'ATT'), 0)])
def test_wate_partitions_equal_in_memory(client, n, M, estimands, direct):
    sim = simulate_wate(n, eta=2, gamma=1, rng=np.random.default_rng(n))
    pdf = pd.DataFrame(sim['X'], columns=['a', 'b', 'c', 'd']).assign(z=sim['z'], y=sim['y'])
    key = permutation_key(n)
    stat = functools.partial(stacked_partition_statistics, truncation=0.05, estimands=estimands, return_truncated=True)
    kw = dict(covariates=['a', 'b', 'c', 'd'], treatment='z', outcome='y', n_partitions=M, key=key)
    rows = as_rows(dd.from_pandas(pdf, npartitions=5))
    rows.max_direct_partitions = direct
    out_d = partition_map(rows, stat, **kw)
    out_p = partition_map(pdf, stat, **kw)
    ref = partition_statistics(sim['X'], sim['z'], sim['y'], partition_index(n, M, key), 0.05, estimands)
    for (eff, failed, moved) in (out_d, out_p):
        for k in estimands:
            assert eff[k][0].shape == (M,)
            np.testing.assert_allclose(eff[k][0], ref.tau[k], atol=1e-8, rtol=0)
            np.testing.assert_allclose(eff[k][1], ref.variance[k], atol=1e-8, rtol=0)
        assert np.array_equal(failed, ref.failed) and np.array_equal(moved, ref.n_truncated)


def test_wate_failed_partitions_flagged(client):
    "A partition with < 2 treated fails in both backends alike (the estimator fills it in; no error)."
    n, M = 400, 50
    rng = np.random.default_rng(1)
    pdf = pd.DataFrame({'a': rng.normal(size=n), 'z': (rng.random(n) < 0.05).astype(float), 'y': rng.integers(0, 2, n)})
    stat = functools.partial(stacked_partition_statistics, truncation=0.05, estimands=('ATE',))
    kw = dict(covariates=['a'], treatment='z', outcome='y', n_partitions=M, key=3)
    (_, fd), (_, fp) = partition_map(dd.from_pandas(pdf, npartitions=3), stat, **kw), partition_map(pdf, stat, **kw)
    assert fd.any() and np.array_equal(fd, fp)


# ---------------------------------------------------------------- bad input, failures and the ledger

def _spy(rows):
    calls = []
    class Spy(type(rows)):
        def map_reduce(self, *a, **k): calls.append('map_reduce'); return super().map_reduce(*a, **k)
        def group_map(self, *a, **k): calls.append('group_map'); return super().group_map(*a, **k)
    rows.__class__ = Spy
    return rows, calls


BAD_ERM = [(dict(lam=0), 'lam must be'), (dict(lam=float('nan')), 'lam must be'), (dict(tol=-1), 'tol must be'),
           (dict(covariates=['nope']), "are not columns"), (dict(covariates=['s']), 'must have a numeric'),
           (dict(treatment='missing'), 'are not columns'), (dict(constant=1.0), r'constant .*must lie'),
           (dict(covariate_bound=0), 'covariate_bound must be'), (dict(max_iter=-1), 'max_iter must be')]


@pytest.mark.parametrize('bad,match', BAD_ERM)
def test_erm_bad_arguments_refused_before_any_pass(client, bad, match):
    ddf = dd.from_pandas(_frame(200).assign(s='text'), npartitions=2)
    rows, calls = _spy(as_rows(ddf))
    kw = dict(covariates=['x0', 'x1'], treatment='t', lam=0.1)
    kw.update(bad)
    with pytest.raises((ValueError, TypeError), match=match): fit_logistic_rows(rows, **kw)
    assert calls == []


BAD_ARMS = [(dict(estimand='ATX'), 'estimand must be'), (dict(bounds=(0.6, 0.4)), 'bounds'), (dict(bounds=0.1), 'bounds must be a pair'),
            (dict(weights=[1.0]), 'weights has 1 entries'), (dict(weights=[np.nan, 1, 1]), 'weights'),
            (dict(outcome_bound=-1), 'outcome_bound must be'), (dict(outcome='s'), 'must have a numeric')]


@pytest.mark.parametrize('bad,match', BAD_ARMS)
def test_arm_sums_bad_arguments_refused_before_any_pass(client, bad, match):
    ddf = dd.from_pandas(_frame(200).assign(s='text'), npartitions=2)
    rows, calls = _spy(as_rows(ddf))
    kw = dict(outcome='y', treatment='t', covariates=['x0', 'x1'], weights=[0.1, 0.2, 0.3], constant=0.5, bounds=(0.1, 0.9))
    kw.update(bad)
    with pytest.raises((ValueError, TypeError), match=match): arm_sums(rows, **kw)
    assert calls == []


@pytest.mark.parametrize('bad,match', [(dict(n_partitions=0), 'n_partitions'), (dict(n_partitions=201), 'at most n'),
                                       (dict(key=-3), 'seed must be'), (dict(statistics=None), 'must be callable'),
                                       (dict(outcome='nope'), 'are not columns')])
def test_partition_map_bad_arguments_refused_before_any_pass(client, bad, match):
    rows, calls = _spy(as_rows(dd.from_pandas(_frame(200), npartitions=2)))
    kw = dict(statistics=lambda X, z, y, m: (X.sum((1, 2)),), covariates=['x0'], treatment='t', outcome='y', n_partitions=4, key=1)
    kw.update(bad)
    with pytest.raises((ValueError, TypeError), match=match): partition_map(rows, **kw)
    assert calls == []


@pytest.mark.parametrize('poison,match', [('nan', 'covariates has missing or infinite'), ('treat', 'treatment must be binary'),
                                          ('ball', 'outside the ball')])
def test_bad_data_on_one_worker_refused_and_nothing_charged(client, poison, match):
    pdf = _frame(1000, 2, scale=0.2)
    secret = 123.456789
    if poison == 'nan': pdf.loc[777, 'x1'] = np.nan
    if poison == 'treat': pdf.loc[777, 't'] = 2
    if poison == 'ball': pdf.loc[777, 'x1'] = secret
    ddf = dd.from_pandas(pdf, npartitions=4)
    ledger = PrivacyLedger(1.0, 1e-5)
    compute = lambda: fit_logistic_rows(ddf, covariates=['x0', 'x1'], treatment='t', lam=0.1).weights
    with pytest.raises(ValueError, match=match) as err:
        release_after(PrivacyCost(0.5, 1e-6), compute, ledger, rng=Untouchable())
    assert ledger.spent == (0.0, 0.0) and ledger.entries == ()
    msg = str(err.value)
    assert '777' not in msg and '123.45' not in msg and '1000' not in msg  # no row, value or count in the message


def _fails_on_one_partition(chunk, index):
    if index.size and index[0] >= 500: raise RuntimeError('disk read failed on this worker')
    return np.array([len(chunk), chunk['y'].sum()])


def test_worker_failure_mid_computation_leaves_ledger_uncharged(client):
    ddf = dd.from_pandas(_frame(1000), npartitions=4)
    rows = as_rows(ddf)
    ledger = PrivacyLedger(1.0)
    with pytest.raises(RuntimeError, match='disk read failed'):
        release_after(PrivacyCost(0.5), lambda: rows.map_reduce(_fails_on_one_partition, ['y']), ledger, rng=Untouchable())
    assert ledger.spent == (0.0, 0.0) and ledger.entries == ()
    # the same in a grouped computation
    with pytest.raises(ZeroDivisionError):
        release_after(PrivacyCost(0.5), lambda: rows.group_map(lambda i: i % 3, lambda v, b: 1 / 0, 3, ['y']), ledger,
                      rng=Untouchable())
    assert ledger.spent == (0.0, 0.0) and ledger.entries == ()
    # and the cluster is still usable afterwards; then the release goes through in order
    order = []
    def compute():
        order.append(('compute', ledger.spent[0])); return rows.map_reduce(lambda c, i: np.array([len(c)]), ['y'])
    def release(plan, carry, noisy, privacy):
        order.append(('release', ledger.spent[0])); return float(noisy[0])
    out = release_after(PrivacyCost(0.5, label='count', mechanism='laplace'), compute, ledger, release,
                        rng=np.random.default_rng(0), sigma=2.0, mechanism='laplace')
    assert order == [('compute', 0.0), ('release', 0.5)] and ledger.spent == (0.5, 0.0) and abs(out - 1000) < 100


def test_release_refuses_before_computing():
    ledger = PrivacyLedger(1.0)
    ledger.spend(PrivacyCost(0.8))
    computed = []
    with pytest.raises(BudgetExceededError):
        release_after(PrivacyCost(0.5), lambda: computed.append(1), ledger, rng=Untouchable())
    assert computed == [] and ledger.spent[0] == 0.8
    with pytest.raises(TypeError, match='plan.cost must be a PrivacyCost'): release_after(0.5, lambda: 1, None)
    with pytest.raises(TypeError, match='ledger must be'): release_after(PrivacyCost(0.5), lambda: 1, 'ledger')
    with pytest.raises(TypeError, match='statistics must return a Sealed'):
        run_release(OnlyCost(PrivacyCost(0.5)), None, statistics=lambda p, d, n: 1, release=lambda *a: a)
    out = release_after(PrivacyCost(0.5), lambda: 2, None, lambda plan, carry, noisy, privacy: noisy[0] + 1,
                        rng=np.random.default_rng(0), sigma=1e-9)  # no ledger: nothing to charge
    assert abs(out - 3) < 1e-6


def test_as_rows_refuses():
    df = _frame(20)
    with pytest.raises(TypeError, match='pandas or Dask DataFrame'): as_rows(df.to_numpy())
    with pytest.raises(TypeError, match='pandas or Dask DataFrame'): as_rows(df['x0'])
    with pytest.raises(ValueError, match='duplicate column'): as_rows(pd.concat([df, df['x0']], axis=1))
    with pytest.raises(ValueError, match='declared number of rows'): as_rows(df, n=21)
    assert as_rows(df, n=20).n == 20 and as_rows(as_rows(df)) is not None
    with pytest.raises(ValueError, match='labels_fn must return'):
        as_rows(df).group_map(lambda i: i, lambda v, b: np.zeros(len(b) - 1), 5, ['x0'])


def test_stack_groups():
    values = np.array([[1.0, 3.0], [2.0, 4.0], [5.0, 6.0]])
    V, mask = stack_groups(values, [0, 2, 2, 3], 3)  # the middle group is empty
    assert V.shape == (3, 3, 2) and mask.tolist() == [[True, True, False], [False] * 3, [True, False, False]]
    assert V[0, :2].tolist() == [[1.0, 3.0], [2.0, 4.0]] and V[2, 0].tolist() == [5.0, 6.0] and V[1].sum() == 0
    V, mask = stack_groups(values, [1, 2, 3], 2)  # bounds need not start at 0
    assert V[:, 0].tolist() == [[2.0, 4.0], [5.0, 6.0]] and mask.sum() == 2
    with pytest.raises(ValueError, match='more than size'): stack_groups(values, [0, 3], 2)


def test_in_memory_split_and_partition_are_the_keyed_ones():
    "pp_ipw's random split and WATE's partition in memory come from the keyed permutation, as on a Dask cluster."
    for seed in (0, 5):
        mask = ipw.random_split(1001, 0.4, np.random.default_rng(seed))
        ref = split_mask(np.arange(1001), 1001, 400, permutation_key(np.random.default_rng(seed)))
        assert np.array_equal(mask, ref) and mask.sum() == 400
    assert np.array_equal(ipw.random_split(50, 0.5, 3), split_mask(np.arange(50), 50, 25, 3))
    idx = partition_indices(103, 10, np.random.default_rng(1))
    labels = partition_labels(np.arange(103), 103, 10, permutation_key(np.random.default_rng(1)))
    for k in range(10): assert np.all(labels[idx[k][idx[k] >= 0]] == k)


def _map_of(df):
    "A row-wise public map (PP-IPW's declared ranges), picklable for the workers."
    return functools.partial(ipw._declared_map, covariates={'x0': (0.5, 2.0), 'x2': (-1.0, 0.5)},
                             outcome=('y', -2.0, 2.0, 0.5, 1.5))


def test_mapped_rows_equal_the_mapped_frame(client):
    "mapped_rows maps each chunk on the way: the statistics equal those of the frame mapped first, in memory in any chunks and on the workers."
    df = _frame(3000)
    tf = _map_of(df)
    ref = as_rows(tf(df))
    ddf = dd.from_pandas(df, npartitions=5)
    kw = dict(covariates=['x0', 'x1', 'x2'], treatment='t')
    w_ref = fit_logistic_rows(ref, **kw, lam=0.1, covariate_bound=2.0, clip_rows=True).weights
    s_ref = arm_sums(ref, **kw, outcome='y', weights=w_ref, bounds=(0.1, 0.9), covariate_bound=2.0, clip_rows=True)
    for rows in (mapped_rows(df, tf), mapped_rows(df, tf).chunked(128), mapped_rows(ddf, tf)):
        assert rows.n == 3000 and rows.columns == list(df.columns)
        w = fit_logistic_rows(rows, **kw, lam=0.1, covariate_bound=2.0, clip_rows=True).weights
        assert np.max(np.abs(w - w_ref)) < 1e-9
        s = arm_sums(rows, **kw, outcome='y', weights=w_ref, bounds=(0.1, 0.9), covariate_bound=2.0, clip_rows=True)
        assert np.allclose(s.hy, s_ref.hy, rtol=1e-12) and np.allclose(s.h2y2, s_ref.h2y2, rtol=1e-12)
        chk = check_rows(rows, **kw, outcome='y', outcome_bound=1.5)  # the map keeps the outcome within its bound
        assert chk.n_clipped_outcomes == 0
    with pytest.raises(ValueError, match='outcome_bound'):  # unmapped, the same outcomes break it
        check_rows(as_rows(df), **kw, outcome='y', outcome_bound=1.5)
    with pytest.raises(TypeError, match='callable'): mapped_rows(df, 'not a function')


def test_chunked_keeps_the_frame_and_the_sums():
    df = _frame(1000)
    rows = as_rows(df)
    small = rows.chunked(64)
    assert small.frame is rows.frame and small.chunk_rows == 64 and rows.chunk_rows == 1000
    fn = lambda chunk, index: (np.array([len(chunk), chunk['x0'].sum()]), index.sum())
    a, b = rows.map_reduce(fn, ['x0']), small.map_reduce(fn, ['x0'])
    assert a[0][0] == b[0][0] == 1000 and abs(a[0][1] - b[0][1]) < 1e-9 and a[1] == b[1]


# ---------------------------------------------------------------- (a) one pass without the design matrix

def _reference_chunk(chunk, index, covariates, treatment, w, bound, constant, clip, select, arm_column=None, arm=1.0,
                     intercept=False, role='treatment', hessian=False, loss=False, frobenius=False):
    "The pass written plainly: the design X of the fitted rows built explicitly (`_design`), then its sums in one go."
    A = chunk[list(covariates)].to_numpy(dtype=float)
    keep = np.ones(len(A), dtype=bool) if select is None else np.asarray(select(index), dtype=bool)
    if arm_column is not None: keep &= chunk[arm_column].to_numpy(dtype=float) == arm
    y = chunk[treatment].to_numpy(dtype=float)[keep]
    X, n_clipped = backend._design(A[keep], covariates, bound, constant, clip, intercept)
    s = X @ w
    p = expit(s)
    return (np.array([len(y), np.logaddexp(0.0, s).sum() - y @ s if loss else 0.0, np.sum(X * X) if frobenius else 0.0,
                      n_clipped]), (p - y) @ X, (X.T * (p * (1 - p))) @ X if hessian else 0.0)


def _pass_frame(n, d, seed, layout):
    "Covariates partly outside the ball of radius 2 (about 4% of rows), a 0/1 treatment and arm, columns in `layout` order."
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 0.8 / math.sqrt(d) * np.where(rng.random(n) < 0.04, 4.0, 1.0)[:, None]
    df = pd.DataFrame(X, columns=[f'x{j}' for j in range(d)]).assign(t=rng.binomial(1, expit(X @ np.linspace(1, -1, d))),
                                                                       z=rng.binomial(1, 0.5, n).astype(float))
    if layout == 'C': df = pd.DataFrame(np.ascontiguousarray(df.to_numpy()), columns=df.columns)  # row-major values
    if layout == 'shuffled': df = df[['z', 't', *reversed(df.columns[:d])]]  # read by name
    return df


@pytest.mark.parametrize('layout', ['F', 'C', 'shuffled'])
@pytest.mark.parametrize('bound,constant,clip,intercept,arm', [
    (2.0, None, True, False, None), (2.0, 0.4, True, False, None), (10.0, 0.4, False, False, 0.0), (None, None, False, False, None),
    (None, None, False, True, 1.0), (3.0, 0.3, True, True, None)])
def test_logistic_pass_equals_the_explicit_design(layout, bound, constant, clip, intercept, arm):
    n, d = 5000, 4
    df = _pass_frame(n, d, 1, layout)
    cov = [f'x{j}' for j in range(d)]
    kw = dict(covariates=cov, treatment='t', bound=bound, constant=constant, clip=clip, select=lambda i: i % 3 != 1,
              arm_column=None if arm is None else 'z', arm=arm, intercept=intercept)
    k = d + (constant is not None) + intercept
    w = np.linspace(-0.7, 0.9, k)
    for chunk_rows in (n, 700):  # blocks of 2,048 rows within a chunk, and chunks smaller than a block
        rows = as_rows(df, chunk_rows=chunk_rows)
        cols = None if layout == 'shuffled' else [*cov, 't'] + ([] if arm is None else ['z'])
        (m, f, sq, nc), g, H = rows.map_reduce(functools.partial(backend._logistic_chunk, w=w, hessian=True, loss=True,
                                                                 frobenius=True, **kw), cols)
        (m0, f0, sq0, nc0), g0, H0 = rows.map_reduce(functools.partial(_reference_chunk, w=w, hessian=True, loss=True,
                                                                       frobenius=True, **kw), cols)
        assert m == m0 and nc == nc0 and (nc > 0) == bool(clip)
        np.testing.assert_allclose([f, sq], [f0, sq0], rtol=1e-12)
        np.testing.assert_allclose(g, g0, rtol=1e-12, atol=1e-12 * np.abs(g0).max())
        np.testing.assert_allclose(H, H0, rtol=1e-12, atol=1e-12 * np.abs(H0).max())


@pytest.mark.parametrize('case', ['plain', 'constant', 'clip', 'no bound', 'unpenalised arm', 'dask'])
def test_fits_equal_the_explicit_design(client, monkeypatch, case):
    "The certified fits agree within 1e-12 (relative) with the same solver on the explicit design: the sums differ only in their order."
    n, d = 24_000, 5  # above 10,000 rows: the subsample start too
    df = _pass_frame(n, d, 2, 'F')
    cov = [f'x{j}' for j in range(d)]
    select = functools.partial(split_mask, n=n, m=n // 2, key=permutation_key(5))
    kw = dict(covariates=cov, treatment='t', lam=0.01, select=select)
    kw.update({'plain': dict(covariate_bound=10.0), 'constant': dict(covariate_bound=10.0, constant=0.5),
               'clip': dict(covariate_bound=2.0, constant=0.5, clip_rows=True), 'no bound': dict(covariate_bound=None, lam=1e-4),
               'dask': dict(covariate_bound=2.0, constant=0.5, clip_rows=True)}.get(case, {}))
    if case == 'unpenalised arm':
        fit = lambda: backend.fit_logistic_unpenalised_rows(df, covariates=cov, response='t', arm_column='z', arm=1.0)
    else: fit = lambda data=df: fit_logistic_rows(data, **kw).weights
    got = fit(dd.from_pandas(df, npartitions=5)) if case == 'dask' else fit()
    monkeypatch.setattr(backend, '_logistic_chunk', _reference_chunk)
    ref = fit()
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_arrays_with_a_covariate_named_twice_name_the_argument():
    "pp_ipw/wate with X= and covariates=['a', 'a'] said 'data has duplicated column names' (audit 15's note): covariates is named."
    X, t = np.zeros((20, 2)), np.r_[np.zeros(10), np.ones(10)]
    with pytest.raises(ValueError, match=r"covariates: \['a'\] named more than once"):
        backend.arrays_rows(X, t, np.zeros(20), covariates=["a", "a"])
