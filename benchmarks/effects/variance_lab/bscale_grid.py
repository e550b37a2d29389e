"""On the stored grid (effect(), 120 cells): coverage with the G-formula's floor-check bias bound scaled by k, recovered from
each row (bound = half-width - 1.96 se). Run from benchmarks/effects/variance_lab."""
import pandas as pd, json, numpy as np
rows=[json.loads(l) for f in ['../results/grid.jsonl','../results/grid_more.jsonl','../results/grid200k.jsonl'] for l in open(f)]
d=pd.DataFrame(rows); d=d[d.method=='pc_effect'].copy()
d['se']=d.extras.map(lambda e: e['std_error']); d['meth']=d.extras.map(lambda e: e.get('method'))
d['half']=(d.hi-d.lo)/2; d['b']=(d.half-1.959964*d.se).clip(lower=0)
d['mid']=(d.hi+d.lo)/2
print('bound>0 share by method', d.groupby('meth').b.apply(lambda x:(x>1e-9).mean()).to_dict())
S=pd.read_csv('../results/grid_summary.csv'); npw=S[S.method=='nonprivate_aipw'].set_index(['design','n','eps','estimand']).median_width
for k in [1,1.25,1.5,2,3]:
    hw=1.959964*d.se+k*d.b
    d['cov']=((d.mid-hw)<=d.truth)&(d.truth<=(d.mid+hw)); d['w']=2*hw
    c=d.groupby(['design','n','eps','estimand']).agg(cov=('cov','mean'),k=('cov','size'),w=('w','median'),wr=('whole_range','mean'))
    c['se']=np.sqrt(c['cov']*(1-c['cov'])/c.k); c['wratio']=c.w/npw.reindex(c.index)  # se: the page's rule (observed coverage)
    inf=c.wr<0.01
    ok=np.where(inf,(c['cov']+2*c.se>=0.93)&(c['cov']-2*c.se<=0.97),c['cov']+2*c.se>=0.95)
    okp=np.where(c.wratio<=5,(c['cov']+2*c.se>=0.93)&(c['cov']-2*c.se<=0.97),c['cov']+2*c.se>=0.95)
    under=(c['cov']+2*c.se<0.93).sum()
    print(k,'issue',ok.sum(),'proposed',okp.sum(),'of',len(c),'under',under,'imb2000e5ATE',round(c.loc[('imbalanced',2000,5.0,'ATE'),'cov'],3),
          '(cells meeting the issue reading / the proposed one; under: below 0.93 by 2 se)')
    if k==1: base=c.w.copy()
    else: print('   width growth median/max', round((c.w/base).median(),3), round((c.w/base).max(),3))
