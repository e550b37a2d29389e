"""Tests of privcausal.anm: references, calibration, validation before any noise or spend, privacy of the release object."""
import json
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.kernel_ridge import KernelRidge as SKKernelRidge

from privcausal import anm
from privcausal.accounting import BudgetExceededError, PrivacyLedger
from privcausal.mechanisms import PrivacyLeakWarning
from privcausal.mechanisms import NoiseSource, ResearchNoise
from privcausal.release import KEYS, NoIntervalError, NotPrivate, PrivacyRecord, PrivateRelease, load


def cubic(m, seed, noise=0.3):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, m)
    return x, x**3 + noise * rng.uniform(-1, 1, m)


@pytest.fixture(scope='module')
def fit():
    x, y = cubic(600, 1)
    return anm.anm_fit(x, y, (-1, 1), (-1.3, 1.3), seed=0)


class ExplodingNoise(NoiseSource):
    "Fails the test if any noise is drawn."
    name = 'exploding'
    def _laplace(self, value, scale): raise AssertionError('noise drawn')
    def _gaussian(self, value, sigma): raise AssertionError('noise drawn')


# ---------- references
@pytest.mark.parametrize('lam,h', [(0.01, 0.25), (1.0, 0.1), (1e-4, 1.0)])
def test_krr_matches_sklearn_with_repeated_inputs(lam, h):
    rng = np.random.default_rng(2)
    x = rng.choice(np.linspace(-1, 1, 9), 150)
    x[:40] = rng.uniform(-1, 1, 40)  # a mix of distinct and repeated inputs
    y = np.sin(3 * x) + 0.1 * rng.normal(size=150)
    f = anm.fit_krr(x, y, lam, h)
    sk = SKKernelRidge(alpha=150 * lam / 2, kernel='rbf', gamma=1 / (2 * h * h)).fit(x[:, None], y)
    grid = np.linspace(-1.2, 1.2, 31)
    np.testing.assert_allclose(f.predict(grid), sk.predict(grid[:, None]), atol=1e-8)


def test_two_separate_models(fit):
    # the authors' script aliased f and g; here r_Y must use f (X -> Y), r_X must use g (Y -> X)
    np.testing.assert_allclose(fit.r_y, fit.y_test - fit.f.predict(fit.x_test))
    np.testing.assert_allclose(fit.r_x, fit.x_test - fit.g.predict(fit.y_test))
    assert not np.allclose(fit.f.coef[:5], fit.g.coef[:5])


def test_scores_match_scipy_without_ties():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=500), rng.normal(size=500) + 0.3 * rng.normal(size=500)
    b = b + 0.5 * a
    assert anm.kendall_score(a, b) == pytest.approx(abs(stats.kendalltau(a, b).statistic), abs=1e-12)
    assert anm.spearman_score(a, b) == pytest.approx(abs(stats.spearmanr(a, b).statistic), abs=1e-12)


def test_kendall_with_ties_matches_brute_force():
    rng = np.random.default_rng(4)
    for m in (2, 5, 40, 200):
        a, b = rng.integers(0, 3, m), rng.integers(0, 4, m)
        ra, rb = anm.permutation_ranks(a), anm.permutation_ranks(b)
        s = np.sign(np.subtract.outer(ra, ra)) * np.sign(np.subtract.outer(rb, rb))
        assert anm.kendall_concordance(a, b) == int(np.triu(s, 1).sum())


@pytest.mark.parametrize('m,block', [(2, 10), (37, 100), (300, 1000), (300, 2**22)])
def test_blocked_hsic_equals_dense(m, block):
    rng = np.random.default_rng(m)
    a, b = rng.uniform(-1, 1, m), rng.normal(size=m)
    assert anm.hsic_score(a, b, 0.4, 0.7, block_elements=block) == pytest.approx(anm.hsic_dense(a, b, 0.4, 0.7), abs=1e-12)


def test_iqr_order_statistics():
    a = np.arange(1.0, 101.0)
    assert anm.iqr(a) == 75.0 - 25.0
    assert anm.iqr(np.r_[a, 1000.0]) == a[75] - a[25]  # ceil(101/4)=26th, ceil(303/4)=76th


# ---------- calibration (seeded research noise; each KS test fails by chance with probability 1e-6)
@pytest.mark.parametrize('score,scale_of', [
    ('kendall', lambda m: 4 / m), ('spearman', lambda m: 30 / m),
    ('hsic', lambda m: (16 * m - 8) / (m - 1) ** 2)])
def test_test_set_laplace_scale(fit, score, scale_of):
    eps = 0.8
    exact = np.array(anm.scores_of(fit, score))
    noise = ResearchNoise(np.random.default_rng(11))
    draws = np.array([anm.private_direction(fit, score, eps, rng=noise).scores for _ in range(3000)]) - exact
    b = scale_of(fit.n_test) / (eps / 2)
    for col in draws.T:
        assert stats.kstest(col, stats.laplace(scale=b).cdf).pvalue > 1e-6
    # a wrong calibration (the full epsilon per direction) is detected by the same test
    assert stats.kstest(draws[:, 0], stats.laplace(scale=b / 2).cdf).pvalue < 1e-6


def test_train_hsic_and_both_add_sensitivities(fit):
    r_test = anm.private_direction(fit, 'hsic', 1.0, privacy='test', rng=np.random.default_rng(0))
    r_train = anm.private_direction(fit, 'hsic', 1.0, privacy='train', rng=np.random.default_rng(0))
    r_both = anm.private_direction(fit, 'hsic', 1.0, privacy='both', rng=np.random.default_rng(0))
    st, sr = dict(r_test.sensitivity)['test'], dict(r_train.sensitivity)['train']
    assert sr == pytest.approx(anm.hsic_train_sensitivity(fit.n_train, fit.n_test, fit.lam, 0.5))
    assert dict(r_both.noise_scale)['x->y'] == pytest.approx((st + sr) / 0.5)


def test_iqr_accounting_options(fit):
    kw = dict(delta=1e-3, rng=np.random.default_rng(0))
    rec = anm.private_direction(fit, 'iqr', 1.2, **kw)
    with pytest.warns(UserWarning, match='true cost'):
        pap = anm.private_direction(fit, 'iqr', 1.2, iqr_accounting='paper', **kw)
    adv = anm.private_direction(fit, 'iqr', 1.2, iqr_accounting='advanced', **kw)
    ptr_eps = lambda r: dict(r.privacy.public)['ptr_epsilon']
    assert ptr_eps(rec) == pytest.approx(0.1)
    assert ptr_eps(pap) == pytest.approx(1.2 / 9)
    assert adv.privacy.epsilon <= 1.2 + 1e-9 and adv.privacy.delta <= 1e-3 + 1e-15
    assert ptr_eps(adv) < ptr_eps(rec)  # advanced is worse for 4 calls
    assert rec.privacy.delta == 1e-3 and rec.privacy.epsilon == 1.2
    # the paper counts per variable; each record touches all four IQRs: (12 eps', 4 delta') is charged and reported
    assert pap.privacy.epsilon == pytest.approx(1.6) and pap.privacy.delta == pytest.approx(4e-3 / 3)
    assert pap.privacy.guarantee_holds and pap.to_dict()['privacy']['epsilon'] == pytest.approx(1.6)
    ledger = PrivacyLedger(10, 0.1)
    with pytest.warns(UserWarning, match='true cost'):
        anm.private_direction(fit, 'iqr', 1.2, 1e-3, iqr_accounting='paper', ledger=ledger, rng=np.random.default_rng(0))
    assert ledger.spent[0] == pytest.approx(1.6) and ledger.spent[1] == pytest.approx(4e-3 / 3)


def test_iqr_ptr_releases_on_large_stable_data():
    rng = np.random.default_rng(0)
    a = rng.normal(size=20000)
    out = anm.iqr_ptr(a, 1.0, 1e-6, rng=rng)
    assert out.released and abs(out.value - math.log(anm.iqr(a))) < 20  # Lap(1) noise
    assert anm.iqr_ptr(a[:20], 1.0, 1e-6, rng=rng).released is False  # A_j is tiny for 20 points


# ---------- validation before noise or spend
BAD = [
    (dict(epsilon=0), 'epsilon'), (dict(epsilon=-1), 'epsilon'), (dict(epsilon=float('nan')), 'epsilon'),
    (dict(score='iqr', epsilon=1, delta=0), 'delta'), (dict(score='iqr', epsilon=1, delta=1.0), 'delta'),
    (dict(score='iqr', epsilon=1), 'delta is required'), (dict(score='kendall', privacy='train'), 'delta is required'),
    (dict(score='variance'), 'unbounded'), (dict(score='pearson'), 'score'), (dict(privacy='all'), 'privacy'),
    (dict(score='spearman', privacy='both'), 'HSIC score only'),
    (dict(score='hsic', hsic_bandwidths=(0.5, -1)), 'hsic_bandwidths'),
    (dict(score='hsic', hsic_bound='loose'), 'bound'),
    (dict(score='iqr', delta=1e-3, iqr_threshold='fast'), 'threshold'),
    (dict(score='iqr', delta=1e-3, iqr_accounting='wrong'), 'iqr_accounting'),
    (dict(score='kendall', privacy='train', delta=1e-3, residual_constant='x'), 'constant'),
    (dict(score='hsic', hsic_bandwidths=(1,)), 'hsic_bandwidths'), (dict(score='hsic', hsic_bandwidths=(1, 2, 3)), 'hsic_bandwidths'),
    (dict(score='hsic', hsic_bandwidths=0.5), 'hsic_bandwidths'),
    # options that void the guarantee are refused unless allow_unsafe=True
    (dict(score='iqr', delta=1e-3, iqr_threshold=-100), 'allow_unsafe'),
    (dict(score='iqr', delta=1e-3, iqr_threshold=5.0), 'safe minimum'),
    (dict(score='iqr', delta=1e-3, iqr_threshold='paper'), 'safe minimum'),  # per-test eps' = 1/12 < 1
    (dict(score='iqr', privacy='train', delta=1e-3, iqr_threshold='paper'), 'safe minimum'),
]


@pytest.mark.parametrize('kw,msg', BAD)
def test_bad_options_fail_before_noise_and_spend(fit, kw, msg):
    ledger = PrivacyLedger(100, 0.5)
    with pytest.raises(ValueError, match=msg):
        anm.private_direction(fit, **kw, ledger=ledger, rng=ExplodingNoise())
    assert ledger.entries == ()


BAD_DATA = [
    (dict(x=np.r_[np.nan, np.zeros(99)]), 'NaN'), (dict(x=np.r_[np.inf, np.zeros(99)]), 'NaN or infinite'),
    (dict(x=np.array(['a'] * 100)), 'numeric'), (dict(x=np.zeros((100, 2))), '1-d'),
    (dict(x=np.linspace(-1, 1, 100).astype(str)), 'x must be numeric'),  # numeric strings are refused, not converted
    (dict(y=np.array([*np.linspace(-1, 1, 99), 'secret'], dtype=object)), 'y must be numeric'),  # (object arrays of numbers are converted)
    (dict(x=np.linspace(-2, 2, 100)), 'outside the public bounds'), (dict(x_bounds=None), 'PUBLIC bounds'),
    (dict(x_bounds=(1, -1)), 'lower < upper'), (dict(lam=0), 'lam'), (dict(lam=1.01), 'lam'),
    (dict(bandwidth='median'), 'data-dependent'), (dict(bandwidth=0), 'bandwidth'),
    (dict(train_fraction=0.97), 'need >= 4'), (dict(train_fraction=0.99), 'need >= 2'), (dict(train_fraction=1.0), 'train_fraction'),
    (dict(x=np.linspace(-1, 1, 7), y=np.linspace(0, 1, 7)), 'at least 8'),
    (dict(y=np.linspace(-1, 1, 99)), 'same length'),
    (dict(split=['train'] * 99 + ['tset']), "'train' or 'test'"), (dict(split=['train'] * 97 + ['test'] * 3), '>= 4'),
]


@pytest.mark.parametrize('kw,msg', BAD_DATA)
def test_bad_data_fail_before_noise_and_spend(kw, msg):
    args = dict(x=np.linspace(-1, 1, 100), y=np.linspace(-1, 1, 100) ** 3, x_bounds=(-1, 1), y_bounds=(-1, 1))
    args.update(kw)
    ledger = PrivacyLedger(100, 0.5)
    with pytest.raises((ValueError, TypeError), match=msg):
        anm.anm_direction(**args, score='hsic', epsilon=1, ledger=ledger, rng=ExplodingNoise())
    assert ledger.entries == ()


@pytest.mark.parametrize('bad', ['NaN in x', 'inf in y', 'x outside its bounds'])
def test_ledger_refusal_comes_before_any_value_is_read(bad):
    "Only metadata (dtype, shape, lengths, 8 records) is checked before the ledger: an unaffordable release is refused by the ledger, whatever the values; an affordable one then refuses the values, spending nothing."
    x, y = np.linspace(-1, 1, 100), np.linspace(-1, 1, 100) ** 3
    if bad == 'NaN in x': x = np.r_[x[:-1], np.nan]
    elif bad == 'inf in y': y = np.r_[np.inf, y[1:]]
    else: x = np.r_[x[:-1], 5.0]
    says = {'NaN in x': 'x must be finite', 'inf in y': 'y must be finite'}.get(bad, 'outside the public bounds')
    for score, delta in (('kendall', None), ('iqr', 1e-3)):
        poor = PrivacyLedger(0.5, 0.5)
        with pytest.raises(BudgetExceededError):
            anm.anm_direction(x, y, (-1, 1), (-1, 1), score=score, epsilon=1.0, delta=delta, ledger=poor, rng=ExplodingNoise())
        rich = PrivacyLedger(5.0, 0.5)
        with pytest.raises(ValueError, match=says):
            anm.anm_direction(x, y, (-1, 1), (-1, 1), score=score, epsilon=1.0, delta=delta, ledger=rich, rng=ExplodingNoise())
        assert poor.entries == rich.entries == ()


def test_clip_is_announced_whenever_requested_without_counts():
    x, y = np.linspace(-2, 2, 100), np.linspace(-1, 1, 100)
    with pytest.warns(UserWarning, match='clip=True') as rec:
        f1 = anm.anm_fit(x, y, (-1, 1), (-1, 1), clip=True)  # 50 values clipped
        f0 = anm.anm_fit(x / 2, y, (-1, 1), (-1, 1), clip=True)  # none clipped: announced all the same
    msgs = [str(w.message) for w in rec]
    assert len(msgs) == 2 and msgs[0] == msgs[1] and '50' not in msgs[0] and 'NOT PRIVATE' in msgs[0]
    assert all(w.filename == __file__ for w in rec)  # stacklevel: the warning points at the caller's line
    assert f1.clipped == (50, 0) and f0.clipped == (0, 0)
    assert anm.diagnostics(f1).clipped == (50, 0) and anm.diagnostics(f1).to_dict()['clipped'] == {'x': 50, 'y': 0}
    with pytest.warns(UserWarning, match='clip=True') as rec:
        anm.anm_direction(x, y, (-1, 1), (-1, 1), clip=True, rng=np.random.default_rng(0))
    assert all(w.filename == __file__ for w in rec)


def test_messages_print_no_data_derived_numbers():
    x = np.r_[np.linspace(-1, 1, 97), [3.0, 4.0, 5.0]]  # three values out of bounds
    with pytest.raises(ValueError, match='outside the public bounds') as e:
        anm.anm_fit(x, x, (-1, 1), (-10, 10))
    assert '3' not in str(e.value).replace('[-1, 1]', '')
    with pytest.raises(ValueError, match='NaN') as e:
        anm.anm_fit(np.r_[np.full(7, np.nan), np.zeros(93)], np.zeros(100), 1, 1)
    assert '7' not in str(e.value)
    with pytest.raises(ValueError, match="'train' or 'test'") as e:
        anm.anm_fit(np.zeros(100), np.zeros(100), 1, 1, split=['train'] * 50 + ['secret-label'] * 7 + ['test'] * 43)
    assert '7' not in str(e.value) and 'secret' not in str(e.value)
    assert 'distinct' not in repr(anm.anm_fit(np.zeros(100), np.zeros(100), 1, 1).f)


def test_overspending_refused_before_noise(fit):
    ledger = PrivacyLedger(1.0)
    anm.private_direction(fit, 'kendall', 0.6, ledger=ledger, rng=np.random.default_rng(0))
    with pytest.raises(BudgetExceededError):
        anm.private_direction(fit, 'kendall', 0.6, ledger=ledger, rng=ExplodingNoise())
    assert len(ledger.entries) == 1 and ledger.spent[0] == pytest.approx(0.6)


def test_bad_rng_fails_before_spend(fit):
    ledger = PrivacyLedger(100, 0.5)
    for score, delta in (('kendall', None), ('iqr', 1e-3), ('hsic', None)):
        with pytest.raises(TypeError, match='default_rng'):
            anm.private_direction(fit, score, 1.0, delta, ledger=ledger, rng=42)
    assert ledger.entries == ()


# ---------- options that void the guarantee
@pytest.fixture(scope='module')
def fit_lam1():
    x, y = cubic(300, 7)
    return anm.anm_fit(x, y, (-1, 1), (-1.3, 1.3), lam=1.0, seed=0)


UNSAFE = [
    (dict(score='iqr', delta=1e-3, iqr_threshold=-100), 'iqr_threshold'),
    (dict(score='iqr', delta=1e-3, epsilon=2.0, iqr_threshold='paper'), 'iqr_threshold'),
    (dict(score='hsic', privacy='train', residual_constant='paper'), 'residual_constant'),
    (dict(score='kendall', privacy='train', delta=1e-3, residual_constant='paper'), 'residual_constant'),
    (dict(score='iqr', privacy='train', delta=1e-3, residual_constant='paper'), 'residual_constant'),
]


@pytest.mark.parametrize('kw,reason', UNSAFE)
def test_unsafe_options_refused_then_marked(fit_lam1, kw, reason):
    kw = {'epsilon': 1.0, **kw}
    ledger = PrivacyLedger(100, 0.5)
    with pytest.raises(ValueError, match='allow_unsafe'):
        anm.private_direction(fit_lam1, **kw, ledger=ledger, rng=ExplodingNoise())
    assert ledger.entries == ()
    with pytest.warns(PrivacyLeakWarning, match=reason):
        res = anm.private_direction(fit_lam1, **kw, rng=np.random.default_rng(0), allow_unsafe=True)
    d = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert res.privacy.guarantee_holds is False and d['privacy']['guarantee_holds'] is False
    assert reason in ' '.join(d['privacy']['caveats']) and d['privacy']['guarantee'].startswith('NOT differentially private')
    assert 'NOT' in res.summary().splitlines()[1] and 'NOT DP AS STATED' in repr(res)
    safe = anm.private_direction(fit_lam1, **{k: v for k, v in kw.items() if k not in ('iqr_threshold', 'residual_constant')},
                                 rng=np.random.default_rng(0))
    assert safe.privacy.guarantee_holds and safe.to_dict()['privacy']['caveats'] == [] and 'NOT DP AS STATED' not in repr(safe)


def test_safe_variants_of_the_options_pass(fit):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        # a threshold at or above the safe minimum, and the paper's constant where it is larger (lam = 0.01)
        e1, d1 = 1.0 / 12, 1e-3 / 4
        high = anm.ptr_threshold(e1, d1) + 1
        assert anm.private_direction(fit, 'iqr', 1.0, 1e-3, iqr_threshold=high, rng=np.random.default_rng(0)).privacy.guarantee_holds
        assert anm.private_direction(fit, 'hsic', 1.0, privacy='train', residual_constant='paper',
                                     rng=np.random.default_rng(0)).privacy.guarantee_holds
        assert anm.iqr_ptr(np.arange(50.0), 1.0, 1e-3, threshold='paper', rng=np.random.default_rng(0)).safe  # eps = 1
    assert not anm.threshold_is_safe(anm.ptr_threshold(0.5, 1e-3, 'paper'), 0.5, 1e-3)


# ---------- the shape of a release does not depend on the data
IQR0 = np.r_[-.5, -.4, np.zeros(8), .4, .5]  # IQR exactly 0
IQR0_NEIGHBOUR = IQR0.copy(); IQR0_NEIGHBOUR[2] = -.45  # one record changed: IQR 0.4


def _shape(obj):
    if isinstance(obj, dict): return tuple(sorted((k, _shape(v)) for k, v in obj.items()))
    if isinstance(obj, (list, tuple)): return ('seq', len(obj), tuple(_shape(v) for v in obj))
    return type(obj).__name__ if obj is not None else 'None'


def test_iqr_ptr_shape_does_not_reveal_a_zero_iqr():
    assert anm.iqr(IQR0) == 0 and anm.iqr(IQR0_NEIGHBOUR) > 0
    shapes = {0: set(), 1: set()}
    for s in range(300):
        for k, a in enumerate((IQR0, IQR0_NEIGHBOUR)):
            rel = anm.iqr_ptr(a, 1.0, 1e-3, rng=np.random.default_rng(s))
            assert not rel.released  # A_j <= 1: refused (passing has probability <= delta)
            shapes[k].add((len(rel.noisy_distances), all(isinstance(v, float) for v in rel.noisy_distances)))
    assert shapes[0] == shapes[1] == {(2, True)}
    # the zero-IQR tests are drawn with the right law: R_j = 0 + Lap(1/eps), KS false-failure rate 1e-6
    draws = np.array([anm.iqr_ptr(IQR0, 1.0, 1e-3, rng=np.random.default_rng(s)).noisy_distances for s in range(2000)])
    assert stats.kstest(draws[:, 0], stats.laplace(scale=1.0).cdf).pvalue > 1e-6
    # secure noise too
    assert len(anm.iqr_ptr(IQR0, 1.0, 1e-3).noisy_distances) == 2


def _iqr0_fit(x_test):
    rng = np.random.default_rng(0)
    x = np.r_[rng.uniform(-1, 1, 12), x_test]
    y = np.clip(x**3 + 0.3 * rng.uniform(-1, 1, 24), -1.3, 1.3)
    return anm.anm_fit(x, y, (-1, 1), (-1.3, 1.3), split=['train'] * 12 + ['test'] * 12)


@pytest.mark.parametrize('privacy', ['test', 'train'])
def test_release_shape_identical_on_iqr0_neighbours(privacy):
    fits = [_iqr0_fit(IQR0), _iqr0_fit(IQR0_NEIGHBOUR)]
    assert anm.iqr(fits[0].x_test) == 0 and anm.iqr(fits[1].x_test) > 0
    shapes = [set(), set()]
    for s in range(150):
        for k, f in enumerate(fits):
            d = anm.private_direction(f, 'iqr', 1.0, 1e-3, privacy, rng=np.random.default_rng(s)).to_dict()
            tests = {n: v for n, v in d['released'].items() if n.startswith('noisy_distance')}
            shapes[k].add(_shape(tests))  # the noisy test statistics: always drawn, always numbers
            shapes[k].add(tuple(sorted(d['released'])))
            shapes[k].add(_shape({n: v for n, v in d.items() if n not in ('released', 'direction')}))
    assert shapes[0] == shapes[1] and len(shapes[0]) == 3
    # every PTR record holds both noisy distances of every tested quantity
    d = anm.private_direction(fits[0], 'iqr', 1.0, 1e-3, privacy, rng=np.random.default_rng(0)).to_dict()
    names = [n for n in d['released'] if n.startswith('noisy_distance')]
    assert len(names) == (8 if privacy == 'test' else 4) and all(isinstance(d['released'][n], float) for n in names)


def test_train_iqr_zero_residual_iqr_draws_both_tests():
    rel = anm._ptr_release(None, (0, 0), 0.5, 1e-3, -1e9, anm.resolve_noise(np.random.default_rng(0)))
    assert rel.value is None and len(rel.noisy_distances) == 2  # never released, even when the tests pass


# ---------- the release object
def test_release_object_holds_no_exact_score(fit):
    res = anm.private_direction(fit, 'hsic', 1.0)  # secure noise
    assert res.privacy.noise_source == 'opendp' and res.privacy.is_secure
    d = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    text = repr(res) + res.summary() + json.dumps(d) + res.to_frame().to_string() + res._repr_html_()
    for s in anm.scores_of(fit, 'hsic'):
        assert f'{s:.6g}' not in text
    assert set(d) == set(KEYS) and d['method'] == 'ANM' and d['direction'] == res.direction
    assert (d['privacy']['epsilon'], d['privacy']['delta'], d['privacy']['noise_source']) == (1.0, 0.0, 'opendp')
    assert d['privacy']['public']['n_test'] == fit.n_test and d['settings']['privacy_set'] == 'test'
    assert d['settings']['noise_scale'] == pytest.approx(anm.hsic_test_sensitivity(fit.n_test) / 0.5)
    assert d['released']['score_x_to_y'] == res.scores[0] and d['released']['refused'] is False
    diag = anm.diagnostics(fit, 'hsic')
    assert isinstance(diag, NotPrivate) and diag.to_dict()['NOT_PRIVATE'] is True
    assert repr(diag).startswith('ANMDiagnostics[NOT PRIVATE]') and 'NOT PRIVATE' in repr(fit)


def test_refusal_is_explicit(fit):
    res = anm.private_direction(fit, 'iqr', 1.0, delta=1e-6, rng=np.random.default_rng(0))
    assert res.refused and res.scores is None and res.direction is None
    d = res.to_dict()
    assert d['released']['score_x_to_y'] is None and d['released']['refused'] is True and '⊥' in res.summary()


def test_rank_train_release_is_exact_when_stable():
    rng = np.random.default_rng(5)
    x = rng.choice(np.linspace(-1, 1, 21), 12000)
    y = np.round(x**3 + 0.3 * rng.uniform(-1, 1, 12000), 2)
    f = anm.anm_fit(x, y, (-1, 1), (-1.3, 1.3), lam=1.0, train_fraction=11990 / 12000, seed=2)
    res = anm.private_direction(f, 'spearman', 10.0, 1e-3, 'train', rng=np.random.default_rng(0))
    assert res.scores == anm.scores_of(f, 'spearman') and res.noise_sd == 0.0


def test_decision_rule():
    assert anm.decide(0.1, 0.2) == 'x->y' and anm.decide(0.3, 0.2) == 'y->x'
    assert anm.decide(0.2, 0.2) is None and anm.decide(None, 0.2) is None


# ---------- IQR Propose-Test-Release: Dwork & Lei's bins (issue 8 §1)
def _old_bins(value):
    "The appendix's construction, kept here as the negative control only: B2 = [e^(k-1/2), e^(k+1/2)), k = floor(ln v)."
    k = math.floor(math.log(value))
    return (math.exp(k), math.exp(k + 1)), (math.exp(k - 0.5), math.exp(k + 0.5))


def _distances(a, bins):
    v = anm.iqr(a)
    return (0, 0) if v <= 0 else tuple(anm.iqr_distance(a, *b) for b in bins(v))


def _edge_pairs():
    "Neighbours whose IQR sits just below / just above every edge of both grids, at many scales, plus IQR 0 vs > 0."
    for t in np.arange(-8, 8.5, 0.5):
        E = math.exp(t)
        for eta in (1e-3 * E, 1e-9 * E):
            for zeros, lo_n, hi_n in ((200, 100, 100), (6, 3, 3), (20, 12, 9), (4, 2, 2)):
                d = np.r_[np.zeros(zeros), np.full(lo_n, E - eta), np.full(hi_n, E + eta)]
                d1 = d.copy(); d1[0] = E + eta  # the third quartile crosses E
                yield d, d1
                yield -d, -d1  # the first quartile crosses -E
    for m in (8, 12, 41):
        q3 = anm.quartile_ranks(m)[1]
        d = np.r_[np.zeros(q3), np.arange(1.0, m - q3 + 1)]  # the third quartile is a 0: IQR 0
        d1 = d.copy(); d1[0] = 50.0  # IQR 1
        assert anm.iqr(d) == 0 < anm.iqr(d1)
        yield d, d1


def test_iqr_test_statistics_have_sensitivity_one_at_every_edge():
    worst_new, worst_old = 0, 0
    for d, d1 in _edge_pairs():
        new = np.subtract(anm.iqr_distances(d), anm.iqr_distances(d1))
        old = np.subtract(_distances(d, _old_bins), _distances(d1, _old_bins))
        worst_new, worst_old = max(worst_new, np.abs(new).max()), max(worst_old, np.abs(old).max())
    assert worst_new <= 1
    assert worst_old >= 100  # the appendix's bins: one record moves A_2 by about m/4 (the check can fail)


def test_iqr_bins_contain_the_value_on_both_sides_of_every_edge():
    for t in np.arange(-700, 709, 0.5):
        E = math.exp(t)
        for v in (E, np.nextafter(E, 0), np.nextafter(E, np.inf)):
            (l1, u1), (l2, u2) = anm.iqr_bins(v)
            assert l1 <= v < u1 and l2 <= v < u2
    with pytest.raises(ValueError, match='no bin'):
        anm.iqr_bins(0.0)


def test_issue_reproduction_is_consistent_with_secure_noise():
    D = np.r_[np.zeros(200), np.full(100, np.e - 1e-3), np.full(100, np.e + 1e-3)]
    Dp = D.copy(); Dp[0] = np.e + 1e-3
    counts = [sum(anm.iqr_ptr(d, 1 / 3, 1e-6).released for _ in range(200)) for d in (D, Dp)]
    assert min(counts) >= 190  # was 0 and 200 with the appendix's bins


def test_iqr_release_consistent_on_edge_neighbours_through_the_pipeline():
    # one test record moves the IQR of x across the edge e^(-1) of grid 1: with the appendix's bins one data set
    # was refused and the other released; with Dwork & Lei's both are released at the same rate
    E, eta = math.exp(-1.0), 1e-3
    base = np.r_[np.full(200, -0.5), np.full(100, -0.5 + E - eta), np.full(100, -0.5 + E + eta)]
    x_tests = [base, base.copy()]; x_tests[1][0] = -0.5 + E + eta
    rng = np.random.default_rng(0)
    x_train = rng.uniform(-1, 1, 400)
    fits, shares = [], []
    for xt in x_tests:
        x = np.r_[x_train, xt]
        y = np.clip(x**3 + 0.3 * np.random.default_rng(1).uniform(-1, 1, 800), -1.3, 1.3)
        fits.append(anm.anm_fit(x, y, (-1, 1), (-1.3, 1.3), split=['train'] * 400 + ['test'] * 400))
    old = [_distances(f.x_test, _old_bins)[1] for f in fits]
    assert min(old) == 0 and max(old) >= 50  # on the edge: the appendix's A_2 jumps from 0 to about m/4
    new = [anm.iqr_distances(f.x_test) for f in fits]
    assert np.abs(np.subtract(*new)).max() <= 1
    noise = ResearchNoise(np.random.default_rng(2))
    for f in fits:
        shares.append(np.mean([not anm.private_direction(f, 'iqr', 60.0, 1e-3, rng=noise).refused for _ in range(150)]))
    assert min(shares) > 0.9 and abs(shares[0] - shares[1]) < 0.1


def test_iqr_train_statistics_sensitivity_one():
    dr = 0.01
    worst_new = worst_old = 0
    for t in np.arange(-3, 3.5, 0.5):
        E = math.exp(t)
        for v, v1 in ((E - 0.5 * dr, E + 0.5 * dr), (E + 1e-12, E - 1e-12), (E - dr, E + dr), (1e-12, 2 * dr)):
            if v <= 0 or v1 <= 0: continue
            new = [tuple(anm.iqr_train_distance(u, *b, dr) for b in anm.iqr_bins(u)) for u in (v, v1)]
            old = [tuple(anm.iqr_train_distance(u, *b, dr) for b in _old_bins(u)) for u in (v, v1)]
            worst_new = max(worst_new, np.abs(np.subtract(*new)).max())
            worst_old = max(worst_old, np.abs(np.subtract(*old)).max())
    # an IQR of 0 (statistic 0) and a neighbour's IQR of at most 2 dr
    assert all(max(s) <= 1 for s in [anm._iqr_train_statistics(np.r_[np.zeros(6), np.full(6, u)], dr)[1] for u in (1e-9, dr, 2 * dr)])
    assert worst_new <= 1 and worst_old > 1


# ---------- degenerate data go through the mechanisms (issue 8 §2)
COMBOS = [('spearman', 'test', None), ('kendall', 'test', None), ('hsic', 'test', None), ('hsic', 'train', None),
          ('hsic', 'both', None), ('iqr', 'test', 1e-3), ('iqr', 'train', 1e-3), ('kendall', 'train', 1e-3),
          ('spearman', 'train', 1e-3)]


def _skeleton(d):
    if isinstance(d, dict): return tuple(sorted((k, _skeleton(v)) for k, v in d.items()))
    if isinstance(d, (list, tuple)): return ('seq', len(d), tuple(_skeleton(v) for v in d))
    return 'number' if isinstance(d, (int, float)) else type(d).__name__


@pytest.mark.parametrize('score,privacy,delta', COMBOS)
def test_degenerate_data_release_like_any_other(score, privacy, delta):
    rng = np.random.default_rng(3)
    y = rng.uniform(-1, 1, 120)
    x_const = np.zeros(120); x_one = x_const.copy(); x_one[5] = 0.7  # constant, and its neighbour
    shapes = []
    for x, yy in ((x_const, y), (x_one, y), (y, np.zeros(120)), (np.zeros(120), np.zeros(120))):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter('error')  # no data-dependent warning either (e.g. an ill-conditioned solve)
            res = anm.anm_direction(x, yy, (-1, 1), (-1, 1), score=score, epsilon=2.0, delta=delta, privacy=privacy, seed=0,
                                    rng=np.random.default_rng(0))
        d = json.loads(json.dumps(res.to_dict(), allow_nan=False))
        shapes.append(_skeleton({k: v for k, v in d.items() if k not in ('released', 'direction')}) + tuple(sorted(d['released'])))
    assert len(set(shapes)) == 1


def test_training_size_limit_is_public():
    # refused because of the public training size, whatever the values: few distinct values or many
    n = 2 * (anm.MAX_TRAIN + 1)
    msgs = []
    for x in (np.zeros(n), np.linspace(-1, 1, n)):
        with pytest.raises(ValueError, match='public size') as e:
            anm.anm_direction(x, x, (-1, 1), (-1, 1), rng=ExplodingNoise())
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


# ---------- the calibration is validated before the charge (issue 8 §4)
INVALID_AT_1E308 = {('spearman', 'test'), ('kendall', 'test'), ('hsic', 'test'), ('kendall', 'train'),
                    ('spearman', 'train')}  # a scale below the smallest normal double; elsewhere 1e308 is a valid (useless) budget


@pytest.mark.parametrize('epsilon', [1e-320, 1e308])
@pytest.mark.parametrize('score,privacy,delta', COMBOS)
def test_absurd_epsilon_refused_before_charge_or_released(fit, epsilon, score, privacy, delta):
    ledger = PrivacyLedger(1.7e308, 0.5)
    if epsilon < 1 or (score, privacy) in INVALID_AT_1E308:
        with pytest.raises(ValueError, match='epsilon'):
            anm.private_direction(fit, score, epsilon, delta, privacy, ledger=ledger, rng=ExplodingNoise())
        with pytest.raises(ValueError, match='epsilon'):
            anm.plan_direction(n_train=fit.n_train, n_test=fit.n_test, score=score, epsilon=epsilon, delta=delta, privacy=privacy)
        assert ledger.entries == ()
    else:  # the calibration is valid: the release happens, after exactly one charge, and nothing fails
        for rng in (np.random.default_rng(0), None):
            ledger = PrivacyLedger(1.7e308, 0.5)
            res = anm.private_direction(fit, score, epsilon, delta, privacy, ledger=ledger, rng=rng)
            assert res.privacy.epsilon == epsilon and len(ledger.entries) == 1
            json.dumps(res.to_dict(), allow_nan=False)


@pytest.mark.parametrize('accounting', ['record', 'paper', 'advanced'])
def test_absurd_epsilon_iqr_accounting(fit, accounting):
    import warnings
    ledger = PrivacyLedger(1.7e308, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with pytest.raises(ValueError, match='epsilon'):
            anm.private_direction(fit, 'iqr', 1e-320, 1e-3, iqr_accounting=accounting, ledger=ledger, rng=ExplodingNoise())
        assert ledger.entries == ()
        res = anm.private_direction(fit, 'iqr', 1e308, 1e-3, iqr_accounting=accounting, ledger=ledger,
                                    rng=np.random.default_rng(0))  # valid scales (1/eps' is a normal double): released
    assert len(ledger.entries) == 1 and res.cost is ledger.entries[0]


def test_check_options_public_and_alias():
    assert anm._check_options is anm.check_options
    assert anm.check_options('iqr', 'test', 1, 1e-3) == (1.0, 1e-3)


# ---------- the planner (issue 9 §4)
def test_plan_touches_no_data_and_is_what_the_release_uses(fit):
    plan = anm.plan_direction(n_train=fit.n_train, n_test=fit.n_test, score='hsic', epsilon=0.7, margin=0.001)
    res = anm.private_direction(fit, 'hsic', 0.7, rng=np.random.default_rng(0))
    assert res.plan.noise_scale == plan.noise_scale and res.plan.cost.epsilon == plan.cost.epsilon
    assert res.noise_sd == pytest.approx(plan.noise_sd) and res.to_dict()['settings']['noise_sd'] == pytest.approx(plan.noise_sd)
    d = json.loads(json.dumps(plan.to_dict()))
    assert d['planned'] is True and d['ci_halfwidth'] is None and d['noise_sd'] == pytest.approx(math.sqrt(2) * plan.noise_scale[0][1])
    assert d['prob_correct'] == pytest.approx(float(anm.prob_correct_laplace(0.001, plan.noise_scale[0][1])))
    # the same public inputs give the same plan from n and train_fraction
    assert anm.plan_direction(600, 'hsic', 0.7).noise_scale == plan.noise_scale


def _realised(fit, plan, n_rel, seed):
    noise = ResearchNoise(np.random.default_rng(seed))
    return [anm.release_direction(fit, plan, rng=noise) for _ in range(n_rel)]


@pytest.mark.parametrize('score,delta,target', [('kendall', None, 0.75), ('hsic', None, 0.8), ('iqr', 1e-6, 0.8)])
def test_planned_probability_and_noise_sd_match_realised(score, delta, target):
    x, y = cubic(2000, 21)
    f = anm.anm_fit(x, y, (-1, 1), (-1.3, 1.3), seed=0)
    diag = anm.diagnostics(f, score)
    base = anm.plan_direction(n_train=f.n_train, n_test=f.n_test, score=score, delta=delta, margin=diag.margin)
    eps = base.required_epsilon(target)
    plan = anm.plan_direction(n_train=f.n_train, n_test=f.n_test, score=score, epsilon=eps, delta=delta, margin=diag.margin)
    assert plan.probability_correct() == pytest.approx(target, abs=1e-6)
    rels = _realised(f, plan, 1000, seed=hash(score) % 1000)
    released = [r for r in rels if not r.refused]
    assert len(released) >= 900  # the IQR tests pass on these data (A_j in the hundreds)
    share = np.mean([r.direction == diag.direction for r in released])
    assert abs(share - target) < 4 * math.sqrt(target * (1 - target) / len(released))
    noise = (np.array([r.scores for r in released]) - np.array(diag.scores)).ravel()
    assert abs(noise.std(ddof=1) / plan.noise_sd - 1) < 0.10
    # the check can fail: Theorem 2's two-term formula is not the IQR's four-term probability
    if score == 'iqr':
        assert abs(share - float(anm.prob_correct_laplace(diag.margin, plan.noise_scale[0][1]))) > 0.03


def test_plan_inversions():
    plan = anm.plan_direction(4000, 'kendall', 1.0, margin=0.01)
    n = plan.required_n(0.9)
    assert anm.plan_direction(n, 'kendall', 1.0, margin=0.01).probability_correct() >= 0.9
    assert anm.plan_direction(n - 1, 'kendall', 1.0, margin=0.01).probability_correct() < 0.9
    e = plan.required_epsilon(0.9)
    assert anm.plan_direction(4000, 'kendall', e, margin=0.01).probability_correct() == pytest.approx(0.9, abs=1e-6)
    assert anm.plan_direction(4000, 'kendall', 1.0, 1e-3, 'train', margin=0.01).required_n(0.9) is None
    with pytest.raises(ValueError, match='margin'):
        anm.plan_direction(4000, 'kendall').required_n(0.9)


def test_warnings_point_at_the_caller(fit):
    with pytest.warns(UserWarning, match='true cost') as rec:
        anm.private_direction(fit, 'iqr', 1.2, 1e-3, iqr_accounting='paper', rng=np.random.default_rng(0))
        anm.plan_direction(n_train=fit.n_train, n_test=fit.n_test, score='iqr', epsilon=1.2, delta=1e-3, iqr_accounting='paper')
    assert len(rec) == 2 and all(w.filename == __file__ for w in rec)
    with pytest.warns(PrivacyLeakWarning) as rec:
        anm.iqr_ptr(np.arange(50.0), 1.0, 1e-3, threshold=-5, rng=np.random.default_rng(0), allow_unsafe=True)
    assert all(w.filename == __file__ for w in rec)


# ---------- the shared release interface (issue 10 §1)
def _minus_inf_fit():
    "Most x equal: a test-set IQR of 0, so the training-set IQR score of x->y is -inf whenever the residual tests pass."
    rng = np.random.default_rng(4)
    x = rng.choice([-0.5, 0.0, 0.5], 4200, p=[0.15, 0.7, 0.15])
    y = np.round(x + 0.3 * rng.uniform(-1, 1, 4200), 2)
    return anm.anm_fit(x, y, (-1, 1), (-1.3, 1.3), lam=1.0, train_fraction=4000 / 4200, seed=0)


def test_shared_interface_round_trip(fit, tmp_path):
    for k, (score, privacy, delta) in enumerate(COMBOS):
        rel = anm.private_direction(fit, score, 2.0, delta, privacy, rng=np.random.default_rng(k))
        assert isinstance(rel, PrivateRelease) and isinstance(rel.privacy, PrivacyRecord)
        assert set(rel.to_dict()) == set(KEYS)
        back = load(rel.save(tmp_path / f'{k}.json'))
        assert back.to_dict() == json.loads(rel.to_json())
        assert (back.direction, back.privacy, back.estimand) == (rel.direction, rel.privacy, rel.estimand)
        frame = rel.to_frame()
        assert frame.index[0] == 'direction' and frame['value'].iloc[0] == rel.direction
        assert list(frame.index[1:4]) == ['score_x_to_y', 'score_y_to_x', 'refused']
        with pytest.raises(NoIntervalError):  # a decision has no interval
            rel.conf_int(0.05)
        assert rel.to_dict()['ci'] is None and rel.to_dict()['intervals'] == {}
        assert rel.summary().splitlines()[1].strip() == rel.headline() and repr(rel).startswith('ANMResult(ANM direction')
        assert '<details>' in rel._repr_html_()
        # the privacy record holds every public input the calibration relies on
        pub = dict(rel.privacy.public)
        assert (pub['n_train'], pub['n_test'], pub['lam'], pub['x_bounds']) == (fit.n_train, fit.n_test, fit.lam, fit.x_bounds)
        assert rel.privacy.mechanism == rel.plan.mechanism and rel.privacy.caveats == ()
        assert (rel.privacy.epsilon, rel.privacy.delta) == (rel.plan.cost.epsilon, rel.plan.cost.delta)


def test_strict_json_on_every_release_shape(fit):
    "Released, refused, tied-free and -inf scores, diagnostics: json.dumps(..., allow_nan=False) always works."
    shapes = set()
    for score, privacy, delta in COMBOS:
        for s in range(3):
            for eps in (2.0, 1e-3):  # a small epsilon: PTR refusals
                rel = anm.private_direction(fit, score, eps, delta, privacy, rng=np.random.default_rng(s))
                json.dumps(rel.to_dict(), allow_nan=False)
                shapes.add(rel.refused)
        json.dumps(anm.diagnostics(fit, score).to_dict(), allow_nan=False)
    assert shapes == {True, False}
    f = _minus_inf_fit()
    rels = [anm.private_direction(f, 'iqr', 10.0, 1e-3, 'train', rng=np.random.default_rng(s)) for s in range(5)]
    minus_inf = [r for r in rels if not r.refused]
    assert minus_inf and all(r.scores[0] == -math.inf and math.isfinite(r.scores[1]) for r in minus_inf)
    for r in minus_inf:
        d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
        assert d['released']['score_x_to_y'] is None and d['released']['refused'] is False  # None with refused False: -inf
        assert d['direction'] == r.direction == 'x->y'
        assert r.released()['score_x_to_y'] == -math.inf  # the Python object keeps the value
    diag = anm.diagnostics(f, 'iqr')
    assert diag.scores[0] == -math.inf and math.isinf(diag.margin)
    d = json.loads(json.dumps(diag.to_dict(), allow_nan=False))
    assert d['scores']['x_to_y'] is None and d['margin'] is None and d['NOT_PRIVATE'] is True
    json.dumps(anm.diagnostics(f, 'variance').to_dict(), allow_nan=False)


def test_anm_direction_diagnostics_come_from_the_same_fit():
    x, y = cubic(400, 5)
    for score in ('kendall', 'hsic', 'iqr'):
        delta = 1e-3 if score == 'iqr' else None
        rel, diag = anm.anm_direction(x, y, (-1, 1), (-1.3, 1.3), score=score, delta=delta, seed=3,
                                      rng=np.random.default_rng(0), diagnostics=True)
        f = anm.anm_fit(x, y, (-1, 1), (-1.3, 1.3), seed=3)
        assert isinstance(diag, anm.ANMDiagnostics) and isinstance(diag, NotPrivate)
        assert diag.scores == anm.scores_of(f, score) and diag.score == score
        assert isinstance(rel, anm.ANMResult)
    # another seed gives another split: the pairing is not a coincidence
    _, other = anm.anm_direction(x, y, (-1, 1), (-1.3, 1.3), seed=4, rng=np.random.default_rng(0), diagnostics=True)
    assert other.scores != anm.scores_of(anm.anm_fit(x, y, (-1, 1), (-1.3, 1.3), seed=3), 'kendall')
    # without diagnostics: the release only; a failure before the charge spends nothing
    assert isinstance(anm.anm_direction(x, y, (-1, 1), (-1.3, 1.3), seed=3, rng=np.random.default_rng(0)), anm.ANMResult)
    ledger = PrivacyLedger(10, 0.1)
    with pytest.raises(ValueError, match='hsic_bandwidths'):
        anm.anm_direction(x, y, (-1, 1), (-1.3, 1.3), score='hsic', hsic_bandwidths=(0, 1), ledger=ledger, diagnostics=True)
    assert ledger.entries == ()


def test_release_and_plan_dicts_are_strict_json_with_stable_keys(fit):
    plan = anm.plan_direction(n_train=fit.n_train, n_test=fit.n_test, score='iqr', epsilon=1.0, delta=1e-3, margin=0.5)
    d = json.loads(json.dumps(plan.to_dict(), allow_nan=False))
    assert d['planned'] is True and {'noise_sd', 'ci_halfwidth', 'prob_correct'} <= set(d)
    rel = anm.release_direction(fit, plan, rng=np.random.default_rng(0))
    d = rel.to_dict()
    assert set(d['settings']) == {'score', 'privacy_set', 'mechanism', 'sensitivity_A_j', 'noise_scale', 'noise_sd',
                                  'ptr_test_scale'}
    assert set(d['released']) == {'score_x_to_y', 'score_y_to_x', 'refused'} | {
        f'noisy_distance_{v}_B{j}' for v in ('x', 'y', 'r_Y', 'r_X') for j in (1, 2)}
    assert d['settings']['noise_sd'] == pytest.approx(plan.noise_sd)


def test_plan_is_a_keyword_only_plan():
    "ANMPlan is a frozen, keyword-only `Plan`: its fields are declared once (flag, documentation), its cost is Laplace/PTR."
    import dataclasses
    from privcausal.method import Plan
    assert issubclass(anm.ANMPlan, Plan)
    with pytest.raises(TypeError): anm.ANMPlan(1000, 1.0)                       # no positional construction
    p = anm.ANMPlan(n=1000, epsilon=1.0, score='kendall', margin=0.02)
    assert (p.n, p.n_train, p.n_test) == (1000, 500, 500)                       # n is the number of rows
    q = anm.plan_direction(n_train=700, n_test=300)
    assert q.n == 1000 and q.noise_scale == anm.plan_direction(1000, train_fraction=0.7).noise_scale
    with pytest.raises(dataclasses.FrozenInstanceError): p.epsilon = 2.0
    assert p.stages == () and p.cost.mechanism == 'laplace' and p.ci_halfwidth is None
    assert dataclasses.replace(p, epsilon=2.0).noise_scale[0][1] == pytest.approx(p.noise_scale[0][1] / 2)
    assert p == anm.ANMPlan(n=1000, epsilon=1.0, margin=0.02) and p != dataclasses.replace(p, score='hsic')  # all fields compared
    table = anm.ANMPlan.fields_table()
    assert table.loc['clip', 'flag'] == '--clip-data' and table.loc['x_bounds', 'flag'] == '--x-bound'
    assert table.loc['allow_unsafe', 'flag'] == '--allow-unsafe' and table.loc['mechanism', 'default'] == '(derived)'
    assert table.loc['n_train', 'flag'] == ''  # Python only: the CLI gives the sizes from the data
    assert (table['doc'] != '').all(), table[table['doc'] == '']                 # every field documented
    with pytest.raises(TypeError, match='epsilon_typo'): anm.plan_direction(1000, epsilon_typo=1)


def test_paper_accounting_reports_the_charged_cost():
    "iqr_accounting='paper': the plan keeps the inputs, the cost, record, summary and JSON say what is charged (4/3)."
    with pytest.warns(UserWarning, match='true'):
        p = anm.plan_direction(2000, 'iqr', 1.2, 1e-3, iqr_accounting='paper')
    assert p.epsilon == 1.2 and p.cost.epsilon == pytest.approx(1.6) and p.to_dict()['epsilon'] == pytest.approx(1.6)
    assert 'charges epsilon=1.6' in p.summary() and p.record(ResearchNoise(np.random.default_rng(0))).epsilon == pytest.approx(1.6)
