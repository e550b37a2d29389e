"""Lab (research-mode noise): extrapolate the G-formula's simulated noise variance back to the true statistics.

The release simulates V(1) = Var f(r - e'), e' ~ N(0, sigma^2), around the RELEASED statistics r = s + e. Where a
noise term multiplies another noisy quantity (a slope times a mean difference; the Gram inverse times the
cross-products) V(1) counts the noise twice: for f = a b with independent noise, V_true = a^2 s_b^2 + b^2 s_a^2 +
s_a^2 s_b^2 but E V(1) = V_true + 2 s_a^2 s_b^2. With V(k) the same simulation at noise variance k sigma^2,
E[3 V(1) - V(2)] = V_true exactly for bilinear f (a SIMEX-style extrapolation in the noise variance; Cook & Stefanski
1994), exact for any quadratic f, and V(1) unchanged where f is linear. Mode 'simex' uses max(3 V(1) - V(2), V(1)/3)
(V(1)/3: nil gradient at the truth); 'off' the release as it is (the plain simulation V(1)). Paired with nested.py's
runs (same method name, seeds and data sets). Tried in the library on 2026-11-27 and withdrawn the same day (README.md):
beyond quadratic f (the Gram inverse) it understates the noise and the intervals under-cover.

    python benchmarks/effects/variance_lab/simex.py MODE DESIGN N EPS REPS      (from the repository root)
"""
import sys, json, math, numpy as np
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parents[1]))
import harness, labsum, ours
from privcausal import regression as R
from privcausal import outcome as O

MODE = {'mode': 'simex'}


def scaled_var(rel, sigmas, nu, estimand, k):
    "V(k): the release's noise simulation with every noise sd scaled by sqrt(k) (the same draws)."
    sims, acc = O.simulate_noise(rel, {s: v * math.sqrt(k) for s, v in sigmas.items()}, nu, estimand)
    return float(np.var(sims))


_orig = R._corrected_effect
def patched(plan, rel, floor):
    m, est, var, noise_var, corrected, accepted = _orig(plan, rel, floor)
    if MODE['mode'] == 'off' or floor != plan.floor: return m, est, var, noise_var, corrected, accepted
    nu, sig = labsum.noise_setup(plan, floor)
    v2 = scaled_var(rel, sig, nu, plan.estimand, 2.0)
    return m, est, var, max(3 * noise_var - v2, noise_var / 3), corrected, accepted
R._corrected_effect = patched
if __name__ == '__main__':
    harness.register('pc_gf_lab', ours.pc_gformula)
    MODE['mode'] = sys.argv[1]
    design, n, eps, reps = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
    labsum.run_cell(sys.argv[1], 'simex', design, n, eps, reps, ['bias', 'sd', 'med_se', 'cov', 'sd(z)', '|z|q', 'medwidth'])
