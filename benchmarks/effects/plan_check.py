"""Planner accuracy: realised sd of each privcausal release over the data sets of a cell against its planned total sd,
with the design's true planning quantities given (as a well-informed user would give them): treated share, outcome sd,
R², imbalance (G-formula) and the logit propensity's spread (AIPW)."""
import json, sys, warnings
import numpy as np, pandas as pd
from designs import DESIGNS
from privcausal.regression import plan_gformula
from privcausal.doubly_robust import plan_aipw
warnings.simplefilter('ignore')
ASSUME = {'imbalanced': dict(treated_share=0.241, outcome_sd=2.235, r2=0.649, imbalance=0.455),
          'mixed': dict(treated_share=0.302, outcome_sd=2.484, r2=0.786, imbalance=0.296),
          'strong': dict(treated_share=0.464, outcome_sd=11.385, r2=0.653, imbalance=0.455),
          'exp3': dict(treated_share=0.524, outcome_sd=0.498, r2=0.052, imbalance=0.154),
          'exp4': dict(treated_share=0.523, outcome_sd=0.288, r2=0.968, imbalance=0.126)}
# AIPW's own assumption: the sd of the true logit propensity (1,000,000 draws of each design, seed 0)
SPREAD = {'imbalanced': 1.28, 'mixed': 0.99, 'strong': 1.629, 'exp3': 0.516, 'exp4': 0.61}
def planned(method, design, n, eps, delta, estimand):
    d = DESIGNS[design]; a = ASSUME[design]
    cb = {c: b for c, b in d.covariate_bounds.items() if tuple(b) != (0, 1)}
    if method == 'pc_gformula':
        p = plan_gformula(n, eps, delta, d.outcome_bounds, covariates=list(d.columns), covariate_bounds=cb, estimand=estimand, **a)
    else:
        p = plan_aipw(n, eps, delta, d.outcome_bounds, covariates=list(d.columns), covariate_bounds=cb, estimand=estimand,
                      propensity_spread=SPREAD[design], **{k: v for k, v in a.items() if k != 'imbalance'})
    return p.total_sd
if __name__ == '__main__':
    rows = pd.DataFrame([json.loads(l) for f in sys.argv[1:] for l in open(f)])
    rows = rows[rows.method.isin(['pc_gformula', 'pc_aipw'])]
    out = []
    for (m, des, n, eps, dl, est), g in rows.groupby(['method', 'design', 'n', 'eps', 'delta', 'estimand']):
        out.append(dict(method=m, design=des, n=n, eps=eps, estimand=est, realised=g.estimate.std(), planned=planned(m, des, n, eps, dl, est)))
    o = pd.DataFrame(out); o['ratio'] = o.realised / o.planned
    pd.set_option('display.width', 200); pd.set_option('display.max_rows', 400)
    print(o.round(4).to_string(index=False))
