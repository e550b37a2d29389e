"""Lab (NOT PRIVATE): the G-formula planner's simulation run around each design's TRUE per-arm statistics (from 200,000
rows, scaled to n) instead of its assumed isotropic population, against the realised sd of the releases in
nostd_cov.log (100-150 releases a cell), with standardisation off and on. Agreement with it off and not with it on
says what the planner misses is the moments stage (a noisy encoding per release), not the simulation.
    python oracle_plan.py   (from this folder; oracle_plan.log)"""
import sys, json, math, numpy as np, pandas as pd, warnings
warnings.simplefilter('ignore')
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
import privcausal.regression as R
from privcausal.outcome import ArmStatistics, arm_models, gformula_effect, eigen_floor
import runlib
from oraclelib import exact_statistics
NB = 200_000
rows = [json.loads(l.rsplit('}', 1)[0] + '}') for l in open('nostd_cov.log') if l.startswith('{')]
rows = [r for r in rows if r['m'] == 'gformula']
truth = {}
for std in (False, True):
    for des in {r['des'] for r in rows}:
        f, bo, yb = runlib.DES[des]; X, t, y = f(NB, np.random.default_rng(5)); names = [f'x{j}' for j in range(len(bo))]
        cb = {c: b for c, b in zip(names, bo) if tuple(b) != (0, 1)}
        df = pd.DataFrame(X, columns=names).assign(t=t, y=y)
        cap = exact_statistics(R.gformula, data=df, outcome='y', treatment='t', covariates=names, covariate_bounds=cb, outcome_bounds=yb,
                               epsilon=1e6, delta=1e-6, rng=np.random.default_rng(0), clip=True, standardise=std)
        truth[des, std] = (cap, names, cb, yb)
out = []
for r in rows:
    std = r.get('standardise', True)
    T, names, cb, yb = truth[r['des'], std]
    p = R.plan_gformula(r['n'], r['eps'], 1e-6, yb, covariates=names, covariate_bounds=cb, estimand=r['est'], standardise=std)
    pop = ArmStatistics.from_flat(T['v'] * (r['n'] / NB), T['p']); h = T['h']
    _, var = gformula_effect(arm_models(pop, 0.0), p.estimand)
    g = np.random.default_rng(1); v = pop.vectors(); D = 1000
    dr = {k: v[k][None, :] + g.normal(size=(D, v[k].size)) * p.sigma(k) for k in v}
    est, _ = gformula_effect(arm_models(ArmStatistics.from_vectors(dr['gram'], dr['cross'], dr['squares'], pop.p),
                                        eigen_floor(p.sigma('gram'), p.d, p.floor)), p.estimand)
    oracle = h * math.hypot(math.sqrt(float(var)), float(np.std(est)))
    out.append(dict(des=r['des'], n=r['n'], eps=r['eps'], est=r['est'], standardise=std, realised=r['sd'], oracle=round(oracle, 4),
                    ratio=round(r['sd'] / oracle, 3)))
o = pd.DataFrame(out).sort_values(['standardise', 'des', 'n', 'eps', 'est'])
print(o.to_string(index=False))
for s, g in o.groupby('standardise'):
    print('standardise', s, 'cells', len(g), 'within 10%', round(((g.ratio - 1).abs() <= .1).mean(), 3), 'within 20%', round(((g.ratio - 1).abs() <= .2).mean(), 3))
