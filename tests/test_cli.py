"""The `privcausal` console script as a whole: one vocabulary, --json everywhere, the ledger file, dry runs, public levels."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from privcausal import mechanisms
from cli_call import call
from privcausal.release import KEYS

EXE = shutil.which('privcausal') or str(Path(sys.executable).parent / 'privcausal')


def cli(*args):
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=120)



@pytest.fixture(scope='module')
def csv(tmp_path_factory):
    "Binary outcome, binary treatment, two numeric covariates and one categorical with a rare level."
    rng = np.random.default_rng(0)
    n = 1200
    X = rng.normal(size=(n, 2)) / 2
    t = rng.binomial(1, expit(0.8 * X[:, 0] - 0.5))
    y = rng.binomial(1, expit(X.sum(1) + 0.7 * t - 0.2))
    g = rng.choice(['north', 'south', 'east'], n)
    df = pd.DataFrame(X, columns=['a', 'b']).assign(region=g, treat=t, y=y)
    p = tmp_path_factory.mktemp('cli') / 'd.csv'
    df.to_csv(p, index=False)
    return str(p), df


IPW = ('--outcome-bound', '1', '--covariate-bound', '2', '--propensity-bound', '0.1', '--delta', '1e-6')
ANM_BOUNDS = ('--x-bound', '2', '--y-bound', '2')


def test_help_and_version():
    r = cli('--help')
    assert r.returncode == 0 and 'ledger' in r.stdout and 'ipw' in r.stdout
    assert cli('--version').stdout.startswith('privcausal ')


@pytest.mark.parametrize('argv', [('--json', 'data', 'list'), ('data', 'list', '--json')])
def test_json_before_or_after_the_command(argv):
    r = cli(*argv)
    assert r.returncode == 0, r.stderr
    assert sorted(d['name'] for d in json.loads(r.stdout)['datasets']) == ['adult', 'ihdp', 'nsw', 'tuebingen']


@pytest.mark.parametrize('args, needle', [(('data', 'path', 'nope'), "got 'nope'"), (('data', 'fetch'), 'name'),
                                          ((), 'usage')])
def test_bad_input_exits_2_with_a_message(args, needle):
    r = cli(*args)
    assert r.returncode == 2 and needle in r.stderr


def test_covariates_are_required(csv):
    for cmd, extra in (('ipw', IPW), ('wate', ())):
        code, out, err = call(cmd, csv[0], '--treatment', 'treat', '--outcome', 'y', '--epsilon', '1', *extra)
        assert code == 2 and '--covariates' in err and out == ''


def test_shared_top_level_keys(csv):
    path = csv[0]
    docs = []
    for argv in (('ipw', path, '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b', '--epsilon', '1', *IPW),
                 ('wate', path, '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b', '--epsilon', '1',
                  '--sampler', 'exact', '--draws', '500'),
                 ('anm', path, '--x', 'a', '--y', 'b', '--epsilon', '1', *ANM_BOUNDS)):
        code, out, err = call(*argv, '--seed', '1', '--json')
        assert code == 0, err
        docs.append(json.loads(out))
    for d in docs: assert set(KEYS) <= set(d), set(KEYS) - set(d)
    assert docs[0]['ci'] and docs[1]['ci'] and docs[2]['ci'] is None
    assert [d['privacy']['noise_source'] for d in docs] == ['numpy-research'] * 3


def test_ledger_file_across_runs_refuses_overspend_before_any_noise(csv, tmp_path, monkeypatch):
    ledger = str(tmp_path / 'study.json')
    base = ('ipw', csv[0], '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b', *IPW, '--json')
    code, out, err = call(*base, '--epsilon', '0.6', '--ledger', ledger)
    assert code == 2 and '--budget' in err                                     # a new ledger needs its total
    code, out, err = call(*base, '--epsilon', '0.6', '--ledger', ledger, '--budget', '1,1e-5')
    assert code == 0, err
    draws = []
    for name in ('_laplace', '_gaussian'):
        for cls in (mechanisms.SecureNoise, mechanisms.ResearchNoise):
            orig = getattr(cls, name)
            monkeypatch.setattr(cls, name, lambda self, *a, _o=orig, **k: draws.append(1) or _o(self, *a, **k))
    code, out, err = call(*base, '--epsilon', '0.6', '--ledger', ledger)       # 0.6 + 0.6 > 1
    assert code == 2 and out == '' and 'exceeds the total' in err
    assert draws == []                                                         # nothing was drawn
    code, out, err = call('ledger', 'show', ledger, '--json')
    assert code == 0 and len(json.loads(out)['entries']) == 1
    assert json.loads(out)['spent'][0] == pytest.approx(0.6)
    code, out, err = call(*base, '--epsilon', '0.4', '--ledger', ledger)       # fits exactly
    assert code == 0, err
    assert call('ledger', 'show', ledger)[1].count('PP-IPW') >= 2


def test_budget_needs_a_ledger(csv):
    code, _, err = call('wate', csv[0], '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a', '--epsilon', '1',
                        '--budget', '1')
    assert code == 2 and '--ledger' in err


@pytest.mark.parametrize('argv', [
    ('ipw', '{p}', '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b', '--epsilon', '1', *IPW),
    ('wate', '{p}', '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b', '--epsilon', '1'),
    ('anm', '{p}', '--x', 'a', '--y', 'b', '--epsilon', '1', *ANM_BOUNDS)])
def test_dry_run_spends_nothing(csv, tmp_path, argv, monkeypatch):
    ledger = tmp_path / 'l.json'
    draws = []
    for cls in (mechanisms.SecureNoise, mechanisms.ResearchNoise):
        for name in ('_laplace', '_gaussian'):
            monkeypatch.setattr(cls, name, lambda self, *a, **k: draws.append(1))
    argv = [a.replace('{p}', csv[0]) for a in argv]
    code, out, err = call(*argv, '--dry-run', '--json', '--ledger', str(ledger), '--budget', '5,1e-5')
    assert code == 0, err
    d = json.loads(out)
    assert d['planned'] is True and d['noise_sd'] > 0 and 'ci_halfwidth' in d
    assert d['ledger']['affordable'] is True
    assert draws == [] and not ledger.exists()                                 # nothing drawn, nothing written


def test_declared_levels_and_no_leak_of_private_levels(csv, tmp_path):
    path, df = csv
    base = ('wate', None, '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,region', '--epsilon', '1',
            '--sampler', 'exact', '--draws', '300', '--seed', '2', '--json')
    code, out, err = call(*[path if a is None else a for a in base])
    assert code == 2 and '--categorical' in err and 'north' not in err        # undeclared text column: refused, no values
    levels = ('--categorical', 'region=north,south,east')
    code, out, err = call(*[path if a is None else a for a in base], *levels)
    assert code == 0, err
    cols = json.loads(out)['input']['covariates']
    rare = df.copy(); rare.loc[0, 'region'] = 'atlantis'                       # one record with a level nobody declared
    p2 = tmp_path / 'rare.csv'; rare.to_csv(p2, index=False)
    code, out2, err2 = call(*[str(p2) if a is None else a for a in base], *levels)
    assert code == 2 and 'region' in err2 and 'atlantis' not in err2 and out2 == ''
    code, out3, err3 = call(*[str(p2) if a is None else a for a in base], *levels, '--other', 'region=east')
    assert code == 0 and json.loads(out3)['input']['covariates'] == cols               # same shape as without the rare record
    assert 'atlantis' not in out3 + err3


def test_stray_string_in_numeric_column_is_refused_without_its_value(csv, tmp_path):
    df = csv[1].copy()
    df['a'] = df['a'].astype(object); df.loc[3, 'a'] = 'secret-7'
    p = tmp_path / 's.csv'; df.to_csv(p, index=False)
    code, out, err = call('wate', str(p), '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b', '--epsilon', '1')
    assert code == 2 and "'a'" in err and 'secret-7' not in err and out == ''


@pytest.mark.parametrize('argv,flag,python', [
    (('ipw', '{p}', '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b', '--epsilon', '0', *IPW), '--epsilon', None),
    (('ipw', '{p}', '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b', '--epsilon', '1',
      '--outcome-bound', '0.5', '--covariate-bound', '2', '--propensity-bound', '0.1', '--delta', '1e-6'),
     '--clip-outcomes', 'clip_outcomes'),
    (('wate', '{p}', '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a', '--epsilon', '1e-320'), '--epsilon', None),
    (('wate', '{p}', '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a', '--epsilon', '1', '--partitions', '100000'),
     '--partitions', 'n_partitions'),
    (('anm', '{p}', '--x', 'a', '--y', 'b', '--epsilon', '1e308', *ANM_BOUNDS), '--epsilon', None)])
def test_errors_name_flags_not_python_keywords(csv, argv, flag, python):
    code, out, err = call(*[a.replace('{p}', csv[0]) for a in argv])
    assert code == 2 and flag in err and out == '', err
    if python: assert python not in err, err


def test_parser_builds_only_the_command_it_runs():
    "Issue 17 item 4: `privcausal --help` builds no command's options (a fast start); the command named in argv gets all of its own."
    from privcausal.cli import build_parser
    leaves = lambda p: p._subparsers._group_actions[0].choices
    options = lambda parser: {o for a in parser._actions for o in a.option_strings} - {'-h', '--help', '--json'}
    assert all(not options(leaf) for leaf in leaves(build_parser(['--help'])).values())
    chosen = leaves(build_parser(['wate', 'data.csv']))
    assert options(chosen['wate']) == options(leaves(build_parser())['wate']) and '--epsilon' in options(chosen['wate'])
    assert not options(chosen['anm'])


def test_a_value_starting_with_a_dash_is_explained(tmp_path):
    "A column named -y (C5): argparse reads `--outcome -y` as a flag without its value; the message says how to write it, under --json too."
    data = tmp_path / 'd.csv'
    pd.DataFrame({'t': [0, 1] * 10, '-y': np.linspace(0, 1, 20)}).to_csv(data, index=False)
    code, _, err = call('effect', str(data), '--treatment', 't', '--outcome', '-y', '--epsilon', '1', '--delta', '1e-6')
    assert code == 2 and "a value that starts with '-' is written --outcome=VALUE" in err, err
    code, out, err = call('--json', 'effect', str(data), '--treatment', 't', '--outcome', '-y', '--epsilon', '1', '--delta', '1e-6')
    doc = json.loads(out or err)
    assert code == 2 and doc['flag'] == '--outcome' and '--outcome=VALUE' in doc['error'], (out, err)
    code, out, err = call('effect', str(data), '--treatment', 't', '--outcome=-y', '--outcome-bounds', '0:1', '--randomised',
                          '--epsilon', '1', '--delta', '1e-6', '--seed', '1')
    assert code == 0, err
