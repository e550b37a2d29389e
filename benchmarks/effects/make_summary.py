"""The stored summary of the grid: python make_summary.py  (reads results/grid.jsonl, grid200k.jsonl and the Lebeda
cell's small_exp3_n50000.jsonl; writes results/grid_summary.csv, one row per cell and method)."""
from pathlib import Path

import summarise

R = Path(__file__).parent / 'results'
paths = [p for p in (R / 'grid.jsonl', R / 'grid_more.jsonl', R / 'grid200k.jsonl', R / 'small_exp3_n50000.jsonl') if p.exists()]
s = summarise.summarise(summarise.load(paths))
s.to_csv(R / 'grid_summary.csv', index=False, float_format='%.6g')
print(f'{len(s)} method-cells from {", ".join(p.name for p in paths)} -> {R / "grid_summary.csv"}')
