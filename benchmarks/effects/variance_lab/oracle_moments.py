"""Lab (NOT PRIVATE): with standardisation on, does simulating the moments stage (a noisy encoding per release) and the
one-step correction close the planner's gap? Per draw: noisy moments at n -> encoding -> the design's true statistics
under it (from 100,000 rows, scaled to n) + the release's noise -> estimate (and its corrected value) in outcome units;
against the realised sd of the default releases in nostd_cov.log (150 a cell).
    python oracle_moments.py   (from this folder; oracle_moments.log)"""
import sys, json, math, numpy as np, pandas as pd, warnings
warnings.simplefilter('ignore')
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
import runlib
import privcausal.regression as R
from privcausal.bounds import encoding_from_bounds, column_moments, standardised, effect_columns
from privcausal.outcome import ArmStatistics, arm_models, gformula_effect, eigen_floor, arm_statistics, simulate_noise
NB = 100_000
cells = [('imb', 20000, 0.5, 'ATE', 0.4783), ('imb', 20000, 1.0, 'ATE', 0.3650), ('mixed', 20000, 0.5, 'ATE', 0.4801),
         ('mixed', 20000, 1.0, 'ATE', 0.3212)]
if len(sys.argv) > 1: cells = json.loads(sys.argv[1])
for des, n, eps, est, realised in cells:
    f, bo, yb = runlib.DES[des]; X, t, y = f(NB, np.random.default_rng(5)); names = [f'x{j}' for j in range(len(bo))]
    cb = {c: b for c, b in zip(names, bo) if tuple(b) != (0, 1)}
    df = pd.DataFrame(X, columns=names).assign(t=t, y=y)
    df[names] = np.clip(df[names].to_numpy(), [b[0] for b in bo], [b[1] for b in bo]); df['y'] = df.y.clip(*yb)
    p = R.plan_gformula(n, eps, 1e-6, yb, covariates=names, covariate_bounds=cb, estimand=est)
    cols = effect_columns(df, 'y', 't', names, None)
    enc0 = encoding_from_bounds(names, p.covariate_bounds, p.outcome_bounds)
    M = column_moments(cols.rows, names, 'y', enc0, True) * (n / NB)
    g = np.random.default_rng(1); ests = []; fixed = []; corr = []
    sm = p.sigma('moments')
    for i in range(200):
        for mode, lst in (('noisy', ests), ('exact', fixed)):
            mom = M + (g.normal(size=M.size) * sm if mode == 'noisy' else 0)
            enc = standardised(enc0, mom, n, sm, True, outcome_k_sd=p.outcome_clip_sd)
            st = arm_statistics(cols.rows, names, 't', 'y', enc)
            v = {k: x * (n / NB) for k, x in st.vectors().items()}
            nz = {k: v[k] + g.normal(size=v[k].size) * p.sigma(k) for k in v}
            pop = ArmStatistics.from_vectors(v['gram'], v['cross'], v['squares'], st.p)
            _, var = gformula_effect(arm_models(pop, 0.0), est)
            e, _ = gformula_effect(arm_models(ArmStatistics.from_vectors(nz['gram'], nz['cross'], nz['squares'], st.p),
                                              eigen_floor(p.sigma('gram'), p.d, p.floor)), est)
            lst.append((enc.outcome_halfwidth * float(e), enc.outcome_halfwidth * math.sqrt(float(var))))
            if mode == 'noisy':  # the release's one-step correction on these released statistics
                rel = ArmStatistics.from_vectors(nz['gram'], nz['cross'], nz['squares'], st.p)
                sims, _ = simulate_noise(rel, {k: p.sigma(k) for k in ('gram', 'cross', 'squares')}, eigen_floor(p.sigma('gram'), p.d, p.floor), est)
                c = float(np.clip(2 * float(e) - np.nan_to_num(np.mean(sims)), -2, 2))
                corr.append((enc.outcome_halfwidth * c, enc.outcome_halfwidth * math.sqrt(float(var))))
    a, b, c = np.array(ests), np.array(fixed), np.array(corr)
    tot = lambda z: math.hypot(np.std(z[:, 0]), np.sqrt(np.mean(z[:, 1] ** 2)))
    print(json.dumps(dict(des=des, n=n, eps=eps, est=est, realised=realised, oracle_fixed=round(tot(b), 4), oracle_moments=round(tot(a), 4),
                          ratio_fixed=round(realised / tot(b), 3), ratio_moments=round(realised / tot(a), 3), oracle_corrected=round(tot(c), 4), ratio_corrected=round(realised / tot(c), 3))), flush=True)
