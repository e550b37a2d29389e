"""Designs of the effects benchmark (issue 16, item 7): data generators and what a user would declare publicly.

Each design is a `Design`: `draw(n, rng) -> (X DataFrame, t 0/1 array, y array)`, the PUBLIC declaration a user
would state from domain knowledge (`covariate_bounds`, `outcome_bounds`, `outcome`), and the POPULATION ATE and ATT
computed once by Monte Carlo (`truths.py`, >= 4 million draws; value and MC standard error stored in TRUTHS).

    python designs.py            # checks: treated share, propensity quantiles, outcome range vs declared bounds

Sources: Lebeda, Even, Bellet & Josse (2025, arXiv 2505.19589) exp2/exp3/exp4 (coefficients from
/work/shared/spec/effects.md and their public data_generator.py; written anew here), the developers' `imbalanced`
(privcausal.theory_ipw.IMBALANCED) and `mixed` (benchmarks/lambda_validation/designs.py) designs, and `strong`
(benchmarks/effects/lab_designs_draft.py, coefficients kept) with its misspecified variant `strong_raw`.
"""
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import expit

from privcausal.theory_ipw import IMBALANCED


@dataclass(frozen=True)
class Design:
    name: str
    generate: object  # (n, rng) -> (X ndarray, t, y, e, tau): e the true propensity, tau the unit's E[Y1 - Y0 | x]
    columns: tuple
    covariate_bounds: dict  # PUBLIC {column: (lo, hi)}; 0/1 columns (0, 1)
    outcome_bounds: tuple  # PUBLIC (lo, hi)
    outcome: str  # 'continuous' or 'binary'
    eta: float = 0.1  # propensity clip of Lebeda et al.'s estimators on this design (their exp3/exp4 value)
    note: str = ''
    extras: dict = field(default_factory=dict)

    def draw(self, n, rng):
        "One data set: (X DataFrame with named columns, t 0/1 int array, y float array)."
        X, t, y, _, _ = self.generate(n, rng)
        return pd.DataFrame(X, columns=list(self.columns)), t.astype(np.int8), y.astype(float)

    @property
    def d(self): return len(self.columns)

    @property
    def truth(self): return {k: TRUTHS[self.name][k][0] for k in ('ATE', 'ATT')}

    @property
    def truth_se(self): return {k: TRUTHS[self.name][k][1] for k in ('ATE', 'ATT')}

    def lows_highs(self):
        "Declared bounds as arrays in column order."
        b = np.array([self.covariate_bounds[c] for c in self.columns], float)
        return b[:, 0], b[:, 1]


def _cols(d): return tuple(f'x{j}' for j in range(1, d + 1))


def _clipped_normal_mean(m, s, lo=-1.0, hi=1.0):
    "E[clip(Z, lo, hi)] for Z ~ N(m, s^2) (exact)."
    from scipy.stats import norm
    a, b = (lo - m) / s, (hi - m) / s
    return lo * norm.cdf(a) + hi * norm.sf(b) + m * (norm.cdf(b) - norm.cdf(a)) + s * (norm.pdf(a) - norm.pdf(b))


# ---- Lebeda et al. exp2: misspecified, d = 2, quadrant propensities and outcome means, tau = 0.2 ----
def _exp2(n, rng):
    X = rng.normal(size=(n, 2)); x1, x2 = X[:, 0], X[:, 1]
    e = np.select([(x1 > 0.1) & (x2 > 0), (x1 <= 0.1) & (x2 > 0), (x1 < -0.05) & (x2 <= 0)], [0.75, 0.6, 0.25], 0.5)
    m0 = np.select([(x1 > 0) & (x2 > 0), (x1 <= 0) & (x2 > 0.05), (x1 < 0) & (x2 <= 0.05)], [-0.7, -0.4, 0.6], 0.1)
    t = rng.binomial(1, e)
    y0 = m0 + rng.normal(0, 0.05, n)
    y = np.clip(y0 + 0.2 * t, -1, 1)
    tau = _clipped_normal_mean(m0 + 0.2, 0.05) - _clipped_normal_mean(m0, 0.05)
    return X, t, y, e, tau


# ---- exp3: well specified, d = 10, binary outcome, eta = 0.1 ----
B3_1 = np.array([0.1, -0.15, 0.225, -0.15, -0.2, 0.1, 0.05, -0.075, 0.225, -0.15, -0.2])
B3_2 = np.array([-0.05, 0.175, 0.1, -0.125, 0.075, -0.1, 0.2, -0.2, 0.175, -0.1, 0.2])
GAMMA3 = 0.42585


def _exp3(n, rng):
    X = rng.normal(size=(n, 10))
    e = np.clip(expit(B3_1[0] + X @ B3_1[1:]), 0.1, 0.9)
    t = rng.binomial(1, e)
    s = B3_2[0] + X @ B3_2[1:]
    y = (rng.random(n) < expit(s + GAMMA3 * t)).astype(float)
    return X, t, y, e, expit(s + GAMMA3) - expit(s)


# ---- exp4: well specified, d = 20, tau = 0.15, noise sd 0.05, outcomes clipped to [-1, 1] ----
B4_1 = np.array([0.1, -0.17, -0.06, 0.05, 0.14, 0.12, -0.195, -0.205, 0.07, 0.18, 0.14, -0.14, 0.05, 0.01, -0.16,
                 -0.18, -0.1, 0.2, 0.03, -0.16, -0.1])
B4_2 = np.array([-0.08, -0.0385, -0.0111, -0.105, -0.0344, 0.1405, 0.0550, 0.0344, -0.0908, -0.0023, -0.0243,
                 -0.0076, -0.0416, 0.0193, -0.0846, 0.0582, 0.0824, 0.0184, 0.0064, -0.0895, 0.0241])


def _exp4(n, rng):
    X = rng.normal(size=(n, 20))
    e = np.clip(expit(B4_1[0] + X @ B4_1[1:]), 0.1, 0.9)
    t = rng.binomial(1, e)
    m0 = B4_2[0] + X @ B4_2[1:]
    y = np.clip(m0 + rng.normal(0, 0.05, n) + 0.15 * t, -1, 1)
    tau = _clipped_normal_mean(m0 + 0.15, 0.05) - _clipped_normal_mean(m0, 0.05)
    return X, t, y, e, tau


# ---- imbalanced (privcausal.theory_ipw.IMBALANCED): d = 5, 24% treated, constant effect 2 ----
def _imbalanced(n, rng):
    X = rng.normal(size=(n, 5))
    e = expit(IMBALANCED['intercept'] + X @ np.array(IMBALANCED['a']))
    t = rng.binomial(1, e)
    y = 1 + X @ np.array(IMBALANCED['b']) + IMBALANCED['effect'] * t + rng.normal(size=n)
    return X, t, y, e, np.full(n, float(IMBALANCED['effect']))


# ---- mixed (benchmarks/lambda_validation/designs.py): d = 8, heterogeneous effect ----
MIX_A0, MIX_A = -1.15, np.array([0.6, -0.5, 0.4, 0.0, 0.6, -0.5, 0.3, 0.0])
MIX_B = np.array([1.0, 0.8, -0.6, 0.5, 0.7, 0.5, -0.4, 0.3])


def _mixed(n, rng):
    X = np.empty((n, 8))
    X[:, :4] = rng.normal(size=(n, 4))
    X[:, 4] = rng.random(n) < 0.5
    X[:, 5] = rng.random(n) < 0.3
    X[:, 6] = rng.uniform(-1.5, 1.5, size=n)
    X[:, 7] = rng.random(n) < 0.4
    e = expit(MIX_A0 + X @ MIX_A)
    t = rng.binomial(1, e)
    tau = 2 + X[:, 0] + 0.8 * X[:, 4]
    y = 1 + X @ MIX_B + t * tau + rng.normal(size=n)
    return X, t, y, e, tau


# ---- strong: strongly confounded, realistic covariates (lab_designs_draft.py, coefficients kept) ----
STRONG_COLUMNS = ('age', 'log_income', 'education', 'female', 'children', 'urban')


def _strong_X(n, rng):
    age = rng.uniform(20, 75, n)
    log_income = rng.normal(10.6, 0.6, n)  # median income about 40,000
    educ = np.clip(np.round(rng.normal(13, 2.5, n)), 6, 22)
    female = rng.random(n) < 0.5
    kids = rng.poisson(1.2, n)
    urban = rng.random(n) < 0.6
    return np.c_[age, log_income, educ, female, kids, urban].astype(float)


def _strong(n, rng, raw=False):
    X = _strong_X(n, rng)
    a, li, ed, fe, ki, ur = X.T
    e = expit(-0.6 + 0.06 * (a - 47) - 1.2 * (li - 10.6) + 0.3 * (ed - 13) + 0.8 * fe - 0.5 * ki + 0.9 * ur)
    t = rng.binomial(1, e)
    mu = 20 + 0.3 * (a - 47) + 8 * (li - 10.6) + 1.5 * (ed - 13) - 2 * fe - 1.0 * ki + 3 * ur
    tau = 5 + 0.1 * (a - 47) + 2 * fe
    y = mu + t * tau + rng.normal(0, 6, n)
    if raw: X = X.copy(); X[:, 1] = np.exp(li)  # the user supplies raw income; the truth stays linear in log income
    return X, t, y, e, tau


DESIGNS = {d.name: d for d in [
    Design('exp2', _exp2, _cols(2), dict.fromkeys(_cols(2), (-4, 4)), (-1, 1), 'continuous', 0.1,
           'Lebeda et al. exp2 (misspecified; their n = 250,000); eta is the estimator clip (no clip in the data)'),
    Design('exp3', _exp3, _cols(10), dict.fromkeys(_cols(10), (-4, 4)), (0, 1), 'binary', 0.1,
           'Lebeda et al. exp3 (well specified, binary; their n = 50,000)'),
    Design('exp4', _exp4, _cols(20), dict.fromkeys(_cols(20), (-4, 4)), (-1, 1), 'continuous', 0.1,
           'Lebeda et al. exp4 (well specified; their n = 20,000)'),
    Design('imbalanced', _imbalanced, _cols(5), dict.fromkeys(_cols(5), (-5, 5)), (-15, 15), 'continuous', 0.1,
           'privcausal.theory_ipw.IMBALANCED (24% treated, constant effect 2)'),
    Design('mixed', _mixed, _cols(8),
           {**dict.fromkeys(('x1', 'x2', 'x3', 'x4'), (-5, 5)), 'x5': (0, 1), 'x6': (0, 1), 'x7': (-1.5, 1.5), 'x8': (0, 1)},
           (-20, 20), 'continuous', 0.1, 'benchmarks/lambda_validation mixed design (heterogeneous effect)'),
    Design('strong', _strong, STRONG_COLUMNS,
           dict(zip(STRONG_COLUMNS, [(16, 100), (0, 14), (0, 25), (0, 1), (0, 10), (0, 1)])),
           (-40, 80), 'continuous', 0.1, 'strongly confounded, realistic covariates (propensities ~0.02-0.97)'),
    Design('strong_raw', lambda n, rng: _strong(n, rng, raw=True), ('age', 'income') + STRONG_COLUMNS[2:],
           dict(zip(('age', 'income') + STRONG_COLUMNS[2:], [(16, 100), (0, 300_000), (0, 25), (0, 1), (0, 10), (0, 1)])),
           (-40, 80), 'continuous', 0.1,
           'strong with raw income declared (0, 300,000); the truth is linear in log income (misspecified variant)'),
]}

# Population truths: (value, Monte Carlo standard error) from truths.py (seed and draws stated there; the printout is in
# truths.txt). Constant-effect designs have se 0 for the ATE.
TRUTHS = {
    'exp2': {'ATE': (0.1999999, 7.8e-11), 'ATT': (0.2, 4.9e-11)},  # 0.2 up to the [-1, 1] clipping
    'exp3': {'ATE': (0.1000075, 3.8e-06), 'ATT': (0.09991798, 4.0e-06)},
    'exp4': {'ATE': (0.1499416, 1.1e-06), 'ATT': (0.1499416, 1.1e-06)},  # 0.15 less the clipping at +-1
    'imbalanced': {'ATE': (2.0, 0.0), 'ATT': (2.0, 0.0)},  # constant effect
    'mixed': {'ATE': (2.4, 0.0), 'ATT': (2.824291, 0.00061)},  # ATE exact: 2 + E[x1] + 0.8 E[x5]; MC 2.400365 (0.00054)
    'strong': {'ATE': (6.05, 0.0), 'ATT': (6.767489, 0.00098)},  # ATE exact: 5 + 0.1 (47.5 - 47) + 2 * 0.5; MC 6.04911
    'strong_raw': {'ATE': (6.05, 0.0), 'ATT': (6.767489, 0.00098)},  # the same population as strong
}


def check(n=200_000, seed=0):
    "Print treated share, propensity quantiles and the outcome range against the declared bounds, per design."
    rng = np.random.default_rng(seed)
    print(f'{"design":11s} {"d":>3s} {"treated":>7s}  {"propensity q(0, .01, .5, .99, 1)":36s} '
          f'{"y q(0, .001, .999, 1)":30s} {"declared":>12s} {"y out":>6s} {"X out":>6s}')
    for d in DESIGNS.values():
        X, t, y, e, _ = d.generate(n, rng)
        lo, hi = d.lows_highs()
        xout = np.mean(((X < lo) | (X > hi)).any(axis=1))
        yout = np.mean((y < d.outcome_bounds[0]) | (y > d.outcome_bounds[1]))
        print(f'{d.name:11s} {d.d:3d} {t.mean():7.3f}  {str(np.round(np.quantile(e, [0, .01, .5, .99, 1]), 3)):36s} '
              f'{str(np.round(np.quantile(y, [0, .001, .999, 1]), 2)):30s} {str(d.outcome_bounds):>12s} '
              f'{yout:6.4f} {xout:6.4f}')


if __name__ == '__main__':
    check()
