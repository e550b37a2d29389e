"""Lab (NOT PRIVATE): is the G-formula planner's miss the assumed covariate structure? An oracle planner simulates the
release's noise around the design's TRUE per-arm statistics (from 200,000 rows, scaled to n) instead of the isotropic
population of `population_statistics`; both against the realised sd of the stored grid (as `../plan_check.py`).
    python oracle_grid.py   (from this folder; oracle_grid.log)"""
import sys, math, numpy as np, pandas as pd, warnings
warnings.simplefilter('ignore')
sys.path.insert(0, __import__('os').path.join(__import__('os').path.dirname(__import__('os').path.abspath(__file__)), '..'))
import privcausal.regression as R
from privcausal.outcome import ArmStatistics, arm_models, gformula_effect, eigen_floor
from designs import DESIGNS
from oraclelib import exact_statistics
NB = 200_000
import json as _json, plan_check
_R = '../results/'
_g = pd.DataFrame([_json.loads(l) for f in ('grid.jsonl', 'grid_more.jsonl', 'grid200k.jsonl') for l in open(_R + f)])
_g = _g[_g.method == 'pc_gformula']
pc = pd.DataFrame([dict(design=des, n=n, eps=eps, estimand=est, realised=g.estimate.std(), planned=plan_check.planned(m, des, n, eps, dl, est))
                   for (m, des, n, eps, dl, est), g in _g.groupby(['method', 'design', 'n', 'eps', 'delta', 'estimand'])])
truth = {}
for des in pc.design.unique():
    d = DESIGNS[des]; X, t, y = d.draw(NB, np.random.default_rng(5))
    cb = {c: b for c, b in d.covariate_bounds.items() if tuple(b) != (0, 1)}
    df = X.assign(t=t, y=y)
    truth[des] = exact_statistics(R.gformula, data=df, outcome='y', treatment='t', covariates=list(d.columns), covariate_bounds=cb,
                                  outcome_bounds=d.outcome_bounds, epsilon=1e6, delta=1e-6, rng=np.random.default_rng(0), clip=True)
out = []
for _, r in pc.iterrows():
    d = DESIGNS[r.design]; cb = {c: b for c, b in d.covariate_bounds.items() if tuple(b) != (0, 1)}
    p = R.plan_gformula(int(r.n), r.eps, 1e-6, d.outcome_bounds, covariates=list(d.columns), covariate_bounds=cb, estimand=r.estimand)
    T = truth[r.design]; pop = ArmStatistics.from_flat(T['v'] * (r.n / NB), T['p']); h = T['h']
    _, var = gformula_effect(arm_models(pop, 0.0), p.estimand)
    g = np.random.default_rng(1); v = pop.vectors(); D = 1000
    draws = {k: v[k][None, :] + g.normal(size=(D, v[k].size)) * p.sigma(k) for k in v}
    st = ArmStatistics.from_vectors(draws['gram'], draws['cross'], draws['squares'], pop.p)
    est, _ = gformula_effect(arm_models(st, eigen_floor(p.sigma('gram'), p.d, p.floor)), p.estimand)
    oracle = h * math.hypot(math.sqrt(float(var)), float(np.std(est)))
    out.append(dict(design=r.design, n=r.n, eps=r.eps, est=r.estimand, realised=r.realised, planner=r.planned, oracle=oracle,
                    ratio=r.realised / r.planned, ratio_oracle=r.realised / oracle))
o = pd.DataFrame(out); pd.set_option('display.width', 200)
print(o.round(4).to_string(index=False))
for c in ('ratio', 'ratio_oracle'):
    print(c, 'within 10%', round(((o[c] - 1).abs() <= .1).mean(), 3), 'within 20%', round(((o[c] - 1).abs() <= .2).mean(), 3),
          'within 30%', round(((o[c] - 1).abs() <= .3).mean(), 3))
