"""Issue 17: every effect release has `std_error`, `pvalue()` and `plot()`, every plan `summary()` and `cost` --
here PP-IPW, WATE and the ANM plan (the `method.EffectRelease` family is tested in tests/test_release_interface.py)."""
import math

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from privcausal import anm, ipw
from privcausal.accounting import PrivacyCost
from privcausal.release import STORED_ALPHAS

# WATE's module: privcausal.wate, or its new name privcausal.bayes_wate once that rename is merged. Looked up in this
# package's own folder: an editable install elsewhere must not supply a module of another checkout.
import importlib, pathlib, privcausal
wate = importlib.import_module('privcausal.' + ('bayes_wate' if (pathlib.Path(privcausal.__file__).parent / 'bayes_wate.py').exists()
                                                else 'wate'))


def _small(n, rng):
    "The review's small design (n=300: mostly noise) or a larger one: covariates in the ball of radius 1.5."
    X = rng.uniform(-1, 1, (n, 3)) * (1.5 / np.sqrt(3))
    t = rng.binomial(1, expit(X.sum(1)))
    y = np.clip(0.2 * t + 0.3 * X[:, 0] + rng.normal(0, 0.3, n), -1, 1)
    return X, t, y


def _ipw(X, t, y, rng, **kw):
    return ipw.pp_ipw(X=X, outcome=y, treatment=t, epsilon=kw.pop('epsilon', 1.0), delta=1e-5, outcome_bound=1.0,
                      covariate_bound=1.5, propensity_bounds=0.05, rng=rng, **kw)


@pytest.mark.parametrize('estimator', ['hajek', 'ht'])
def test_ipw_release_conventions(estimator):
    rng = np.random.default_rng(1)
    r = _ipw(*_small(2000, rng), rng, estimator=estimator)
    assert 0 <= r.pvalue() <= 1
    assert math.isfinite(r.std_error) and r.std_error > 0
    assert math.isfinite(r.interval_std_error) and r.interval_std_error > 0
    if estimator == 'ht': assert r.interval_std_error == pytest.approx(r.std_error, rel=1e-12)
    else: assert r.interval_std_error == pytest.approx(r.std_error, rel=0.25)  # informative data: Fieller ~ delta method
    ax = r.plot()
    assert isinstance(ax, matplotlib.axes.Axes) and len(ax.get_legend().get_texts()) == 4  # 3 intervals + the estimate
    lo, hi = ax.get_xlim()
    assert lo <= -2.0 and hi >= 2.0  # the effect's public range [-2 C_y, 2 C_y]
    plt.close('all')
    assert isinstance(r.plan.summary(), str) and isinstance(r.plan.cost, PrivacyCost)


def test_ipw_pvalue_agrees_with_the_interval_on_many_releases():
    "p < alpha exactly when 0 is outside conf_int(alpha); the only allowed exception: no mean fits the sums at that level."
    rng, rows = np.random.default_rng(17), []
    for n, eps, k in ((300, 0.9, 60), (3000, 1.0, 20)):
        for est, estimator in (('ATE', 'hajek'), ('ATT', 'hajek'), ('ATE', 'ht')):
            for _ in range(k):
                r = _ipw(*_small(n, rng), rng, epsilon=eps, estimand=est, estimator=estimator)
                p, pl = r.pvalue(), r.plan
                assert 0 <= p <= 1
                best = (ipw._hajek_profile(ipw._released_vector(pl, r.sums), pl.propensity_bounds, pl.estimand,
                                           pl.effect_noise_sd, pl.variance_scale)[0] if estimator == 'hajek' else 0.0)
                for a in STORED_ALPHAS:
                    lo, hi = r.conf_int(a)
                    fits = best <= ipw._quantile(1 - a / 2, r.dof) ** 2
                    rows.append(dict(estimator=estimator, alpha=a, p=p, agree=(p < a) == (lo > 0 or hi < 0), fits=fits))
    df = pd.DataFrame(rows)
    assert (df.agree | ~df.fits).all(), df[~df.agree & df.fits]
    assert df[df.estimator == 'ht'].agree.all()
    at05 = df[df.alpha == 0.05]
    assert at05.agree.mean() >= 0.97, at05.agree.mean()  # the exception is rare at the usual levels
    assert (at05.p < 0.05).sum() >= 5 and (at05.p >= 0.05).sum() >= 5  # both sides of the test occur


def test_hajek_pvalue_agrees_with_hajek_interval_on_noisy_sums():
    "The post-processing alone, on 400 hand-made noisy sums (sigma / B = 1/3, the Fieller regime), at many levels."
    rng, B, sig = np.random.default_rng(0), 300.0, 100.0
    exact = np.array([0.4 * B, B, 0.1 * B, B])
    checked = 0
    for _ in range(400):
        v = exact + sig * rng.normal(size=4)
        f = ipw.hajek_from_sums(v, 1.0, (0.5, 0.5), 'ATE', sig)
        p = ipw.hajek_pvalue(v, (0.5, 0.5), 'ATE', sig, 0.0, f.dof)
        best, _ = ipw._hajek_profile(v, (0.5, 0.5), 'ATE', sig)
        for a in (0.01, 0.05, 0.1, 0.2, 0.5):
            if best > ipw._quantile(1 - a / 2, f.dof) ** 2: continue  # no mean fits: the whole range by convention
            lo, hi = ipw.hajek_interval(v, 1.0, (0.5, 0.5), 'ATE', sig, 0.0, a, f.dof)
            assert (p < a) == (lo > 0 or hi < 0), (v, a, p, lo, hi)
            checked += 1
    assert checked > 1500


@pytest.fixture(scope='module')
def wate_release():
    big = wate.simulate_wate(4000, eta=2, gamma=1, rng=np.random.default_rng(3))
    df = pd.DataFrame(big['X'], columns=['x1', 'x2', 'x3', 'x4']).assign(z=big['z'].astype(int), y=big['y'].astype(int))
    return wate.wate(df, outcome='y', treatment='z', epsilon=1.0, rng=np.random.default_rng(2))


def test_wate_release_conventions(wate_release):
    r = wate_release
    assert math.isfinite(r.std_error) and r.std_error > 0
    assert r.std_error == pytest.approx(np.std(r.posterior.tau, ddof=1))
    assert 0 <= r.pvalue() <= 1
    for a in (0.01, 0.05, 0.1, 0.3, 0.5, 0.9):
        lo, hi = r.conf_int(a)
        assert (r.pvalue() < a) == (lo > 0 or hi < 0)
    fig = r.plot()
    assert isinstance(fig, matplotlib.figure.Figure)
    plt.close('all')


@pytest.mark.parametrize('q', [0.002, 0.01, 0.03, 0.2, 0.5])
def test_wate_pvalue_is_twice_the_smaller_tail(wate_release, q):
    "Shift the draws so that a share q lies below 0: the tail probability is 2 min(q, 1 - q), and agrees with the intervals."
    import dataclasses
    r = wate_release
    tau = r.posterior.tau - np.quantile(r.posterior.tau, q)
    s = dataclasses.replace(r, posterior=dataclasses.replace(r.posterior, tau=tau))
    assert s.pvalue() == pytest.approx(2 * min(q, 1 - q), abs=2 / tau.size)
    for a in [a for a in (0.5 * 2 * q, 0.9 * 2 * q, 1.1 * 2 * q, 3 * q) if a < 1]:
        lo, hi = s.conf_int(a)
        assert (s.pvalue() < a) == (lo > 0 or hi < 0), (q, a)


def test_plan_summaries_and_costs():
    wp = wate.plan_wate(n=30_162, d=26, epsilon=1.0)
    text = wp.summary()
    assert text.startswith('WATE plan (from public inputs only; nothing spent)')
    for said in ('expected noise sd', 'interval half-width', 'cost (epsilon=1, delta=0', 'assumes: sampling variance'):
        assert said in text, said
    assert '<pre>' in wp._repr_html_()
    assert isinstance(wp.cost, PrivacyCost) and wp.cost.epsilon == pytest.approx(1.0)
    ap = anm.plan_direction(n=1000, score='kendall', epsilon=1.0)
    assert isinstance(ap.cost, PrivacyCost) and ap.cost.epsilon == pytest.approx(1.0)
    assert isinstance(ap.summary(), str) and ap.summary()
    ip = ipw.plan_ipw(300, 3, 0.9, 1e-5, 1.0, 0.05, estimand='ATT', covariate_bound=1.5)
    assert isinstance(ip.summary(), str) and isinstance(ip.cost, PrivacyCost)
