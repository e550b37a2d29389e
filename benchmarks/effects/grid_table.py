"""Per-cell table of the grid: RMSE, coverage (binomial se), whole-range share and realised/planned sd of effect(),
G-formula and AIPW, and RMSE ratios against the best of {diffprivlib, PP-IPW}."""
import json, sys
import numpy as np, pandas as pd
rows = pd.DataFrame([json.loads(l) for f in sys.argv[1:] for l in open(f)])
rows = rows[rows.error.isna() & ~rows.na.astype(bool)]
rows['err'] = rows.estimate - rows.truth
rows['cov'] = (rows.lo <= rows.truth) & (rows.truth <= rows.hi)
g = rows.groupby(['design', 'estimand', 'n', 'eps', 'method'])
s = g.agg(rmse=('err', lambda e: float(np.sqrt(np.mean(e ** 2)))), bias=('err', 'mean'), cov=('cov', 'mean'), k=('err', 'size'),
          whole=('whole_range', 'mean'), sd=('estimate', 'std'), planned=('planned_sd', 'mean')).reset_index()
p = s.pivot_table(index=['design', 'estimand', 'n', 'eps'], columns='method', values='rmse')
best = p[[c for c in ('diffprivlib_lr', 'pp_ipw') if c in p]].min(axis=1)
t = s[s.method.isin(['pc_effect', 'pc_gformula', 'pc_aipw'])].set_index(['design', 'estimand', 'n', 'eps', 'method'])
t['ratio'] = [r.rmse / best.loc[i[:4]] for i, r in t.iterrows()]
t['sd/plan'] = t.sd / t.planned
t['cov_se'] = np.sqrt(t['cov'] * (1 - t['cov']) / t.k)
t['bias%'] = 100 * t.bias / rows.groupby(['design', 'estimand']).truth.first().reindex([i[:2] for i in t.index]).to_numpy()
pd.set_option('display.width', 250); pd.set_option('display.max_rows', 500)
m = sys.argv[0]
out = t.reset_index().pivot_table(index=['design', 'estimand', 'n', 'eps'], columns='method', values=['cov', 'ratio', 'bias%', 'sd/plan', 'whole'])
print(out.round(3).to_string())
