"""The command line's privacy order: a dry run reads DATA's metadata only, and a release refuses on the ledger before
any value of DATA is read (an undeclared --categorical level, a value beyond a --covariate-scale bound come after)."""
import json

import numpy as np
import pandas as pd
import pytest

from cli_call import call


@pytest.fixture(scope='module')
def tables(tmp_path_factory):
    "Three data sets of the same shape: in the declared domain, with an undeclared level, with |x0| beyond its scale."
    r, n = np.random.default_rng(0), 400
    df = pd.DataFrame({'x0': r.uniform(-1, 1, n), 'x1': r.uniform(-1, 1, n), 'c': r.choice(['a', 'b'], n)})
    df['t'], df['y'] = (r.uniform(size=n) < 0.5).astype(int), (r.uniform(size=n) < 0.4).astype(int)
    badcat, bigx = df.copy(), df.copy()
    badcat.loc[3, 'c'], bigx.loc[3, 'x0'] = 'z', 5.0
    root = tmp_path_factory.mktemp('order')
    out = {}
    for name, d in (('ok', df), ('badcat', badcat), ('bigx', bigx)):
        d.to_csv(root / f'{name}.csv', index=False)
        out[name] = str(root / f'{name}.csv')
    return out


DESIGN = ['--treatment', 't', '--outcome', 'y', '--covariates', 'x0,x1,c', '--categorical', 'c=a,b']
EFFECT = DESIGN + ['--covariate-bounds', 'x0=-1:1,x1=-1:1', '--outcome-bounds', '0:1', '--epsilon', '1', '--delta', '1e-6']
IPW = DESIGN + ['--epsilon', '1', '--delta', '1e-6', '--outcome-bound', '1', '--clip', '0.05']
COMMANDS = {  # command: (its arguments after DATA, the data set it refuses on its values, the flag that refusal names)
    'ipw-categorical': ('ipw', IPW + ['--covariate-bound', '2'], 'badcat', '--categorical'),
    'ipw-scale': ('ipw', IPW + ['--covariate-scale', 'x0=1,x1=1'], 'bigx', '--covariate-scale'),
    'ipw-scale-categorical': ('ipw', IPW + ['--covariate-scale', 'x0=1,x1=1'], 'badcat', '--categorical'),
    'wate': ('wate', DESIGN + ['--covariate-bounds', 'x0=-1:1,x1=-1:1', '--epsilon', '1'], 'badcat', '--categorical'),
    **{c: (c, EFFECT, 'badcat', '--categorical') for c in ('effect', 'gformula', 'aipw')},
    'dim': ('dim', DESIGN + ['--outcome-bounds', '0:1', '--epsilon', '1', '--delta', '1e-6'], 'badcat', '--categorical'),
}


def _doc(code, err):
    "The JSON error document (on standard error) of a refused run."
    assert code == 2, err
    return json.loads(err)


@pytest.mark.parametrize('case', COMMANDS)
def test_the_ledger_refuses_before_the_values_are_read(tables, tmp_path, case):
    cmd, argv, bad, _ = COMMANDS[case]
    ledger = tmp_path / 'L.json'
    code, _, err = call(cmd, tables[bad], *argv, '--ledger', str(ledger), '--budget', '0.01,1e-9', '--json', '--seed', '1')
    doc = _doc(code, err)
    assert 'refuses PrivacyCost' in doc['error'] and 'Nothing was released' in doc['error'], doc


@pytest.mark.parametrize('case', COMMANDS)
def test_a_dry_run_does_not_depend_on_the_values(tables, case):
    cmd, argv, bad, _ = COMMANDS[case]
    plans = []
    for name in ('ok', bad):
        code, out, _ = call(cmd, tables[name], *argv, '--dry-run', '--json')
        assert code == 0, out
        plans.append(json.loads(out))
    assert plans[0] == plans[1]
    assert 'none of its values' in plans[0]['data_read']


@pytest.mark.parametrize('case', COMMANDS)
def test_an_affordable_release_still_refuses_the_domain_and_spends_nothing(tables, tmp_path, case):
    cmd, argv, bad, flag = COMMANDS[case]
    ledger = tmp_path / 'L.json'
    code, _, err = call(cmd, tables[bad], *argv, '--ledger', str(ledger), '--budget', '10,1e-3', '--json', '--seed', '1')
    doc = _doc(code, err)
    assert doc['flag'] == flag and flag in doc['error'], doc
    assert json.loads(ledger.read_text()).get('entries', []) == []   # nothing spent


@pytest.mark.parametrize('method, affordable', [('wate', True), ('ipw', False), ('aipw', False), ('gformula', False)])
def test_effect_asks_the_ledger_for_the_method_that_runs(tables, tmp_path, method, affordable):
    "--method forced: the ledger is asked for that method's cost (wate spends no delta), not the automatic choice's."
    code, out, err = call('effect', tables['ok'], *EFFECT, '--method', method, '--outcome-type', 'binary', '--ledger',
                          str(tmp_path / 'L.json'), '--budget', '1,1e-9', '--json', '--seed', '1')
    assert (code == 0) == affordable, err
    if not affordable: assert 'refuses PrivacyCost' in json.loads(err)['error']


def test_a_forced_ipw_asks_the_ledger_for_its_delta_too(tables, tmp_path):
    "`effect --method ipw`: a ledger that affords epsilon but not delta refuses before an undeclared level is read (review 6, N1)."
    ledger = tmp_path / 'L.json'
    code, _, err = call('effect', tables['badcat'], *EFFECT, '--method', 'ipw', '--ledger', str(ledger), '--budget', '5,1e-12',
                        '--json', '--seed', '1')
    doc = _doc(code, err)
    assert 'refuses PrivacyCost' in doc['error'] and 'Nothing was released' in doc['error'], doc


def test_a_reader_error_on_dask_does_not_quote_the_data(tmp_path):
    "--dask: a string past Dask's dtype sample fails on a worker; neither the error nor the workers' logs show the value (review 6, N2)."
    pytest.importorskip('distributed')
    import subprocess, sys
    r, n = np.random.default_rng(1), 30_000  # larger than the reader's dtype sample: the string is met on a worker
    df = pd.DataFrame({'x0': r.uniform(-1, 1, n).round(6), 'x1': r.uniform(-1, 1, n).round(6),
                       't': (r.uniform(size=n) < 0.5).astype(int), 'y': r.uniform(-1, 1, n).round(6)})
    df['x0'] = df['x0'].astype(object)
    df.loc[n - 1, 'x0'] = 'secret-value-917'
    path = tmp_path / 'late_string.csv'
    df.to_csv(path, index=False)
    argv = ['ipw', str(path), '--treatment', 't', '--outcome', 'y', '--covariates', 'x0,x1', '--clip', '0.05', '--outcome-bound',
            '1', '--covariate-bound', '1.5', '--epsilon', '1', '--delta', '1e-6', '--json']
    for extra in (['--dask', 'local', '--dry-run'], ['--dask=local', '--seed', '1'], ['--das', 'local', '--dry-run']):  # any spelling argparse takes
        p = subprocess.run([sys.executable, '-m', 'privcausal.cli', *argv, *extra], capture_output=True, text=True, timeout=300)
        assert p.returncode == 2, (p.stdout, p.stderr[-2000:])
        assert 'secret-value-917' not in p.stdout + p.stderr, p.stderr[-3000:]
        assert 'reader\'s own message is not shown' in p.stderr
    own = [a if a != 'x0,x1' else 'x0,nosuch' for a in argv]  # privcausal's own error (also run as `-m`, i.e. __main__) is shown
    p = subprocess.run([sys.executable, '-m', 'privcausal.cli', *own, '--dask=local', '--dry-run'], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "['nosuch'] are not columns of DATA" in p.stderr, p.stderr[-2000:]
