"""Projected CPU time of the issue's full grid, per method, from timing runs of the harness:

    python project.py results/timing.jsonl results/small_exp3_n50000.jsonl

For each (design, n, method) the CPU seconds per DATA SET (all epsilons and estimands of the run, the cached
per-data-set fits included; diffprivlib's worker CPU included) are measured and multiplied by the planned releases
per cell: REPS[n] data sets for each (design, n) of harness.grid() with its 4 epsilons and 2 estimands, and the
Lebeda comparison cell (exp3, n = 50,000, epsilon = 1) at 300 data sets. The timing runs must cover all 4 epsilons
(the cost per data set then matches the grid's). Lebeda et al.'s K = 500 fits are charged to lebeda_g.
"""
import json
import sys

import pandas as pd

from harness import GRID_DESIGNS, GRID_N, LEBEDA_CELL

REPS = {2_000: 300, 20_000: 300, 200_000: 100}


def main(paths):
    df = pd.DataFrame([json.loads(l) for p in paths for l in open(p) if l.strip()])
    per = df.groupby(['design', 'n', 'method']).apply(
        lambda g: g['cpu'].sum() / g['rep'].nunique(), include_groups=False).rename('cpu_per_dataset').reset_index()
    plan = [(d, n, REPS[n]) for d in GRID_DESIGNS for n in GRID_N] + [(LEBEDA_CELL[0], LEBEDA_CELL[1], 300)]
    rows = []
    for d, n, reps in plan:
        for _, r in per[(per.design == d) & (per.n == n)].iterrows():
            rows.append(dict(design=d, n=n, method=r.method, reps=reps, cpu_per_dataset=r.cpu_per_dataset,
                             cpu_hours=r.cpu_per_dataset * reps / 3600))
    out = pd.DataFrame(rows)
    missing = [(d, n) for d, n, _ in plan if not ((out.design == d) & (out.n == n)).any()]
    if missing: print('no timing for', missing)
    with pd.option_context('display.width', 200, 'display.max_rows', 400):
        print(out.pivot_table(index=['design', 'n'], columns='method', values='cpu_per_dataset').round(3).to_string())
        print('\nprojected CPU hours per method (REPS =', REPS, '+ Lebeda cell 300):')
        tot = out.groupby('method')['cpu_hours'].sum().sort_values(ascending=False)
        print(tot.round(2).to_string()); print(f'total {tot.sum():.1f} CPU hours')
        print('\nby n:'); print(out.groupby('n')['cpu_hours'].sum().round(2).to_string())


if __name__ == '__main__':
    main(sys.argv[1:])
