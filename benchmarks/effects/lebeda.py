"""Lebeda, Even, Bellet & Josse (2025, arXiv 2505.19589): model-agnostic DP G-formula, IPW and AIPW, written anew
from the paper's description (not their code).

The data are split into K disjoint folds; on each fold non-private nuisance models are fitted: logistic regression
with scikit-learn's default L2 penalty (C = 1, intercept unpenalised) for the propensity, and per-arm outcome
models (logistic, C = 1, for a binary outcome; least squares with an unpenalised intercept for a continuous one).
These choices reproduce their published exp3/exp4 runs (check_lebeda.py). Every unit is scored by the OTHER K - 1
folds' models: inverse propensities by their arithmetic mean (a harmonic mean of the propensities, each clipped to
[eta, 1 - eta]), outcome predictions (clipped to the outcome's public range) by their arithmetic mean.
The estimate is the mean of the per-unit scores; Gaussian noise is added once, calibrated in mu-GDP (the paper's
accounting) from (epsilon, delta) exactly.

Sensitivity (replace one row; outcomes in [lo, hi], R = hi - lo, M = max(|lo|, |hi|)). Two formulas:
  'code'    : the formula in the authors' public plotting scripts (plots/figure3.py `sensitivity`), generalised to the
              outcome range as their comment states: G-formula 2R/n + 2R/K; IPW and AIPW 2M/(eta n) + M/(eta K).
              (The paper's body could not be read here; this is "their formula" as published with their figures.)
  'derived' : my worst-case bound over arbitrary fold models for the same algorithm: G-formula as above; IPW
              2M/(eta n) + M (1/eta - 1/(1-eta))/K; AIPW 2R/(eta n) + R (2/eta - 1/(1-eta))/K. For AIPW this is
              about twice 'code': changing one fold's models moves every other unit's score through mu_1 (times
              w - 1), mu_0 and the inverse propensity at once. The benchmark runs 'code' (their release) and
              records 'derived' beside it.
Interval (reconstruction, the paper's could not be read): a share `var_share` of mu^2 releases the second moment of
the scores (sensitivity B^2/n + (2Bc + c^2), B the bound on |score|, c the per-unit change from one fold), the
variance is clamped to [0, B^2], and the interval is estimate +- z sqrt(V/n + sigma^2). It covers the effect the
scores estimate; the small-fold bias of K = 500 nuisance fits is not in it. ATE only (the paper's estimand).
"""
import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit
from scipy.stats import norm

K_DEFAULT = 500


def gdp_mu(epsilon, delta):
    "The mu of mu-GDP that is exactly (epsilon, delta)-DP (Dong, Roth & Su 2022, Corollary 2.13)."
    f = lambda mu: norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2) - delta
    return brentq(f, 1e-6, 100.0, xtol=1e-12)


def sensitivity(estimator, n, K, eta, outcome_bounds, formula='code'):
    "L2 (= L1, scalar) sensitivity of the released mean of scores; returns (total, B bound on |score|, c per-unit change)."
    lo, hi = outcome_bounds
    R, M = hi - lo, max(abs(lo), abs(hi))
    if estimator == 'G':
        own, other, B = 2 * R / n, 2 * R / K, R
    elif formula == 'code':
        own, other, B = 2 * M / (eta * n), M / (eta * K), (M if estimator == 'IPW' else R) / eta
    elif estimator == 'IPW':
        own, other, B = 2 * M / (eta * n), M * (1 / eta - 1 / (1 - eta)) / K, M / eta
    elif estimator == 'AIPW':
        own, other, B = 2 * R / (eta * n), R * (2 / eta - 1 / (1 - eta)) / K, R / eta
    else:
        raise ValueError(estimator)
    return own + other, B, other * K / (K - 1)


def noise_sd(estimator, n, K, eta, outcome_bounds, epsilon, delta, formula='code', share=1.0):
    "The Gaussian noise sd on the released estimate when a share of mu^2 goes to it."
    return sensitivity(estimator, n, K, eta, outcome_bounds, formula)[0] / (gdp_mu(epsilon, delta) * math.sqrt(share))


# ---------------- batched nuisance fits: one model per fold, all folds at once ----------------
def _folds(n, K, rng):
    "Random disjoint folds of sizes floor(n/K) or ceil(n/K): (fold of each row, (K, m) row index table, (K, m) mask)."
    perm = rng.permutation(n)
    m = -(-n // K)
    table = np.full(K * m, -1); table[:n] = perm
    table = table.reshape(m, K).T  # row r of the permutation goes to fold r % K
    fold = np.empty(n, int); fold[perm] = np.arange(n) % K
    return fold, table, table >= 0


def fit_logistic_batch(F, y, mask, lam=1.0, iters=50, tol=1e-9):
    "Penalised logistic regression per fold by batched Newton: F (K, m, p) with intercept first (unpenalised)."
    K, m, p = F.shape
    w = mask.astype(float)
    P = np.full(p, lam); P[0] = 0.0
    beta = np.zeros((K, p))
    for _ in range(iters):
        z = np.einsum('kmp,kp->km', F, beta)
        mu = expit(z)
        g = np.einsum('kmp,km->kp', F, w * (mu - y)) + P * beta
        H = np.swapaxes(F * (w * mu * (1 - mu))[..., None], 1, 2) @ F + np.diag(P + 1e-10)
        step = np.linalg.solve(H, g[..., None])[..., 0]
        beta -= step
        if np.abs(step).max() < tol: break
    return beta


def fit_ols_batch(F, y, mask, ridge=1e-9):
    """Least squares per fold with an unpenalised intercept (F's first column): slopes from the centred data, the
    intercept from the means, as scikit-learn's LinearRegression. Folds with fewer rows than slopes get (close to)
    the minimum-norm slopes through a vanishing ridge."""
    w = mask.astype(float)
    cnt = np.maximum(w.sum(1), 1)[:, None]
    xm = np.einsum('kmp,km->kp', F[..., 1:], w) / cnt
    ym = (w * y).sum(1, keepdims=True) / cnt
    Fc = (F[..., 1:] - xm[:, None, :]) * w[..., None]
    G = np.swapaxes(Fc, 1, 2) @ Fc
    scale = np.trace(G, axis1=1, axis2=2)[:, None, None] / G.shape[2] + 1e-12
    slopes = np.linalg.solve(G + ridge * scale * np.eye(G.shape[2]), (np.swapaxes(Fc, 1, 2) @ (w * (y - ym))[..., None]))[..., 0]
    return np.c_[ym[:, 0] - (xm * slopes).sum(1), slopes]


def cross_fit_scores(Z, t, y, outcome_bounds, binary, eta, K=K_DEFAULT, rng=None, chunk=4000, lam=1.0):
    """Per-unit G-formula, IPW and AIPW scores (ATE) with K-fold nuisance models, each unit scored by the other
    folds' models. Z: n x d covariates (any affine scaling; an intercept is added). NOT PRIVATE."""
    n = len(y)
    lo, hi = outcome_bounds
    y = np.clip(y, lo, hi)
    F = np.c_[np.ones(n), Z]
    fold, table, mask = _folds(n, K, rng)
    idx = np.where(mask, table, 0)
    Fk, tk, yk = F[idx], t[idx].astype(float), y[idx]
    gam = fit_logistic_batch(Fk, tk, mask, lam)  # propensity
    fit = (lambda m: fit_logistic_batch(Fk, yk, m, lam)) if binary else (lambda m: fit_ols_batch(Fk, yk, m))
    b0, b1 = fit(mask & (tk == 0)), fit(mask & (tk == 1))  # outcome model per arm (T-learner)
    mu0, mu1, w1, w0 = (np.empty(n) for _ in range(4))
    link = expit if binary else (lambda z: z)
    for s in range(0, n, chunk):
        rows = slice(s, min(s + chunk, n))
        own = fold[rows]
        r = np.arange(own.size)
        e = np.clip(expit(F[rows] @ gam.T), eta, 1 - eta)  # (chunk, K)
        m0, m1 = np.clip(link(F[rows] @ b0.T), lo, hi), np.clip(link(F[rows] @ b1.T), lo, hi)
        for arr, out in ((m0, mu0), (m1, mu1), (1 / e, w1), (1 / (1 - e), w0)):
            out[rows] = (arr.sum(1) - arr[r, own]) / (K - 1)
    g = mu1 - mu0
    ipw = t * y * w1 - (1 - t) * y * w0
    aipw = g + t * (y - mu1) * w1 - (1 - t) * (y - mu0) * w0
    return {'G': g, 'IPW': ipw, 'AIPW': aipw}


def release(scores, estimator, outcome_bounds, eta, epsilon, delta, rng, K=K_DEFAULT, formula='code',
            var_share=0.1, alpha=0.05):
    "The private estimate (Gaussian noise once) and the reconstructed private interval from one set of scores."
    psi = scores[estimator]
    n = len(psi)
    mu = gdp_mu(epsilon, delta)
    sens, B, c = sensitivity(estimator, n, K, eta, outcome_bounds, formula)
    sd = sens / (mu * math.sqrt(1 - var_share))
    est = psi.mean() + rng.normal(0, sd)
    R = outcome_bounds[1] - outcome_bounds[0]
    lo, hi, V = -R, R, None
    if var_share > 0:
        q_sens = B * B / n + 2 * B * c + c * c
        q = (psi * psi).mean() + rng.normal(0, q_sens / (mu * math.sqrt(var_share)))
        V = float(np.clip(q - est * est, 0, B * B))
        half = norm.ppf(1 - alpha / 2) * math.sqrt(V / n + sd * sd)
        lo, hi = max(est - half, -R), min(est + half, R)
    return dict(estimate=float(est), lo=float(lo), hi=float(hi), planned_sd=sd, whole_range=bool(lo <= -R and hi >= R),
                extras=dict(noise_sd=sd, variance=V, mu_gdp=mu, K=K, eta=eta, formula=formula,
                            noise_sd_code=noise_sd(estimator, n, K, eta, outcome_bounds, epsilon, delta, 'code', 1 - var_share),
                            noise_sd_derived=noise_sd(estimator, n, K, eta, outcome_bounds, epsilon, delta, 'derived', 1 - var_share)))
