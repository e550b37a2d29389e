"""Would planning each covariate's fill of its public range help the G-formula planner? (2026-11-28; `plan_fill.log`)

The library's planner (`population_statistics`) assumes each standardised covariate has variance 1/K^2. Here the
variant takes each column's true sd as a fraction of its public half-width (FILL, from 400,000 draws), widens the
standardisation's half-width by the moments' noise as `planned_halfwidth` does for the outcome, and splits R^2
equally over the columns. Run from this folder: python plan_fill.py > plan_fill.log"""
import pandas as pd, numpy as np, sys, math, warnings
warnings.simplefilter('ignore')
sys.path.insert(0, '..')
import plan_check
from designs import DESIGNS
import privcausal.regression as R
from privcausal.outcome import ArmStatistics
FILL={'imbalanced':[0.2]*5,'mixed':[0.2]*4+[1.0,0.9163,0.5778,0.9797],'strong':[0.3778,0.0858,0.2009,1.0,0.2189,0.9797],'exp3':[0.25]*10,'exp4':[0.25]*20}
CUR={}
def patched(p, cov=True):
    lo, hi = p.outcome_bounds; h=(hi-lo)/2
    s_y = p._outcome_sd(); sm=p.sigma('moments'); infl=math.sqrt(5)*sm/p.n
    h_y = min(p.outcome_clip_sd*math.sqrt((s_y/h)**2+infl),1.0)*h
    s_u, d, n1 = s_y / h_y, p.d, p.n * p.treated_share
    fill=np.array(CUR['fill'] if cov else [1/3]*d)
    hx=np.minimum(3*np.sqrt(fill**2+infl),1.0) if cov else np.ones(d)
    v=(fill/hx)**2 if cov else np.full(d,1/9)
    na = np.array([p.n - n1, n1])
    gap = p.imbalance*np.sqrt(v)
    means = np.stack([-p.treated_share * gap, (1 - p.treated_share) * gap])
    beta = s_u*np.sqrt(p.r2/(d*v))
    G, b, q = np.zeros((2, d + 1, d + 1)), np.zeros((2, d + 1)), np.zeros(2)
    for a in (0, 1):
        m, u_bar = means[a], float(means[a] @ beta)
        G[a, 0, 0], G[a, 0, 1:], G[a, 1:, 0] = 1, m, m
        G[a, 1:, 1:] = np.diag(v) + np.outer(m, m)
        b[a, 0], b[a, 1:] = u_bar, v * beta + m * u_bar
        q[a] = u_bar ** 2 + beta@(v*beta) + (1 - p.r2) * s_u ** 2
        G[a], b[a], q[a] = na[a] * G[a], na[a] * b[a], na[a] * q[a]
    return ArmStatistics(G, b, q), h_y
S = pd.read_csv('../results/grid_summary.csv')
s = S[S.method=='pc_gformula'].copy()
res={}
PS0=R.population_statistics
for mode,fn in (('library',PS0),('fill',lambda p: patched(p,True))):
    R.population_statistics=fn
    out=[]
    for d,n,e,dl,k in zip(s.design,s.n,s.eps,s.delta,s.estimand):
        CUR['fill']=FILL[d]
        out.append(plan_check.planned('pc_gformula',d,n,e,dl,k))
    res[mode]=out
for m in res: s[m]=s.realised_sd/np.array(res[m])
pd.set_option('display.width',200); pd.set_option('display.max_rows',400)
print(s[['design','n','eps','estimand','realised_sd','library','fill']].round(3).to_string(index=False))
for c in res: print(c, 'within10 %.3f within20 %.3f within30 %.3f'%(((s[c]-1).abs()<=.1).mean(),((s[c]-1).abs()<=.2).mean(),((s[c]-1).abs()<=.3).mean()))
