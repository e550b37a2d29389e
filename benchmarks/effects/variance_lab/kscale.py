"""Validate scaling the G-formula's floor-check bias bound by k on designs the grid did not tune on (correlated and skewed
covariates). Records estimate, std_error, bias_bound per release; coverage of the TRUE effect for k = 1, 1.5, 2.
   python kscale.py corr 2000 5 ATE 300   (kscale.log: both designs, n 1,000-5,000, eps 2-10)"""
import sys, json, math, numpy as np, pandas as pd, warnings
warnings.simplefilter('ignore')
from scipy.special import expit
from privcausal.regression import gformula

def corr(n, g, rho=0.6, d=6, share=-1.4, gap=0.8):
    C = rho * np.ones((d, d)) + (1 - rho) * np.eye(d); X = g.multivariate_normal(np.zeros(d), C, size=n)
    p = expit(share + gap * X[:, :3].sum(1)); t = (g.uniform(size=n) < p).astype(int)
    tau = 1.5 + 0.5 * X[:, 0]
    y = 1 + X @ np.linspace(1, 0.2, d) + t * tau + g.normal(0, 1.5, n)
    return pd.DataFrame(X, columns=[f'x{j}' for j in range(d)]).assign(t=t, y=y), {f'x{j}': (-5, 5) for j in range(d)}, (-25, 25), dict(ATE=1.5, ATT=None)

def skew(n, g, d=5):
    X = np.c_[g.lognormal(0, 0.7, n), g.lognormal(0.5, 0.5, n), g.gamma(2, 1, n), g.normal(0, 1, n), g.integers(0, 2, n)]
    lin = -1.2 + 0.5 * (X[:, 0] - 1.3) + 0.4 * (X[:, 2] - 2) + 0.6 * X[:, 3]
    t = (g.uniform(size=n) < expit(lin)).astype(int)
    y = 2 * X[:, 0] + X[:, 1] - X[:, 2] + 0.5 * X[:, 3] + X[:, 4] + 2 * t + g.normal(0, 2, n)
    b = {'x0': (0, 20), 'x1': (0, 20), 'x2': (0, 20), 'x3': (-5, 5)}
    return pd.DataFrame(X, columns=[f'x{j}' for j in range(d)]).assign(t=t, y=y), b, (-30, 60), dict(ATE=2.0, ATT=2.0)

DES = {'corr': corr, 'skew': skew}
if __name__ == '__main__':
    des, n, eps, est, reps = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], int(sys.argv[5])
    g = np.random.default_rng([11, n, int(eps * 10)]); rows = []
    for r in range(reps):
        df, cb, yb, truth = DES[des](n, g)
        o = gformula(df, outcome='y', treatment='t', covariates=[c for c in df.columns if c.startswith('x')], covariate_bounds=cb,
                     outcome_bounds=yb, epsilon=eps, delta=1e-6, estimand=est, rng=g, clip=True)
        rows.append((o.estimate, o.std_error, o.bias_bound))
    a = np.array(rows); T = truth[est]
    out = dict(des=des, n=n, eps=eps, est=est, reps=reps, bias=round(a[:, 0].mean() - T, 4), sd=round(a[:, 0].std(), 4),
               med_bound=round(float(np.median(a[:, 2])), 4))
    for k in (1, 1.5, 2):
        hw = 1.959964 * a[:, 1] + k * a[:, 2]
        out[f'cov{k}'] = round(float(np.mean(np.abs(a[:, 0] - T) <= hw)), 3); out[f'w{k}'] = round(float(np.median(2 * hw)), 3)
    print(json.dumps(out), flush=True)
