"""Lab: would a binary outcome's planning sd of 0.5 (the largest a 0/1 outcome has) instead of the default sixth of the
range (1/6) make effect()'s choice better on exp3 (binary outcome, true sd 0.498)? Public inputs only: the choice with
each default, beside the grid's realised RMSE of the G-formula and AIPW run alone (results/grid_summary.csv).
    python binary_sd.py   (from this folder; binary_sd.log)"""
import os, sys, warnings
import pandas as pd
warnings.simplefilter('ignore')
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from designs import DESIGNS
from privcausal.choice import choose_method

d = DESIGNS['exp3']; cb = {c: b for c, b in d.covariate_bounds.items() if tuple(b) != (0, 1)}
grid = pd.read_csv(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'results', 'grid_summary.csv'))
rmse = grid[grid.design == 'exp3'].set_index(['method', 'n', 'eps', 'estimand']).rmse
rows = []
for n in (2000, 20000):
    for eps in (0.5, 1.0, 5.0, 50.0):
        for est in ('ATE', 'ATT'):
            a = choose_method(n, eps, 1e-6, d.outcome_bounds, list(d.columns), cb, est).method
            b = choose_method(n, eps, 1e-6, d.outcome_bounds, list(d.columns), cb, est, outcome_sd=0.5).method
            g, w = rmse[('pc_gformula', n, eps, est)], rmse[('pc_aipw', n, eps, est)]
            rows.append(dict(n=n, eps=eps, est=est, default=a, sd_half=b, rmse_gformula=g, rmse_aipw=w,
                             better='gformula' if g < w else 'aipw'))
o = pd.DataFrame(rows)
print(o.round(4).to_string(index=False))
print('choice = the better realised method: default', (o.default == o.better).sum(), 'of', len(o),
      '; outcome_sd=0.5', (o.sd_half == o.better).sum(), 'of', len(o))
