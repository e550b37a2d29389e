# NOT PRIVATE control: Hájek with TRUE propensities clipped to [0.02,0.98] on design 2 (what clipping alone does)
import numpy as np; from scipy.special import expit; import sys; sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parent))
from designs import *
T = mixed_truth(); g = np.random.default_rng(7)
for est in ('ATE','ATT'):
    vals=[]
    for _ in range(40):
        X,t,y = mixed_design(20000, g, 5)
        p = np.clip(expit(A0 + X @ A), 0.02, 0.98)
        if est=='ATE': w1, w0 = t/p, (1-t)/(1-p)
        else: w1, w0 = t*1.0, (1-t)*p/(1-p)
        vals.append(((w1*y).sum(-1)/w1.sum(-1) - (w0*y).sum(-1)/w0.sum(-1)))
    v=np.concatenate(vals); print(est, 'truth', round(T[est],3), 'oracle clipped Hajek mean', v.mean().round(3), 'sd(N=20000)', v.std().round(3))
p = expit(A0 + mixed_X(g,(1_000_000,)) @ A); print('share p<0.02', (p<0.02).mean(), 'p>0.98', (p>0.98).mean())
