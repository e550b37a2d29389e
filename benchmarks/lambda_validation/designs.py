# Design 2 ("mixed"), fixed BEFORE looking at any result (21:17 UTC):
# d=8: x1..x4 ~ N(0,1); x5 ~ Bern(0.5), x6 ~ Bern(0.3), x8 ~ Bern(0.4) (binary); x7 ~ U(-1.5, 1.5).
# logit P(T=1) = -1.15 + 0.6 x1 - 0.5 x2 + 0.4 x3 + 0.6 x5 - 0.5 x6 + 0.3 x7  (~30% treated, moderate confounding)
# Y = 1 + 1.0 x1 + 0.8 x2 - 0.6 x3 + 0.5 x4 + 0.7 x5 + 0.5 x6 - 0.4 x7 + 0.3 x8
#     + T (2 + 1.0 x1 + 0.8 x5) + N(0,1)    -> heterogeneous effect, ATE != ATT
# truths: population ATE = 2 + 0.4 = 2.4; ATT by 4e6-draw Monte Carlo.
# release: covariate_bound=5 (clip_rows), outcome_bound=12 (clip_outcomes), propensity_bounds=0.02, delta=1e-6.
import numpy as np
from scipy.special import expit
A = np.array([0.6, -0.5, 0.4, 0.0, 0.6, -0.5, 0.3, 0.0]); A0 = -1.15
B = np.array([1.0, 0.8, -0.6, 0.5, 0.7, 0.5, -0.4, 0.3])
def mixed_X(rng, shape):
    X = np.empty(shape + (8,))
    X[..., :4] = rng.normal(size=shape + (4,))
    X[..., 4] = rng.random(shape) < 0.5
    X[..., 5] = rng.random(shape) < 0.3
    X[..., 6] = rng.uniform(-1.5, 1.5, size=shape)
    X[..., 7] = rng.random(shape) < 0.4
    return X
def mixed_truth():
    g = np.random.default_rng(12345); X = mixed_X(g, (4_000_000,))
    p = expit(A0 + X @ A); tau = 2 + X[:, 0] + 0.8 * X[:, 4]
    return dict(ATE=2.4, ATT=float((p * tau).sum() / p.sum()), share=float(p.mean()))
def mixed_design(n, rng, reps):
    X = mixed_X(rng, (reps, n))
    t = rng.binomial(1, expit(A0 + X @ A))
    y = 1 + X @ B + t * (2 + X[..., 0] + 0.8 * X[..., 4]) + rng.normal(size=(reps, n))
    return X, t, y
if __name__ == '__main__': print(mixed_truth())
