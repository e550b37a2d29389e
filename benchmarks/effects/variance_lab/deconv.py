# Lab: centre the noise simulation on statistics whose centred Gram eigenvalues are de-biased for the noise
# (spiked-model inversion lam = (obs + sqrt(obs^2 - 2 d s^2)) / 2), so the simulated spread matches the real one.
import sys, json, math, numpy as np
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
import privcausal.regression as R, privcausal.outcome as O
from privcausal.outcome import ArmStatistics
orig = O.simulate_noise
MODE = sys.argv[1]; K = float(sys.argv[4]) if len(sys.argv) > 4 else 2.0
def deconv_stats(st, sigma_g):
    G = np.array(st.G, float); p = st.p; d = p - 1
    if d == 0: return st
    for a in (0, 1):
        n = max(G[a, 0, 0], 1.0); m = np.clip(G[a, 0, 1:] / n, -1, 1)
        S = G[a, 1:, 1:] - n * np.outer(m, m); S = (S + S.T) / 2
        w, V = np.linalg.eigh(S)
        thr = K * d * sigma_g ** 2 / 2   # obs^2 - 2*(d s^2/2)*... : lam_obs = lam + c/lam with c = d s^2 / 2
        c = d * sigma_g ** 2 / 2
        disc = w ** 2 - 4 * c
        lam = np.where((w > 0) & (disc > 0), (w + np.sqrt(np.maximum(disc, 0))) / 2, np.maximum(w, 0) / 2)
        G[a, 1:, 1:] = V @ np.diag(lam) @ V.T + n * np.outer(m, m)
    return ArmStatistics(G, st.b, st.q)
def sim(released, sigmas, nu, estimand='ATE', draws=O.NOISE_DRAWS, seed=O.NOISE_SEED):
    if MODE == 'deconv': released = deconv_stats(released, sigmas['gram'])
    return orig(released, sigmas, nu, estimand, draws, seed)
R.simulate_noise = sim
import runlib
cells = json.loads(sys.argv[2])
for des, n, eps, est in cells:
    r = runlib.cell('gformula', des, n, eps, est, int(sys.argv[3]))
    print(MODE, json.dumps({k: r[k] for k in ('des', 'n', 'eps', 'est', 'bias', 'sd', 'rmse', 'cov', 'rep_sd', 'noise')}), flush=True)
