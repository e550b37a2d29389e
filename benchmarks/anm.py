"""Benchmark of issue 5 (ANM): exact blocked HSIC against the dense numpy form, and full private decisions.

Run from the repository root: `.venv/bin/python benchmarks/anm.py [--skip-dense-largest] [--study]`.

1. HSIC = tr(KHLH)/(m-1)^2 on m = 2,000 / 8,000 / 16,382 (the largest Tübingen pair): privcausal's blocked
   `hsic_score` (O(m) memory) against the dense numpy form sum((HKH) * L) with m x m matrices (the peer), each in
   a fresh subprocess so that the peak resident memory (ru_maxrss, minus the interpreter's baseline) is its own.
   Same value to 1e-10 (relative) is asserted; time and memory ratios are printed. Target: blocked < 1 GB at 16,382.
2. One full private ANM decision (scaling, split, two kernel ridge regressions, residuals, private HSIC) on the
   largest Tübingen pair. Target: < 30 s.
3. With --peer: the non-private accuracy of causal-learn's ANM (GP regression + KCI; run by
   benchmarks/anm_peer_causallearn.py in its own venv, PEER_PYTHON) on every Tübingen pair, split 0, at most 200
   test points, beside privcausal's non-private accuracy of each score on the same pairs and split (measured here).
4. The planner and the IQR test statistics: `plan_direction` and its inversions (public inputs only; target < 10 ms
   for a plan, < 2 s for an inversion), and one `iqr_ptr` call (both exact A_j by bisection) at m = 400 and 8,191.
5. With --study: the whole Tübingen study of nbs/experiments/anm_tuebingen.ipynb (99 pairs, 10 splits, four scores,
   four epsilons). Target: < 15 minutes.
"""
import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZES = (2000, 8000, 16382)


def _data(m):
    import numpy as np
    rng = np.random.default_rng(m)
    x = rng.uniform(-1, 1, m)
    return x, x**3 + 0.3 * rng.uniform(-1, 1, m)


def dense_hsic(a, b, bw_a, bw_b):
    "The dense numpy peer: m x m kernels, centred by broadcasting, tr(KHLH) = sum((HKH) * L)."
    import numpy as np
    K = np.exp(-np.subtract.outer(a, a) ** 2 / (2 * bw_a**2))
    L = np.exp(-np.subtract.outer(b, b) ** 2 / (2 * bw_b**2))
    Kc = K - K.mean(0, keepdims=True) - K.mean(1, keepdims=True) + K.mean()
    return float(np.sum(Kc * L)) / (len(a) - 1) ** 2


def _one(kind, m):
    "Run one HSIC computation in this process; print time, value and peak memory as JSON."
    import numpy as np  # noqa: F401  (baseline includes numpy)
    from privcausal.anm import hsic_score
    a, b = _data(m)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    value = hsic_score(a, b, 0.5, 0.5) if kind == 'blocked' else dense_hsic(a, b, 0.5, 0.5)
    secs = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({'kind': kind, 'm': m, 'seconds': secs, 'value': value, 'peak_mb': peak / 1024,
                      'extra_mb': (peak - base) / 1024}))


def _run(kind, m):
    out = subprocess.run([sys.executable, __file__, '--one', kind, str(m)], capture_output=True, text=True, cwd=ROOT)
    if out.returncode: return {'kind': kind, 'm': m, 'error': out.stderr.strip().splitlines()[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _available_gb():
    for line in Path('/proc/meminfo').read_text().splitlines():
        if line.startswith('MemAvailable'): return int(line.split()[1]) / 1024**2
    return float('nan')


def bench_hsic(skip_dense_largest):
    print('== exact HSIC: privcausal blocked vs dense numpy (m x m matrices)')
    print(f'{"m":>6} {"blocked s":>10} {"dense s":>9} {"time ratio":>10} {"blocked MB":>11} {"dense MB":>9} {"memory ratio":>12} {"|rel diff|":>11}')
    for m in SIZES:
        blocked = _run('blocked', m)
        need_gb = 4 * m * m * 8 / 1e9
        if (skip_dense_largest and m == SIZES[-1]) or _available_gb() < need_gb + 2:
            print(f'{m:>6} {blocked["seconds"]:>10.2f} {"skipped":>9} {"":>10} {blocked["extra_mb"]:>11.0f} '
                  f'{"~%.0f" % (need_gb * 1000):>9} (dense needs about {need_gb:.1f} GB; not run)')
            assert blocked['extra_mb'] < 1024
            continue
        dense = _run('dense', m)
        if 'error' in dense:
            print(f'{m:>6} {blocked["seconds"]:>10.2f}  dense failed: {dense["error"]}')
            continue
        rel = abs(blocked['value'] - dense['value']) / abs(dense['value'])
        print(f'{m:>6} {blocked["seconds"]:>10.2f} {dense["seconds"]:>9.2f} {blocked["seconds"] / dense["seconds"]:>10.2f} '
              f'{blocked["extra_mb"]:>11.0f} {dense["extra_mb"]:>9.0f} {blocked["extra_mb"] / dense["extra_mb"]:>12.3f} {rel:>11.1e}')
        assert rel < 1e-10, rel
        assert blocked['extra_mb'] < 1024


def bench_decision():
    import numpy as np
    from privcausal.anm import anm_direction
    from privcausal.data import load_tuebingen
    x, y = load_tuebingen().pair(65)
    print(f'\n== one full private ANM decision on the largest Tübingen pair (65, {len(x)} points)')
    for score, kw in (('hsic', {}), ('kendall', {}), ('iqr', {'delta': 1e-6})):
        t0 = time.perf_counter()
        r = anm_direction(x, y, (x.min(), x.max()), (y.min(), y.max()), score=score, epsilon=1.0, seed=0, **kw)
        secs = time.perf_counter() - t0
        print(f'  {score:8s} {secs:6.1f} s (target < 30 s): direction={r.direction}, noise={r.privacy.noise_source}')
        assert secs < 30


def bench_plan():
    import numpy as np
    from privcausal.anm import iqr_ptr, plan_direction
    print('\n== the planner (no data) and the IQR Propose-Test-Release statistics')
    for score, delta in (('kendall', None), ('hsic', None), ('iqr', 1e-6)):
        t0 = time.perf_counter()
        for _ in range(100): plan = plan_direction(4000, score, 1.0, delta, margin=0.02 if score != 'iqr' else 1.0)
        t_plan = (time.perf_counter() - t0) / 100
        t0 = time.perf_counter(); eps = plan.required_epsilon(0.9); t_eps = time.perf_counter() - t0
        t0 = time.perf_counter(); n = plan.required_n(0.9); t_n = time.perf_counter() - t0
        print(f'  {score:8s} plan {1e3 * t_plan:6.2f} ms (target < 10 ms); required_epsilon {t_eps:5.2f} s -> {eps:.4g}; '
              f'required_n {t_n:5.2f} s -> {n}')
        assert t_plan < 0.01 and t_eps < 2 and t_n < 2
    rng = np.random.default_rng(0)
    for m in (400, 8191):
        a = rng.normal(size=m)
        t0 = time.perf_counter()
        for _ in range(50): iqr_ptr(a, 1.0, 1e-6, rng=rng)
        print(f'  iqr_ptr on m = {m}: {1e3 * (time.perf_counter() - t0) / 50:.2f} ms per call (research noise)')


PEER_PYTHON = '/tmp/bench-venv-anm/bin/python'


def bench_peer(split=0, cap=200):
    import numpy as np
    from privcausal.anm import anm_fit, decide, scores_of
    from privcausal.data import dataset_path, load_tuebingen
    print(f"\n== non-private accuracy on all Tübingen pairs, split {split}: causal-learn ANM (<= {cap} test points) vs privcausal")
    t0 = time.perf_counter()
    out = subprocess.run([PEER_PYTHON, str(ROOT / 'benchmarks' / 'anm_peer_causallearn.py'), str(dataset_path('tuebingen')),
                          str(split), str(cap)], capture_output=True, text=True, check=True)
    peer = [json.loads(line) for line in out.stdout.splitlines() if line.startswith('{')]
    t_peer = time.perf_counter() - t0
    tue, ours, t0 = load_tuebingen(), {s: [] for s in ('spearman', 'kendall', 'hsic', 'iqr', 'variance')}, time.perf_counter()
    for p in tue.summary.index:
        x, y = tue.pair(p)
        fit = anm_fit(x, y, (x.min(), x.max()), (y.min(), y.max()), seed=split)
        for s in ours:
            d = decide(*scores_of(fit, s))
            ours[s].append(0.5 if d is None else float(d == 'x->y'))
    t_ours = time.perf_counter() - t0
    print(f'  causal-learn ANM: accuracy {np.mean([r["correct"] for r in peer]):.3f} over {len(peer)} pairs ({t_peer:.0f} s)')
    for s, v in ours.items(): print(f'  privcausal {s:9s}: accuracy {np.mean(v):.3f} over {len(v)} pairs (all five scores: {t_ours:.0f} s)')
    print(f'  time ratio privcausal (5 scores, full test halves) / causal-learn (<= {cap} points): {t_ours / t_peer:.2f}')


def bench_study():
    print('\n== the whole Tübingen study (99 pairs x 10 splits x 4 scores x 4 epsilons), via the experiment notebook code')
    t0 = time.perf_counter()
    subprocess.run([sys.executable, 'tools/run_nbs.py', 'nbs/experiments/anm_tuebingen.ipynb', '--flags', 'slow'],
                   check=True, cwd=ROOT)
    mins = (time.perf_counter() - t0) / 60
    print(f'  {mins:.1f} min (target < 15 min; includes Figure 2 refits)')


if __name__ == '__main__':
    p = argparse.ArgumentParser()
    p.add_argument('--one', nargs=2, metavar=('KIND', 'M'))
    p.add_argument('--skip-dense-largest', action='store_true', help='do not run the dense form at m = 16,382 (about 8.6 GB)')
    p.add_argument('--study', action='store_true', help='also time the whole Tübingen study')
    p.add_argument('--peer', action='store_true', help="also run causal-learn's ANM (needs PEER_PYTHON) on every pair")
    args = p.parse_args()
    if args.one:
        _one(args.one[0], int(args.one[1]))
    else:
        bench_hsic(args.skip_dense_largest)
        bench_decision()
        bench_plan()
        if args.peer: bench_peer()
        if args.study: bench_study()
