"""Lab (research-mode noise): an iterated (second-order) parametric-bootstrap bias correction of the G-formula estimate
(Hall 1992, sec. 1.4; Efron & Tibshirani 1993, ch. 10), aimed at the imbalanced design's floor/noise bias that the
release's one-step correction and its floor-check bound leave out.

The release corrects f(r) by B(r) = mean f(r + e') - f(r), the bias simulated around the RELEASED statistics r. Its own
bias, E B(r) - B(s) at the true s, is estimated one level down from J = 40 draws r_j = r - e_j with 200 inner draws
each: corrected2 = f(r) - 2 B(r) + mean_j B(r_j). The interval's variance and floor check are computed as in the
release (the check uses the same correction at both floors). Modes: 'off' (the release as it is), 'iter', 'none'
(no bias correction: f(r) itself). Paired:
the same data sets and release noise in every mode.

    python benchmarks/effects/variance_lab/bias2.py MODE DESIGN N EPS REPS      (from the repository root)
"""
import sys, numpy as np
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parents[1]))
import harness, labsum, ours
from privcausal import regression as R
from privcausal import outcome as O

MODE = {'mode': 'iter', 'J': 40, 'inner': 200}


def second_level(rel, sigmas, nu, estimand, J, inner):
    "mean_j B(r_j): the simulated bias one level down."
    g = np.random.default_rng(O.NOISE_SEED + 1)
    v = rel.vectors()
    outer = {k: v[k][None, :] - g.normal(size=(J, v[k].size)) * sigmas[k] for k in v}
    st = O.ArmStatistics.from_vectors(outer['gram'], outer['cross'], outer['squares'], rel.p)
    f_j, _ = O.gformula_effect(O.arm_models(st, nu), estimand)
    b = []
    for j in range(J):
        sj = O.ArmStatistics.from_vectors(outer['gram'][j], outer['cross'][j], outer['squares'][j], rel.p)
        sims, _ = O.simulate_noise(sj, sigmas, nu, estimand, draws=inner, seed=O.NOISE_SEED + 2 + j)
        b.append(np.mean(sims) - f_j[j])
    return float(np.nanmean(b))


_orig = R._corrected_effect
def patched(plan, rel, floor):
    m, est, var, noise_var, corrected, accepted = _orig(plan, rel, floor)
    if MODE['mode'] == 'off': return m, est, var, noise_var, corrected, accepted
    if MODE['mode'] == 'none': return m, est, var, noise_var, float(np.mean(est)), accepted  # no bias correction
    nu, sig = labsum.noise_setup(plan, floor)
    B = float(np.mean(est)) - corrected  # B(r) = mean(sims) - est, as corrected = 2 est - mean(sims)
    b2 = second_level(rel, sig, nu, plan.estimand, MODE['J'], MODE['inner'])
    c2 = float(np.clip(float(np.mean(est)) - 2 * B + b2, -2.0, 2.0))
    return m, est, var, noise_var, c2, accepted
R._corrected_effect = patched
harness.register('pc_gf_lab', ours.pc_gformula)
MODE['mode'] = sys.argv[1]
design, n, eps, reps = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
labsum.run_cell(sys.argv[1], 'bias2', design, n, eps, reps, ['bias', 'sd', 'rmse', 'med_se', 'cov', 'medwidth'])
