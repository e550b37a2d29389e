"""The grid's cells that under-covered (n = 20,000, and the imbalanced design at n = 2,000, eps = 5), re-run on 300
FRESH data sets (seed 7 instead of the grid's 0) beside the non-private AIPW on the same data sets:
python fresh_seed.py  (resumes from results/fresh_seed7.jsonl; a few minutes; prints the table stored in
results/fresh_seed7.txt). On the grid's own data sets the non-private AIPW covers 0.92-0.93 in the n = 20,000 cells
too, so a shortfall shared by both belongs to the draw of data sets, not to the release."""
import json
import numpy as np, pandas as pd
import harness, ours  # noqa: F401  (ours registers pc_effect)

OUT = 'results/fresh_seed7.jsonl'
CELLS = [('exp3', 20_000, [5.0, 50.0]), ('mixed', 20_000, [50.0]), ('imbalanced', 20_000, [5.0]), ('imbalanced', 2_000, [5.0])]

if __name__ == '__main__':
    for design, n, eps in CELLS:
        harness.run(design, n, eps, reps=300, methods=['pc_effect', 'nonprivate_aipw'], seed=7, out=OUT, progress=False)
    d = pd.DataFrame([json.loads(line) for line in open(OUT)])
    d = d[(d.rep < 300) & d.method.isin(['pc_effect', 'nonprivate_aipw'])]
    d['covered'] = (d.lo <= d.truth) & (d.truth <= d.hi)
    grid = pd.read_csv('results/grid_summary.csv').set_index(['design', 'n', 'eps', 'estimand', 'method']).coverage
    rows = []
    for (design, n, eps, estimand, method), g in d.groupby(['design', 'n', 'eps', 'estimand', 'method']):
        if (design, n, eps) not in {(c, m, e) for c, m, es in CELLS for e in es}: continue
        rows.append(dict(design=design, n=n, eps=eps, estimand=estimand, method=method, releases=len(g),
                         coverage_fresh=g.covered.mean(), se=np.sqrt(g.covered.mean() * (1 - g.covered.mean()) / len(g)),
                         coverage_grid=grid.get((design, n, eps, estimand, method), np.nan),
                         bias_fresh=(g.estimate - g.truth).mean(), sd_fresh=g.estimate.std()))
    print(pd.DataFrame(rows).round(4).to_string(index=False))
