"""Longer checks of privcausal.mechanisms than the notebook runs: samplers, calibration, PTR and the audit.

Each check can fail. Those on the secure (OpenDP) source cannot be seeded; their false-failure rate is stated
next to them (about 1e-6 per KS test, < 1e-6 per variance test).
"""
import dataclasses
import math
import re

import numpy as np
import pytest
from scipy import stats

import sys
import warnings

from privcausal.mechanisms import (
    AuditResult, NoiseSource, PrivacyLeakWarning, PTRResult, Release, ResearchNoise, SecureNoise, audit,
    check_noise_scale, check_value, clopper_pearson, gaussian_delta, gaussian_mechanism, gaussian_sigma_analytic,
    gaussian_sigma_classical, laplace_mechanism, laplace_scale, propose_test_release, ptr_min_threshold, resolve_noise)

N = 40_000
EPS_GRID = np.linspace(0.01, 0.99, 50)
DELTAS = (1e-2, 1e-3, 1e-5, 1e-8, 1e-12)


class Untouchable(NoiseSource):
    "A source that fails if any noise is drawn from it."
    name = 'untouchable'
    def _laplace(self, value, scale): raise AssertionError('noise drawn before validation')
    _gaussian = _laplace


# --- noise sources ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize('source', [SecureNoise(), ResearchNoise(np.random.default_rng(2026))], ids=['secure', 'research'])
@pytest.mark.parametrize('scale', [0.01, 1.0, 250.0])
def test_laplace_ks_and_variance(source, scale):
    x = source.add_laplace(np.full(N, 3.0), scale) - 3.0
    assert stats.kstest(x, stats.laplace(0, scale).cdf).pvalue > 1e-6
    assert abs(np.var(x) / (2 * scale**2) - 1) < 5 * math.sqrt(5 / N)


@pytest.mark.parametrize('source', [SecureNoise(), ResearchNoise(np.random.default_rng(2027))], ids=['secure', 'research'])
@pytest.mark.parametrize('sigma', [0.01, 1.0, 250.0])
def test_gaussian_ks_and_variance(source, sigma):
    x = source.add_gaussian(np.full(N // 2, -7.0), sigma) + 7.0
    assert stats.kstest(x, stats.norm(0, sigma).cdf).pvalue > 1e-6
    assert abs(np.var(x) / sigma**2 - 1) < 5 * math.sqrt(2 / (N // 2))


def test_secure_scalar_draws_match_laplace():
    # the scalar path uses a different OpenDP measurement than the vector path
    x = np.array([SecureNoise().add_laplace(0.0, 1.5) for _ in range(3000)])
    assert stats.kstest(x, stats.laplace(0, 1.5).cdf).pvalue > 1e-6


def test_sources_keep_shape_and_type():
    for src in (SecureNoise(), ResearchNoise(np.random.default_rng(0))):
        assert isinstance(src.add_laplace(1, 1.0), float) and isinstance(src.add_gaussian(1.0, 1.0), float)
        assert src.add_laplace([1, 2, 3], 1.0).shape == (3,)
        with pytest.raises(ValueError, match='sigma'): src.add_gaussian(1.0, -1.0)


def test_resolve_noise():
    assert isinstance(resolve_noise(), SecureNoise)
    assert isinstance(resolve_noise(np.random.default_rng(0)), ResearchNoise)
    src = ResearchNoise(np.random.default_rng(0))
    assert resolve_noise(src) is src
    for bad in (0, 42, np.int64(3), np.random.RandomState(0), 'secure', 1.5):
        with pytest.raises(TypeError, match='rng'): resolve_noise(bad)
    with pytest.raises(TypeError, match=r'default_rng\(seed\)'): resolve_noise(7)


# --- calibration -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize('delta', DELTAS)
def test_classical_meets_delta_and_analytic_is_tight(delta):
    for eps in EPS_GRID:
        s_c, s_a = gaussian_sigma_classical(1.0, eps, delta), gaussian_sigma_analytic(1.0, eps, delta)
        assert gaussian_delta(s_c, 1.0, eps) <= delta, (eps, delta)
        assert s_a <= s_c, (eps, delta)
        assert gaussian_delta(s_a, 1.0, eps) <= delta
        # tight: below delta by at most the rounding margin the calibration adds (the terms cancel when delta is tiny)
        assert abs(gaussian_delta(s_a, 1.0, eps) / delta - 1) < (1e-9 if delta >= 1e-5 else 1e-7), (eps, delta)


@pytest.mark.parametrize('eps', [1.0, 2.0, 5.0, 10.0, 50.0])
def test_analytic_any_epsilon(eps):
    s = gaussian_sigma_analytic(2.0, eps, 1e-6)
    assert abs(gaussian_delta(s, 2.0, eps) / 1e-6 - 1) < 1e-9
    assert gaussian_delta(s * 0.999, 2.0, eps) > 1e-6  # and it is the smallest such sigma


def test_profile_is_decreasing_and_matches_norm_cdf():
    sig = np.geomspace(0.05, 100, 60)
    for eps in (0.1, 1.0, 3.0):
        d = np.array([gaussian_delta(s, 1.0, eps) for s in sig])
        assert np.all(np.diff(d) <= 0)
        ref = stats.norm.cdf(0.5 / sig - eps * sig) - np.exp(eps) * stats.norm.cdf(-0.5 / sig - eps * sig)
        np.testing.assert_allclose(d, np.maximum(ref, 0), rtol=1e-9, atol=1e-300)


def test_calibration_errors():
    with pytest.raises(ValueError, match='epsilon must be < 1'): gaussian_sigma_classical(1.0, 1.0, 1e-5)
    with pytest.raises(ValueError, match='delta'): gaussian_sigma_analytic(1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match='sensitivity'): laplace_scale(0.0, 1.0)
    with pytest.raises(TypeError, match='epsilon'): laplace_scale(1.0, None)


def test_opendp_privacy_maps_agree():
    from privcausal.mechanisms import _opendp_measurement
    for b in (0.1, 1.0, 7.0):
        assert math.isclose(_opendp_measurement('scalar', 'laplace', b).map(1.0), 1.0 / b, rel_tol=1e-9)
        assert math.isclose(_opendp_measurement('vector', 'laplace', b).map(3.0), 3.0 / b, rel_tol=1e-9)
        assert math.isclose(_opendp_measurement('vector', 'gaussian', b).map(1.0), 1 / (2 * b**2), rel_tol=1e-9)


# --- mechanisms ------------------------------------------------------------------------------------------------

def test_release_fields_and_conversion():
    r = laplace_mechanism(np.arange(4.0), 2.0, 0.5, rng=np.random.default_rng(1))
    assert (r.mechanism, r.norm, r.scale, r.epsilon, r.delta, r.is_secure) == ('laplace', 'L1', 4.0, 0.5, 0.0, False)
    assert r.to_frame().shape == (4, len(dataclasses.fields(Release)))
    assert r.to_dict()['value'] == list(r.value)
    with pytest.raises(ValueError): r.value[0] = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError): r.epsilon = 5.0
    assert '<table>' in r._repr_html_() and 'NOT floating-point safe' in repr(r)
    g = gaussian_mechanism(1.0, 1.0, 0.5, 1e-5, calibration='classical')
    assert (g.norm, g.calibration, g.noise, g.is_secure) == ('abs', 'classical', 'opendp', True)
    assert g.scale == gaussian_sigma_classical(1.0, 0.5, 1e-5)


@pytest.mark.parametrize('bad, msg', [
    (dict(value=np.nan), 'value must be finite'), (dict(value=[[1.0]]), '1-d'), (dict(value='x'), 'value must be a real'),
    (dict(sensitivity=-1.0), 'sensitivity'), (dict(epsilon=0.0), 'epsilon'), (dict(epsilon=np.inf), 'epsilon')])
def test_validation_before_noise(bad, msg):
    kw = dict(value=1.0, sensitivity=1.0, epsilon=1.0, rng=Untouchable()) | bad
    with pytest.raises((ValueError, TypeError), match=msg): laplace_mechanism(**kw)
    with pytest.raises((ValueError, TypeError), match=msg): gaussian_mechanism(delta=1e-5, **kw)


def test_mechanism_noise_has_the_calibrated_scale():
    rng = np.random.default_rng(5)
    lap = np.array([laplace_mechanism(0.0, 2.0, 0.5, rng=rng).value for _ in range(20_000)])
    assert stats.kstest(lap, stats.laplace(0, 4.0).cdf).pvalue > 1e-6
    sigma = gaussian_sigma_analytic(1.0, 1.0, 1e-5)
    gau = gaussian_mechanism(np.zeros(20_000), 1.0, 1.0, 1e-5, rng=rng).value
    assert stats.kstest(gau, stats.norm(0, sigma).cdf).pvalue > 1e-6


def test_check_value():
    assert check_value(np.int32(4)) == 4.0 and isinstance(check_value(np.int32(4)), float)
    for bad in (np.inf, [1, np.nan], [], np.ones((1, 1)), None, 1 + 2j, True):
        with pytest.raises((ValueError, TypeError), match='value'): check_value(bad)


# --- propose-test-release ---------------------------------------------------------------------------------------

@pytest.mark.parametrize('threshold', [None, 1 + math.log(1 / 0.2)])
def test_ptr_pass_rate_at_distance_zero(threshold):
    # at d = 0 the test passes with probability exp(-eps T)/2: delta/2 at the default threshold
    eps, delta, n = 0.7, 0.2, 40_000
    src = ResearchNoise(np.random.default_rng(9))
    rate = np.mean([propose_test_release(0, lambda noise: 1.0, eps, delta, threshold=threshold, rng=src).released
                    for _ in range(n)])
    t = math.log(1 / delta) / eps if threshold is None else threshold
    p = 0.5 * math.exp(-eps * t)
    assert abs(rate - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_ptr_release_runs_only_on_success_and_gets_the_source():
    src = ResearchNoise(np.random.default_rng(0))
    seen = []
    res = propose_test_release(1000, lambda noise: seen.append(noise) or 'ok', 1.0, 1e-6, rng=src)
    assert res.released and res.value == 'ok' and seen == [src]
    assert res.noisy_distance != 1000  # noised
    def boom(noise): raise AssertionError('release ran on refusal')
    res = propose_test_release(0, boom, 1.0, 1e-6, rng=src)
    assert (res.released, res.value) == (False, None) and '⊥' in repr(res)
    assert {f.name for f in dataclasses.fields(PTRResult)} == {
        'released', 'value', 'noisy_distance', 'threshold', 'epsilon', 'delta', 'noise', 'is_secure', 'guarantee_holds'}


def test_ptr_validation():
    with pytest.raises(ValueError, match='distance'): propose_test_release(-0.5, lambda n: 1, 1.0, 1e-6)
    with pytest.raises(ValueError, match='distance'): propose_test_release([1, 2], lambda n: 1, 1.0, 1e-6)
    with pytest.raises(TypeError, match='release'): propose_test_release(1, None, 1.0, 1e-6)
    with pytest.raises(ValueError, match='delta'): propose_test_release(1, lambda n: 1, 1.0, 0.0)
    with pytest.raises(ValueError, match='threshold'): propose_test_release(1, lambda n: 1, 1.0, 0.1, threshold=np.nan)


# --- audit ------------------------------------------------------------------------------------------------------

def test_clopper_pearson_matches_scipy():
    for k, n in [(0, 20), (3, 20), (20, 20), (500, 1000)]:
        lo, up = clopper_pearson(k, n, 0.025)
        ci = stats.binomtest(k, n).proportion_ci(0.95, 'exact')
        assert math.isclose(lo, ci.low, abs_tol=1e-12) and math.isclose(up, ci.high, abs_tol=1e-12)


@pytest.mark.parametrize('eps', [0.5, 1.0, 2.0])
def test_audit_laplace_is_consistent_and_tight(eps):
    mech = lambda x, noise: laplace_mechanism(x, 1.0, eps, rng=noise)
    res = audit(mech, 0.0, 1.0, n_samples=100_000, epsilon=eps, rng=np.random.default_rng(int(eps * 10)))
    assert isinstance(res, AuditResult) and not res.violated
    assert 0.85 * eps < res.eps_lower_bound <= eps  # the auditor has power: it nearly reaches the true epsilon


@pytest.mark.parametrize('factor', [2, 4])
def test_audit_catches_under_noised_laplace(factor):
    res = audit(lambda x, noise: noise.add_laplace(x, 1.0 / factor), 0.0, 1.0, n_samples=40_000, epsilon=1.0,
                rng=np.random.default_rng(factor))
    assert res.violated and res.eps_lower_bound > 1.0


def test_audit_gaussian_and_under_noised_gaussian():
    sigma = gaussian_sigma_analytic(1.0, 1.0, 1e-5)
    ok = audit(lambda x, noise: gaussian_mechanism(x, 1.0, 1.0, 1e-5, rng=noise), 0.0, 1.0, n_samples=60_000,
               epsilon=1.0, delta=1e-5, rng=np.random.default_rng(1))
    bad = audit(lambda x, noise: noise.add_gaussian(x, sigma / 3), 0.0, 1.0, n_samples=60_000, epsilon=1.0,
                delta=1e-5, rng=np.random.default_rng(2))
    assert not ok.violated and bad.violated


def test_audit_false_alarm_rate_is_below_alpha():
    # over many small audits of a correct mechanism the bound must exceed the true epsilon in < alpha of them
    mech = lambda x, noise: noise.add_laplace(x, 1.0)
    rng = np.random.default_rng(3)
    hits = [audit(mech, 0.0, 1.0, n_samples=400, epsilon=1.0, alpha=0.2, rng=rng).violated for _ in range(200)]
    assert np.mean(hits) < 0.2


def test_audit_secure_source_and_vector_statistic():
    mech = lambda x, noise: laplace_mechanism(x, 1.0, 1.0, rng=noise)
    res = audit(mech, 0.0, 1.0, n_samples=5_000, epsilon=1.0)
    assert res.noise == 'opendp' and not res.violated
    leaky = lambda x, noise: noise.add_laplace(x, 0.25)  # L1 sensitivity 1 but eps 4 per coordinate change
    res = audit(leaky, np.zeros(2), np.array([1.0, 0.0]), n_samples=5_000, epsilon=1.0, statistic=lambda v: v[0])
    assert res.violated
    with pytest.raises(ValueError, match='statistic='): audit(mech, np.zeros(2), np.ones(2), n_samples=100)


def test_audit_of_ptr():
    # PTR's outputs are either the value or refusal; with the default statistic a refusal is NaN (in no set)
    ptr = lambda d, noise: propose_test_release(d, lambda n: 1.0, 1.0, 0.1, rng=noise)
    res = audit(ptr, 0, 1, n_samples=4_000, epsilon=1.0, delta=0.1, rng=np.random.default_rng(0))
    assert res.eps_lower_bound == 0.0  # {o > t} and {o < t} are empty when every output is 1 or NaN
    # mapping the refusal to -1 makes the decision visible; the decision alone is eps-DP in the distance (delta = 0),
    # and between distances 0 and 1 the release rates are exp(-eps T)/2 and exp(-eps (T - 1))/2: a ratio of exactly e^eps
    res = audit(ptr, 0, 1, n_samples=40_000, epsilon=1.0, rng=np.random.default_rng(1),
                statistic=lambda r: r.value if r.released else -1.0)
    assert not res.violated and res.eps_lower_bound > 0.7, res


def test_audit_validation():
    mech = lambda x, noise: x
    with pytest.raises(TypeError, match='mechanism'): audit(3, 0, 1)
    with pytest.raises(ValueError, match='n_thresholds'): audit(mech, 0, 1, n_thresholds=0)
    with pytest.raises(ValueError, match='alpha'): audit(mech, 0, 1, alpha=0)
    with pytest.raises(ValueError, match='epsilon'): audit(mech, 0, 1, epsilon=-1)


# --- noise scales: validated before any noise or budget ----------------------------------------------------------

BAD_SCALES = [math.inf, -math.inf, math.nan, 0.0, -1.0, 5e-324, 1e-320, 1e-310, 2.0**-1030, 1e301, 1e308,
              sys.float_info.max]
GOOD_SCALES = [sys.float_info.min, 1e-300, 1e-20, 0.37, 1.0, 1e20, 1e300]


@pytest.mark.parametrize('mechanism', ['laplace', 'gaussian'])
@pytest.mark.parametrize('scale', BAD_SCALES)
def test_check_noise_scale_refuses_and_names_the_argument(mechanism, scale):
    with pytest.raises(ValueError) as e:
        check_noise_scale(scale, mechanism, argument='--epsilon')
    assert str(e.value).startswith(f'--epsilon gives a {mechanism.capitalize()} noise scale of ')


@pytest.mark.parametrize('mechanism', ['laplace', 'gaussian'])
@pytest.mark.parametrize('scale', GOOD_SCALES)
def test_accepted_scales_draw_finite_values_in_both_sources(mechanism, scale):
    assert check_noise_scale(scale, mechanism) == scale
    for src in (SecureNoise(), ResearchNoise(np.random.default_rng(0))):
        add = src.add_laplace if mechanism == 'laplace' else src.add_gaussian
        for value in (0.0, np.zeros(3), 1e307, -1.7e308):
            assert np.all(np.isfinite(add(value, scale)))  # huge value + huge noise is clamped, never inf


def test_check_noise_scale_types():
    for bad in ('1', None, True, 1 + 0j):
        with pytest.raises(TypeError, match='sigma gives a Gaussian noise scale that is not a real number'):
            check_noise_scale(bad, 'gaussian', 'sigma')
    with pytest.raises(ValueError, match='mechanism must be'): check_noise_scale(1.0, 'cauchy')
    assert check_noise_scale(np.float32(2.0)) == 2.0 and isinstance(check_noise_scale(np.int64(3)), float)


EXTREME = [dict(epsilon=1e-320), dict(epsilon=1e308), dict(epsilon=5e-324), dict(epsilon=sys.float_info.max),
           dict(sensitivity=1e305), dict(sensitivity=sys.float_info.max), dict(sensitivity=1e-300, epsilon=1e10)]


@pytest.mark.parametrize('bad', EXTREME, ids=lambda b: ','.join(f'{k}={v:g}' for k, v in b.items()))
def test_laplace_extreme_parameters_refused_before_noise(bad):
    kw = dict(value=1.0, sensitivity=1.0, epsilon=1.0, rng=Untouchable()) | bad
    with pytest.raises(ValueError, match=re.escape(f"epsilon={kw['epsilon']!r} gives a Laplace noise scale")):
        laplace_mechanism(**kw)
    with pytest.raises(ValueError, match=re.escape(f"epsilon={kw['epsilon']!r} gives a Laplace noise scale")):
        laplace_scale(kw['sensitivity'], kw['epsilon'])


@pytest.mark.parametrize('bad', [dict(sensitivity=1e305), dict(sensitivity=sys.float_info.max),
                                 dict(sensitivity=1e-300, epsilon=1e300, delta=0.5),
                                 dict(calibration='classical', epsilon=1e-320),
                                 dict(calibration='classical', epsilon=5e-324),
                                 dict(calibration='classical', sensitivity=1e300, epsilon=0.5)])
def test_gaussian_extreme_parameters_refused_before_noise(bad):
    kw = dict(value=1.0, sensitivity=1.0, epsilon=1.0, delta=1e-6, rng=Untouchable()) | bad
    with pytest.raises(ValueError, match=re.escape(f"epsilon={kw['epsilon']!r} gives a Gaussian noise scale")):
        gaussian_mechanism(**kw)


def test_gaussian_analytic_tiny_and_huge_epsilon_are_valid_calibrations():
    # unlike Laplace, the analytic Gaussian has a finite sigma as epsilon -> 0 (delta alone bounds it) and a tiny one
    # for a huge epsilon; both are ordinary scales and are released, with delta(eps) <= delta
    for eps in (1e-320, 1e308):
        s = gaussian_sigma_analytic(1.0, eps, 1e-6)
        assert sys.float_info.min <= s <= 1e300 and gaussian_delta(s, 1.0, eps) <= 1e-6
        assert math.isfinite(gaussian_mechanism(0.0, 1.0, eps, 1e-6, rng=np.random.default_rng(0)).value)


@pytest.mark.parametrize('eps', [1e-320, 5e-324, 1e308])
def test_ptr_extreme_epsilon_refused_before_noise(eps):
    def boom(noise): raise AssertionError('release ran')
    with pytest.raises(ValueError, match=re.escape(f'epsilon={eps!r} gives a Laplace noise scale')):
        propose_test_release(5, boom, eps, 1e-6, rng=Untouchable())


# --- propose-test-release: the threshold must carry the stated delta ---------------------------------------------

@pytest.mark.parametrize('eps, delta', [(1.0, 1e-6), (0.1, 1e-3), (3.0, 0.3), (0.5, 0.75)])
def test_ptr_threshold_below_minimum_is_refused(eps, delta):
    t_min = ptr_min_threshold(eps, delta)
    assert math.isclose(0.5 * math.exp(-eps * t_min), delta, rel_tol=1e-12)  # the pass probability at d = 0
    below = t_min - max(1e-6, 1e-6 * abs(t_min))
    for T in (below, t_min - 1.0, -1e6):
        with pytest.raises(ValueError, match='allow_unsafe=True'):
            propose_test_release(0, lambda n: 1, eps, delta, threshold=T, rng=Untouchable())
    for T in (t_min, t_min + 1, math.log(1 / delta) / eps, None):
        assert propose_test_release(0, lambda n: 1, eps, delta, threshold=T, rng=np.random.default_rng(0)).guarantee_holds


def test_ptr_allow_unsafe_warns_and_marks():
    with pytest.warns(PrivacyLeakWarning, match='the stated guarantee does NOT hold'):
        res = propose_test_release(0, lambda n: 1, 1.0, 1e-6, threshold=0.0, rng=np.random.default_rng(0),
                                   allow_unsafe=True)
    assert res.guarantee_holds is False and 'NOT (ε, δ)-DP' in repr(res) and res.to_dict()['guarantee_holds'] is False
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # a safe threshold warns nothing, allow_unsafe or not
        ok = propose_test_release(0, lambda n: 1, 1.0, 1e-6, rng=np.random.default_rng(0), allow_unsafe=True)
    assert ok.guarantee_holds


def test_ptr_pass_rate_at_the_minimum_threshold_is_delta():
    # the refusal rule is exactly tight: at T_min the pass rate at d = 0 is delta itself, above it fewer
    eps, delta, n = 0.8, 0.15, 40_000
    src = ResearchNoise(np.random.default_rng(21))
    rate = np.mean([propose_test_release(0, lambda noise: 1, eps, delta, threshold=ptr_min_threshold(eps, delta),
                                         rng=src).released for _ in range(n)])
    assert abs(rate - delta) < 5 * math.sqrt(delta * (1 - delta) / n)


def test_messages_show_nothing_of_private_values():
    with pytest.raises(ValueError) as e:
        check_value([1.0, np.nan, np.inf, 7.0], 'ate')
    assert str(e.value) == 'ate must be finite; it holds NaN or infinity'
    with pytest.raises(ValueError) as e:
        propose_test_release(-123.25, lambda n: 1, 1.0, 1e-6, rng=Untouchable())
    assert '123' not in str(e.value)
