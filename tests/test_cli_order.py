"""The command line's privacy order: a dry run reads DATA's metadata only, and a release refuses on the ledger before
any value of DATA is read (an undeclared --categorical level, a value beyond a --covariate-scale bound come after)."""
import json

import numpy as np
import pandas as pd
import pytest

from cli_call import call


@pytest.fixture(scope='module')
def tables(tmp_path_factory):
    "Four data sets of the same shape: in the declared domain, with an undeclared level, with |x0| beyond its scale, with y beyond its bounds."
    r, n = np.random.default_rng(0), 400
    df = pd.DataFrame({'x0': r.uniform(-1, 1, n), 'x1': r.uniform(-1, 1, n), 'c': r.choice(['a', 'b'], n)})
    df['t'], df['y'] = (r.uniform(size=n) < 0.5).astype(int), (r.uniform(size=n) < 0.4).astype(int)
    badcat, bigx, bigy = df.copy(), df.copy(), df.copy()
    badcat.loc[3, 'c'], bigx.loc[3, 'x0'], bigy.loc[3, 'y'] = 'z', 5.0, 5
    root = tmp_path_factory.mktemp('order')
    out = {}
    for name, d in (('ok', df), ('badcat', badcat), ('bigx', bigx), ('bigy', bigy)):
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
    'dim': ('dim', DESIGN[:4] + ['--outcome-bounds', '0:1', '--epsilon', '1', '--delta', '1e-6'], 'bigy', '--outcome-bounds'),  # no covariates
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


def test_a_string_on_dask_is_refused_after_the_ledger_and_never_quoted(tmp_path):
    "--dask: the workers read the named columns as text, so a string past Dask's dtype sample changes neither a dry run nor the ledger's refusal; a release refuses it naming the flag, never the value (review 6 N2, review 7 R7-3)."
    pytest.importorskip('distributed')
    import subprocess, sys
    r, n = np.random.default_rng(1), 30_000  # larger than the reader's dtype sample: the string is met on a worker
    df = pd.DataFrame({'x0': r.uniform(-1, 1, n).round(6), 'x1': r.uniform(-1, 1, n).round(6),
                       't': (r.uniform(size=n) < 0.5).astype(int), 'y': r.uniform(-1, 1, n).round(6),
                       'z': r.uniform(-1, 1, n).round(6)})
    for col in ('x0', 'z'):  # a named column, and one no flag names
        e = df.astype({col: object})
        e.loc[n - 1, col] = 'secret-value-917'
        e.to_csv(tmp_path / f'late_{col}.csv', index=False)
    argv = ['--treatment', 't', '--outcome', 'y', '--covariates', 'x0,x1', '--clip', '0.05', '--outcome-bound',
            '1', '--covariate-bound', '1.5', '--epsilon', '1', '--delta', '1e-6', '--json']
    run = lambda data, *extra: subprocess.run([sys.executable, '-m', 'privcausal.cli', 'ipw', str(tmp_path / data), *argv, *extra],
                                              capture_output=True, text=True, timeout=300)
    for data in ('late_x0.csv', 'late_z.csv'):
        for extra in (['--dask', 'local', '--dry-run'], ['--das', 'local', '--dry-run']):  # any spelling argparse takes
            p = run(data, *extra)
            assert p.returncode == 0 and json.loads(p.stdout)['n'] == n, p.stderr[-2000:]
        p = run(data, '--dask=local', '--ledger', str(tmp_path / f'L_{data}.json'), '--budget', '0.01,1e-9')
        assert p.returncode == 2 and 'refuses PrivacyCost' in p.stderr, p.stderr[-2000:]
        assert 'secret-value-917' not in p.stdout + p.stderr
    p = run('late_x0.csv', '--dask=local', '--seed', '1')
    assert p.returncode == 2 and 'secret-value-917' not in p.stdout + p.stderr, p.stderr[-3000:]
    doc = json.loads(p.stderr.strip().splitlines()[-1])
    assert doc['flag'] == '--covariates' and "'x0'" in doc['error'] and 'not a number' in doc['error'], doc
    p = run('late_z.csv', '--dask=local', '--seed', '1')  # a column no flag names is not read
    assert p.returncode == 0, p.stderr[-2000:]
    argv = ['ipw', str(tmp_path / 'late_x0.csv'), *argv]
    own = [a if a != 'x0,x1' else 'x0,nosuch' for a in argv]  # privcausal's own error (also run as `-m`, i.e. __main__) is shown
    p = subprocess.run([sys.executable, '-m', 'privcausal.cli', *own, '--dask=local', '--dry-run'], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "['nosuch'] are not columns of DATA" in p.stderr, p.stderr[-2000:]


@pytest.fixture(scope='module')
def splits(tmp_path_factory):
    "Tables of the same shape whose split columns differ: as declared (100 'fit', 100 'train'), one stray label, no 'fit' row, a non-numeric x0."
    r, n = np.random.default_rng(2), 400
    df = pd.DataFrame({'x0': r.uniform(-1, 1, n), 'x1': r.uniform(-1, 1, n), 'c': r.choice(['fit', 'estimate'], n)})
    df['t'], df['y'] = (r.uniform(size=n) < 0.5).astype(int), r.uniform(-1, 1, n)
    df['s'] = np.where(np.arange(n) < 100, 'fit', 'estimate')
    df['u'] = np.where(np.arange(n) < 100, 'train', 'test')
    variants = {'ok': df, 'stray': df.assign(s=df.s.where(df.index != 7, 'zzz'), u=df.u.where(df.index != 7, 'zzz')),
                'none': df.assign(s='estimate', u='test'), 'strx': df.astype({'x0': object})}
    variants['strx'].loc[5, 'x0'] = 'secret-917'
    root = tmp_path_factory.mktemp('split')
    for name, d in variants.items(): d.to_csv(root / f'{name}.csv', index=False)
    return {name: str(root / f'{name}.csv') for name in variants}


SPLIT_IPW = ['--treatment', 't', '--outcome', 'y', '--covariates', 'x0,x1', '--epsilon', '1', '--delta', '1e-6',
             '--outcome-bound', '1', '--covariate-bound', '1.5', '--clip', '0.05', '--seed', '1', '--json']
SPLIT_ANM = ['--x', 'x0', '--y', 'x1', '--x-bound', '1', '--y-bound', '1', '--epsilon', '1', '--seed', '1', '--json']
SPLITS = {'ipw': ('ipw', SPLIT_IPW, '--fit-rows'), 'anm': ('anm', SPLIT_ANM, '--train-rows')}


@pytest.mark.parametrize('case', SPLITS)
def test_a_split_column_needs_its_declared_size(case, splits, tmp_path):
    "Review 6 N4: a split column without its declared size (or a size without a column) is refused before DATA is read; a size that leaves a part empty, from N."
    cmd, argv, flag = SPLITS[case]
    for m in ('0', '400'):  # N = 400
        doc = _doc(*call(cmd, splits['ok'], *argv, '--split-column', 's', flag, m, '--dry-run')[::2])
        assert doc['flag'] == flag and 'N=400' in doc['error'], doc
    missing = str(tmp_path / 'no_such_file.csv')  # never opened: the refusal comes first
    doc = _doc(*call(cmd, missing, *argv, '--split-column', 's', '--dry-run')[::2])
    assert '--split-column' in doc['error'] and flag in doc['error'], doc
    doc = _doc(*call(cmd, missing, *argv, flag, '100', '--dry-run')[::2])
    assert flag in doc['error'] and '--split-column' in doc['error'], doc


@pytest.mark.parametrize('case', SPLITS)
def test_a_split_column_is_read_only_after_the_ledger(splits, tmp_path, case):
    "Review 6 N4: dry runs and the ledger plan from the declared size, whatever the column holds (even a private column, c); a release refuses a stray label or another size, naming the flag, never a count, and spends nothing."
    cmd, argv, flag = SPLITS[case]
    col = 's' if cmd == 'ipw' else 'u'
    runs = [(splits[name], col) for name in ('ok', 'stray', 'none')] + [(splits['ok'], 'c')]
    plans = []
    for data, column in runs:
        code, out, err = call(cmd, data, *argv, '--split-column', column, flag, '100', '--dry-run')
        assert code == 0, err
        plans.append(json.loads(out))
        doc = _doc(*call(cmd, data, *argv, '--split-column', column, flag, '100', '--ledger', str(tmp_path / 'small.json'),
                         '--budget', '0.01,1e-9')[::2])
        assert 'refuses PrivacyCost' in doc['error'], doc
    assert all(p == plans[0] for p in plans) and 'none of its values' in plans[0]['data_read']
    assert (plans[0]['m'] if cmd == 'ipw' else plans[0]['n_train']) == 100
    big = tmp_path / 'big.json'
    refused = [(splits['stray'], col, '100'), (splits['none'], col, '100'), (splits['ok'], 'c', '100'), (splits['ok'], col, '99')]
    for data, column, m in refused:
        doc = _doc(*call(cmd, data, *argv, '--split-column', column, flag, m, '--ledger', str(big), '--budget', '100,0.1')[::2])
        assert doc['flag'] == '--split-column' and not any(str(k) in doc['error'] for k in (0, 99, 100, 101, 300, 'zzz')), doc
    assert json.loads(big.read_text()).get('entries', []) == []  # nothing spent
    code, out, err = call(cmd, splits['ok'], *argv, '--split-column', col, flag, '100', '--ledger', str(big), '--budget', '100,0.1')
    assert code == 0, err


def test_a_non_numeric_anm_column_is_refused_after_the_ledger(splits, tmp_path):
    "Review 6 N5 and review 5 F5: anm's x column holding a string loses to the ledger; an affordable release names --x, spends nothing, shows no value."
    doc = _doc(*call('anm', splits['strx'], *SPLIT_ANM, '--ledger', str(tmp_path / 's.json'), '--budget', '0.01')[::2])
    assert 'refuses PrivacyCost' in doc['error'], doc
    big = tmp_path / 'b.json'
    code, out, err = call('anm', splits['strx'], *SPLIT_ANM, '--ledger', str(big), '--budget', '100')
    doc = _doc(code, err)
    assert doc['flag'] == '--x' and 'secret' not in err, doc
    assert json.loads(big.read_text()).get('entries', []) == []


def test_json_errors_name_the_flag_of_a_value_refusal(tables, splits, tmp_path):
    "Review 5 F5: a missing value in a declared categorical column, a non-numeric treatment in effect: the JSON names the flag."
    missing = pd.read_csv(tables['ok'])
    missing.loc[3, 'c'] = np.nan
    missing.to_csv(tmp_path / 'nancat.csv', index=False)
    doc = _doc(*call('effect', str(tmp_path / 'nancat.csv'), *EFFECT, '--json', '--seed', '1')[::2])
    assert doc['flag'] == '--categorical', doc
    strt = pd.read_csv(splits['ok']).astype({'t': object})
    strt.loc[3, 't'] = 'secret-917'
    strt.to_csv(tmp_path / 'strt.csv', index=False)
    doc = _doc(*call('effect', str(tmp_path / 'strt.csv'), '--treatment', 't', '--outcome', 'y', '--covariates', 'x0,x1',
                     '--covariate-bounds', 'x0=-1:1,x1=-1:1', '--outcome-bounds=-1:1', '--epsilon', '1', '--delta', '1e-6',
                     '--json', '--seed', '1')[::2])
    assert doc['flag'] == '--treatment' and 'secret' not in doc['error'], doc


@pytest.mark.parametrize('method, name', [('gformula', 'G-formula'), ('aipw', 'AIPW'), ('ipw', 'PP-IPW'), ('wate', 'wate')])
def test_a_forced_method_dry_run_plans_that_method(tables, method, name):
    "Review 6 N3: `effect --method X --dry-run` prints X's plan, not the automatic choice's."
    code, out, err = call('effect', tables['ok'], *EFFECT, '--method', method, '--outcome-type', 'binary', '--dry-run', '--json')
    assert code == 0, err
    d = json.loads(out)
    assert d['method'] == name and d['choice']['method'] == method and 'chosen by the user' in d['choice']['reason'], d


@pytest.mark.parametrize('method, shares', [('gformula', '0.1,0.3,0.5,0.1'), ('aipw', '0.05,0.2,0.3,0.05,0.2,0.2')])
def test_a_named_method_dry_run_takes_its_own_settings(tables, method, shares):
    """Review 9 G5: `effect --method gformula --shares` (four numbers, the G-formula's) was refused by the dry run, which
    planned AIPW (six) too; the release took it. A named method is planned alone: the dry run and the release agree."""
    argv = [*EFFECT, '--method', method, '--outcome-type', 'binary', '--shares', shares, '--json']
    code, out, err = call('effect', tables['ok'], *argv, '--dry-run')
    assert code == 0, err
    d = json.loads(out)
    assert d['choice']['method'] == method and list(d['choice']['planned_rmse']) == [method], d
    code, out, err = call('effect', tables['ok'], *argv, '--seed', '1')
    assert code == 0, err
    code, _, err = call('effect', tables['ok'], *EFFECT, '--outcome-type', 'binary', '--shares', shares, '--dry-run', '--json')
    doc = _doc(code, err)  # auto plans both methods: no count fits, so it asks for the method
    assert doc['flag'] == '--shares' and 'pass --method gformula or --method aipw' in doc['error'], doc


@pytest.fixture(scope='module')
def wide_y(tmp_path_factory):
    "A continuous outcome with one value beyond --outcome-bounds -5:5."
    r, n = np.random.default_rng(1), 400
    df = pd.DataFrame({'x0': r.uniform(-1, 1, n), 't': (r.uniform(size=n) < 0.5).astype(int), 'y': r.normal(size=n)})
    df.loc[3, 'y'] = 50.0
    path = tmp_path_factory.mktemp('widey') / 'y.csv'
    df.to_csv(path, index=False)
    return str(path)


WIDE = ['--treatment', 't', '--outcome', 'y', '--covariates', 'x0', '--covariate-bounds', 'x0=-1:1', '--outcome-bounds=-5:5',
        '--epsilon', '1', '--delta', '1e-6', '--seed', '1', '--json']


@pytest.mark.parametrize('cmd, method', [('effect', 'ipw'), ('effect', 'gformula'), ('effect', 'auto'), ('gformula', None), ('aipw', None)])
def test_an_outcome_beyond_its_bounds_names_the_flag_that_clips(wide_y, cmd, method):
    """Review 9: `effect --method ipw` said "pass clip_outcomes=True" (PP-IPW's Python name, no flag of effect) and the
    other commands "pass --clip (--clip)". Each names the flag once."""
    doc = _doc(*call(cmd, wide_y, *WIDE, *(['--method', method] if method else []))[::2])
    assert doc['flag'] == '--outcome-bounds' and 'pass --clip to clip' in doc['error'], doc
    assert 'clip_outcomes' not in doc['error'] and '(--clip)' not in doc['error'], doc


@pytest.mark.parametrize('cmd', ['effect', 'gformula', 'ipw', 'wate'])
def test_a_dry_run_checks_the_declared_number_of_rows(tables, cmd):
    "Review 9: `--n-rows 399` on a 400-row file passed the dry run (planned with 400) and was refused by the release."
    argv = {'ipw': IPW + ['--covariate-bound', '2'], 'wate': COMMANDS['wate'][1]}.get(cmd, EFFECT)
    doc = _doc(*call(cmd, tables['ok'], *argv, '--n-rows', '399', '--dry-run', '--json')[::2])
    assert doc['flag'] == '--n-rows' and 'not the number of rows' in doc['error'], doc
    code, out, err = call(cmd, tables['ok'], *argv, '--n-rows', '400', '--dry-run', '--json')
    assert code == 0 and json.loads(out)['n'] == 400, err


@pytest.mark.parametrize('cmd, extra, flag, words', [
    ('effect', ['--outcome-bounds=-5:5', '--method', 'dim'], '--method', 'ignores confounding'),
    ('effect', [], '--outcome-bounds', "PUBLIC range"),
    ('gformula', [], '--outcome-bounds', "PUBLIC range"),
    ('dim', [], '--outcome-bounds', "PUBLIC range")])
def test_flag_only_refusals_come_before_data_is_read(tmp_path, cmd, extra, flag, words):
    "Review 9 G5: `--method dim` without `--randomised` and a missing `--outcome-bounds` are refused from the flags, before DATA is opened (a missing file is not reached)."
    argv = ['--treatment', 't', '--outcome', 'y', *([] if cmd == 'dim' else ['--covariates', 'x0', '--covariate-bounds', 'x0=-1:1']),
            '--epsilon', '1', '--delta', '1e-6', *extra, '--json']
    for dry in ([], ['--dry-run']):
        doc = _doc(*call(cmd, str(tmp_path / 'missing.csv'), *argv, *dry)[::2])
        assert doc['flag'] == flag and words in doc['error'] and 'DATA' not in doc['error'], doc


def test_dim_dry_run_and_release_agree_on_settings_it_cannot_use(tables):
    """Audit 10 A1: --method dim --randomised with --r2 or --imbalance passed the dry run and was refused by the release;
    then (audit 11 B2, B3) both ignored them, and the covariates too. A difference in means has no covariates: both
    refuse such settings, and the covariates, before DATA's values are read."""
    base = ['--treatment', 't', '--outcome', 'y', '--outcome-bounds', '0:1', '--epsilon', '1', '--delta', '1e-6', '--method', 'dim',
            '--randomised', '--json']
    for extra, flag in ((['--r2', '1.5', '--imbalance', '-1'], '--imbalance'), (['--floor', '0.3'], '--floor'),
                        (['--covariates', 'x0', '--covariate-bounds', 'x0=-1:1'], '--covariates')):
        for mode in (['--dry-run'], ['--seed', '1']):
            doc = _doc(*call('effect', tables['ok'], *base, *extra, *mode)[::2])
            assert doc['flag'] in extra and flag in doc['error'], doc
    code, out, err = call('effect', tables['ok'], *base, '--seed', '1')
    assert code == 0 and json.loads(out)['method'] == 'Difference in means', err


@pytest.mark.parametrize('cmd, argv, flag', [('aipw', EFFECT + ['--r2', '1.5'], '--r2'), ('ipw', IPW + ['--covariate-bound', '2', '--n-rows', '0'], '--n-rows'),
                                             ('wate', COMMANDS['wate'][1] + ['--n-rows', '0'], '--n-rows')])
def test_bad_planning_values_name_their_flag(tables, cmd, argv, flag):
    "Audit 10 A4/A5: AIPW's --r2 1.5 gave 'math domain error' (no flag); ipw/wate --n-rows 0 named no flag."
    for dry in ([], ['--dry-run']):
        doc = _doc(*call(cmd, tables['ok'], *argv, '--json', *dry)[::2])
        assert doc['flag'] == flag, doc


def test_needs_covariates_names_the_flag(tables):
    "Audit 10 A4: the refusal of an observational effect without covariates said randomised=True (a Python name) on the command line."
    argv = ['--treatment', 't', '--outcome', 'y', '--outcome-bounds', '0:1', '--epsilon', '1', '--delta', '1e-6', '--json']
    doc = _doc(*call('effect', tables['ok'], *argv, '--dry-run')[::2])
    assert 'pass --randomised' in doc['error'] and 'randomised=True' not in doc['error'], doc


@pytest.mark.parametrize('cmd, extra, flag, words', [
    ('effect', ['--method', 'gformula', '--newton-steps', '-1'], '--newton-steps', 'not a setting of --method gformula'),
    ('effect', ['--method', 'gformula', '--propensity-bounds', '0.6:0.4'], '--propensity-bounds', 'not a setting of --method gformula'),
    ('effect', ['--method', 'aipw', '--floor-check', '0.5'], '--floor-check', 'not a setting of --method aipw'),
    ('effect', ['--method', 'dim', '--randomised', '--newton-steps', '3'], '--newton-steps', 'not a setting of --method dim'),
    ('dim', ['--covariates', 'x0'], '--covariates', 'adjusts for nothing'),
    ('effect', ['--method', 'gformula', '--randomised', '--no-covariates'], '--covariates', 'adjusts for confounding through covariates'),
    ('effect', ['--method', 'aipw', '--no-covariates'], '--covariates', 'adjusts for confounding through covariates'),
    ('gformula', ['--no-covariates'], '--covariates', 'use the dim command'),
    ('aipw', ['--no-covariates'], '--covariates', 'use the dim command'),
    ('dim', ['--covariate-bounds', 'x0=-1:1'], '--covariate-bounds', 'adjusts for nothing'),
    ('dim', ['--floor', '0.3'], '--floor', 'privcausal dim: unrecognized arguments'),  # audit 11 B3; audit 12 C7: the command's name
    ('gformula', ['--no-standardise', '--outcome-clip-sd', '2'], '--outcome-clip-sd', '--no-standardise switches off'),  # audit 12 C3
    ('effect', ['--method', 'aipw', '--no-standardise', '--outcome-clip-sd', '3'], '--outcome-clip-sd', 'leave out one'),
    ('effect', ['--randomised', '--newton-steps', '3', '--no-covariates'], '--newton-steps', 'methods planned here (dim)'),  # audit 12 C1
    # audit 14: a switch is named as typed (it said '--standardise: not a setting' for --no-standardise)
    ('effect', ['--randomised', '--no-standardise', '--no-covariates'], '--no-standardise', '--no-standardise: not a setting of the methods planned here (dim)'),
    ('effect', ['--method', 'dim', '--randomised', '--r2', '0.5', '--no-standardise', '--no-covariates'], '--r2',
     '--r2, --no-standardise: not a setting of --method dim'),
    ('effect', ['--method', 'ipw', '--standardise'], '--standardise', '--standardise: not a setting of --method ipw'),
    # audit 15 F6: a column given two ranges or two level lists (the last one won, silently)
    ('effect', ['--covariate-bounds', 'x0=0:1'], '--covariate-bounds', "'x0' is given two ranges")])
def test_settings_a_command_would_ignore_are_refused_before_data_is_read(tmp_path, cmd, extra, flag, words):
    """Audit 10 A6/A7: under --method gformula the other method's settings (--newton-steps -1, --propensity-bounds
    0.6:0.4) were accepted and ignored, and the dim command's release ignored --covariates that its dry run refused
    (with a misleading message). And `effect --method gformula` or the gformula command without covariates released a
    difference in means (no --randomised needed) where the dry run refused. All are refused from the flags, dry run and
    release alike, before DATA is opened."""
    covariates = [] if cmd == 'dim' or '--no-covariates' in extra else ['--covariates', 'x0', '--covariate-bounds', 'x0=-1:1']
    argv = ['--treatment', 't', '--outcome', 'y', '--outcome-bounds', '-5:5', '--epsilon', '1', '--delta', '1e-6', *covariates,
            *[a for a in extra if a != '--no-covariates'], '--json']
    for dry in ([], ['--dry-run']):
        doc = _doc(*call(cmd, str(tmp_path / 'missing.csv'), *argv, *dry)[::2])
        assert doc['flag'] == flag and words in doc['error'] and 'DATA' not in doc['error'], doc


def test_a_negative_bound_after_a_space_is_a_value(tables):
    "`--outcome-bounds -5:5` (argparse read -5:5 as an unknown flag: 'expected one argument') plans as `--outcome-bounds=-5:5` does."
    base = ['--treatment', 't', '--outcome', 'y', '--covariates', 'x0', '--epsilon', '1', '--delta', '1e-6', '--dry-run', '--json']
    outs = []
    for bounds in (['--outcome-bounds', '-5:5', '--covariate-bounds', 'x0=-1:1'], ['--outcome-bounds=-5:5', '--covariate-bounds=x0=-1:1']):
        code, out, err = call('effect', tables['ok'], *base, *bounds)
        assert code == 0, err
        outs.append(json.loads(out))
    assert outs[0] == outs[1] and outs[0]['outcome_bounds'] == [-5.0, 5.0], outs[0]
    for text in ('-inf:5', '-Inf:5', '-NaN:5'):  # read as values too, and refused as what they are (audit 12 C5)
        doc = _doc(*call('effect', tables['ok'], *base[:-2], '--outcome-bounds', text, '--covariate-bounds', 'x0=-1:1', '--json')[::2])
        assert doc['flag'] == '--outcome-bounds' and 'finite' in doc['error'], doc


@pytest.mark.parametrize('extra, flag, words', [
    (['--method', 'wate', '--outcome-type', 'binary'], '--covariates', '--method wate adjusts for confounding'),
    (['--method', 'ipw', '--randomised'], '--covariates', '--method ipw adjusts for confounding'),
    (['--randomised', '--newton-steps', '3'], '--newton-steps', 'not a setting of the methods planned here (dim)'),
    (['--seed', '-1'], '--seed', 'integer >= 0'),
    (['--ledger', 'L.json', '--budget', '-1,1e-5'], '--budget', 'EPS > 0')])
def test_audit_11_refusals(tables, tmp_path, extra, flag, words):
    """Audit 11: `effect --method wate` without covariates released an unadjusted WATE (its dry run refused); ipw said
    'd must be a positive integer'; auto without covariates ignored AIPW's settings; `--seed -1` was refused by numpy
    after DATA was read; `--budget -1,1e-5` blamed --epsilon. Dry run and release alike."""
    base = ['--treatment', 't', '--outcome', 'y', '--outcome-bounds', '0:1', '--epsilon', '1', '--delta', '1e-6', '--json']
    extra = [str(tmp_path / a) if a == 'L.json' else a for a in extra]
    for mode in (['--dry-run'], [] if '--seed' in extra else ['--seed', '1']):
        doc = _doc(*call('effect', tables['ok'], *base, *extra, *mode)[::2])
        assert doc['flag'] == flag and words in doc['error'], doc


def test_standardise_and_the_off_switches(tables):
    """Audit 11 B5: `--no-standardise` was a no-op for the G-formula (the default outcome winsorisation switched the
    standardisation back on) and `--outcome-clip-sd` / `--floor-check` could not be switched off on the command line."""
    base = ['--treatment', 't', '--outcome', 'y', '--covariates', 'x0', '--covariate-bounds', 'x0=-1:1', '--outcome-bounds', '0:1',
            '--epsilon', '1', '--delta', '1e-6', '--dry-run', '--json']
    plans = {}
    for name, extra in (('default', []), ('nostd', ['--no-standardise']), ('noclip', ['--outcome-clip-sd', 'off']),
                        ('nocheck', ['--floor-check', 'off'])):
        code, out, err = call('gformula', tables['ok'], *base, *extra)
        assert code == 0, err
        plans[name] = json.loads(out)
    assert (plans['default']['standardise'], plans['default']['outcome_clip_sd']) == (True, 5.0)
    assert (plans['nostd']['standardise'], plans['nostd']['outcome_clip_sd']) == (False, None)
    assert (plans['noclip']['standardise'], plans['noclip']['outcome_clip_sd']) == (True, None)
    assert plans['nocheck']['floor_check'] is None and plans['nocheck']['bias_bound'] == 0
    assert plans['default']['bias_bound'] > 0


def test_effect_ipw_dry_run_points_to_flags_that_exist(tables):
    "Audit 13 #8: `effect --method ipw --dry-run` told the user to state treated_share=, outcome_sd=, ... (Python names; effect refuses them)."
    code, out, err = call('effect', tables['ok'], *EFFECT, '--method', 'ipw', '--propensity-bounds', '0.1:0.9', '--dry-run')
    assert code == 0, err
    assert "state yours with the ipw command's --treated-share P" in out and 'treated_share=' not in out, out


def test_a_column_given_two_level_lists_is_refused(tables):
    "Audit 15 F6: a repeated --categorical for one column was accepted and the last list won; refused (from the flags, with DATA's names read)."
    for extra in ([], ['--dry-run']):
        doc = _doc(*call('gformula', tables['ok'], *EFFECT, '--categorical', 'c=b,a', '--json', *extra)[::2])
        assert doc['flag'] == '--categorical' and "'c' is given twice" in doc['error'], doc


@pytest.mark.parametrize('cmd, extra', [('ipw', ['--delta', '1e-6', '--outcome-bounds', '0:1', '--covariate-bounds', 'x1=0:1']),
                                        ('wate', [])])
def test_ipw_and_wate_refuse_a_covariate_named_twice_before_data_is_opened(tmp_path, cmd, extra):
    "Audit 15 F4: ipw and wate opened DATA before refusing --covariates x1,x1 (the effect commands refused first)."
    doc = _doc(*call(cmd, str(tmp_path / 'missing.csv'), '--treatment', 't', '--outcome', 'y', '--covariates', 'x1,x1',
                     '--epsilon', '1', *extra, '--json')[::2])
    assert doc['flag'] == '--covariates' and 'named more than once' in doc['error'] and 'DATA' not in doc['error'], doc
