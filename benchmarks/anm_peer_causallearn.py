"""Peer for benchmarks/anm.py: causal-learn's ANM (GP regression + KCI independence test) on the Tübingen pairs.

Runs in its own environment (causal-learn is not a project dependency):
    python3.11 -m venv /tmp/bench-venv-anm && /tmp/bench-venv-anm/bin/pip install causal-learn==0.1.4.8 pandas
    /tmp/bench-venv-anm/bin/python benchmarks/anm_peer_causallearn.py TUEBINGEN_DIR SPLIT MAX_POINTS
It reads cdt's Tuebingen_pairs.csv from TUEBINGEN_DIR (privcausal's verified cache), makes the same 50/50 split
as `privcausal.anm.split_indices(n, 0.5, seed=SPLIT)`, and runs causal-learn on the first MAX_POINTS points of the
test part (causal-learn fits and tests on the same points; its GP is O(m^3), so the points are capped, as cdt's
ANM caps them at 200). Prints one JSON line per pair: the two p-values and whether x->y was chosen.
"""
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from causallearn.search.FCMBased.ANM.ANM import ANM

warnings.filterwarnings('ignore')
path, split, cap = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
wide = pd.read_csv(path / 'Tuebingen_pairs.csv')
for sid, a, b in zip(wide.SampleID, wide.A, wide.B):
    x, y = np.array(a.split(), float), np.array(b.split(), float)
    n = len(x)
    perm = np.random.default_rng(split).permutation(n)
    test = np.sort(perm[int(round(n * 0.5)):])[:cap]
    t0 = time.perf_counter()
    p_fwd, p_bwd = ANM().cause_or_effect(x[test, None], y[test, None])
    choice = 0.5 if p_fwd == p_bwd else float(p_fwd > p_bwd)  # larger p-value = more independent residual
    print(json.dumps({'pair': int(sid.removeprefix('pair')), 'split': split, 'm': len(test), 'p_forward': float(p_fwd),
                      'p_backward': float(p_bwd), 'correct': choice, 'seconds': time.perf_counter() - t0}), flush=True)
