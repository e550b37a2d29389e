# helper: a second noise simulation centred on statistics whose slopes are shrunk by the noise's share of their norm
import numpy as np
from privcausal.outcome import ArmStatistics, arm_models, gformula_effect, NOISE_DRAWS, NOISE_SEED
def sim_models(released, sigmas, nu, draws=NOISE_DRAWS, seed=NOISE_SEED):
    g = np.random.default_rng(seed); v = released.vectors()
    sims = {k: v[k][None, :] - g.normal(size=(draws, v[k].size)) * sigmas[k] for k in ('gram', 'cross', 'squares')}
    return arm_models(ArmStatistics.from_vectors(sims['gram'], sims['cross'], sims['squares'], released.p), nu)
def shrunk(released, sigmas, nu, power=1.0):
    m = arm_models(released, nu); ms = sim_models(released, sigmas, nu)
    d = released.p - 1
    if d == 0: return released, m
    b = np.array(released.b, float)
    for a in (0, 1):
        beta = m.slopes[a]; var = np.var(ms.slopes[:, a, :], axis=0).sum(); nb = float(beta @ beta)
        k = max(0.0, 1 - var / nb) ** power if nb > 0 else 0.0
        Sf = np.linalg.inv(m.inv[a])
        b[a, 1:] = Sf @ (k * beta) + m.n[a] * m.mean[a] * m.u_mean[a]
    return ArmStatistics(released.G, b, released.q), m
def noise_sd2(released, sigmas, nu, estimand):
    c, _ = shrunk(released, sigmas, nu)
    ms = sim_models(c, sigmas, nu)
    est, _ = gformula_effect(ms, estimand)
    ok = np.all(ms.min_eig >= 0, axis=-1) & (ms.n.min(-1) > 1)
    e = est[ok] if ok.sum() >= 20 else est
    return float(np.std(e))
