"""The stored summary of the grid: python make_summary.py  (reads results/grid.jsonl, grid_more.jsonl, grid200k.jsonl and
the Lebeda cell's small_exp3_n50000.jsonl, then the re-runs `RERUNS`; writes results/grid_summary.csv, one row per
cell and method).

A re-run's row replaces the earlier row with the same design, n, epsilon, delta, estimand, method and data set: the
`_v2` files hold privcausal's G-formula and effect() after the noise variance became extrapolated to the true
statistics (2026-11-27); same data sets and noise seeds, so their estimates are the earlier rows' to the bit and only
the intervals differ (`ours_v2.jsonl` is an older, unrelated run)."""
from pathlib import Path

import pandas as pd

import summarise

R = Path(__file__).parent / 'results'
first = [p for p in (R / 'grid.jsonl', R / 'grid_more.jsonl', R / 'grid200k.jsonl', R / 'small_exp3_n50000.jsonl') if p.exists()]
RERUNS = ('grid_v2a.jsonl', 'grid_v2b.jsonl', 'grid_v2c.jsonl', 'grid200k_v2a.jsonl', 'grid200k_v2b.jsonl', 'small_exp3_n50000_v2.jsonl')
reruns = [R / f for f in RERUNS if (R / f).exists()]
df = pd.concat([summarise.load(first)] + [summarise.load([p]) for p in reruns], ignore_index=True)
key = ['design', 'n', 'eps', 'delta', 'estimand', 'method', 'rep']
df = df.drop_duplicates(key, keep='last')
s = summarise.summarise(df)
s.to_csv(R / 'grid_summary.csv', index=False, float_format='%.6g')
print(f'{len(s)} method-cells from {", ".join(p.name for p in first + reruns)} -> {R / "grid_summary.csv"}')
