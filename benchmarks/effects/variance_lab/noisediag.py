import sys, json, math, numpy as np, pandas as pd, warnings
warnings.simplefilter('ignore')
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
import runlib
import privcausal.regression as R
from privcausal.outcome import ArmStatistics, arm_models, gformula_effect, eigen_floor, simulate_noise
from privcausal.bounds import effect_columns
from privcausal.mechanisms import resolve_noise
des, n, eps = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
f, bo, yb = runlib.DES[des]; g = np.random.default_rng(5)
names = [f'x{j}' for j in range(len(bo))]; cb = {c: b for c, b in zip(names, bo) if tuple(b) != (0, 1)}
for rep in range(3):
    X, t, y = f(n, g); df = pd.DataFrame(X, columns=names).assign(t=t, y=y)
    plan = R.plan_gformula(n, eps, 1e-6, yb, covariates=names, covariate_bounds=cb, clip=True)
    cols = effect_columns(df, 'y', 't', names, None)
    s = R.gformula_statistics(plan, cols, resolve_noise(g))
    h = s.carry['encoding'].outcome_halfwidth
    rel = lambda: s.vector + g.normal(size=s.vector.size) * s.sigma
    out = []
    for k in range(100):
        st = ArmStatistics.from_flat(rel(), s.carry['p'])
        m, est, var, nv, corr, acc = R._corrected_effect(plan, st, plan.floor)
        import shrink
        out.append((est, corr, math.sqrt(nv), shrink.noise_sd2(st, {k: plan.sigma(k) for k in ('gram','cross','squares')}, eigen_floor(plan.sigma('gram'), plan.d, plan.floor), plan.estimand)))
    a = np.array(out) * h
    ex = R.gformula_effect(arm_models(ArmStatistics.from_flat(s.vector, s.carry['p']), 0.0), plan.estimand)[0] * h
    print(des, n, eps, 'exact', round(float(ex), 4), 'sd(est)', round(a[:, 0].std(), 4), 'sd(corrected)', round(a[:, 1].std(), 4), 'mean sim sd', round(a[:, 2].mean(), 4), 'shrunk sim sd', round(a[:, 3].mean(), 4),
          'mean est', round(a[:, 0].mean(), 4), 'mean corr', round(a[:, 1].mean(), 4), flush=True)
