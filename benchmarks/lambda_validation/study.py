import sys, time, warnings, json
import numpy as np, pandas as pd
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parent))
from designs import mixed_design, mixed_truth
from privcausal.ipw import pp_ipw
from privcausal.theory_ipw import paper_design
KS = (1.0, 1/3, 1/2, 1/10)
MT = mixed_truth()

def ihdp_setup():
    from privcausal.data import IHDP_COVARIATES, load_ihdp
    ihdp = load_ihdp(standardize=True)
    X = ihdp[list(IHDP_COVARIATES)].to_numpy(float); t = ihdp.treat.to_numpy()
    XB = np.column_stack([np.ones(len(X)), X]); XB[:, 1 + IHDP_COVARIATES.index('first')] += 1
    OFF = np.full(XB.shape, 0.5); OFF[:, 0] = 0
    return X, t, XB, OFF
IH = None
def datasets(design, n, reps, seed, estimand):
    global IH
    rng = np.random.default_rng(seed); B = 50
    for s in range(0, reps, B):
        k = min(B, reps - s)
        if design == 'paper':
            X, t, y, tr, C = paper_design(n, rng, reps=k)
            kw = dict(outcome_bound=C, covariate_bound=1.0, propensity_bounds=0.05); truth = tr[estimand]
            for j in range(k): yield X[j], t[j], y[j], truth, kw
        elif design == 'mixed':
            X, t, y = mixed_design(n, rng, k)
            kw = dict(outcome_bound=12.0, covariate_bound=5.0, propensity_bounds=0.02, clip_rows=True, clip_outcomes=True)
            for j in range(k): yield X[j], t[j], y[j], MT[estimand], kw
        else:  # IHDP surface B (Hill 2011), fresh response surface per rep; truth = sample mean of mu1-mu0 (ATE) / over treated (ATT)
            if IH is None: IH = ihdp_setup()
            X, t, XB, OFF = IH
            kw = dict(outcome_bound=50.0, covariate_bound=8.0, propensity_bounds=0.05, clip_rows=True, clip_outcomes=True)
            for j in range(k):
                beta = rng.choice([0, .1, .2, .3, .4], size=XB.shape[1], p=[.6, .1, .1, .1, .1])
                mu0 = np.exp((XB + OFF) @ beta); mu1 = XB @ beta
                mu1 = mu1 - (np.mean((mu1 - mu0)[t == 1]) - 4)
                y = np.where(t == 1, mu1, mu0) + rng.normal(size=len(t))
                truth = float(np.mean(mu1 - mu0)) if estimand == 'ATE' else float(np.mean((mu1 - mu0)[t == 1]))
                yield X, t, y, truth, kw

def cell(design, n, eps, estimand, reps, seed, ks=KS):
    rows = {k: [] for k in ks}; lam_star = None
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for i, (X, t, y, truth, kw) in enumerate(datasets(design, n, reps, seed, estimand)):
            if lam_star is None:
                lam_star = pp_ipw(X=X, outcome=y, treatment=t, epsilon=eps, delta=1e-6, estimand=estimand,
                                  rng=np.random.default_rng(0), **kw).plan.lam
            for k in ks:  # same data set and same noise seed for every k (common random numbers)
                r = pp_ipw(X=X, outcome=y, treatment=t, epsilon=eps, delta=1e-6, estimand=estimand, lam=k * lam_star,
                           rng=np.random.default_rng(1_000_003 * seed + i), **kw)
                lo, hi = r.conf_int()
                rows[k].append((r.estimate, lo, hi, truth, r.plan.outcome_bound))
    out = []
    cov1 = None
    for k, v in rows.items():
        a = np.array(v); est, lo, hi, tr, C = a.T
        c = (lo <= tr) & (tr <= hi); cov = c.mean(); err = est - tr
        if cov1 is None: cov1, e1 = c, err
        dc = c.astype(float) - cov1; dse = dc.std(ddof=1) / np.sqrt(len(dc))
        d2 = err ** 2 - e1 ** 2; mse_ratio_se = d2.std(ddof=1) / np.sqrt(len(d2)) / (e1 ** 2).mean()
        out.append(dict(design=design, N=n, estimand=estimand, eps=eps, k=round(k, 3), lam=k * lam_star, reps=len(a),
                        coverage=cov, cov_se=np.sqrt(cov * (1 - cov) / len(a)), bias=err.mean(), sd=est.std(ddof=1),
                        rmse=np.sqrt((err ** 2).mean()), med_width=np.median(hi - lo),
                        full_range=((hi - lo) >= 4 * C * (1 - 1e-9)).mean(), truth=tr.mean(), dcov=dc.mean(), dcov_se=dse, mse_ratio=(err**2).mean()/(e1**2).mean(), mse_ratio_se=mse_ratio_se))
    return out

if __name__ == '__main__':
    design, n, est, reps = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    epss = [float(e) for e in sys.argv[5].split(',')]
    for j, eps in enumerate(epss):
        t0 = time.time()
        if len(sys.argv) > 6:  # second pass: seeds from a base seed
            seed = int(sys.argv[6]) + 10 * j + {'paper': 1, 'mixed': 2, 'ihdp': 3}[design] * 1000 + (n == 20000) * 100 + (est == 'ATT') * 500
        else:  # first pass (run with PYTHONHASHSEED=0)
            seed = hash((design, n, est)) % 1000 * 10 + j
        res = cell(design, n, eps, est, reps, seed=seed)
        for r in res: print(json.dumps(r), flush=True)
        print(f'# {design} {n} {est} eps={eps} {time.time()-t0:.1f}s', file=sys.stderr, flush=True)
