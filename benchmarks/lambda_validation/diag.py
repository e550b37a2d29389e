# NOT PRIVATE decomposition: tau_n = noise-free effect with the private model; tau_hat = with the non-private model
import sys, warnings, json, numpy as np
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parent)); from study import datasets
from privcausal.ipw import pp_ipw
for design, n, est, eps, reps in [('mixed', 20000, 'ATE', 5.0, 300), ('mixed', 20000, 'ATE', 50.0, 300), ('mixed', 4000, 'ATE', 5.0, 300), ('paper', 2000, 'ATE', 50.0, 300)]:
    R = {1.0: [], 1/3: []}; lam_star = None
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for i, (X, t, y, truth, kw) in enumerate(datasets(design, n, reps, 555, est)):
            if lam_star is None: lam_star = pp_ipw(X=X, outcome=y, treatment=t, epsilon=eps, delta=1e-6, estimand=est, rng=np.random.default_rng(0), **kw).plan.lam
            for k in R:
                r, dg = pp_ipw(X=X, outcome=y, treatment=t, epsilon=eps, delta=1e-6, estimand=est, lam=k * lam_star,
                               rng=np.random.default_rng(999 + i), diagnostics=True, **kw)
                lo, hi = r.conf_int(); R[k].append((r.estimate, lo, hi, dg.tau_n, dg.tau_hat, truth))
    for k, v in R.items():
        e, lo, hi, tn, th, tr = np.array(v).T
        print(json.dumps(dict(design=design, N=n, est=est, eps=eps, k=round(k, 3), cov_truth=((lo <= tr) & (tr <= hi)).mean(),
              cov_model_target=((lo <= tn) & (tn <= hi)).mean(), bias=(e - tr).mean(), bias_private_model=(tn - tr).mean(),
              bias_nonprivate_model=(th - tr).mean(), sd=e.std(), sd_noise_free=tn.std(), sd_nonprivate_model=th.std(),
              mean_halfwidth=((hi - lo) / 2).mean())), flush=True)
