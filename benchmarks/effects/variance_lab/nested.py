"""Lab (research-mode noise): deflate the G-formula's simulated noise variance by a nested simulation (an iterated
parametric bootstrap, Hall 1992; Efron & Tibshirani 1993, ch. 10).

The release simulates its noise variance around the RELEASED statistics r: V(r) = Var f(r - e'). Where the noise
swamps the covariates V(r) overstates V(s) at the true statistics (the floored Gram inverse is convex). The bias of V
at the first level is estimated one level down, from J = 40 draws s~_j = r - e'_j with 200 inner draws each:
'ratio' V(r) min(1, V(r)/mean V(s~_j)), 'sym' V(r)^2/mean V(s~_j) (uncapped), 'off' the release as it is. Paired:
the method name is the same in every mode, so every mode sees the same data sets and the same release noise.

    python benchmarks/effects/variance_lab/nested.py MODE DESIGN N EPS REPS      (from the repository root)
"""
import sys, json, math, numpy as np
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parents[1]))
import harness, labsum, ours
from privcausal import regression as R
from privcausal import outcome as O

MODE = {'mode': 'ratio', 'J': 40, 'inner': 200}

def nested_var(rel, sigmas, nu, estimand, J, inner):
    g = np.random.default_rng(O.NOISE_SEED + 1)
    v = rel.vectors()
    outer = {k: v[k][None, :] - g.normal(size=(J, v[k].size)) * sigmas[k] for k in v}
    vals = []
    for j in range(J):
        st = O.ArmStatistics.from_vectors(outer['gram'][j], outer['cross'][j], outer['squares'][j], rel.p)
        sims, acc = O.simulate_noise(st, sigmas, nu, estimand, draws=inner, seed=O.NOISE_SEED + 2 + j)
        vals.append(np.var(sims))
    return float(np.mean(vals))

_orig = R._corrected_effect
def patched(plan, rel, floor):
    m, est, var, noise_var, corrected, accepted = _orig(plan, rel, floor)
    if MODE['mode'] == 'off' or floor != plan.floor: return m, est, var, noise_var, corrected, accepted
    nu, sig = labsum.noise_setup(plan, floor)
    v2 = nested_var(rel, sig, nu, plan.estimand, MODE['J'], MODE['inner'])
    if MODE['mode'] == 'ratio': nv = noise_var * min(1.0, noise_var / v2) if v2 > 0 else noise_var
    elif MODE['mode'] == 'sym': nv = noise_var * noise_var / v2 if v2 > 0 else noise_var
    else: nv = max(2 * noise_var - v2, noise_var / 4)
    return m, est, var, nv, corrected, accepted
R._corrected_effect = patched
harness.register('pc_gf_lab', ours.pc_gformula)
MODE['mode'] = sys.argv[1]
design, n, eps, reps = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
labsum.run_cell(sys.argv[1], 'nested', design, n, eps, reps, ['bias', 'sd', 'med_se', 'cov', 'sd(z)', 'medwidth'])
