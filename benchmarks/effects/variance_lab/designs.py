import numpy as np
from scipy.special import expit
# each design: draw(n, rng) -> X (n x d), t, y ; bounds: list of (lo,hi) per col ; ybounds ; truth dict
IMB = dict(intercept=-1.5, a=np.array((0.9, -0.7, 0.5, 0.0, 0.3)), b=np.array((1.0, -0.8, 0.6, 0.5, 0.0)))
def imbalanced(n, rng):
    X = rng.normal(size=(n, 5)); t = rng.binomial(1, expit(IMB['intercept'] + X @ IMB['a']))
    y = 1 + X @ IMB['b'] + 2.0 * t + rng.normal(size=n); return X, t, y
IMB_BOUNDS = [(-5, 5)] * 5; IMB_Y = (-15, 15); IMB_TRUTH = dict(ATE=2.0, ATT=2.0)
A = np.array([0.6, -0.5, 0.4, 0.0, 0.6, -0.5, 0.3, 0.0]); A0 = -1.15
B = np.array([1.0, 0.8, -0.6, 0.5, 0.7, 0.5, -0.4, 0.3])
def mixed_X(rng, n):
    X = np.empty((n, 8)); X[:, :4] = rng.normal(size=(n, 4)); X[:, 4] = rng.random(n) < 0.5
    X[:, 5] = rng.random(n) < 0.3; X[:, 6] = rng.uniform(-1.5, 1.5, size=n); X[:, 7] = rng.random(n) < 0.4; return X
def mixed(n, rng):
    X = mixed_X(rng, n); t = rng.binomial(1, expit(A0 + X @ A))
    y = 1 + X @ B + t * (2 + X[:, 0] + 0.8 * X[:, 4]) + rng.normal(size=n); return X, t, y
MIX_BOUNDS = [(-5, 5)] * 4 + [(0, 1), (0, 1), (-1.5, 1.5), (0, 1)]; MIX_Y = (-20, 20)
def mixed_truth():
    g = np.random.default_rng(12345); X = mixed_X(g, 4_000_000)
    p = expit(A0 + X @ A); tau = 2 + X[:, 0] + 0.8 * X[:, 4]
    return dict(ATE=2.4, ATT=float((p * tau).sum() / p.sum()))
B3_1 = np.array([0.1, -0.15, 0.225, -0.15, -0.2, 0.1, 0.05, -0.075, 0.225, -0.15, -0.2])
B3_2 = np.array([-0.05, 0.175, 0.1, -0.125, 0.075, -0.1, 0.2, -0.2, 0.175, -0.1, 0.2])
def exp3(n, rng):
    X = rng.normal(size=(n, 10)); Xi = np.c_[np.ones(n), X]
    t = rng.binomial(1, np.clip(expit(Xi @ B3_1), 0.1, 0.9))
    p = expit(Xi @ B3_2 + 0.42585 * t); y = (rng.random(n) < p).astype(float); return X, t, y
def exp3_truth():
    g = np.random.default_rng(1); X = g.normal(size=(4_000_000, 10)); Xi = np.c_[np.ones(len(X)), X]
    e = np.clip(expit(Xi @ B3_1), 0.1, 0.9); tau = expit(Xi @ B3_2 + 0.42585) - expit(Xi @ B3_2)
    return dict(ATE=float(tau.mean()), ATT=float((e * tau).sum() / e.sum()))
E3_BOUNDS = [(-4, 4)] * 10; E3_Y = (0, 1)
B4_1 = np.array([0.1, -0.17, -0.06, 0.05, 0.14, 0.12, -0.195, -0.205, 0.07, 0.18, 0.14, -0.14, 0.05, 0.01, -0.16, -0.18, -0.1, 0.2, 0.03, -0.16, -0.1])
B4_2 = np.array([-0.08,-0.0385, -0.0111, -0.105, -0.0344,  0.1405, 0.0550,  0.0344, -0.0908, -0.0023, -0.0243,
       -0.0076, -0.0416,  0.0193, -0.0846,  0.0582, 0.0824,  0.0184,  0.0064, -0.0895,  0.0241])
def exp4(n, rng):
    X = rng.normal(size=(n, 20)); Xi = np.c_[np.ones(n), X]
    t = rng.binomial(1, np.clip(expit(Xi @ B4_1), 0.1, 0.9))
    y0 = Xi @ B4_2 + rng.normal(0, 0.05, n); y = np.clip(y0 + 0.15 * t, -1, 1); return X, t, y
def exp4_truth():
    g = np.random.default_rng(2); X = g.normal(size=(2_000_000, 20)); Xi = np.c_[np.ones(len(X)), X]
    e = np.clip(expit(Xi @ B4_1), 0.1, 0.9); y0 = Xi @ B4_2 + g.normal(0, 0.05, len(X))
    tau = np.clip(y0 + 0.15, -1, 1) - np.clip(y0, -1, 1)
    return dict(ATE=float(tau.mean()), ATT=float((e * tau).sum() / e.sum()))
E4_BOUNDS = [(-4, 4)] * 20; E4_Y = (-1, 1)
# strongly confounded, my own: realistic-looking covariates with honest wide bounds
def strong_X(rng, n, raw=False):
    age = rng.uniform(20, 75, n); income = rng.normal(10.6, 0.6, n)  # log income, ~40k median
    if raw: income = np.exp(income)
    educ = np.clip(np.round(rng.normal(13, 2.5, n)), 6, 22); female = rng.random(n) < 0.5
    kids = rng.poisson(1.2, n); urban = rng.random(n) < 0.6
    return np.c_[age, income, educ, female, kids, urban].astype(float)
def strong_e(X):
    z = -0.6 + 0.06 * (X[:, 0] - 47) - 1.2 * (X[:, 1] - 10.6) + 0.3 * (X[:, 2] - 13) + 0.8 * X[:, 3] - 0.5 * X[:, 4] + 0.9 * X[:, 5]
    return expit(z)
def strong_mu(X):
    return 20 + 0.3 * (X[:, 0] - 47) + 8 * (X[:, 1] - 10.6) + 1.5 * (X[:, 2] - 13) - 2 * X[:, 3] - 1.0 * X[:, 4] + 3 * X[:, 5]
def strong_tau(X): return 5 + 0.1 * (X[:, 0] - 47) + 2 * X[:, 3]
def strong(n, rng):
    X = strong_X(rng, n); t = rng.binomial(1, strong_e(X))
    y = strong_mu(X) + t * strong_tau(X) + rng.normal(0, 6, n); return X, t, y
def strong_truth():
    g = np.random.default_rng(3); X = strong_X(g, 4_000_000); e = strong_e(X); tau = strong_tau(X)
    return dict(ATE=float(tau.mean()), ATT=float((e * tau).sum() / e.sum()), e_q=np.quantile(e, [0.01, 0.05, 0.5, 0.95, 0.99]).tolist(), share=float(e.mean()))
STRONG_BOUNDS = [(16, 100), (0, 14), (0, 25), (0, 1), (0, 10), (0, 1)]; STRONG_Y = (-40, 80)
if __name__ == '__main__':
    print('mixed', mixed_truth()); print('exp3', exp3_truth()); print('exp4', exp4_truth()); print('strong', strong_truth())
    g = np.random.default_rng(0)
    for name, f, yb in [('imb', imbalanced, IMB_Y), ('mixed', mixed, MIX_Y), ('strong', strong, STRONG_Y), ('exp4', exp4, E4_Y)]:
        X, t, y = f(200000, g); print(name, 'share', t.mean().round(3), 'y range', np.quantile(y, [0, .001, .999, 1]).round(2), 'bounds', yb)
