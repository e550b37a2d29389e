"""Lab (research-mode noise): a bootstrap-t interval for the G-formula (Efron & Tibshirani 1993, ch. 12; Hall 1992).

Where the noise swamps the covariates the release's error is heavy-tailed and its simulated se grows with it, so a
normal interval with the right AVERAGE variance still over-covers (simex.py). The bootstrap-t takes the critical
values from the bootstrap world: with the released statistics r as truth, J draws r*_j = r + e_j, each with the
release's own post-processing (bias correction and simulated se from M inner draws), give pivots
t*_j = (corrected*_j - f(r)) / se*_j; the interval is [corrected - q(0.975) se, corrected - q(0.025) se]. Extras hold
several variants so that one paired run scores them all. J = 200, M = 100.

    python benchmarks/effects/variance_lab/boott.py DESIGN N EPS REPS      (from the repository root)
"""
import sys, json, math, numpy as np
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parents[1]))
import harness, ours
from privcausal import regression as R
from privcausal import outcome as O

J, M = 200, 100
STASH = {}
_orig_release = R.gformula_release
def stash_release(plan, carry, noisy, privacy):
    STASH['plan'], STASH['rel'] = plan, O.ArmStatistics.from_flat(noisy, carry['p'])
    STASH['h'] = carry['encoding'].outcome_halfwidth
    return _orig_release(plan, carry, noisy, privacy)
R.gformula_release = stash_release

def post(plan, batch_vectors, p, nu, g, inner):
    "The release's post-processing on a batch of statistics: f, corrected, se (plain V(1)), V(2) for simex."
    Jb = batch_vectors['gram'].shape[0]
    m = O.arm_models(O.ArmStatistics.from_vectors(batch_vectors['gram'], batch_vectors['cross'], batch_vectors['squares'], p), nu)
    f, var = O.gformula_effect(m, plan.estimand)
    sims = {k: batch_vectors[k][:, None, :] - g.normal(size=(Jb, inner, batch_vectors[k].shape[1])) * plan.sigma(k) for k in batch_vectors}
    ms = O.arm_models(O.ArmStatistics.from_vectors(*(sims[k].reshape(Jb * inner, -1) for k in ('gram', 'cross', 'squares')), p), nu)
    fs, _ = O.gformula_effect(ms, plan.estimand)
    fs = fs.reshape(Jb, inner)
    ok = (np.all(ms.min_eig >= 0, axis=-1) & (ms.n.min(-1) > 1)).reshape(Jb, inner)
    mean = np.array([fs[j][ok[j]].mean() if ok[j].sum() >= 20 else fs[j].mean() for j in range(Jb)])
    v1 = np.array([fs[j][ok[j]].var() if ok[j].sum() >= 20 else fs[j].var() for j in range(Jb)])
    return f, np.clip(2 * f - mean, -2, 2), var, v1

def pc_boot(X, t, y, decl, epsilon, delta, estimand, rng):
    row = ours.pc_gformula(X, t, y, decl, epsilon, delta, estimand, rng)
    plan, rel, h = STASH['plan'], STASH['rel'], STASH['h']
    nu = O.eigen_floor(plan.sigma('gram'), plan.d, plan.floor)
    g = np.random.default_rng(O.NOISE_SEED + 11)
    v = rel.vectors()
    f0 = O.gformula_effect(O.arm_models(rel, nu), plan.estimand)[0]
    corr0 = row['estimate'] / h
    se0 = row['extras']['std_error'] / h
    outer = {k: v[k][None, :] + g.normal(size=(J, v[k].size)) * plan.sigma(k) for k in ('gram', 'cross', 'squares')}
    fj, cj, varj, v1j = [], [], [], []
    for s in range(0, J, 50):
        a, b, c, d = post(plan, {k: outer[k][s:s + 50] for k in outer}, rel.p, nu, g, M)
        fj.append(a); cj.append(b); varj.append(c); v1j.append(d)
    cj, varj, v1j = map(np.concatenate, (cj, varj, v1j))
    tj = (cj - f0) / np.sqrt(varj + v1j)
    q_lo, q_hi = np.quantile(tj, [0.025, 0.975]); q_abs = np.quantile(np.abs(tj), 0.95)
    ex = row['extras']
    ex.update(bt_lo=h * (corr0 - q_hi * se0), bt_hi=h * (corr0 - q_lo * se0), bts_lo=h * (corr0 - q_abs * se0), bts_hi=h * (corr0 + q_abs * se0),
              q_lo=float(q_lo), q_hi=float(q_hi), q_abs=float(q_abs))
    return row

harness.register('pc_gf_lab', pc_boot)
if __name__ == '__main__':
    design, n, eps, reps = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    rows = harness.run(design, n, [eps], reps=reps, methods=['pc_gf_lab'], seed=0, out=f'/tmp/boott_{design}_{n}_{eps}.jsonl')
    for est in ('ATE', 'ATT'):
        rs = [r for r in rows if r['estimand'] == est and not r.get('error')]
        if not rs: print(rows[:1]); continue
        tr = rs[0]['truth']; x = [r['extras'] for r in rs]
        cov = lambda lo, hi: np.mean([a <= tr <= b for a, b in zip(lo, hi)])
        w = lambda lo, hi: np.median(np.array(hi) - np.array(lo))
        base = ([r['lo'] for r in rs], [r['hi'] for r in rs])
        bt = ([e['bt_lo'] for e in x], [e['bt_hi'] for e in x]); bts = ([e['bts_lo'] for e in x], [e['bts_hi'] for e in x])
        print(f"{design} {n} {eps} {est} R={len(rs)} release cov={cov(*base):.3f} w={w(*base):.4f} | boot-t cov={cov(*bt):.3f} w={w(*bt):.4f} | sym cov={cov(*bts):.3f} w={w(*bts):.4f} | med q=({np.median([e['q_lo'] for e in x]):.2f},{np.median([e['q_hi'] for e in x]):.2f}) |q|95={np.median([e['q_abs'] for e in x]):.2f}", flush=True)
