"""privcausal's own effect estimators registered in the harness (same signature as the rivals).

    import harness, ours        # importing ours registers pc_gformula, pc_aipw (and pc_effect once it exists)
"""
import numpy as np

import harness
from privcausal.doubly_robust import aipw
from privcausal.regression import gformula


def _row(r, decl):
    "The harness row of an EffectRelease: estimate, 95% interval, planned total sd, whole-range flag."
    lo, hi = r.conf_int()
    extras = dict(sampling_sd=r.sampling_sd, noise_sd=r.noise_sd, std_error=r.std_error, planned_noise_sd=r.plan.noise_sd,
                  planned_sampling_sd=r.plan.sampling_sd, method=r.method)
    if getattr(r, 'choice', ''): extras['choice'] = r.choice
    return dict(estimate=r.estimate, lo=lo, hi=hi, planned_sd=r.plan.total_sd, whole_range=r.whole_range, extras=extras)


def _call(fn, X, t, y, decl, epsilon, delta, estimand, rng, **kw):
    frame = X.assign(_t=t, _y=y)
    bounds = {c: b for c, b in decl.covariate_bounds.items() if tuple(b) != (0, 1)}
    r = fn(frame, outcome='_y', treatment='_t', covariates=list(X.columns), covariate_bounds=bounds,
           outcome_bounds=decl.outcome_bounds, epsilon=epsilon, delta=delta, estimand=estimand, rng=rng, clip=True, **kw)
    return _row(r, decl)


def pc_gformula(X, t, y, decl, epsilon, delta, estimand, rng):
    "privcausal.gformula with its defaults."
    return _call(gformula, X, t, y, decl, epsilon, delta, estimand, rng)


def pc_aipw(X, t, y, decl, epsilon, delta, estimand, rng):
    "privcausal.aipw with its defaults."
    return _call(aipw, X, t, y, decl, epsilon, delta, estimand, rng)


OURS = {'pc_gformula': pc_gformula, 'pc_aipw': pc_aipw}
try:  # effect(method='auto'), once the library has it
    from privcausal.choice import effect as _effect

    def pc_effect(X, t, y, decl, epsilon, delta, estimand, rng):
        "privcausal.effect(method='auto') with its defaults (observational: randomised=False)."
        return _call(_effect, X, t, y, decl, epsilon, delta, estimand, rng, outcome_type=decl.outcome)
    OURS['pc_effect'] = pc_effect
except ImportError:
    pass

for name, fn in OURS.items(): harness.register(name, fn)
