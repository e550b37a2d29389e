"""Per-cell summary of harness rows (JSONL):

    python summarise.py results/*.jsonl [--csv out.csv] [--markdown]

Per (design, n, eps, delta, estimand, method): releases; bias, RMSE and median absolute error (diffprivlib has
heavy tails) against the TRUE (population) effect;
coverage of the true effect by the 95% interval with its binomial se; median width over the median width of the
non-private AIPW interval on the same cell; share of whole-range intervals; realised sd over the median planned sd
(what planned_sd contains differs by method: see rivals.py); the ratio of the method's RMSE to the best RMSE of
{diffprivlib_lr, pp_ipw} on the cell; median seconds (wall) and cpu per release. Rows marked `na` (method does not
apply) and rows with errors are dropped (errors are counted).
"""
import argparse
import json
import sys

import numpy as np
import pandas as pd

CELL = ['design', 'n', 'eps', 'delta', 'estimand']
REFERENCE = ('diffprivlib_lr', 'pp_ipw')


def load(paths):
    rows = [json.loads(line) for p in paths for line in open(p) if line.strip()]
    df = pd.DataFrame(rows)
    if 'na' in df: df = df[~df['na'].fillna(False).astype(bool)]
    return df


def _cell(g):
    est, truth = g['estimate'].astype(float), g['truth'].astype(float)
    err = est - truth
    has = g['lo'].notna() & g['hi'].notna()
    lo, hi = g.loc[has, 'lo'].astype(float), g.loc[has, 'hi'].astype(float)
    cov = float(((lo <= truth[has]) & (truth[has] <= hi)).mean()) if has.any() else np.nan
    k = int(has.sum())
    planned = g['planned_sd'].dropna().astype(float)
    return pd.Series(dict(
        releases=len(g), bias=err.mean(), rmse=np.sqrt((err ** 2).mean()), median_abs_error=err.abs().median(), coverage=cov,
        coverage_se=np.sqrt(cov * (1 - cov) / k) if k else np.nan, median_width=(hi - lo).median() if k else np.nan,
        whole_range=float(g.loc[has, 'whole_range'].astype(bool).mean()) if k else np.nan,
        realised_sd=est.std(ddof=1) if len(g) > 1 else np.nan,
        sd_ratio=est.std(ddof=1) / planned.median() if len(planned) and len(g) > 1 else np.nan,
        seconds=g['seconds'].median(), cpu=g['cpu'].median() if 'cpu' in g else np.nan))


def summarise(df):
    errors = df['error'].notna() if 'error' in df else pd.Series(False, index=df.index)
    if errors.any():
        print(f'{int(errors.sum())} rows with errors dropped:', df.loc[errors, ['method', 'error']].drop_duplicates().to_dict('records'),
              file=sys.stderr)
    df = df[~errors]
    s = df.groupby(CELL + ['method']).apply(_cell, include_groups=False).reset_index()
    ref_w = s[s.method == 'nonprivate_aipw'].set_index(CELL)['median_width']
    s['width_ratio'] = s['median_width'] / s.set_index(CELL).index.map(ref_w).astype(float)
    best = s[s.method.isin(REFERENCE)].groupby(CELL)['rmse'].min()
    s['rmse_vs_best_ref'] = s['rmse'] / s.set_index(CELL).index.map(best).astype(float)
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('paths', nargs='+'); ap.add_argument('--csv'); ap.add_argument('--markdown', action='store_true')
    a = ap.parse_args()
    s = summarise(load(a.paths))
    s['delta'] = s['delta'].map(lambda v: f'{v:.0e}')
    if a.csv: s.to_csv(a.csv, index=False)
    cols = CELL + ['method', 'releases', 'bias', 'rmse', 'median_abs_error', 'coverage', 'coverage_se', 'width_ratio', 'whole_range',
                   'sd_ratio', 'rmse_vs_best_ref', 'cpu']
    with pd.option_context('display.width', 250, 'display.max_rows', 500, 'display.max_columns', 30):
        print(s[cols].to_markdown(index=False, floatfmt='.4g') if a.markdown else s[cols].round(4).to_string(index=False))


if __name__ == '__main__':
    main()
