"""The `privcausal wate` subcommand: flags, JSON contract, declared levels, NOT PRIVATE marking, errors."""
import json

import numpy as np
import pandas as pd
import pytest

from privcausal.cli import main, run
from privcausal.release import KEYS
from privcausal.bayes_wate import simulate_wate


@pytest.fixture(scope='module')
def csv(tmp_path_factory):
    s = simulate_wate(3000, eta=2, gamma=1, rng=np.random.default_rng(0))
    df = pd.DataFrame(s['X'], columns=['x1', 'x2', 'x3', 'x4']).assign(z=s['z'].astype(int), y=s['y'].astype(int))
    df['group'] = np.where(df.x1 > 0.5, 'high', np.where(df.x1 < -0.5, 'low', 'mid'))  # a categorical covariate
    path = tmp_path_factory.mktemp('wate') / 'd.csv'
    df.to_csv(path, index=False)
    return str(path)


def _setting(d, name):
    "A public setting wherever the release keeps it (settings or the privacy record's public inputs)."
    return d['settings'].get(name, d['privacy']['public'].get(name))


def test_json_contract_and_declared_levels(csv, capsys):
    res = run(['--json', 'wate', csv, '--treatment', 'z', '--outcome', 'y', '--covariates', 'x1,x2,x3,x4,group',
               '--categorical', 'group=mid,low,high', '--epsilon', '1', '--estimand', 'ATC', '--partitions', '30',
               '--propensity-bound', '0.1', '--variance-share', '0.4', '--variance', 'paper', '--sampler', 'exact',
               '--draws', '800', '--seed', '3'])
    out = json.loads(capsys.readouterr().out)
    assert out == res
    assert set(KEYS) | {'input'} == set(res)
    assert res['estimand'] == 'ATC' and len(res['ci']) == 2 and res['ci'][0] < res['estimate'] < res['ci'][1]
    assert res['input']['covariates'] == ['x1', 'x2', 'x3', 'x4', 'group=low', 'group=high']   # declared order
    assert (_setting(res, 'n_partitions'), _setting(res, 'truncation'), _setting(res, 'variance_share')) == (30, 0.1, 0.4)
    assert res['privacy']['noise_source'] == 'numpy-research' and res['privacy']['is_secure'] is False
    assert res['privacy']['epsilon'] == 1.0 and res['privacy']['delta'] == 0
    assert 'non_private' not in res


def test_defaults_follow_n_and_d_and_secure_noise(csv, capsys):
    res = run(['--json', 'wate', csv, '--treatment', 'z', '--outcome', 'y', '--covariates', 'x1,x2', '--epsilon', '1',
               '--draws', '500', '--non-private'])
    cap = capsys.readouterr()
    assert res['privacy']['noise_source'] == 'opendp' and res['privacy']['is_secure'] is True
    assert 'rule' in str(_setting(res, 'n_partitions_rule'))
    np_ = res['non_private']
    assert np_['warning'] == 'NOT PRIVATE' and len(np_['ci']) == 2 and 'NOT PRIVATE' in cap.err


def test_dry_run_reports_the_plan(csv, capsys):
    res = run(['--json', 'wate', csv, '--treatment', 'z', '--outcome', 'y', '--covariates', 'x1,x2,x3,x4',
               '--epsilon', '0.5', '--dry-run'])
    assert res['planned'] is True and res['noise_sd'] > 0 and res['ci_halfwidth'] > 0 and res['n_partitions'] >= 1


@pytest.mark.parametrize('extra,msg', [
    (['--epsilon', '0'], '--epsilon must be a finite number > 0'),
    (['--epsilon', '1', '--partitions', '751'], '--partitions (M) must be an integer in [1, 750]'),
    (['--epsilon', '1', '--propensity-bound', '0.5'], '--propensity-bound (a) must lie in (0, 1/2)'),
    (['--epsilon', '1', '--variance-share', '1'], '--variance-share (pi) must lie in (0, 1)'),
    (['--epsilon', '1', '--draws', '10000000000'], '--draws'),
    (['--epsilon', '1', '--covariates', 'x1,nope'], "--covariates: ['nope'] are not columns"),
    (['--epsilon', '1', '--covariates', 'x1,group'], '--categorical'),
    (['--epsilon', '1', '--delta', '1e-6'], 'pure epsilon-DP'),
])
def test_errors_exit_2(csv, capsys, extra, msg):
    argv = ['wate', csv, '--treatment', 'z', '--outcome', 'y']
    if '--covariates' not in extra: argv += ['--covariates', 'x1,x2']
    with pytest.raises(SystemExit) as e:
        main(argv + extra)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert msg in err, err


def test_non_binary_outcome_and_unknown_column(csv, capsys):
    for argv, msg in ((['--outcome', 'x1'], 'outcome must be binary'), (['--outcome', 'income'], "--outcome 'income' is not a column")):
        with pytest.raises(SystemExit):
            main(['wate', csv, '--treatment', 'z', '--covariates', 'x2', '--epsilon', '1', *argv])
        err = capsys.readouterr().err
        assert msg in err, err


def test_flags(capsys):
    with pytest.raises(SystemExit):
        run(['wate', '--help'])
    text = capsys.readouterr().out
    for flag in ('--treatment', '--outcome', '--covariates', '--categorical', '--other', '--epsilon', '--estimand',
                 '--partitions', '--propensity-bound', '--variance-share', '--variance', '--sampler', '--draws', '--seed',
                 '--ledger', '--budget', '--dry-run', '--non-private', '--json'):
        assert flag in text, flag


def test_options_are_the_plans_flagged_fields():
    "`privcausal wate`'s settings are generated from WATEPlan: exactly its flagged fields, named by their flags in errors."
    import dataclasses
    from privcausal.bayes_wate import WATEPlan
    from privcausal.cli import _wate_flags, build_parser
    from privcausal.commands import SHARED
    from privcausal.method import field_flag
    parser = build_parser()._subparsers._group_actions[0].choices['wate']
    fields = parser.get_default('_plan_fields')
    flagged = {f.name: field_flag(f) for f in dataclasses.fields(WATEPlan)
               if f.init and f.metadata.get('cli', True) and f.name not in SHARED}
    assert fields == flagged
    own = {'--treatment', '--outcome', '--covariates', '--categorical', '--other', '--dask', '--n-rows', '--estimand',
           '--covariate-bounds', '--epsilon', '--delta', '--seed', '--ledger', '--budget', '--dry-run', '--non-private',
           '--json', '-h'}
    options = {a.option_strings[0] for a in parser._actions if a.option_strings}
    assert options - own == set(flagged.values())
    assert {k: _wate_flags()[k] for k in flagged} == flagged


def test_json_error_names_the_flag(csv, capsys):
    with pytest.raises(SystemExit) as e:
        main(['--json', 'wate', csv, '--treatment', 'z', '--outcome', 'y', '--covariates', 'x1,x2', '--epsilon', '1',
              '--partitions', '751'])
    assert e.value.code == 2
    doc = json.loads(capsys.readouterr().err)
    assert doc['flag'] == '--partitions' and '--partitions (M) must be an integer in [1, 750]' in doc['error']


def test_ledger_refusal_keeps_the_cost_printed(csv, tmp_path, capsys):
    "An error naming flags leaves a printed PrivacyCost(...) as it is (its field names are not flags)."
    from privcausal.cli import _in_flags, _wate_flags
    e = _in_flags(ValueError('ledger refuses PrivacyCost(epsilon=2.5, delta=0, WATE ATE): epsilon: spending 2.5'), _wate_flags())
    assert str(e) == 'ledger refuses PrivacyCost(epsilon=2.5, delta=0, WATE ATE): --epsilon: spending 2.5'
    ledger = str(tmp_path / 'l.json')
    argv = ['wate', csv, '--treatment', 'z', '--outcome', 'y', '--covariates', 'x1,x2', '--seed', '1', '--ledger', ledger]
    run(argv + ['--epsilon', '1', '--budget', '1.5', '--draws', '200'])
    with pytest.raises(SystemExit) as ex: main(argv + ['--epsilon', '1'])
    assert ex.value.code == 2 and 'PrivacyCost(epsilon=1, delta=0' in capsys.readouterr().err


def test_effect_method_wate_needs_no_delta(tmp_path):
    """Trial 2026-11-28: `effect --method wate` required --delta, which WATE never spends (pure epsilon); every other method
    spends it, and without it is refused before DATA is read. The same in Python."""
    from cli_call import call
    from privcausal.accounting import PrivacyLedger
    from privcausal.choice import effect
    rng = np.random.default_rng(0)
    X = rng.normal(size=(800, 2))
    t = rng.binomial(1, 1 / (1 + np.exp(-X[:, 0])))
    y = rng.binomial(1, 1 / (1 + np.exp(-(X.sum(1) + t))))
    frame = pd.DataFrame(X, columns=['a', 'b']).assign(t=t, y=y)
    data = tmp_path / 'bin.csv'
    frame.to_csv(data, index=False)
    argv = ['effect', str(data), '--treatment', 't', '--outcome', 'y', '--covariates', 'a,b', '--covariate-bounds',
            'a=-5:5,b=-5:5', '--outcome-type', 'binary', '--epsilon', '1', '--seed', '1']
    ledger = tmp_path / 'l.json'
    code, out, err = call(*argv, '--method', 'wate', '--ledger', str(ledger), '--budget', '2', '--json')
    assert code == 0 and json.loads(out)['method'] == 'WATE', err
    assert PrivacyLedger.load(ledger).spent == pytest.approx((1.0, 0.0))
    code, out, err = call(*argv, '--method', 'wate', '--dry-run', '--json')
    assert code == 0 and json.loads(out)['choice']['method'] == 'wate', err
    for method in ('auto', 'gformula', 'aipw', 'ipw'):
        code, _, err = call(*[a if a != str(data) else str(tmp_path / 'missing.csv') for a in argv], '--method', method)
        assert code == 2 and '--delta is required' in err and (method == 'auto' or f'--method {method}' in err), err  # before DATA (missing) is opened
    kw = dict(outcome='y', treatment='t', covariates=['a', 'b'], covariate_bounds={'a': (-5, 5), 'b': (-5, 5)},
              outcome_type='binary', epsilon=1.0, rng=np.random.default_rng(1))
    assert effect(frame, method='wate', **kw).method == 'WATE'
    for bad in (5, -1, float('nan')):  # a given delta is checked, as a dry run checks it (audit 21 F6); 0 is taken, as wate takes it
        with pytest.raises((ValueError, TypeError), match='delta'):
            effect(frame, method='wate', delta=bad, **kw)
        code, _, err = call(*argv, '--method', 'wate', f'--delta={bad}')
        assert code == 2 and '--delta must lie in [0, 1)' in err, err  # (wate takes 0)
    code, _, err = call(*argv, '--method', 'wate', '--delta=0')
    assert code == 0 and effect(frame, method='wate', delta=0, **{**kw, 'rng': np.random.default_rng(1)}).method == 'WATE', err
    book = PrivacyLedger(epsilon=5.0, delta=1e-5)
    with pytest.raises(TypeError, match="effect\\(\\) needs delta for method='auto'"):
        effect(frame, ledger=book, **kw)
    assert book.entries == ()
