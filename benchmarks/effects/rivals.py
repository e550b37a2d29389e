"""The rivals of issue 16's effects benchmark. Every rival is a function

    rival(X, t, y, decl, epsilon, delta, estimand, rng) -> dict(estimate, lo, hi, planned_sd, whole_range, extras)

X a DataFrame with the declared columns, t 0/1, y the outcome, decl the `designs.Design` (its public declaration:
covariate_bounds, outcome_bounds, outcome type, eta), rng a seeded numpy Generator (RESEARCH-MODE noise: these are
benchmark releases, not secure ones). A rival returns None for an estimand it does not estimate. `lo`/`hi` are the
95% interval (None when the rival has none); `whole_range` says the interval covers the effect's whole public range
[-(hi - lo), hi - lo] of the declared outcome bounds; `planned_sd` is the rival's own plan of its sd (None if it has
none; what it contains is stated per rival).

Expensive per-data-set work that does not depend on epsilon or the estimand (Lebeda et al.'s K = 500 fits, the
non-private AIPW) is cached for the data set the harness is on (`_memo`), so G-formula, IPW and AIPW share one fit.
"""
import atexit
import json
import math
import os
import subprocess
import tempfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
from scipy.special import expit
from scipy.stats import norm

import lebeda

HERE = Path(__file__).resolve().parent
DPL_PYTHON = os.environ.get('DPL_PYTHON', '/work/dplvenv/bin/python')
Z95 = norm.ppf(0.975)

# ---------------------------------------------------------------- helpers
_CACHE = OrderedDict()


def _memo(X, tag, fn):
    "fn() once per (data set, tag); the data set is identified by the object X (kept referenced while cached)."
    key = (id(X), tag)
    if key in _CACHE and _CACHE[key][0] is X: return _CACHE[key][1]
    value = fn()
    _CACHE[key] = (X, value)
    while len(_CACHE) > 16: _CACHE.popitem(last=False)
    return value


def unit_cube(X, decl):
    "Each covariate mapped onto [-1, 1] by its declared bounds, values outside clipped; (Z, rows with a clipped value)."
    lo, hi = decl.lows_highs()
    Z = 2 * (np.asarray(X, float) - lo) / (hi - lo) - 1
    out = int(((Z < -1) | (Z > 1)).any(axis=1).sum())
    return np.clip(Z, -1, 1), out


def standard_scale(X, decl):
    "Affine map putting each declared range onto [-4, 4] (the identity on Lebeda et al.'s N(0,1) designs); no clipping."
    lo, hi = decl.lows_highs()
    return (np.asarray(X, float) - (lo + hi) / 2) / ((hi - lo) / 8)


def effect_range(decl):
    lo, hi = decl.outcome_bounds
    return hi - lo


def _result(estimate, lo, hi, decl, planned_sd=None, **extras):
    R = effect_range(decl)
    if lo is not None:
        lo, hi = max(float(lo), -R), min(float(hi), R)  # the effect's public range (post-processing)
    whole = lo is not None and lo <= -R and hi >= R
    return dict(estimate=float(estimate), lo=lo, hi=hi, planned_sd=None if planned_sd is None else float(planned_sd),
                whole_range=bool(whole), extras=extras)


# ---------------------------------------------------------------- DP difference in means (pure epsilon, Laplace)
DIM_SPLIT = dict(count=0.1, sums=0.7, squares=0.2)


def dp_diff_means(X, t, y, decl, epsilon, delta, estimand, rng):
    """Difference of the arms' mean outcomes from Laplace-noised per-arm sums and the treated count (pure epsilon; n
    public). Outcomes clipped to the declared bounds and centred at their middle c, u = y - c in [-h, h]. Released,
    with the budget split DIM_SPLIT (sequential composition): the treated count (sensitivity 1), the per-arm sums of
    u (L1 sensitivity 2h: a replaced row can leave one arm and join the other) and the per-arm sums of u^2 - h^2/2
    (L1 sensitivity h^2). Estimate clamped to [-2h, 2h]. Interval: estimate +- 1.96 sqrt(sampling variance from the
    private second moments + the noise variance by the delta method) - it covers the difference of the arms'
    population means, which is the ATE (and ATT) only when treatment is randomised. The ATT row is a second release
    of the same statistic. planned_sd: the noise sd alone, with equal arms assumed (the treated share is not public)."""
    n = len(y)
    lo, hi = decl.outcome_bounds
    c, h = (lo + hi) / 2, (hi - lo) / 2
    u = np.clip(y, lo, hi) - c
    t = np.asarray(t).astype(bool)
    e_n, e_s, e_q = (epsilon * DIM_SPLIT[k] for k in ('count', 'sums', 'squares'))
    b_n, b_s, b_q = 1 / e_n, 2 * h / e_s, h * h / e_q
    n1 = float(np.clip(t.sum() + rng.laplace(0, b_n), 1, n - 1)); n0 = n - n1
    S1, S0 = u[t].sum() + rng.laplace(0, b_s), u[~t].sum() + rng.laplace(0, b_s)
    Q1 = (u[t] ** 2 - h * h / 2).sum() + rng.laplace(0, b_q) + n1 * h * h / 2
    Q0 = (u[~t] ** 2 - h * h / 2).sum() + rng.laplace(0, b_q) + n0 * h * h / 2
    m1, m0 = np.clip(S1 / n1, -h, h), np.clip(S0 / n0, -h, h)
    est = float(np.clip(m1 - m0, -2 * h, 2 * h))
    v1, v0 = np.clip(Q1 / n1 - m1 ** 2, 0, h * h), np.clip(Q0 / n0 - m0 ** 2, 0, h * h)
    noise_var = 2 * b_s ** 2 * (1 / n1 ** 2 + 1 / n0 ** 2) + 2 * b_n ** 2 * (m1 ** 2 / n1 ** 2 + m0 ** 2 / n0 ** 2)
    se = math.sqrt(v1 / n1 + v0 / n0 + noise_var)
    planned = math.sqrt(2 * 2 * b_s ** 2) / (n / 2)
    return _result(est, est - Z95 * se, est + Z95 * se, decl, planned, covers='difference of arm means',
                   n1=n1, noise_sd=math.sqrt(noise_var))


# ---------------------------------------------------------------- diffprivlib LinearRegression (own venv, persistent worker)
class _DPLWorker:
    "One long-lived diffprivlib process (dpl_worker.py in /work/dplvenv) answering batched requests over a pipe."
    def __init__(self):
        self.proc, self.last_cpu = None, 0.0

    def __call__(self, X, y, bounds_X, bounds_y, epsilons, seeds):
        "X (R, n, p), y (R, n); returns (R, len(epsilons)) coefficients of column 0 (the treatment)."
        if self.proc is None or self.proc.poll() is not None:
            env = dict(os.environ, OPENBLAS_NUM_THREADS='1', OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')
            self.proc = subprocess.Popen([DPL_PYTHON, str(HERE / 'dpl_worker.py')], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, bufsize=1, env=env)
        d = Path('/dev/shm') if Path('/dev/shm').is_dir() else Path(tempfile.gettempdir())
        fd, path = tempfile.mkstemp(suffix='.npz', dir=d); os.close(fd)
        try:
            np.savez(path, X=X, y=y, lo=bounds_X[0], hi=bounds_X[1], ylo=bounds_y[0], yhi=bounds_y[1],
                     epsilons=np.asarray(epsilons, float), seeds=np.asarray(seeds, np.int64))
            self.proc.stdin.write(path + '\n'); self.proc.stdin.flush()
            reply = json.loads(self.proc.stdout.readline())
        finally:
            os.unlink(path)
        if 'error' in reply: raise RuntimeError('diffprivlib worker: ' + reply['error'])
        self.last_cpu = reply['cpu']
        return np.array(reply['coef'])

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close(); self.proc.wait(timeout=30)


DPL = _DPLWorker()
atexit.register(DPL.close)


def dpl_design(X, t, decl):
    "The regression's inputs: (T, X clipped to the declared bounds) and bounds_X with T in (0, 1)."
    lo, hi = decl.lows_highs()
    F = np.c_[np.asarray(t, float), np.clip(np.asarray(X, float), lo, hi)]
    return F, (np.r_[0.0, lo], np.r_[1.0, hi])


def dpl_batch(datasets, decl, epsilons, seeds):
    "Many data sets [(X, t, y), ...] in one worker call: (R, len(epsilons)) coefficients of T."
    F = np.stack([dpl_design(X, t, decl)[0] for X, t, _ in datasets])
    y = np.stack([np.clip(y, *decl.outcome_bounds) for _, _, y in datasets])
    return DPL(F, y, dpl_design(datasets[0][0], datasets[0][1], decl)[1], decl.outcome_bounds, epsilons, seeds)


def diffprivlib_lr(X, t, y, decl, epsilon, delta, estimand, rng):
    """diffprivlib 0.6.6 LinearRegression (functional mechanism, pure epsilon) of Y on (T, X), bounds_X from the
    declared covariate bounds with T in (0, 1), bounds_y the declared outcome bounds; the effect is T's coefficient
    (a constant-effect model: the ATT row is a second release of the same coefficient). No interval. The worker's
    CPU time is returned as extras['worker_cpu'] (the harness adds it to the row's cpu)."""
    seed = int(rng.integers(2 ** 31 - 1))
    coef = float(dpl_batch([(X, t, y)], decl, [epsilon], [seed])[0, 0])
    return _result(coef, None, None, decl, None, mechanism='diffprivlib LinearRegression', worker_cpu=DPL.last_cpu)


# ---------------------------------------------------------------- PP-IPW (privcausal, library defaults, honest bounds)
def pp_ipw(X, t, y, decl, epsilon, delta, estimand, rng):
    """privcausal.ipw.pp_ipw with its defaults (Hajek, random half split, default lambda and debiasing rule): each
    covariate mapped onto [-1, 1] by its declared bounds (clipped), covariate_bound = sqrt(d); the outcome centred at
    the middle c of its declared bounds, outcome_bound = half their width (the Hajek effect is unchanged by the shift;
    the bound is then honest and smallest); clip = 0.02, clip_rows and clip_outcomes on. planned_sd: the plan's
    sqrt(noise_sd^2 + sampling_sd^2). Interval: the release's conf_int() (it says it covers the effect given the
    released propensity model)."""
    from privcausal.ipw import pp_ipw as release
    Z, out = unit_cube(X, decl)
    lo, hi = decl.outcome_bounds
    c, h = (lo + hi) / 2, (hi - lo) / 2
    r = release(X=Z, outcome=np.asarray(y, float) - c, treatment=np.asarray(t), epsilon=epsilon, delta=delta,
                outcome_bound=h, covariate_bound=math.sqrt(Z.shape[1]), propensity_bounds=0.02, estimand=estimand,
                estimator='hajek', clip_rows=True, clip_outcomes=True, rng=rng)
    a, b = r.conf_int()
    p = r.plan
    return _result(r.estimate, a, b, decl, math.hypot(p.noise_sd, p.sampling_sd), rows_clipped=out,
                   debias=bool(p.debias), lam=p.lam, covers=r.interval_covers)


# ---------------------------------------------------------------- WATE (privcausal, binary outcomes)
def wate(X, t, y, decl, epsilon, delta, estimand, rng):
    """privcausal.bayes_wate.wate with its defaults (pure epsilon; delta unused) on the covariates mapped onto [-1, 1];
    binary outcomes only (None otherwise). planned_sd: sqrt(plan.noise_sd^2 + plan.sampling_variance)."""
    if decl.outcome != 'binary': return None
    from privcausal.bayes_wate import wate as release
    Z, out = unit_cube(X, decl)
    r = release(X=Z, outcome=np.asarray(y, int), treatment=np.asarray(t), estimand=estimand, epsilon=epsilon, rng=rng)
    a, b = r.conf_int()
    return _result(r.estimate, a, b, decl, math.sqrt(r.plan.noise_sd ** 2 + r.plan.sampling_variance),
                   n_partitions=r.plan.n_partitions)


# ---------------------------------------------------------------- Lebeda et al. (2025) at K = 500
def _lebeda_scores(X, t, y, decl, rng):
    return _memo(X, 'lebeda', lambda: lebeda.cross_fit_scores(standard_scale(X, decl), np.asarray(t), np.asarray(y, float),
                                                              decl.outcome_bounds, decl.outcome == 'binary', decl.eta,
                                                              K=lebeda.K_DEFAULT, rng=rng))


def _lebeda(estimator, formula='code'):
    def rival(X, t, y, decl, epsilon, delta, estimand, rng):
        if estimand != 'ATE': return None
        fold_rng = np.random.default_rng([20250519, len(y)])  # the random folds: independent of the data and method
        scores = _lebeda_scores(X, t, y, decl, fold_rng)
        r = lebeda.release(scores, estimator, decl.outcome_bounds, decl.eta, epsilon, delta, rng, formula=formula)
        return _result(r['estimate'], r['lo'], r['hi'], decl, r['planned_sd'], **r['extras'])
    rival.__doc__ = (f"Lebeda et al. {estimator} at K = {lebeda.K_DEFAULT} with the '{formula}' sensitivity (see lebeda.py); "
                     'ATE only. planned_sd: the exact Gaussian noise sd (no sampling part).')
    return rival


lebeda_g, lebeda_ipw, lebeda_aipw = _lebeda('G'), _lebeda('IPW'), _lebeda('AIPW')
lebeda_aipw_derived = _lebeda('AIPW', 'derived')


# ---------------------------------------------------------------- non-private AIPW (the width reference)
def _logit_newton(F, t, iters=50):
    b = np.zeros(F.shape[1])
    for _ in range(iters):
        p = expit(F @ b)
        step = np.linalg.solve((F * (p * (1 - p))[:, None]).T @ F + 1e-10 * np.eye(F.shape[1]), F.T @ (p - t))
        b -= step
        if np.abs(step).max() < 1e-10: break
    return b


def _aipw_fit(X, t, y, decl):
    F = np.c_[np.ones(len(y)), standard_scale(X, decl)]
    t = np.asarray(t).astype(float); y = np.asarray(y, float)
    e = np.clip(expit(F @ _logit_newton(F, t)), 1e-6, 1 - 1e-6)
    mu = [F @ np.linalg.lstsq(F[t == a], y[t == a], rcond=None)[0] for a in (0, 1)]
    return F, t, y, e, mu


def nonprivate_aipw(X, t, y, decl, epsilon, delta, estimand, rng):
    """NOT PRIVATE: AIPW with an unpenalised logistic propensity (no clipping beyond 1e-6) and per-arm OLS outcome
    models, no cross-fitting; 95% interval from the influence function. The width reference of the benchmark (the
    same release on every epsilon row). Agrees with statsmodels' TreatmentEffect(...).aipw() (check_rivals.py)."""
    _, t, y, e, (mu0, mu1) = _memo(X, 'aipw', lambda: _aipw_fit(X, t, y, decl))
    n = len(y)
    if estimand == 'ATE':
        psi = mu1 - mu0 + t * (y - mu1) / e - (1 - t) * (y - mu0) / (1 - e)
        est = psi.mean(); infl = psi - est
    elif estimand == 'ATT':
        p1 = t.mean()
        a = t * (y - mu0) - (1 - t) * e / (1 - e) * (y - mu0)
        est = a.mean() / p1; infl = (a - t * est) / p1
    else:
        return None
    se = infl.std() / math.sqrt(n)
    return _result(est, est - Z95 * se, est + Z95 * se, decl, se, private=False)


RIVALS = {
    'dp_dim': dp_diff_means,
    'diffprivlib_lr': diffprivlib_lr,
    'pp_ipw': pp_ipw,
    'wate': wate,
    'lebeda_g': lebeda_g,
    'lebeda_ipw': lebeda_ipw,
    'lebeda_aipw': lebeda_aipw,
    'lebeda_aipw_derived': lebeda_aipw_derived,
    'nonprivate_aipw': nonprivate_aipw,
}
