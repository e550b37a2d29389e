import sys, numpy as np, pandas as pd, json, time, warnings
warnings.simplefilter('ignore')
sys.path.insert(0, __import__('os').path.join(__import__('os').path.dirname(__import__('os').path.abspath(__file__)), '..'))
import lab_designs_draft as D  # the lab's compact copy of the designs (../lab_designs_draft.py)
from privcausal.regression import gformula
from privcausal.doubly_robust import aipw
TR = {'imb': {'ATE': 2.0, 'ATT': 2.0}, 'mixed': {'ATE': 2.4, 'ATT': 2.82384}, 'exp3': {'ATE': 0.1, 'ATT': 0.09991},
      'exp4': {'ATE': 0.149943, 'ATT': 0.149943}, 'strong': {'ATE': 6.05122, 'ATT': 6.770832}}
DES = {'imb': (D.imbalanced, D.IMB_BOUNDS, D.IMB_Y), 'mixed': (D.mixed, D.MIX_BOUNDS, D.MIX_Y), 'exp3': (D.exp3, D.E3_BOUNDS, D.E3_Y),
       'exp4': (D.exp4, D.E4_BOUNDS, D.E4_Y), 'strong': (D.strong, D.STRONG_BOUNDS, D.STRONG_Y)}
FN = {'gformula': gformula, 'aipw': aipw}
def cell(method, des, n, eps, est, reps, seed=0, **kw):
    f, bo, yb = DES[des]; g = np.random.default_rng(seed); rows = []
    names = [f'x{j}' for j in range(len(bo))]; cb = {c: b for c, b in zip(names, bo) if tuple(b) != (0, 1)}
    for r in range(reps):
        X, t, y = f(n, g)
        df = pd.DataFrame(X, columns=names).assign(t=t, y=y)
        o = FN[method](df, outcome='y', treatment='t', covariates=names, covariate_bounds=cb, outcome_bounds=yb, epsilon=eps, delta=1e-6,
                       estimand=est, rng=g, clip=True, **kw)
        lo, hi = o.conf_int(); rows.append((o.estimate, lo, hi, o.sampling_sd, o.noise_sd, o.whole_range, o.plan.total_sd))
    a = np.array(rows, float); T = TR[des][est]; e, lo, hi = a[:, 0], a[:, 1], a[:, 2]
    return dict(m=method, des=des, n=n, eps=eps, est=est, bias=round(e.mean() - T, 4), sd=round(e.std(), 4), rmse=round(np.sqrt(((e - T)**2).mean()), 4),
                cov=round(((lo <= T) & (T <= hi)).mean(), 3), rep_sd=round(np.sqrt(np.mean(a[:, 3]**2 + a[:, 4]**2)), 4),
                noise=round(np.sqrt(np.mean(a[:, 4]**2)), 4), plan_sd=round(a[0, 6], 4), whole=a[:, 5].mean(), **kw)
if __name__ == '__main__':
    kw = json.loads(sys.argv[7]) if len(sys.argv) > 7 else {}
    for m in sys.argv[1].split(','):
     for des in sys.argv[2].split(','):
        for n in [int(v) for v in sys.argv[3].split(',')]:
            for eps in [float(v) for v in sys.argv[4].split(',')]:
                for est in sys.argv[5].split(','):
                    t0 = time.time(); print(json.dumps(cell(m, des, n, eps, est, int(sys.argv[6]), **kw)), round(time.time() - t0, 1), flush=True)
