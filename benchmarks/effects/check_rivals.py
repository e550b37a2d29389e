"""Checks of the rivals against references (non-private; run once, prints a table):

    python check_rivals.py

1. rivals.nonprivate_aipw (ATE) against statsmodels' TreatmentEffect(OLS outcome model on the covariates, fitted per arm inside; logistic
   propensity).aipw(): the same estimator (per-arm OLS, unpenalised logit, no cross-fitting), so the estimates agree
   up to the optimiser's tolerance; the standard errors agree up to statsmodels' GMM finite-sample details.
2. The DP rivals at epsilon = 1e6 (noise negligible) against their non-private targets: DP difference in means vs the
   plain difference of means; diffprivlib vs OLS of Y on (1, T, X) (on clipped data).
"""
import warnings

import numpy as np
import statsmodels.api as sm
from statsmodels.treatment.treatment_effects import TreatmentEffect

import rivals as R
from designs import DESIGNS

warnings.filterwarnings('ignore')


def main():
    for name in ('imbalanced', 'mixed', 'strong', 'exp3'):
        d = DESIGNS[name]
        X, t, y = d.draw(20_000, np.random.default_rng(11))
        Z = R.standard_scale(X, d)
        exog = sm.add_constant(Z)
        res = TreatmentEffect(sm.OLS(y, exog), t, results_select=sm.Logit(t, exog).fit(disp=0),
                              _cov_type='HC0').aipw()
        frame = res.summary_frame(); sm_ate, sm_se = float(frame.iloc[0, 0]), float(frame.iloc[0, 1])
        ours = R.nonprivate_aipw(X, t, y, d, 1.0, 1e-6, 'ATE', None)
        dim = R.dp_diff_means(X, t, y, d, 1e6, 0, 'ATE', np.random.default_rng(0))['estimate']
        lo, hi = d.outcome_bounds
        yc = np.clip(y, lo, hi)
        F = np.c_[np.ones(len(y)), t, np.clip(X.to_numpy(), *d.lows_highs())]
        ols = np.linalg.lstsq(F, yc, rcond=None)[0][1]
        dpl = R.diffprivlib_lr(X, t, y, d, 1e6, 0, 'ATE', np.random.default_rng(0))['estimate']
        print(f'{name:11s} AIPW ours {ours["estimate"]:.5f} (se {ours["planned_sd"]:.5f})  statsmodels {sm_ate:.5f} '
              f'(se {sm_se:.5f}) | DiM eps=1e6 {dim:.5f} plain {yc[t == 1].mean() - yc[t == 0].mean():.5f} | '
              f'diffprivlib eps=1e6 {dpl:.5f} OLS {ols:.5f}')


if __name__ == '__main__':
    main()
