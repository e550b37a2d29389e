"""The effects benchmark harness (issue 16, item 7): every method on the SAME data sets, one JSONL row per release.

    python harness.py --design exp3 --n 50000 --eps 1 --reps 30 --out results/exp3.jsonl
    python harness.py --design imbalanced --n 20000 --eps 1 5 --reps 30 --methods dp_dim pp_ipw
    python harness.py --grid            # the issue's grid, printed (not run)

From Python, with a new method (same signature as the rivals, see rivals.py):

    import harness
    harness.register('aipw_ssp', lambda X, t, y, decl, epsilon, delta, estimand, rng: {...})
    rows = harness.run('exp3', 50_000, [1.0], reps=30, seed=0, out='results/exp3.jsonl')

Pairing and seeds: data set `rep` of (design, n) is drawn from default_rng([seed, crc32(design), n, rep]) and is the
same for every method and every epsilon; each release's noise comes from default_rng([seed, crc32(design), n, rep,
crc32(method), crc32(repr(epsilon)), crc32(estimand)]). All noise is RESEARCH-MODE (seeded numpy Generators), never
secure. Checkpointing: rows already in `out` (same design, n, epsilon, delta, estimand, method, rep) are skipped, so
an interrupted run resumes where it stopped; a data set is drawn only if one of its releases is missing.
Timing: `seconds` is wall time and `cpu` process CPU time of the call; work cached across calls on a data set
(Lebeda et al.'s K = 500 fits, the non-private AIPW fit) is charged to the first method that needs it; `cpu`
includes the diffprivlib worker process's CPU time.
"""
import argparse
import json
import math
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rivals  # noqa: E402
from designs import DESIGNS  # noqa: E402

METHODS = dict(rivals.RIVALS)  # name -> callable(X, t, y, decl, epsilon, delta, estimand, rng) -> dict or None

GRID_DESIGNS = ('exp3', 'exp4', 'imbalanced', 'mixed', 'strong')
GRID_N = (2_000, 20_000, 200_000)
GRID_EPS = (0.5, 1.0, 5.0, 50.0)
LEBEDA_CELL = ('exp3', 50_000, 1.0, 1e-5)  # the comparison cell of the second "Done when"


def register(name, fn):
    "Add (or replace) a method: fn(X, t, y, decl, epsilon, delta, estimand, rng) -> dict(estimate, lo, hi, ...) or None."
    METHODS[name] = fn


def default_delta(design, n, epsilon):
    "1e-6 everywhere except the Lebeda comparison cell (exp3, n = 50,000, epsilon = 1): 1e-5."
    return 1e-5 if (design, n, float(epsilon)) == LEBEDA_CELL[:3] else 1e-6


def _h(s): return zlib.crc32(str(s).encode())


def _key(row): return (row['design'], row['n'], float(row['eps']), float(row['delta']), row['estimand'], row['method'], row['rep'])


def _jsonable(v):
    if isinstance(v, (np.floating, float)): return None if not math.isfinite(float(v)) else float(v)
    if isinstance(v, (np.integer, int, bool, np.bool_)): return v.item() if hasattr(v, 'item') else v
    if isinstance(v, (str, type(None))): return v
    if isinstance(v, (list, tuple)): return [_jsonable(x) for x in v]
    if isinstance(v, dict): return {k: _jsonable(x) for k, x in v.items()}
    return repr(v)


def run(design, n, epsilon, reps, methods=None, seed=0, estimands=('ATE', 'ATT'), delta=None, out=None,
        rep_start=0, progress=True, threads=1):
    """Run `methods` (names in METHODS; default all) on `reps` paired data sets of `design` at `n` rows for each
    epsilon (a number or a list) and estimand; returns the new rows (and appends them to `out`, a JSONL path).
    BLAS/OpenMP threads are limited to `threads` (1: on a shared machine multithreaded BLAS spins and both wall and
    CPU times become meaningless; the diffprivlib worker runs single-threaded too)."""
    with threadpool_limits(limits=threads):
        return _run(design, n, epsilon, reps, methods, seed, estimands, delta, out, rep_start, progress)


def _run(design, n, epsilon, reps, methods, seed, estimands, delta, out, rep_start, progress):
    decl = DESIGNS[design] if isinstance(design, str) else design
    eps_list = [float(epsilon)] if np.isscalar(epsilon) else [float(e) for e in epsilon]
    methods = list(METHODS) if methods is None else list(methods)
    done = set()
    if out is not None:
        out = Path(out); out.parent.mkdir(parents=True, exist_ok=True)
        if out.exists():
            with open(out) as f: done = {_key(json.loads(line)) for line in f if line.strip()}
    rows, t_start = [], time.perf_counter()
    for rep in range(rep_start, rep_start + reps):
        jobs = [(e, delta if delta is not None else default_delta(decl.name, n, e), k, m)
                for e in eps_list for k in estimands for m in methods]
        jobs = [j for j in jobs if (decl.name, n, j[0], float(j[1]), j[2], j[3], rep) not in done]
        if not jobs: continue
        X, t, y = decl.draw(n, np.random.default_rng([seed, _h(decl.name), n, rep]))
        new = []
        for e, dlt, k, m in jobs:
            rng = np.random.default_rng([seed, _h(decl.name), n, rep, _h(m), _h(repr(e)), _h(k)])
            c0, w0 = time.process_time(), time.perf_counter()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore')  # the rivals' clipping announcements (documented in the README)
                    r = METHODS[m](X, t, y, decl, e, dlt, k, rng)
                err = None
            except Exception as exc:  # a failing method is recorded, the run goes on
                r, err = {}, f'{type(exc).__name__}: {exc}'
            na = r is None  # the method does not estimate this estimand (or outcome type): a marker row, for resuming
            r = {} if na else r
            row = dict(design=decl.name, n=n, eps=e, delta=dlt, estimand=k, method=m, rep=rep,
                       estimate=r.get('estimate'), lo=r.get('lo'), hi=r.get('hi'), truth=decl.truth[k],
                       planned_sd=r.get('planned_sd'), whole_range=r.get('whole_range'),
                       seconds=time.perf_counter() - w0,
                       cpu=time.process_time() - c0 + r.get('extras', {}).get('worker_cpu', 0.0), seed=seed,
                       noise='numpy-research', error=err, na=na, extras=r.get('extras', {}))
            new.append(_jsonable(row))
        if out is not None:
            with open(out, 'a') as f:
                for row in new: f.write(json.dumps(row) + '\n')
        rows += new
        if progress:
            print(f'{decl.name} n={n} rep {rep}: {len(new)} releases, {time.perf_counter() - t_start:.1f}s', file=sys.stderr, flush=True)
    return rows


def grid():
    "The issue's grid: (design, n, epsilon, delta) cells, and the Lebeda comparison cell."
    cells = [(d, n, e, default_delta(d, n, e)) for d in GRID_DESIGNS for n in GRID_N for e in GRID_EPS]
    return cells + [LEBEDA_CELL]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--design'); ap.add_argument('--n', type=int); ap.add_argument('--eps', type=float, nargs='+')
    ap.add_argument('--reps', type=int, default=20); ap.add_argument('--rep-start', type=int, default=0)
    ap.add_argument('--methods', nargs='+'); ap.add_argument('--estimands', nargs='+', default=['ATE', 'ATT'])
    ap.add_argument('--delta', type=float); ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--out'); ap.add_argument('--grid', action='store_true')
    a = ap.parse_args()
    if a.grid:
        for c in grid(): print(*c)
        return
    run(a.design, a.n, a.eps, a.reps, a.methods, a.seed, tuple(a.estimands), a.delta, a.out, a.rep_start)


if __name__ == '__main__':
    main()
