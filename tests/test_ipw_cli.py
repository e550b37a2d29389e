"""The `privcausal ipw` command: flags, JSON contract, the paper's Algorithm 1 on request, NOT PRIVATE marking, errors."""
import contextlib
import io
import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from privcausal.cli import main
from privcausal.release import KEYS

BOUNDS = ['--outcome-bound', '5', '--covariate-bound', '2', '--propensity-bound', '0.1']


@pytest.fixture
def csv(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3)) / 2
    t = rng.binomial(1, expit(X[:, 0]))
    y = np.clip(X.sum(1) + t + rng.normal(size=400) * .3, -5, 5)
    df = pd.DataFrame(X, columns=['a', 'b', 'c']).assign(treat=t, y=y, part=np.where(np.arange(400) < 100, 'fit', 'estimate'))
    p = tmp_path / 'd.csv'
    df.to_csv(p, index=False)
    return str(p)


def call(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
            code = 0
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


BASE = ['--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b,c', '--epsilon', '0.8', '--delta', '1e-6']


def test_json_contract(csv):
    code, out, err = call(['ipw', csv, *BASE, *BOUNDS, '--split-column', 'part', '--fit-rows', '100', '--seed', '1', '--json'])
    assert code == 0, err
    d = json.loads(out)
    assert set(KEYS) | {'input'} == set(d)
    assert d['estimand'] == 'ATE' and d['ci'][0] < d['estimate'] < d['ci'][1]
    assert (d['privacy']['epsilon'], d['privacy']['delta']) == (0.8, 1e-6)
    assert d['privacy']['noise_source'] == 'numpy-research' and d['input']['covariates'] == ['a', 'b', 'c']
    assert 'hajek' in json.dumps(d['settings']).lower()
    assert 'non_private' not in d and 'NOT PRIVATE' not in err


def test_every_estimand_and_the_papers_algorithm(csv):
    for estimand in ('ATE', 'ATT', 'ATC'):
        for extra in ([], ['--estimator', 'ht', '--no-intercept', '--lam', '0.1']):
            code, out, err = call(['ipw', csv, *BASE, *BOUNDS, '--estimand', estimand, '--seed', '2', '--json', *extra])
            assert code == 0, err
            d = json.loads(out)
            assert d['estimand'] == estimand and len(d['ci']) == 2
            assert ('ht' in json.dumps(d['settings'])) == bool(extra)


def test_global_json_flag_and_secure_default(csv):
    code, out, err = call(['--json', 'ipw', csv, *BASE, *BOUNDS])
    assert code == 0, err
    d = json.loads(out)
    assert d['privacy']['noise_source'] == 'opendp' and d['privacy']['is_secure']


def test_non_private_is_marked(csv):
    code, out, err = call(['ipw', csv, *BASE, *BOUNDS, '--estimand', 'ATT', '--fit-fraction', '0.3', '--seed', '3',
                           '--non-private', '--json'])
    assert code == 0, err
    d = json.loads(out)
    assert 'estimate' in d['non_private'] and d['non_private']['warning'] == 'NOT PRIVATE' and 'NOT PRIVATE' in err


def test_dry_run(csv):
    code, out, err = call(['ipw', csv, *BASE, *BOUNDS, '--dry-run', '--json'])
    assert code == 0, err
    d = json.loads(out)
    assert d['planned'] is True and d['noise_sd'] > 0 and d['ci_halfwidth'] > d['noise_sd'] * 0.9


def test_text_output(csv):
    code, out, err = call(['ipw', csv, *BASE, *BOUNDS, '--seed', '1'])
    assert code == 0 and 'PP-IPW' in out and 'a,b,c' in out


@pytest.mark.parametrize('extra,msg', [
    ([], '--outcome-bound C'), (['--outcome-bound', '5', '--covariate-bound', '2'], '--propensity-bound OMEGA'),
    ([*BOUNDS, '--epsilon', '0'], '--epsilon'), ([*BOUNDS, '--delta', '1'], '--delta'), ([*BOUNDS, '--lam', '0'], '--lam'),
    (['--outcome-bound', '0.5', '--covariate-bound', '2', '--propensity-bound', '0.1'], '--clip-outcomes'),
    (['--outcome-bound', '5', '--covariate-bound', '0.1', '--propensity-bound', '0.1'], '--clip-rows'),
    ([*BOUNDS[:4], '--propensity-bound', '0.7'], '(0, 1/2]'), ([*BOUNDS, '--split-column', 'nope', '--fit-rows', '9'], "'nope'"),
    ([*BOUNDS, '--fit-fraction', '1.5'], '--fit-fraction'), ([*BOUNDS, '--normalisation', 'arm'], '--estimator ht'),
    ([*BOUNDS, '--epsilon', '1e-320', '--calibration', 'classical'], '--epsilon')])
def test_errors(csv, extra, msg):
    code, out, err = call(['ipw', csv, *BASE, *extra])
    assert code == 2 and msg in err, err
    assert out == ''
    for python in ('clip_outcomes', 'clip_rows', 'outcome_bound=', 'fit_fraction'):
        assert python not in err, err


def test_conflicting_split_flags(csv):
    code, out, err = call(['ipw', csv, *BASE, *BOUNDS, '--split-column', 'part', '--fit-rows', '100', '--fit-fraction', '0.3'])
    assert code == 2 and 'not allowed with' in err


def test_per_column_public_scales(csv):
    scales = ['--covariate-scale', 'a=2,b=2,c=2']
    base = ['ipw', csv, *BASE, '--outcome-bound', '5', '--propensity-bound', '0.1', '--seed', '4', '--json']
    code, out, err = call(base + scales)
    assert code == 0, err
    d = json.loads(out)
    assert d['privacy']['public']['covariate_bound'] == pytest.approx(3 ** 0.5)    # |x_j| <= s_j  =>  ||x/s|| <= sqrt(d)
    code, out, err = call(base + ['--covariate-scale', 'a=0.01,b=2,c=2'])          # a stated bound that does not hold
    assert code == 2 and '--clip-rows' in err and out == ''
    code, out, err = call(base + ['--covariate-scale', 'a=0.01,b=2,c=2', '--clip-rows'])
    assert code == 0 and 'clipped' in err
    code, out, err = call(base + scales + ['--covariate-bound', '2'])
    assert code == 2 and 'not both' in err
    code, out, err = call(base + ['--covariate-scale', 'a=2'])
    assert code == 2 and "['b', 'c']" in err


def test_options_are_the_plans_flagged_fields():
    "Issue 17 item 4: `privcausal ipw`'s settings are generated from IPWPlan's fields (flag, help, Python name); the rest are pp_ipw's and the command's own options."
    import dataclasses
    from privcausal.cli import IPW_COMMAND, _ipw_flags, build_parser
    from privcausal.commands import SHARED
    from privcausal.ipw import IPWPlan
    from privcausal.method import field_flag
    parser = build_parser()._subparsers._group_actions[0].choices['ipw']
    flagged = {f.name: field_flag(f) for f in dataclasses.fields(IPWPlan)
               if f.init and f.metadata.get('cli', True) and f.name not in SHARED + ('alpha',)}
    assert parser.get_default('_plan_fields') == flagged
    assert {k: _ipw_flags()[k] for k in flagged} == flagged
    options = {o for a in parser._actions for o in a.option_strings}
    every = ['--propensity-bound', '--clip', '--outcome-bound', '--covariate-bound', '--covariate-scale', '--covariate-bounds',
             '--outcome-bounds', '--split-column', '--fit-rows', '--fit-fraction', '--estimator', '--normalisation', '--debias',
             '--hessian-share', '--variance-share', '--calibration', '--bounding', '--no-intercept', '--lam', '--clip-outcomes',
             '--clip-rows', '--dry-run', '--treated-share', '--outcome-sd', '--outcome-mean', '--propensity-sd', '--categorical',
             '--other', '--n-rows', '--non-private', '--json', '--ledger', '--budget', '--seed', '--dask', '--estimand']
    assert not set(every) - options, set(every) - options
    assert {flag for flag, _ in IPW_COMMAND.extra} == {'--clip-outcomes', '--clip-rows', '--split-column', '--fit-rows', '--covariate-scale'}


def test_clip_is_the_older_spelling_of_propensity_bound(csv):
    runs = [call(['ipw', csv, *BASE, *BOUNDS[:4], flag, '0.1', '--seed', '5', '--json']) for flag in ('--propensity-bound', '--clip')]
    assert all(code == 0 for code, _, _ in runs), runs
    assert json.loads(runs[0][1])['estimate'] == json.loads(runs[1][1])['estimate']
    code, out, err = call(['ipw', csv, *BASE, *BOUNDS[:4], '--propensity-bound', '0.1:0.8', '--seed', '5', '--json'])
    assert code == 0 and json.loads(out)['privacy']['public']['propensity_bounds'] == [0.1, 0.8]   # LO:HI, as the plan takes


def test_debias_and_intercept_switches(csv):
    code, out, err = call(['ipw', csv, *BASE, *BOUNDS, '--dry-run', '--json', '--debias', 'on', '--no-intercept'])
    assert code == 0, err
    d = json.loads(out)
    assert d['debias'] is True and d['constant'] is None
    code, out, err = call(['ipw', csv, *BASE, *BOUNDS, '--dry-run', '--debias', 'maybe', '--json'])
    assert code == 2 and json.loads(err)['flag'] == '--debias'


@pytest.mark.parametrize('dask', [False, True])
def test_json_error_names_the_flag(csv, tmp_path, dask):
    "Issue 17 item 4: under --json an ipw error is one JSON document {error, flag} naming the flag, exit 2 -- in memory and on Dask."
    data, extra = csv, []
    if dask:
        pytest.importorskip('distributed')
        data, extra = str(tmp_path / 'd.parquet'), ['--dask', 'local']
        pd.read_csv(csv).drop(columns='part').to_parquet(data)
    for flags, flag in ((['--lam', '0'], '--lam'), (['--fit-fraction', '1.5'], '--fit-fraction'),
                        (['--normalisation', 'arm'], '--normalisation')):
        code, out, err = call(['ipw', data, *BASE, *BOUNDS, *extra, *flags, '--json'])
        assert code == 2 and out == '', (code, out, err)
        doc = json.loads(err)
        assert set(doc) == {'error', 'flag'} and doc['flag'] == flag and flag in doc['error'], doc
        assert not re.search(r"(?<![-\w])(fit_fraction|lam|normalisation)\b|estimator='ht'", doc['error']), doc


def test_help_is_for_a_terminal():
    "`ipw --help`: the plan fields' documentation without TeX or backticks, and the values of its text settings."
    code, out, _ = call(['ipw', '--help'])
    assert code == 0
    for choices in ('{hajek,ht}', '{n,arm}', '{clip,trim}', '{analytic,classical}', 'OMEGA|LO:HI'): assert choices in out, choices
    for raw in ('$', '\\lambda', '\\omega', '`', 'C_y$', 'None'): assert raw not in out, raw
    assert 'λ' in out and 'ω' in out


@pytest.mark.parametrize('pair', ['0.1:0.8', '0.1,0.8'])
def test_propensity_bound_pair(csv, pair):
    "--propensity-bound takes one OMEGA, or the pair as LO:HI or LO,HI."
    argv = ['ipw', csv, *BASE, '--outcome-bound', '5', '--covariate-bound', '2', '--propensity-bound', pair, '--dry-run', '--json']
    code, out, err = call(argv)
    assert code == 0, err
    assert json.loads(out)['propensity_bounds'] == [0.1, 0.8]


def test_dask_parquet_text_column_is_refused_as_in_memory(csv, tmp_path):
    "Review 8 F6: a Parquet column stored as text is refused from the schema with --dask as in memory (it was parsed on the workers)."
    pytest.importorskip('distributed')
    data = str(tmp_path / 's.parquet')
    df = pd.read_csv(csv).drop(columns='part')
    df.assign(a=df['a'].map(repr)).to_parquet(data)
    for extra in ([], ['--dask', 'local']):
        code, out, err = call(['ipw', data, *BASE, *BOUNDS, *extra, '--json'])
        assert code == 2 and out == '' and json.loads(err)['flag'] == '--covariates', (extra, err)
