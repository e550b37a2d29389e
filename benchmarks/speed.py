"""Issue 17, item 7 ("Speed with the single path"): four ratios, each measured within one run and printed against its target.

  (a) the in-memory PP-IPW release (`privcausal.ipw.pp_ipw` on a pandas frame, secure OpenDP noise, the defaults)
      against its own certified fit: the propensity fit that `pp_ipw` runs inside, called again on the very arguments
      it was given (`privcausal.backend.fit_logistic_rows` on the same rows and split; on older code
      `fit_logistic_erm` on the fitting rows, already scaled). Target: at most 2x. Compare absolute times too: the
      ratio must not be bought with a slower fit.
  (b) the release's peak allocation (tracemalloc: the most memory allocated at once during the call, beyond what was
      allocated before it) against the data's bytes (the frame's `memory_usage`). Target: at most 1.5x.
  (c) `pp_ipw` on a Dask `LocalCluster` of one single-threaded worker process against the same call in memory, at 10^7
      rows generated as in benchmarks/dask_scaling.py (whose `--one` runs are reused: each configuration in a fresh
      process, end to end, without tracemalloc, which would slow the scheduler in the driver process); `wate` is
      reported beside it. Target: at most 1.5x (wall time; CPU seconds printed too).
  (d) the CLI's fixed start-up (`privcausal --help`, `privcausal ipw --help`) against `python -c "import numpy, pandas"`,
      CPU time, by benchmarks/cli_startup.py. Target: at most 2x.

    .venv/bin/python benchmarks/speed.py                         # the issue's sizes (about 10 minutes on 2 busy cores)
    .venv/bin/python benchmarks/speed.py --rows 200000 --dask-rows 1000000 --reps 3
    .venv/bin/python benchmarks/speed.py --smoke                 # seconds: a check that it runs (used by the tests)
    .venv/bin/python benchmarks/speed.py --only a b              # some of the four

The machine is shared, so runs alternate (release, fit, release, fit, ...; Dask and memory in turns, the order
reversed every other round) and medians are compared, with the load average (os.getloadavg) printed before and after
each part. BLAS and OpenMP are limited to one thread everywhere (both sides of every ratio alike). This checkout comes
first on the path of this process, of the processes it starts and of the Dask workers, so that it measures this
checkout's code, not an installed copy.
"""
import os

for _v in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'): os.environ.setdefault(_v, '1')

import argparse
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT), str(HERE)]
os.environ['PYTHONPATH'] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get('PYTHONPATH')])])

TARGETS = {'a': 2.0, 'b': 1.5, 'c': 1.5, 'd': 2.0}


def _load(): return ' '.join(f'{v:.2f}' for v in os.getloadavg())


def _verdict(ratio, part): return f'{ratio:.2f}x (target <= {TARGETS[part]:g}x: {"met" if ratio <= TARGETS[part] else "NOT MET"})'


# ---------------------------------------------------------------- (a) and (b): one child process

def release_data(rows, d, seed=0):
    "Rows on the unit sphere (the public bound R = 1 holds), a confounded treatment, outcomes within C = 5: as benchmarks/ipw.py."
    import numpy as np, pandas as pd
    from scipy.special import expit
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    t = rng.binomial(1, expit(X @ rng.normal(size=d) * 2))
    y = np.clip(X[:, :5].sum(1) + t + rng.normal(size=rows), -5, 5)
    return pd.DataFrame(X, columns=[f'x{j}' for j in range(d)]).assign(t=t, y=y)


class FitRecorder:
    "Wraps the fit functions `pp_ipw` calls (by their names in privcausal.ipw): records the arguments of the last call and the seconds spent inside."
    NAMES = ('fit_logistic_erm', 'fit_erm_rows', 'fit_logistic_rows')

    def __init__(self, module):
        self.module, self.real, self.calls = module, {}, []
        for name in self.NAMES:
            if hasattr(module, name):
                self.real[name] = getattr(module, name)
                setattr(module, name, self._wrap(name))

    def _wrap(self, name):
        def wrapped(*args, **kwargs):
            t0 = time.perf_counter()
            out = self.real[name](*args, **kwargs)
            self.calls.append((name, args, kwargs, time.perf_counter() - t0))
            return out
        return wrapped

    def replay(self):
        "A function that runs the last recorded fit again, on the same arguments (the real function, unwrapped)."
        name, args, kwargs, _ = self.calls[-1]
        return lambda: self.real[name](*args, **kwargs)


def run_release(a):
    "(a) and (b) in this process; prints one JSON line."
    import numpy as np
    import privcausal.ipw as ipw
    df = release_data(a.rows, a.d)
    kw = dict(outcome='y', treatment='t', epsilon=1.0, delta=1e-6, outcome_bound=5.0, covariate_bound=1.0, propensity_bounds=0.05)
    release = lambda: ipw.pp_ipw(df, **kw)
    rec = FitRecorder(ipw)
    out = {'rows': a.rows, 'd': a.d, 'data_mb': float(df.memory_usage(index=True, deep=True).sum()) / 2**20,
           'load_before': os.getloadavg()}
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        rel = release()  # warm-up (OpenDP's set-up, imports), untimed
        fit = rec.replay()
        first = rec.calls[-1][1][0] if rec.calls[-1][1] else None  # an array (fit_logistic_erm) or the rows (fit_erm_rows)
        out['fit_rows'] = int(rel.plan.m)
        out['fit_shape'] = list(np.shape(first)) if isinstance(first, np.ndarray) else [int(rel.plan.m), len(rel.propensity.weights)]
        out['debias'], out['fit_function'] = bool(rel.plan.debias), rec.calls[-1][0]
        fit()
        rel_t, fit_t, inner = [], [], []
        for _ in range(a.reps):  # alternating: a burst of load hits both sides alike
            t0 = time.perf_counter(); release(); rel_t.append(time.perf_counter() - t0); inner.append(rec.calls[-1][3])
            t0 = time.perf_counter(); fit(); fit_t.append(time.perf_counter() - t0)
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        release()
        out['peak_mb'] = (tracemalloc.get_traced_memory()[1] - base) / 2**20
        tracemalloc.stop()
    out.update(release_s=rel_t, fit_s=fit_t, fit_inside_s=inner, load_after=os.getloadavg())
    print('RESULT ' + json.dumps(out))


def part_ab(a, parts):
    cmd = [sys.executable, __file__, '--child-release', '--rows', str(a.rows), '--d', str(a.d), '--reps', str(a.reps)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    lines = [l for l in res.stdout.splitlines() if l.startswith('RESULT ')]
    if res.returncode or not lines: raise RuntimeError(f'{cmd} failed:\n{res.stderr[-3000:]}')
    r = json.loads(lines[-1][7:])
    rel, fit, inner = (statistics.median(r[k]) for k in ('release_s', 'fit_s', 'fit_inside_s'))
    print(f'\n== (a), (b): the in-memory PP-IPW release on a {r["rows"]:,} x {r["d"]} frame (+ treatment, outcome; '
          f'{r["data_mb"]:.0f} MB), secure noise, debiasing step {"on" if r["debias"] else "off"}; '
          f'{a.reps} alternating runs, load {" ".join(f"{v:.2f}" for v in r["load_before"])} -> '
          f'{" ".join(f"{v:.2f}" for v in r["load_after"])}')
    if 'a' in parts:
        print(f'(a) release {rel:.3f} s / its certified fit ({r["fit_function"]} on the {r["fit_rows"]:,} fitting rows, '
              f'{r["fit_shape"][0]:,} x {r["fit_shape"][1]}) {fit:.3f} s = {_verdict(rel / fit, "a")}')
        print(f'    (medians; the fit took {inner:.3f} s inside the release, the other {rel - inner:.3f} s are everything else)')
    if 'b' in parts:
        print(f'(b) peak allocation of the release {r["peak_mb"]:.0f} MB / the data {r["data_mb"]:.0f} MB = {_verdict(r["peak_mb"] / r["data_mb"], "b")}')
    return {'a': rel / fit, 'b': r['peak_mb'] / r['data_mb'], 'ab_raw': r}


# ---------------------------------------------------------------- (c): benchmarks/dask_scaling.py's one-configuration runs

def part_c(a):
    import numpy as np
    import dask_scaling
    argv = ['--d', str(a.dask_d), '--chunk-rows', str(a.chunk_rows), '--partition-rows', str(a.partition_rows), '--no-trace']
    sa = dask_scaling.parse(argv)
    print(f'\n== (c): {a.dask_rows:,} rows x {a.dask_d} covariates generated as in dask_scaling.py ({a.chunk_rows:,} rows per '
          f'Dask partition; WATE partitions of {a.partition_rows:,} rows), one worker process against memory, '
          f'{a.dask_reps} alternating run(s) each, each in a fresh process; load {_load()}', flush=True)
    configs, runs = [(a.dask_rows, 1), (a.dask_rows, 0)], {}
    for rep in range(a.dask_reps):
        for c in (configs if rep % 2 == 0 else configs[::-1]):
            r = dask_scaling.spawn(sa, *c)
            runs.setdefault(c[1], []).append(r)
            print(f'  run {rep + 1} {"Dask, 1 worker" if c[1] else "in memory":>14}: pp_ipw {r["ipw"]:6.2f} s ({r["ipw_cpu"]:5.1f} CPU s), '
                  f'wate {r["wate"]:6.2f} s ({r["wate_cpu"]:5.1f} CPU s), load {r["load_before"]:.2f} -> {r["load_after"]:.2f}', flush=True)
    med = {w: {k: statistics.median(r[k] for r in v) for k in ('ipw', 'wate', 'ipw_cpu', 'wate_cpu')} for w, v in runs.items()}
    dk, mm = med[1], med[0]
    diff = max(float(np.max(np.abs(np.subtract(x['ipw_released'], runs[0][0]['ipw_released'])))) for x in runs[1])
    print(f'(c) pp_ipw on one Dask worker {dk["ipw"]:.2f} s / in memory {mm["ipw"]:.2f} s = {_verdict(dk["ipw"] / mm["ipw"], "c")}')
    print(f'    CPU seconds (workers and driver): {dk["ipw_cpu"]:.1f} / {mm["ipw_cpu"]:.1f} = {dk["ipw_cpu"] / mm["ipw_cpu"]:.2f}x; '
          f'largest difference of the released numbers (same seeds, after noise) {diff:.1e}')
    print(f'    wate (reported): {dk["wate"]:.2f} s / {mm["wate"]:.2f} s = {dk["wate"] / mm["wate"]:.2f}x '
          f'(CPU {dk["wate_cpu"]:.1f} / {mm["wate_cpu"]:.1f} = {dk["wate_cpu"] / mm["wate_cpu"]:.2f}x)')
    print(f'    load average after (c): {_load()}')
    return {'c': dk['ipw'] / mm['ipw'], 'c_wate': dk['wate'] / mm['wate'], 'c_diff': diff}


# ---------------------------------------------------------------- (d): benchmarks/cli_startup.py

def part_d(a):
    cmd = [sys.executable, str(HERE / 'cli_startup.py'), '--json', '--runs', str(a.cli_runs)]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if res.returncode: raise RuntimeError(f'{cmd} failed:\n{res.stderr[-3000:]}')
    r = json.loads(res.stdout)
    base = r['median_cpu_s']['numpy+pandas']
    worst = max(r['ratio'], key=r['ratio'].get)
    print(f'\n== (d): CLI start-up, CPU time (user + sys), median of {r["runs"]} alternated runs (benchmarks/cli_startup.py); '
          f'load {" ".join(f"{v:.2f}" for v in r["load_before"])} -> {" ".join(f"{v:.2f}" for v in r["load_after"])}')
    for k, v in r['ratio'].items():
        print(f'    {k:24s} {r["median_cpu_s"][k]:.3f} s / numpy+pandas {base:.3f} s = {v:.2f}x; heavy imports: '
              f'{", ".join(r["heavy_imports"][k]) or "none"}')
    print(f'(d) the slower, {worst!r}: {_verdict(r["ratio"][worst], "d")}')
    return {'d': r['ratio'][worst]}


def main(a):
    print(f'benchmarks/speed.py: machine {os.cpu_count()} cores, load average (1, 5, 15 min) {_load()} at start; '
          f'python {sys.version.split()[0]}; {"smoke run (tiny sizes: the ratios mean nothing)" if a.smoke else "full run"}', flush=True)
    out = {}
    if {'a', 'b'} & set(a.only): out.update(part_ab(a, set(a.only)))
    if 'c' in a.only: out.update(part_c(a))
    if 'd' in a.only: out.update(part_d(a))
    print('\nsummary (same-run ratios against their targets):')
    names = {'a': 'PP-IPW release / its certified fit', 'b': 'PP-IPW peak allocation / data bytes',
             'c': 'pp_ipw on one Dask worker / in memory', 'd': 'CLI start-up / import numpy, pandas'}
    for k in 'abcd':
        if k in out: print(f'  ({k}) {names[k]:40s} {_verdict(out[k], k)}')
    print(f'load average at end: {_load()}')
    return out


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--rows', type=int, default=1_000_000, help='rows of the in-memory release, (a) and (b)')
    p.add_argument('--d', type=int, default=20, help='covariates of the in-memory release')
    p.add_argument('--reps', type=int, default=5, help='alternating runs of (a)')
    p.add_argument('--dask-rows', type=int, default=10_000_000, help='rows of (c)')
    p.add_argument('--dask-d', type=int, default=6, help='covariates of (c)')
    p.add_argument('--dask-reps', type=int, default=3, help='runs of each configuration of (c)')
    p.add_argument('--chunk-rows', type=int, default=250_000, help='rows per Dask partition in (c)')
    p.add_argument('--partition-rows', type=int, default=10_000, help='rows per WATE partition in (c)')
    p.add_argument('--cli-runs', type=int, default=7, help='rounds of (d)')
    p.add_argument('--only', nargs='+', choices=list('abcd'), default=list('abcd'), help='measure only these')
    p.add_argument('--smoke', action='store_true', help='tiny sizes, one or two runs: a check that everything runs')
    p.add_argument('--child-release', action='store_true', help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.smoke:
        a.rows, a.d, a.reps, a.dask_rows, a.dask_reps, a.chunk_rows, a.partition_rows, a.cli_runs = (
            20_000, 5, 2, 40_000, 1, 10_000, 1_000, 1)
    return a


if __name__ == '__main__':
    args = parse()
    run_release(args) if args.child_release else main(args)
