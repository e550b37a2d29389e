"""Start-up cost of the `privcausal` console script (issue 17): CPU time of `privcausal --help` and
`privcausal ipw --help` against `python -c "import numpy, pandas"`. Target: at most 2x.

Run from the repository root: `.venv/bin/python benchmarks/cli_startup.py [--runs 7] [--json]`.

CPU time is user + system time of the child process (os.wait4's rusage), not wall time, so that a loaded machine
changes it less; the three commands are run alternately (one of each per round, `--runs` rounds) and the medians of
the same run are compared. The machine's load average (`os.getloadavg`, what `uptime` prints) is printed beside the
numbers, before and after: on a machine with more runnable processes than cores the CPU times rise too (shared
caches, frequency), so compare ratios of one run, not numbers across runs. The console script is run through the
same interpreter as this file, with this checkout first on PYTHONPATH (`python -m privcausal.cli` is what the
`privcausal` entry point calls). Also printed: the heavy modules the start-up imports (from `-X importtime`), which
should be none of OpenDP, scipy.stats, scipy.optimize, statsmodels, matplotlib, emcee, sklearn, dask.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ('opendp.prelude', 'scipy.stats', 'scipy.optimize', 'statsmodels', 'matplotlib', 'emcee', 'sklearn', 'dask',
         'scipy.linalg')
COMMANDS = {
    'numpy+pandas': ['-c', 'import numpy, pandas'],
    'privcausal --help': ['-m', 'privcausal.cli', '--help'],
    'privcausal ipw --help': ['-m', 'privcausal.cli', 'ipw', '--help'],
}


def _env():
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join([str(ROOT), *filter(None, [env.get('PYTHONPATH')])])
    return env


def cpu_seconds(args) -> float:
    "User + system CPU seconds of one child `python ARGS` (its own rusage, from wait4)."
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env(),
                            cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0: raise RuntimeError(f'{args} exited with {proc.returncode}')
    return usage.ru_utime + usage.ru_stime


def heavy_imports(args) -> list:
    "Which of HEAVY the command imports (python -X importtime)."
    err = subprocess.run([sys.executable, '-X', 'importtime', *args], capture_output=True, text=True, env=_env(),
                         cwd=ROOT).stderr
    names = {line.rsplit('|', 1)[-1].strip() for line in err.splitlines() if line.startswith('import time:')}
    return sorted(h for h in HEAVY if h in names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--runs', type=int, default=7, help='rounds; each runs every command once (default 7)')
    ap.add_argument('--json', action='store_true', help='print one JSON document')
    a = ap.parse_args()
    load_before = os.getloadavg()
    for args in COMMANDS.values(): cpu_seconds(args)  # warm the file cache: the first run of each is not counted
    times = {k: [] for k in COMMANDS}
    for _ in range(a.runs):
        for k, args in COMMANDS.items(): times[k].append(cpu_seconds(args))
    load_after = os.getloadavg()
    med = {k: statistics.median(v) for k, v in times.items()}
    base = med['numpy+pandas']
    out = {'runs': a.runs, 'cores': os.cpu_count(), 'load_before': load_before, 'load_after': load_after,
           'median_cpu_s': med, 'ratio': {k: med[k] / base for k in COMMANDS if k != 'numpy+pandas'},
           'target_ratio': 2.0, 'heavy_imports': {k: heavy_imports(v) for k, v in COMMANDS.items() if k != 'numpy+pandas'},
           'all_cpu_s': times}
    if a.json: print(json.dumps(out, indent=2)); return
    print(f'machine: {out["cores"]} cores, load average (1, 5, 15 min) {load_before[0]:.2f} {load_before[1]:.2f} '
          f'{load_before[2]:.2f} before, {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} after')
    print(f'CPU time (user + sys), median of {a.runs} alternated runs:')
    for k in COMMANDS:
        ratio = '' if k == 'numpy+pandas' else f'   {med[k] / base:.2f}x numpy+pandas (target <= 2x)'
        print(f'  {k:24s} {med[k]:.3f} s{ratio}')
    for k, h in out['heavy_imports'].items(): print(f'  {k} imports: {", ".join(h) or "none of " + ", ".join(HEAVY)}')


if __name__ == '__main__': main()
