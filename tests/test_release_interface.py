"""One release interface (issue 10): every estimator's release passes the same test."""
import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from privcausal import anm, ipw
from privcausal import bayes_wate as wate
from privcausal import choice, doubly_robust, regression
from privcausal.release import KEYS, NoIntervalError, NotPrivate, PrivacyRecord, PrivateRelease, load


@pytest.fixture(scope='module')
def frame():
    rng = np.random.default_rng(7)
    n = 2000
    X = np.clip(rng.normal(size=(n, 3)) / 2, -1, 1)  # |x_j| <= 1, so ||x|| <= sqrt(3) < 2
    t = rng.binomial(1, expit(X[:, 0] - 0.8))
    y = rng.binomial(1, expit(X.sum(1) + 0.6 * t - 0.3))
    return pd.DataFrame(X, columns=['a', 'b', 'c']).assign(t=t, y=y)


def _releases(frame):
    rng = lambda: np.random.default_rng(3)
    common = dict(outcome='y', treatment='t', covariates=['a', 'b', 'c'])
    yield ipw.pp_ipw(frame, **common, epsilon=1.0, delta=1e-6, outcome_bound=1, covariate_bound=2, propensity_bounds=0.1,
                     rng=rng(), diagnostics=True)
    yield wate.wate(frame, **common, epsilon=1.0, rng=rng(), diagnostics=True)
    yield anm.anm_direction(frame['a'].to_numpy(), frame['b'].to_numpy(), 2, 2, epsilon=1.0, rng=rng(), diagnostics=True)
    bounds = dict(covariate_bounds={c: (-1, 1) for c in ('a', 'b', 'c')}, outcome_bounds=(0, 1), epsilon=1.0, delta=1e-6)
    yield regression.gformula(frame, **common, **bounds, rng=rng(), diagnostics=True)
    yield doubly_robust.aipw(frame, **common, **bounds, rng=rng(), diagnostics=True)
    yield choice.effect(frame, **common, **bounds, rng=rng(), diagnostics=True)
    yield regression.dim(frame, outcome='y', treatment='t', outcome_bounds=(0, 1), epsilon=1.0, delta=1e-6, rng=rng(), diagnostics=True)


def test_one_interface(frame, tmp_path):
    kinds = []
    for rel, diag in _releases(frame):
        kinds.append(type(rel).__name__)
        assert isinstance(rel, PrivateRelease) and isinstance(rel.privacy, PrivacyRecord)
        d = rel.to_dict()
        assert set(d) == set(KEYS), set(d) ^ set(KEYS)
        text = json.dumps(d, allow_nan=False)                              # strict JSON
        assert load(rel.save(tmp_path / f'{kinds[-1]}.json')).to_dict() == json.loads(text)
        assert d['privacy']['epsilon'] == 1.0 and d['privacy']['noise_source'] == 'numpy-research'
        assert d['privacy']['is_secure'] is False and d['privacy']['guarantee_holds'] is True
        frame_ = rel.to_frame()
        first = frame_.index[0]
        assert isinstance(rel.summary(), str) and rel.headline() in rel.summary()
        assert '<details>' in rel._repr_html_() and len(repr(rel)) < 300
        if d['estimate'] is not None:                                       # an effect: estimate and interval
            assert first == f'{rel.estimand} (estimate)' and frame_.iloc[0]['value'] == rel.estimate
            lo, hi = rel.conf_int(0.05)
            lo10, hi10 = rel.conf_int(0.1)
            assert lo <= lo10 <= rel.estimate <= hi10 <= hi and [lo, hi] == d['ci']
            assert set(d['intervals']) == {'0.01', '0.05', '0.1'}
        else:                                                               # a decision: no interval
            assert first == 'direction' and d['ci'] is None
            with pytest.raises(NoIntervalError): rel.conf_int()
        assert isinstance(diag, NotPrivate) and repr(diag).startswith(f'{type(diag).__name__}[NOT PRIVATE]')
        assert diag.to_dict()['NOT_PRIVATE'] is True
    assert kinds == ['IPWRelease', 'WATEResult', 'ANMResult'] + ['EffectRelease'] * 4


def test_no_module_imports_a_private_name_of_another():
    import ast
    import pathlib
    import privcausal
    root = pathlib.Path(privcausal.__file__).parent
    bad = []
    for path in root.glob('*.py'):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or '').startswith(('privcausal', '')) and node.level <= 1:
                mod = (node.module or '')
                if node.level == 0 and not mod.startswith('privcausal'): continue
                bad += [f'{path.name}: from {mod} import {a.name}' for a in node.names if a.name.startswith('_') and not a.name.startswith('__')]
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id.startswith('_') \
                    and node.attr.startswith('_') and not node.attr.startswith('__') and path.name == 'cli.py':
                bad.append(f'{path.name}: {node.value.id}.{node.attr}')
    assert not bad, bad


def test_saved_release_pvalue(frame, tmp_path):
    "A saved effect release gives the p-value the release gave, from its saved numbers; the others say why not."
    rng = lambda: np.random.default_rng(3)
    ht = ipw.pp_ipw(frame, outcome='y', treatment='t', covariates=['a', 'b', 'c'], epsilon=1.0, delta=1e-6, outcome_bound=1,
                    covariate_bound=2, propensity_bounds=0.1, estimator='ht', rng=rng())
    checked, biased = [], False
    for rel in [r for r, _ in _releases(frame)] + [ht]:
        d = rel.to_dict()
        kind = f"{d['type']} {d['method']} {d['settings'].get('estimator', '')}".strip()
        saved = load(rel.save(tmp_path / 'r.json'))
        if d['type'] == 'EffectRelease' or kind.endswith(' ht'):
            assert np.isclose(saved.pvalue(), rel.pvalue(), rtol=1e-12, atol=1e-15), (kind, saved.pvalue(), rel.pvalue())
            biased |= bool(getattr(rel, 'bias_bound', 0))
            checked.append(kind)
        elif d['estimate'] is None:
            with pytest.raises(ValueError, match='has no estimate'): saved.pvalue()
        else:
            with pytest.raises(ValueError, match='not computed from its estimate and standard error alone'): saved.pvalue()
    assert len(checked) == 5 and biased, checked        # G-formula (with its bias bound), AIPW, effect, dim, PP-IPW (HT)


def test_ledger_entries_name_the_treatment_and_the_outcome(frame):
    "A data steward reads the ledger: each effect's entry says what it was of (trial 2026-11-27 #8); arrays add nothing."
    from privcausal.accounting import PrivacyLedger
    common = dict(outcome='y', treatment='t', covariates=['a', 'b', 'c'], rng=np.random.default_rng(3))
    bounds = dict(covariate_bounds={c: (-1, 1) for c in ('a', 'b', 'c')}, outcome_bounds=(0, 1), epsilon=1.0, delta=1e-6)
    led = PrivacyLedger(20.0, 1e-4)
    ipw.pp_ipw(frame, **common, epsilon=1.0, delta=1e-6, outcome_bound=1, covariate_bound=2, propensity_bounds=0.1, ledger=led)
    wate.wate(frame, **common, epsilon=1.0, ledger=led)
    regression.gformula(frame, **common, **bounds, ledger=led)
    doubly_robust.aipw(frame, **common, **bounds, estimand='ATT', ledger=led)
    choice.effect(frame, **common, **bounds, ledger=led)
    regression.dim(frame, outcome='y', treatment='t', outcome_bounds=(0, 1), epsilon=1.0, delta=1e-6, ledger=led,
                   rng=np.random.default_rng(3))
    assert [e.label for e in led.entries] == [
        'PP-IPW ATE of t on y', 'WATE ATE of t on y', 'G-formula ATE of t on y', 'AIPW ATT of t on y',
        f'{led.entries[4].label.split(" ATE")[0]} ATE of t on y', 'Difference in means ATE of t on y']
    X = frame[['a', 'b', 'c']].to_numpy()
    ipw.pp_ipw(None, X=X, treatment=frame.t.to_numpy(), outcome=frame.y.to_numpy(), epsilon=1.0, delta=1e-6, outcome_bound=1,
               covariate_bound=2, propensity_bounds=0.1, ledger=led, rng=np.random.default_rng(3))
    assert led.entries[-1].label == 'PP-IPW ATE'
    from privcausal.data import as_causal_data  # a CausalData's columns have no names: the names passed are not its own (audit 18 F1)
    cd = as_causal_data(frame, outcome='y', treatment='t', covariates=['a', 'b', 'c'])
    ipw.pp_ipw(cd, treatment='other', outcome='y', epsilon=1.0, delta=1e-6, outcome_bound=1, covariate_bound=2,
               propensity_bounds=0.1, ledger=led, rng=np.random.default_rng(3))
    assert led.entries[-1].label == 'PP-IPW ATE'
    numbered = frame.rename(columns={'t': 0, 'y': 1})  # integer column names name the release too (audit 18 F2)
    regression.gformula(numbered, outcome=1, treatment=0, covariates=['a', 'b', 'c'], **bounds, ledger=led,
                        rng=np.random.default_rng(3))
    assert led.entries[-1].label == 'G-formula ATE of 0 on 1'
