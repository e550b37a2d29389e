"""diffprivlib worker: runs in /work/dplvenv (diffprivlib 0.6.6, scikit-learn 1.7, numpy 2.2), never imported by the
main venv. Reads one .npz path per line on stdin (X (R, n, p), y (R, n), bounds lo/hi, ylo/yhi, epsilons, seeds
(R, len(epsilons)) or (R,)) and writes one JSON line: {"coef": [[coefficient of column 0 per epsilon] per data set], "cpu": seconds}.
"""
import json
import sys
import time
import warnings

import numpy as np
from diffprivlib.models import LinearRegression

warnings.filterwarnings('ignore')

for line in sys.stdin:
    try:
        c0 = time.process_time()
        z = np.load(line.strip())
        X, y, eps = z['X'], z['y'], z['epsilons']
        seeds = np.broadcast_to(z['seeds'].reshape(len(X), -1), (len(X), len(eps)))
        bx, by = (z['lo'], z['hi']), (float(z['ylo']), float(z['yhi']))
        coef = [[float(LinearRegression(epsilon=float(e), bounds_X=bx, bounds_y=by, random_state=int(s))
                       .fit(X[r], y[r]).coef_[0]) for e, s in zip(eps, seeds[r])] for r in range(len(X))]
        print(json.dumps({'coef': coef, 'cpu': time.process_time() - c0}), flush=True)
    except Exception as exc:  # the caller raises it
        print(json.dumps({'error': repr(exc)}), flush=True)
