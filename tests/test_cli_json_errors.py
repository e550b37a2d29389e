"""Issue 17: with --json anywhere on the command line, an error is one JSON document on standard error (standard output
stays empty, as for every error), {"error": MESSAGE, "flag": FIRST --FLAG NAMED or null}, with exit status 2 --
argparse's own errors too; warnings of the failed run go inside it. Without --json the text error is unchanged.
Run through the console script, as a pipeline would."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXE = str(Path(sys.executable).parent / 'privcausal')
if not Path(EXE).exists(): EXE = shutil.which('privcausal')


def cli(*args):
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(ROOT), *filter(None, [os.environ.get('PYTHONPATH')])])}
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture(scope='module')
def csv(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 400
    X = rng.uniform(-1, 1, (n, 2))
    t = rng.binomial(1, 0.4, n)
    y = rng.binomial(1, 0.3 + 0.2 * t)
    path = tmp_path_factory.mktemp('json_errors') / 'd.csv'
    pd.DataFrame(X, columns=['a', 'b']).assign(t=t, y=y).to_csv(path, index=False)
    return str(path)


def _json_error(res):
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert res.stdout == ''
    doc = json.loads(res.stderr)  # exactly one JSON document, nothing else on standard error
    assert set(doc) == {'error', 'flag'} and isinstance(doc['error'], str) and doc['error']
    return doc


IPW = ['ipw', '--treatment', 't', '--outcome', 'y', '--covariates', 'a,b', '--delta', '1e-6', '--outcome-bound', '1',
       '--covariate-bound', '2', '--propensity-bound', '0.1']


@pytest.mark.parametrize('where', ['first', 'last'])
def test_library_error_names_its_flag(csv, where):
    argv = [*IPW[:1], csv, *IPW[1:], '--epsilon', '0']
    doc = _json_error(cli(*(['--json', *argv] if where == 'first' else [*argv, '--json'])))
    assert doc['flag'] == '--epsilon' and '--epsilon' in doc['error'], doc


@pytest.mark.parametrize('argv, flag, said', [
    (['ipw', 'DATA', '--no-such-flag'], '--treatment', 'the following arguments are required: --treatment'),
    ([*IPW[:1], 'DATA', *IPW[1:], '--epsilon', '1', '--no-such-flag'], '--no-such-flag', 'unrecognized arguments'),
    (['ipw', 'DATA', '--treatment', 't', '--outcome', 'y', '--covariates', 'a', '--epsilon', 'one', '--delta', '1e-6'],
     '--epsilon', 'invalid float value'),                                                  # malformed value
    (['wate', 'DATA', '--treatment', 't', '--outcome', 'y'], '--covariates', 'required'),   # missing required flags
    (['ipw', 'DATA', '--treatment', 't', '--outcome', 'y', '--covariates', 'a', '--epsilon', '1', '--delta', '1e-6',
      '--estimand', 'ATX'], '--estimand', 'invalid choice'),
    (['wate', 'DATA', '--treatment', 't', '--outcome', 'y', '--covariates', 'a,nope', '--epsilon', '1'], '--covariates', 'nope'),
    (['effect', 'DATA', '--treatment', 't', '--outcome', 'y', '--covariates', 'a,b', '--covariate-bounds', 'a=-1:1,b=-1:1',
      '--outcome-bounds', '0:1', '--epsilon', '1', '--delta', '1e-6', '--floor', '-1'], '--floor', '--floor'),
    (['data', 'path', 'no-such-data'], None, 'no-such-data'),                                  # names no flag
    (['data'], None, 'choose an action of data'),
    ([], None, 'choose a command'),
])
def test_json_errors(csv, argv, flag, said):
    argv = [csv if a == 'DATA' else a for a in argv]
    doc = _json_error(cli(*argv, '--json'))
    assert doc['flag'] == flag and said in doc['error'], doc
    if flag is not None: assert flag in doc['error']


def test_json_error_is_the_only_output(csv):
    res = cli('--json', 'ipw', csv, '--no-such-flag')
    assert res.returncode == 2 and res.stdout == '' and 'usage:' not in res.stderr and json.loads(res.stderr)


def test_warnings_of_a_failed_run_go_inside_the_document(capsys):
    "White-box: a command that warns (through the CLI's warning path and through Python's) and then fails."
    import warnings
    from privcausal import cli as c
    def failing(args):
        c._warn('--clip-rows: rows beyond the bound are clipped (announced)')
        warnings.warn('a library warning', UserWarning)
        raise ValueError('epsilon must be a finite number > 0, got 0.0')
    c._COMMANDS[('failing-test', None)] = ('a test command', lambda p: None, failing)
    try:
        with pytest.raises(SystemExit) as e: c.main(['failing-test', '--json'])
        assert e.value.code == 2
        out, err = capsys.readouterr()
        doc = json.loads(err)
        assert out == '' and doc == {'error': '--epsilon must be a finite number > 0, got 0.0', 'flag': '--epsilon',
                                     'warnings': ['--clip-rows: rows beyond the bound are clipped (announced)', 'a library warning']}
        with pytest.raises(SystemExit), pytest.warns(UserWarning): c.main(['failing-test'])  # text: as before, warnings first
        out, err = capsys.readouterr()
        assert out == '' and err.splitlines()[0].startswith('privcausal: warning: --clip-rows')
        assert err.strip().splitlines()[-1] == 'privcausal: error: --epsilon must be a finite number > 0, got 0.0'
    finally:
        del c._COMMANDS[('failing-test', None)]


def test_without_json_the_text_error_is_unchanged(csv):
    res = cli('ipw', csv, '--no-such-flag')
    assert res.returncode == 2 and res.stdout == ''
    assert res.stderr.startswith('usage: privcausal ipw') and 'privcausal ipw: error: the following arguments are required' in res.stderr
    res = cli(*IPW[:1], csv, *IPW[1:], '--epsilon', '0')
    assert res.returncode == 2 and res.stdout == '' and res.stderr.startswith('privcausal: error: --epsilon')


def test_success_under_json_is_still_the_result(csv):
    res = cli(*IPW[:1], csv, *IPW[1:], '--epsilon', '1', '--seed', '1', '--json')
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert 'error' not in doc and doc['ci'][0] <= doc['estimate'] <= doc['ci'][1]


@pytest.fixture(scope='module')
def odd(tmp_path_factory):
    "Data outside the declared domain: a NaN covariate and a level of `g` that --categorical g=u,v does not declare."
    rng = np.random.default_rng(1)
    n = 400
    df = pd.DataFrame({'a': rng.uniform(-1, 1, n), 'g': rng.choice(['u', 'v'], n), 't': rng.binomial(1, 0.4, n),
                       'y': rng.binomial(1, 0.3, n)})
    df.loc[5, 'a'], df.loc[7, 'g'] = np.nan, 'w'
    path = tmp_path_factory.mktemp('json_errors_odd') / 'odd.csv'
    df.to_csv(path, index=False)
    return str(path)


_DESIGN = ['--treatment', 't', '--outcome', 'y', '--covariates', 'a,g', '--categorical', 'g=u,v']
_EFFECT = [*_DESIGN, '--covariate-bounds', 'a=-1:1', '--outcome-bounds', '0:1', '--epsilon', '1', '--delta', '1e-6']
_IPW = [*_DESIGN, '--epsilon', '1', '--delta', '1e-6', '--outcome-bound', '1', '--covariate-bound', '2',
        '--propensity-bound', '0.1']


@pytest.mark.parametrize('cmd, argv, flag, said', [
    ('ipw', _IPW, '--categorical', "--categorical g=..., or code undeclared values as a declared level with --other g=level"),
    ('wate', [*_DESIGN, '--covariate-bounds', 'a=-1:1', '--epsilon', '1'], '--categorical', '--categorical g=...'),
    ('effect', _EFFECT, '--categorical', '--categorical g=...'),
    ('aipw', _EFFECT, '--categorical', '--categorical g=...'),
])
def test_undeclared_level_names_categorical(odd, cmd, argv, flag, said):
    doc = _json_error(cli(cmd, odd, *argv, '--json', '--seed', '1'))
    assert doc['flag'] == flag and said in doc['error'] and 'levels[' not in doc['error'], doc


@pytest.mark.parametrize('cmd, argv, nan_flag, nan_said', [('ipw', _IPW, '--covariates', '--covariates has missing'),
                                                            ('gformula', _EFFECT, '--covariates', '--covariates: data has missing')])  # the column's flag (review 8 F4)
def test_missing_covariates_and_n_rows_name_their_flags(odd, csv, cmd, argv, nan_flag, nan_said):
    argv = [a if a != 'a,g' else 'a' for a in argv if a not in ('--categorical', 'g=u,v')]
    doc = _json_error(cli(cmd, odd, *argv, '--json', '--seed', '1'))                    # a NaN in covariate a
    assert doc['flag'] == nan_flag and doc['error'].startswith(nan_said), doc
    argv = [a if a != 'a' else 'a,b' for a in argv]
    argv = [a if a != 'a=-1:1' else 'a=-1:1,b=-1:1' for a in argv]
    doc = _json_error(cli(cmd, csv, *argv, '--n-rows', '5', '--json', '--seed', '1'))   # 400 rows, not 5
    assert doc['flag'] == '--n-rows' and doc['error'].startswith('--n-rows: the declared number of rows'), doc


@pytest.mark.parametrize('flags, flag', [(['--outcome-bounds', '0:1', '--method', 'wate'], '--method'),
                                         (['--outcome-type', 'binary', '--method', 'wate', '--propensity-bounds', '0.1:0.9'],
                                          '--propensity-bounds'),
                                         (['--outcome-type', 'binary', '--outcome-bounds=-1:1'], '--outcome-bounds')])
@pytest.mark.parametrize('dry_run', [True, False])
def test_effect_flag_refusals_before_data(csv, tmp_path, flags, flag, dry_run):
    "Review 8 F3: `effect` refuses what follows from its flags alone (WATE without a binary outcome, a setting WATE does not have, binary outcome bounds other than 0:1) in a dry run as in a release, before DATA is read: a missing file is not even opened."
    base = ['--treatment', 't', '--outcome', 'y', '--covariates', 'a,b', '--covariate-bounds', 'a=-1:1,b=-1:1',
            '--epsilon', '1', '--delta', '1e-6', '--json', *(['--dry-run'] if dry_run else [])]
    for data in (csv, str(tmp_path / 'missing.csv')):
        doc = _json_error(cli('effect', data, *base, *flags))
        assert doc['flag'] == flag, doc


def test_domain_refusal_names_the_column_flag(tmp_path):
    "Review 8 F4: a domain refusal (NaN in a covariate, in anm's x) names the flag of the column it is about."
    rng = np.random.default_rng(1)
    df = pd.DataFrame({'x0': rng.uniform(-1, 1, 200), 'x1': rng.uniform(-1, 1, 200), 't': rng.integers(0, 2, 200),
                       'y': rng.uniform(-1, 1, 200)})
    df.loc[7, 'x1'] = np.nan
    path = str(tmp_path / 'nan.csv')
    df.to_csv(path, index=False)
    doc = _json_error(cli('effect', path, '--treatment', 't', '--outcome', 'y', '--covariates', 'x0,x1', '--covariate-bounds',
                          'x0=-1:1,x1=-1:1', '--outcome-bounds=-1:1', '--epsilon', '1', '--delta', '1e-6', '--json'))
    assert doc['flag'] == '--covariates', doc
    doc = _json_error(cli('anm', path, '--x', 'x1', '--y', 'y', '--x-bound', '1', '--y-bound', '1', '--epsilon', '1', '--json'))
    assert doc['flag'] == '--x', doc
