# Lab (not private): does a sandwich sampling variance fix the G-formula's coverage? Oracle: exact per-row V_a with exact models.
import sys, json, math, dataclasses, numpy as np
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
import privcausal.regression as R
from privcausal.outcome import ArmStatistics, arm_models, gformula_effect, eigen_floor
orig_s, orig_r = R.gformula_statistics, R.gformula_release
MODE = sys.argv[1]  # 'homo' or 'oracle'
def stats(plan, cols, noise):
    s = orig_s(plan, cols, noise)
    enc = s.carry['encoding']; df = cols.rows.frame if hasattr(cols.rows, 'frame') else None
    df = cols.rows._frame if df is None else df
    Z = enc.z(df[list(cols.covariates)].to_numpy(float)); u = enc.u(df[cols.outcome].to_numpy(float)); t = df[cols.treatment].to_numpy().astype(bool)
    st = ArmStatistics.from_flat(s.vector, s.carry['p']); m = arm_models(st, 0.0)
    g = 1 if plan.estimand == 'ATT' else None
    target = m.all_mean if plan.estimand == 'ATE' else m.mean[1 if plan.estimand == 'ATT' else 0]
    V = 0.0
    for a, arm in ((0, ~t), (1, t)):
        Za, ua = Z[arm], u[arm]
        r = ua - m.predict(Za)[:, a]
        c = 1 / m.n[a] + (Za - m.mean[a]) @ (m.inv[a] @ (target - m.mean[a]))
        V += float(np.sum(c ** 2 * r ** 2))
    s.carry['V'] = V
    return s
def rel(plan, carry, noisy, privacy):
    r = orig_r(plan, carry, noisy, privacy)
    if MODE == 'homo': return r
    m = arm_models(ArmStatistics.from_flat(noisy, carry['p']), eigen_floor(plan.sigma('gram'), plan.d, plan.floor))
    est, var = gformula_effect(m, plan.estimand)
    # replace the per-arm homoskedastic part by V; keep the between term
    homo = sum(m.sigma2[a] * (1 / m.n[a] + ((m.all_mean if plan.estimand == 'ATE' else m.mean[1 if plan.estimand == 'ATT' else 0]) - m.mean[a]) @ m.inv[a] @ ((m.all_mean if plan.estimand == 'ATE' else m.mean[1 if plan.estimand == 'ATT' else 0]) - m.mean[a])) for a in (0, 1))
    var2 = float(var) - homo + carry['V']
    h = carry['encoding'].outcome_halfwidth
    samp = h * math.sqrt(max(var2, 0))
    return dataclasses.replace(r, sampling_sd=samp, std_error=math.hypot(samp, r.noise_sd))
R.gformula_statistics, R.gformula_release = stats, rel
import runlib
cells = json.loads(sys.argv[2]) if len(sys.argv) > 2 else [['exp3', 20000, 5.0, 'ATE'], ['exp3', 20000, 50.0, 'ATE'], ['mixed', 20000, 50.0, 'ATE'], ['imb', 20000, 50.0, 'ATE']]
for des, n, eps, est in cells:
    r = runlib.cell('gformula', des, n, eps, est, int(sys.argv[3]) if len(sys.argv) > 3 else 150)
    print(MODE, json.dumps({k: r[k] for k in ('des', 'n', 'eps', 'est', 'bias', 'sd', 'rmse', 'cov', 'rep_sd')}), flush=True)
