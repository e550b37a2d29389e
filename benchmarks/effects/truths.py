"""Population ATE and ATT of every design by Monte Carlo over the covariates (the unit effects tau(x) and propensities
e(x) are exact functions of x, so only X is simulated): ATE = E[tau(X)], ATT = E[e(X) tau(X)] / E[e(X)].

    python truths.py            # 4,000,000 draws per design (seed 20250607), about a minute; prints TRUTHS

The printout is stored in truths.txt and copied into designs.TRUTHS. Standard errors: sd(tau)/sqrt(N) for the ATE,
the delta method for the ratio (sd(e (tau - ATT)) / (mean(e) sqrt(N))) for the ATT.
"""
import sys

import numpy as np

from designs import DESIGNS

N, CHUNK, SEED = 4_000_000, 500_000, 20250607


def truth(design, n=N, seed=SEED):
    rng = np.random.default_rng([seed, sum(map(ord, design.name))])
    e_all, tau_all = [], []
    for _ in range(n // CHUNK):
        _, _, _, e, tau = design.generate(CHUNK, rng)
        e_all.append(e.astype(float)); tau_all.append(tau.astype(float))
    e, tau = np.concatenate(e_all), np.concatenate(tau_all)
    ate, att = tau.mean(), (e * tau).sum() / e.sum()
    return {'ATE': (ate, tau.std() / np.sqrt(n)), 'ATT': (att, (e * (tau - att)).std() / (e.mean() * np.sqrt(n))),
            'treated_share': e.mean(), 'n': n}


if __name__ == '__main__':
    names = sys.argv[1:] or list(DESIGNS)
    for name in names:
        r = truth(DESIGNS[name])
        print(f"{name!r}: {{'ATE': ({r['ATE'][0]:.7g}, {r['ATE'][1]:.2g}), 'ATT': ({r['ATT'][0]:.7g}, {r['ATT'][1]:.2g})}},"
              f"  # E[e] = {r['treated_share']:.4f}, N = {r['n']:,}", flush=True)
