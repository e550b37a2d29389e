"""The lab scripts' common run: the patched G-formula ('pc_gf_lab') on REPS paired data sets of a cell, then one line
per estimand with the FIELDS a script asks for (bias, sd, ... of the estimates against the design's truth)."""
import numpy as np
import harness
from privcausal import outcome as O

FIELDS = {  # name -> its text, from the estimates e, the truth tr, the reported standard errors se and the rows rs
    'bias': lambda e, tr, se, rs: f'bias={e.mean() - tr:.4f}',
    'sd': lambda e, tr, se, rs: f'sd={e.std():.4f}',
    'rmse': lambda e, tr, se, rs: f'rmse={np.sqrt(((e - tr) ** 2).mean()):.4f}',
    'med_se': lambda e, tr, se, rs: f'med_se={np.median(se):.4f}',
    'cov': lambda e, tr, se, rs: f"cov={np.mean([r['lo'] <= tr <= r['hi'] for r in rs]):.3f}",
    'sd(z)': lambda e, tr, se, rs: f'sd(z)={((e - tr) / se).std():.2f}',
    '|z|q': lambda e, tr, se, rs: f'|z|q50,95={np.quantile(np.abs(e - tr) / se, .5):.2f},{np.quantile(np.abs(e - tr) / se, .95):.2f}',
    'medwidth': lambda e, tr, se, rs: f"medwidth={np.median([r['hi'] - r['lo'] for r in rs]):.4f}",
}


def run_cell(label, prefix, design, n, eps, reps, fields):
    "Run the cell (rows also appended to /tmp/PREFIX_DESIGN_N_EPS_LABEL.jsonl, which a rerun resumes) and print its lines."
    rows = harness.run(design, n, [eps], reps=reps, methods=['pc_gf_lab'], seed=0, out=f'/tmp/{prefix}_{design}_{n}_{eps}_{label}.jsonl')
    for est in ('ATE', 'ATT'):
        rs = [r for r in rows if r['estimand'] == est and not r.get('error')]
        if not rs: print(rows[:1]); continue
        e, tr = np.array([r['estimate'] for r in rs]), rs[0]['truth']
        se = np.array([r['extras'].get('std_error', np.nan) for r in rs])
        print(f'{label:5s} {design} {n} {eps} {est} R={len(rs)} ' + ' '.join(FIELDS[f](e, tr, se, rs) for f in fields), flush=True)
    return rows


def noise_setup(plan, floor):
    "(the eigenvalue floor nu at `floor`, the noise sds of the released statistics): what a patched release simulates with."
    return O.eigen_floor(plan.sigma('gram'), plan.d, floor), {k: plan.sigma(k) for k in ('gram', 'cross', 'squares')}
