import pandas as pd, json, numpy as np, sys
rows = pd.DataFrame([json.loads(l) for f in sys.argv[1:] for l in open(f)])
rows = rows.drop_duplicates(['design', 'n', 'eps', 'delta', 'estimand', 'method', 'rep'], keep='last')
rows['err'] = rows.estimate - rows.truth
rows['cov'] = (rows.lo <= rows.truth) & (rows.truth <= rows.hi)
s = rows.groupby(['design', 'n', 'eps', 'estimand', 'method']).agg(rmse=('err', lambda e: np.sqrt(np.mean(e**2))), cov=('cov', 'mean'), k=('err', 'size')).reset_index()
p = s.pivot_table(index=['design', 'estimand', 'n', 'eps'], columns='method', values='rmse')
c = s.pivot_table(index=['design', 'estimand', 'n', 'eps'], columns='method', values='cov')
best = p[['diffprivlib_lr', 'pp_ipw']].min(axis=1)
cols = {}
for m, tag in [('pc_gformula', 'G'), ('pc_aipw', 'A'), ('pc_effect', 'E')]:
    if m in p: cols[tag] = p[m]; cols[tag + '/best'] = p[m] / best; cols['cov' + tag] = c[m]
cols['best'] = best; cols['dim'] = p.get('dp_dim')
out = pd.DataFrame(cols)
pd.set_option('display.width', 220); pd.set_option('display.max_rows', 300)
print(out.round(3).to_string())
