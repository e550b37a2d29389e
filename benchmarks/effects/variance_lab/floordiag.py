"""NOT PRIVATE lab: how much of the G-formula's bias at small n is the eigenvalue floor's shrinkage at the TRUE
statistics? Noise-free releases (epsilon = 1e6) with the floor set to what it is at epsilon = 1 and 5, and a third of
it (the floor check), and with (almost) no floor; 40 data sets, mean estimate minus the true effect.

    python benchmarks/effects/variance_lab/floordiag.py DESIGN N REPS [ATE|ATT]      (from the repository root)
"""
import sys, numpy as np, pandas as pd, warnings
warnings.simplefilter('ignore')
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parents[1]))
from designs import DESIGNS
from privcausal.regression import gformula, plan_gformula
des = DESIGNS[sys.argv[1]]; n = int(sys.argv[2]); reps = int(sys.argv[3]); est = sys.argv[4] if len(sys.argv) > 4 else 'ATE'
cols = list(des.columns); cb = {c: b for c, b in des.covariate_bounds.items() if tuple(b) != (0, 1)}
sig = lambda e: plan_gformula(n, e, 1e-6, des.outcome_bounds, covariates=cols, covariate_bounds=cb).sigma('gram')
base = sig(1e6)
g = np.random.default_rng(0); out = {k: [] for k in ('eps1', 'eps1/3', 'eps5', 'eps5/3', 'none')}
floors = {'eps1': 0.6 * sig(1.0) / base, 'eps1/3': 0.2 * sig(1.0) / base, 'eps5': 0.6 * sig(5.0) / base, 'eps5/3': 0.2 * sig(5.0) / base, 'none': 1e-6}
truth = None
for r in range(reps):
    X, t, y = des.draw(n, g)
    truth = des.truth[est]
    df = X.assign(t=t, y=y)
    for k, f in floors.items():
        o = gformula(df, outcome='y', treatment='t', covariates=cols, covariate_bounds=cb, outcome_bounds=des.outcome_bounds,
                     epsilon=1e6, delta=1e-6, estimand=est, rng=np.random.default_rng(1), clip=True, floor=f)
        out[k].append(o.estimate)
for k, v in out.items():
    v = np.array(v); print(f'{sys.argv[1]} n={n} {est} floor@{k:7s} mean-truth={v.mean() - truth:+.4f} sd={v.std():.4f}')
