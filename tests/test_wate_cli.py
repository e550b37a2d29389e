"""The `privcausal wate` subcommand: flags, JSON contract, dummy coding, NOT PRIVATE marking, errors."""
import json
import numpy as np
import pandas as pd
import pytest

from privcausal.cli import main, run
from privcausal.wate import simulate_wate

REQUIRED = ('method', 'estimand', 'estimate', 'ci', 'epsilon', 'delta', 'n', 'partitions', 'truncation', 'variance_share',
            'noise_scale_tau', 'noise_scale_variance', 'prior_variance_upper', 'released', 'sampler', 'noise_source')


@pytest.fixture(scope='module')
def csv(tmp_path_factory):
    s = simulate_wate(3000, eta=2, gamma=1, rng=np.random.default_rng(0))
    df = pd.DataFrame(s['X'], columns=['x1', 'x2', 'x3', 'x4']).assign(z=s['z'].astype(int), y=s['y'].astype(int))
    df['group'] = np.where(df.x1 > 0.5, 'high', np.where(df.x1 < -0.5, 'low', 'mid'))  # a categorical covariate
    path = tmp_path_factory.mktemp('wate') / 'd.csv'
    df.to_csv(path, index=False)
    return str(path)


def test_json_contract_and_dummy_coding(csv, capsys):
    res = run(['--json', 'wate', csv, '--treatment', 'z', '--outcome', 'y', '--covariates', 'x1,x2,x3,x4,group',
               '--epsilon', '1', '--estimand', 'ATC', '--partitions', '30', '--truncation', '0.1', '--variance-share', '0.4',
               '--variance', 'mean', '--sampler', 'exact', '--draws', '800', '--seed', '3'])
    out = json.loads(capsys.readouterr().out)
    assert out == res
    for k in REQUIRED: assert k in res, k
    assert res['estimand'] == 'ATC' and res['partitions'] == 30 and res['truncation'] == 0.1 and res['variance_share'] == 0.4
    assert res['variance_mode'] == 'mean' and res['sampler'] == 'exact' and res['draws'] == 800
    assert len(res['ci']) == 2 and res['ci'][0] < res['estimate'] < res['ci'][1]
    assert set(res['released']) == {'tau', 'variance'}
    assert res['noise_source'] == 'numpy-research' and res['is_secure'] is False
    assert {'group=low', 'group=mid'} <= set(res['covariates']) and 'group' not in res['covariates']  # dummy-coded
    assert res['epsilon'] == 1.0 and res['epsilon_tau'] == pytest.approx(0.6) and res['epsilon_variance'] == pytest.approx(0.4)
    assert res['noise_scale_tau'] == pytest.approx(2 / (30 * 1.0 * 0.6))
    assert 'non_private' not in res


def test_default_is_secure_emcee_and_non_private_is_marked(csv, capsys):
    res = run(['--json', 'wate', csv, '--treatment', 'z', '--outcome', 'y', '--epsilon', '1', '--partitions', '20',
               '--draws', '500', '--non-private'])
    cap = capsys.readouterr()
    assert res['noise_source'] == 'opendp' and res['is_secure'] is True and res['sampler'] == 'emcee'
    np_ = res['non_private']
    assert np_['warning'] == 'NOT PRIVATE' and len(np_['ci']) == 2 and np_['variance'] > 0
    assert 'NOT PRIVATE' in cap.err
    assert 'mcmc' in res and 0 < res['mcmc']['acceptance_fraction'] < 1


@pytest.mark.parametrize('extra,msg', [
    (['--epsilon', '0'], 'epsilon must be a finite number > 0'),
    (['--epsilon', '1', '--partitions', '751'], 'n_partitions (M) must be an integer in [1, 750]'),
    (['--epsilon', '1', '--truncation', '0.5'], 'truncation (a) must lie in (0, 1/2)'),
    (['--epsilon', '1', '--variance-share', '1'], 'variance_share (pi) must lie in (0, 1)'),
    (['--epsilon', '1', '--covariates', 'x1,nope'], "--covariates ['nope'] are not columns"),
])
def test_errors_exit_2(csv, capsys, extra, msg):
    with pytest.raises(SystemExit) as e:
        main(['wate', csv, '--treatment', 'z', '--outcome', 'y', *extra])
    assert e.value.code == 2
    assert msg in capsys.readouterr().err


def test_non_binary_outcome_and_unknown_column(csv, capsys):
    for argv, msg in ((['--outcome', 'x1'], 'outcome must be binary'), (['--outcome', 'income'], "--outcome 'income' is not a column")):
        with pytest.raises(SystemExit):
            main(['wate', csv, '--treatment', 'z', '--epsilon', '1', *argv])
        assert msg in capsys.readouterr().err


def test_flags_are_the_issues(capsys):
    with pytest.raises(SystemExit):
        run(['wate', '--help'])
    text = capsys.readouterr().out
    for flag in ('--treatment', '--outcome', '--covariates', '--epsilon', '--estimand', '--partitions', '--truncation',
                 '--variance-share', '--variance', '--sampler', '--draws', '--seed', '--non-private', '--json'):
        assert flag in text, flag
