"""The `privcausal ipw` command: flags, JSON contract, NOT PRIVATE marking, errors (exit status 2)."""
import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from privcausal.cli import main, run

BOUNDS = ['--outcome-bound', '5', '--covariate-bound', '2', '--clip', '0.1']


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


def test_json_contract(csv):
    code, out, err = call(['ipw', csv, '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b,c', '--epsilon', '0.8',
                           '--delta', '1e-6', *BOUNDS, '--split-column', 'part', '--seed', '1', '--json'])
    assert code == 0, err
    d = json.loads(out)
    for k in ('method', 'estimand', 'estimate', 'epsilon', 'delta', 'm', 'n', 'noise_source', 'stages'):
        assert k in d
    assert (d['m'], d['n'], d['epsilon'], d['delta']) == (100, 300, 0.8, 1e-6)
    assert d['noise_source'] == 'numpy-research'
    for s in d['stages']:
        assert {'name', 'epsilon', 'delta', 'sensitivity', 'noise_sd'} <= set(s)
        assert (s['epsilon'], s['delta']) == (0.8, 1e-6)
    assert d['stages'][1]['sensitivity'] == pytest.approx(2 * 5 / (0.1 * 300))
    assert 'non_private' not in d and 'NOT PRIVATE' not in err


def test_global_json_flag_and_secure_default(csv):
    code, out, err = call(['--json', 'ipw', csv, '--treatment', 'treat', '--outcome', 'y', '--epsilon', '0.8',
                           '--delta', '1e-6', *BOUNDS, '--covariates', 'a,b,c'])
    assert code == 0, err
    d = json.loads(out)
    assert d['noise_source'] == 'opendp' and d['is_secure']


def test_non_private_and_estimands(csv):
    code, out, err = call(['ipw', csv, '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b,c', '--epsilon', '0.8',
                           '--delta', '1e-6', *BOUNDS, '--estimand', 'ATT', '--fit-fraction', '0.3', '--seed', '3',
                           '--non-private', '--json'])
    assert code == 0, err
    d = json.loads(out)
    assert d['estimand'] == 'ATT' and d['m'] == 120
    assert 'estimate' in d['non_private'] and 'NOT PRIVATE' in err


def test_text_output(csv):
    code, out, err = call(['ipw', csv, '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b,c', '--epsilon', '0.8',
                           '--delta', '1e-6', *BOUNDS, '--seed', '1'])
    assert code == 0 and 'PP-IPW private ATE' in out


@pytest.mark.parametrize('extra,msg', [
    ([], '--outcome-bound C'), (['--outcome-bound', '5', '--covariate-bound', '2'], '--clip OMEGA'),
    ([*BOUNDS, '--epsilon', '0'], 'epsilon'), ([*BOUNDS, '--delta', '1'], 'delta'), ([*BOUNDS, '--lam', '0'], 'lam'),
    (['--outcome-bound', '0.5', '--covariate-bound', '2', '--clip', '0.1'], 'outcome_bound'),
    (['--outcome-bound', '5', '--covariate-bound', '0.1', '--clip', '0.1'], 'covariate_bound'),
    ([*BOUNDS[:4], '--clip', '0.7'], '(0, 1/2]'), ([*BOUNDS, '--split-column', 'nope'], "'nope'"),
    ([*BOUNDS, '--fit-fraction', '1.5'], 'fit_fraction')])
def test_errors(csv, extra, msg):
    argv = ['ipw', csv, '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b,c', '--epsilon', '0.8', '--delta', '1e-6']
    code, out, err = call(argv + extra)
    assert code == 2 and msg in err, err
    assert out == ''


def test_conflicting_split_flags(csv):
    code, out, err = call(['ipw', csv, '--treatment', 'treat', '--outcome', 'y', '--epsilon', '0.8', '--delta', '1e-6',
                           *BOUNDS, '--split-column', 'part', '--fit-fraction', '0.3'])
    assert code == 2 and 'not allowed with' in err
