"""Can a one-step (Newton) debiasing of the private propensity model remove PP-IPW's regularisation bias?

NOT shipped: a study of a remedy that was tried (see README.md). For each data set, one PP-IPW release is made as a
user would (default settings, seeded research noise). Three alternatives are then computed from the same data, the
same released propensity model w and the same effect-stage noise draw, through the library's own Hájek
post-processing (`hajek_sums`, `hajek_from_sums`, `hajek_interval`):

* default  -- the release itself (sums with the weights of w);
* oracle   -- sums with the weights of w + lam H0^{-1} w, H0 the unpenalised log-loss Hessian at w on D_n, computed
              WITHOUT privacy: an upper bound on what a debiasing step can do (it is not a private release);
* private  -- the same step with H0 released on D_n by the Gaussian mechanism at a share pi of the effect stage's
              (epsilon, delta) (basic composition; the sums get the rest), made safe by a public ridge: the noisy
              matrix's eigenvalues are floored at 0 and raised by nu = sigma (sqrt(2(d+1)) + 3), a bound on the noise's
              spectral norm (held in > 99.9% of 2,000 simulated draws at d+1 = 3 ... 51).

Sensitivity of the H0 release: sum_i p_i (1 - p_i) z_i z_i' with ||z_i|| <= 1; replacing one row changes it by
a z z' - b z~ z~' (a, b <= 1/4), whose Frobenius norm is <= sqrt(a^2 + b^2) <= sqrt(2)/4 (two PSD rank-one terms);
the released vector holds the diagonal and sqrt(2) x the upper triangle, so its L2 norm is that Frobenius norm.

usage: python study.py [reps] > results.jsonl     (about 3 minutes of one core at reps=300)
"""
import json, math, sys, warnings
from pathlib import Path

import numpy as np
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'lambda_validation'))
from study import datasets  # the paper, mixed and IHDP designs of the lambda study (same bounds)
from privcausal.ipw import hajek_from_sums, hajek_interval, hajek_sums, ipw_unit_weights, max_unit_weight, pp_ipw
from privcausal.propensity import augment_constant, gaussian_sigma
from privcausal.theory_ipw import imbalanced_design

DELTA, SHARES = 1e-6, (0.1, 0.25)


def imbalanced(n, reps, seed, estimand):
    g = np.random.default_rng(seed)
    for _ in range(reps):
        X, t, y, truth = imbalanced_design(n, g)
        yield X, t, y, truth[estimand], dict(outcome_bound=12.0, covariate_bound=5.0, propensity_bounds=0.02, clip_rows=True, clip_outcomes=True)


def rows(X, y, kw):
    "The rows and outcomes exactly as `pp_ipw` prepares them (divided by R, projected if asked, constant feature)."
    Xs = X / kw['covariate_bound']
    Xs = Xs / np.maximum(np.linalg.norm(Xs, axis=1), 1.0)[:, None]
    C = kw['outcome_bound']
    return augment_constant(Xs), np.clip(y, -C, C) / C


def release(plan, Z, t, u, w, noise):
    "The library's Hajek post-processing of the sums computed with model weights `w`, plus the given noise draw."
    h = np.abs(ipw_unit_weights(expit(Z @ w), t, plan.estimand, plan.propensity_bounds, plan.bounding))
    v = hajek_sums(u, t, h, plan.variance_scale, max_unit_weight(plan.propensity_bounds, plan.estimand)) + noise
    eff = hajek_from_sums(v, plan.outcome_bound, plan.propensity_bounds, plan.estimand, plan.effect_noise_sd, plan.variance_scale)
    lo, hi = hajek_interval(v, plan.outcome_bound, plan.propensity_bounds, plan.estimand, plan.effect_noise_sd,
                            plan.variance_scale, 0.05, eff.dof)
    return eff.estimate, lo, hi


def private_hessian(S, n, eps, delta, seed):
    "S + symmetric Gaussian noise (diagonal sd sigma, off-diagonal sigma/sqrt 2), made PSD and ridged by nu; divided by n."
    k = S.shape[0]
    sigma = gaussian_sigma(math.sqrt(2) / 4, eps, delta, 'analytic')
    g = np.random.default_rng(seed)
    N = np.triu(g.normal(0, sigma, (k, k)), 1) / math.sqrt(2)
    vals, vecs = np.linalg.eigh(S + N + N.T + np.diag(g.normal(0, sigma, k)))
    return (vecs * (np.maximum(vals, 0) + sigma * (math.sqrt(2 * k) + 3))) @ vecs.T / n


def cell(design, N, eps, estimand, reps, seed=7):
    gen = imbalanced(N, reps, seed, estimand) if design == 'imbalanced' else datasets(design, N, reps, seed, estimand)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # the announced clipping, on every call
        for i, (X, t, y, truth, kw) in enumerate(gen):
            split = np.zeros(len(t), bool); split[np.random.default_rng(i).permutation(len(t))[: len(t) // 2]] = True
            e = ~split
            Z, u = rows(X, y, kw)
            Z, t_e, u = Z[e], np.asarray(t)[e], u[e]
            rec = dict(truth=truth)
            for name, share in [('default', 0.0)] + [(f'private_{s:g}', s) for s in SHARES]:
                kw_eps = {} if share == 0 else dict(epsilon_estimate=eps * (1 - share), delta_estimate=DELTA * (1 - share))
                r = pp_ipw(X=X, outcome=y, treatment=t, epsilon=eps, delta=DELTA, estimand=estimand, split=split,
                           rng=np.random.default_rng(10_000 + i), **kw_eps, **kw)
                plan, w = r.plan, r.propensity.weights
                noise = np.random.default_rng(20_000 + i).normal(0, plan.effect_noise_sd, 8 if plan.variance_scale > 0 else 4)
                p = expit(Z @ w)
                S = (Z * (p * (1 - p))[:, None]).T @ Z
                if share == 0:
                    rec['default'] = release(plan, Z, t_e, u, w, noise)
                    rec['oracle'] = release(plan, Z, t_e, u, w + plan.lam * np.linalg.solve(S / len(u), w), noise)
                else:
                    H = private_hessian(S, len(u), eps * share, DELTA * share, 30_000 + i)
                    rec[name] = release(plan, Z, t_e, u, w + plan.lam * np.linalg.solve(H, w), noise)
            out.append(rec)
    res = []
    for name in ['default', 'oracle'] + [f'private_{s:g}' for s in SHARES]:
        est, lo, hi = np.array([o[name] for o in out]).T
        tr = np.array([o['truth'] for o in out])
        res.append(dict(design=design, N=N, estimand=estimand, eps=eps, variant=name, reps=len(out),
                        bias=float(np.mean(est - tr)), sd=float(est.std()), coverage=float(np.mean((lo <= tr) & (tr <= hi))),
                        median_width=float(np.median(hi - lo))))
    return res


if __name__ == '__main__':
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    cells = [('imbalanced', 4000, e, 'ATE') for e in (1.0, 5.0, 50.0)] + [('imbalanced', 4000, 5.0, 'ATT')] + \
            [('mixed', 4000, e, 'ATE') for e in (1.0, 5.0, 50.0)] + [('mixed', 20000, 5.0, 'ATE'), ('paper', 2000, 5.0, 'ATE'),
                                                                   ('ihdp', 747, 5.0, 'ATE')]
    for design, N, eps, est in cells:
        for row in cell(design, N, eps, est, reps if N < 20000 else max(reps // 3, 50)):
            print(json.dumps(row), flush=True)
