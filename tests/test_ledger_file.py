"""The ledger file shared by runs: exclusive creation under forced interleavings, corrupted files refused by name, no litter."""
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from privcausal import accounting, mechanisms
from privcausal.accounting import PrivacyCost, PrivacyLedger
from privcausal.cli import open_ledger
from cli_call import call



@pytest.fixture(scope='module')
def data_csv(tmp_path_factory):
    rng = np.random.default_rng(3)
    n = 400
    X = rng.normal(size=(n, 2)) / 2
    t = rng.binomial(1, expit(0.8 * X[:, 0]))
    y = rng.binomial(1, expit(X.sum(1) + 0.5 * t))
    p = tmp_path_factory.mktemp('ledgerdata') / 'd.csv'
    pd.DataFrame(X, columns=['a', 'b']).assign(treat=t, y=y, cat=np.where(X[:, 1] > 0, 'u', 'v')).to_csv(p, index=False)
    return str(p)


def release_argv(data, ledger, epsilon='0.9'):
    return ['wate', data, '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b', '--epsilon', epsilon,
            '--draws', '200', '--seed', '1', '--ledger', str(ledger), '--budget', '1']


def test_second_creator_paused_until_the_first_has_spent_cannot_overspend(data_csv, tmp_path, monkeypatch):
    "Run B finds no ledger and is paused at the point of creating it while run A creates it and spends 0.9 (the reported race)."
    ledger = tmp_path / 'study.json'
    original, runs = PrivacyLedger.save, {}

    def paused_save(self, *a, **kw):
        if 'A' not in runs:  # B is here: it has seen no file. Run A from start to end before B goes on.
            runs['A'] = None  # (A's own save must not pause)
            runs['A'] = call(*release_argv(data_csv, ledger))
        return original(self, *a, **kw)

    monkeypatch.setattr(PrivacyLedger, 'save', paused_save)
    runs['B'] = call(*release_argv(data_csv, ledger))
    assert runs['A'][0] == 0, runs['A'][2]
    assert runs['B'][0] == 2 and runs['B'][1] == '' and 'exceeds the total' in runs['B'][2]
    stored = PrivacyLedger.load(ledger)
    assert len(stored.entries) == 1 and stored.spent[0] == pytest.approx(0.9)


def test_two_creators_inside_save_together_cannot_overspend(tmp_path, monkeypatch):
    "Both runs pass the point where they found no file before either writes: exactly one creates, one spend fits."
    ledger = tmp_path / 'study.json'
    original, barrier = PrivacyLedger.save, threading.Barrier(2, timeout=30)

    def together(self, *a, **kw):
        barrier.wait()
        return original(self, *a, **kw)

    monkeypatch.setattr(PrivacyLedger, 'save', together)
    outcome = []

    def run():
        try:
            open_ledger(str(ledger), '1').spend(PrivacyCost(0.9, label='ATE'))
            outcome.append('spent')
        except accounting.BudgetExceededError: outcome.append('refused')

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads: t.start()
    for t in threads: t.join(60)
    assert sorted(outcome) == ['refused', 'spent']
    assert PrivacyLedger.load(ledger).spent[0] == pytest.approx(0.9)


PAUSED = r'''
import sys, time, pathlib
from privcausal import accounting, cli
marks, original = pathlib.Path(sys.argv[1]), accounting.PrivacyLedger.save
def paused(self, *a, **kw):
    (marks / 'B-in-save').touch()
    t0 = time.time()
    while not (marks / 'go').exists() and time.time() - t0 < 120: time.sleep(0.05)
    return original(self, *a, **kw)
accounting.PrivacyLedger.save = paused
cli.main(sys.argv[2:])
'''


def test_two_cli_processes_creating_one_ledger_cannot_overspend(data_csv, tmp_path):
    "The reported reproduction, as two processes: B is slowed inside its save while A runs to the end."
    ledger, marks = tmp_path / 'ledgers' / 'study.json', tmp_path / 'marks'
    ledger.parent.mkdir(); marks.mkdir()
    b = subprocess.Popen([sys.executable, '-c', PAUSED, str(marks), *release_argv(data_csv, ledger)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.time()
    while not (marks / 'B-in-save').exists():
        assert b.poll() is None and time.time() - t0 < 120, b.stderr.read() if b.poll() is not None else 'B never reached save'
        time.sleep(0.05)
    a = subprocess.run([sys.executable, '-m', 'privcausal.cli', *release_argv(data_csv, ledger)],
                       capture_output=True, text=True, timeout=300)
    (marks / 'go').touch()
    out_b, err_b = b.communicate(timeout=300)
    assert a.returncode == 0, a.stderr
    assert b.returncode == 2 and out_b == '' and 'exceeds the total' in err_b
    stored = PrivacyLedger.load(ledger)
    assert len(stored.entries) == 1 and stored.spent[0] == pytest.approx(0.9)
    assert sorted(p.name for p in ledger.parent.iterdir()) == ['study.json']  # no lock or temporary file left


def test_corrupted_ledger_whose_entries_overflow_is_refused_by_name(data_csv, tmp_path, monkeypatch):
    ledger = tmp_path / 'study.json'
    entries = [PrivacyCost(1e308, label='x'), PrivacyCost(1e308, label='y')]  # each finite, their sum is not
    d = {'privcausal': 'PrivacyLedger', 'version': '0', 'name': 'study', 'epsilon': 1e308, 'delta': 0.0, 'spent': [0, 0],
         'remaining': [0, 0], 'entries': [{**accounting.cost_to_dict(c), 'time': ''} for c in entries]}
    ledger.write_text(json.dumps(d))
    before = ledger.read_text()
    code, out, err = call('ledger', 'show', str(ledger))
    assert code == 2 and out == '' and 'does not hold a valid ledger' in err and 'Traceback' not in err
    draws = []
    for cls in (mechanisms.SecureNoise, mechanisms.ResearchNoise):
        monkeypatch.setattr(cls, '_laplace', lambda self, *a, **k: draws.append(1))
    argv = release_argv(data_csv, ledger)
    code, out, err = call(*argv[:-2])  # charge the corrupted file (no --budget: it exists)
    assert code == 2 and out == '' and 'does not hold a valid ledger' in err
    assert draws == [] and ledger.read_text() == before  # nothing drawn, nothing written


def test_no_lock_file_is_left_beside_the_ledger(data_csv, tmp_path):
    ledger = tmp_path / 'study.json'
    assert call(*release_argv(data_csv, ledger, '0.3'))[0] == 0
    assert call(*release_argv(data_csv, ledger, '0.3')[:-2])[0] == 0   # a second run charges the same file
    assert call('ledger', 'show', str(ledger))[0] == 0
    assert [p.name for p in tmp_path.iterdir()] == ['study.json']
    assert PrivacyLedger.load(ledger).spent[0] == pytest.approx(0.6)


def test_a_missing_delta_is_refused_before_the_ledger_file_is_made(data_csv, tmp_path):
    """Trial 2026-11-27: a first run with --budget EPS (no DELTA) for a release that spends delta created the ledger file
    and then refused; the file's total could not be changed afterwards. Now --budget is refused before the file is
    made. A first run refused on DATA's columns (a misspelt one) makes no file (audit 18 F4); one refused on DATA's
    values (outside the declared bounds, after the ledger check) leaves an empty file, and a different --budget on it is
    refused with the hint that it may be deleted; once it records a release, no such hint."""
    ledger = tmp_path / 'study.json'
    effect = ['effect', data_csv, '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b', '--covariate-bounds',
              'a=-3:3,b=-3:3', '--outcome-bounds', '0:1', '--epsilon', '1', '--delta', '1e-6', '--seed', '1', '--ledger', str(ledger)]
    code, _, err = call(*effect, '--budget', '3')
    assert code == 2 and '--budget 3: a new ledger without DELTA' in err and 'give --budget EPS,DELTA' in err, err
    assert not ledger.exists()
    code, _, err = call(*[a if a != 'y' else 'yy' for a in effect], '--budget', '3,1e-5')  # refused on DATA's columns
    assert code == 2 and 'yy' in err and not ledger.exists(), err
    narrow = [a if a != 'a=-3:3,b=-3:3' else 'a=-0.01:0.01,b=-3:3' for a in effect]
    code, _, err = call(*narrow, '--budget', '3,1e-5')  # refused on DATA's values, after the ledger check
    assert code == 2 and PrivacyLedger.load(ledger).entries == (), err
    code, _, err = call(*effect, '--budget', '4,1e-5')
    assert code == 2 and 'it recorded no release when read' in err and 'may be deleted to start again' in err, err
    code, _, err = call(*effect, '--budget', '3,1e-5')  # the stated total: the run charges the file
    assert code == 0 and PrivacyLedger.load(ledger).spent[0] == pytest.approx(1.0), err
    code, _, err = call(*effect, '--budget', '4,1e-5')
    assert code == 2 and 'cannot be changed' in err and 'deleted' not in err  # it records a release


def test_a_ledger_path_that_cannot_be_a_file_is_refused_by_flag(data_csv, tmp_path):
    "Audit 15 F8: --ledger DATA.csv/L.json ended in a NotADirectoryError traceback; a folder that does not exist is named too."
    for path, words in ((f'{data_csv}/L.json', 'not a path to a ledger file'), (str(tmp_path / 'nodir' / 'L.json'), 'cannot create')):
        code, _, err = call(*release_argv(data_csv, path))
        assert code == 2 and f'--ledger {path}: {words}' in err and 'Traceback' not in err, err


def test_anm_refuses_a_budget_without_delta_before_the_file_is_made(tmp_path):
    """Audit 16 G3: `anm --score iqr --delta D --budget EPS` created a pure-DP ledger file and then refused the release on
    delta; that file's total could not be changed. As for the effect commands, --budget is refused first. A pure-DP score
    (kendall, test-set privacy) still creates a pure-DP file with --budget EPS and is charged."""
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, 400)
    data = tmp_path / 'pair.csv'
    pd.DataFrame({'x': x, 'y': x ** 2 + rng.normal(0, 0.1, 400)}).to_csv(data, index=False)
    anm = ['anm', str(data), '--x-bound', '0,1', '--y-bound', '-1,2', '--epsilon', '1', '--seed', '1']
    ledger = tmp_path / 'iqr.json'
    code, _, err = call(*anm, '--score', 'iqr', '--delta', '1e-6', '--ledger', str(ledger), '--budget', '3')
    assert code == 2 and '--budget 3: a new ledger without DELTA' in err and '--delta 1e-06' in err, err
    assert not ledger.exists()
    code, _, err = call(*anm, '--score', 'iqr', '--delta', '1e-6', '--ledger', str(ledger), '--budget', '3,1e-5')
    assert code == 0 and PrivacyLedger.load(ledger).spent == pytest.approx((1.0, 1e-6)), err
    pure = tmp_path / 'kendall.json'
    code, _, err = call(*anm, '--ledger', str(pure), '--budget', '3')
    assert code == 0 and PrivacyLedger.load(pure).spent == pytest.approx((1.0, 0.0)), err
    code, _, err = call(*anm, '--score', 'iqr', '--ledger', str(tmp_path / 'none.json'), '--budget', '3,1e-5')
    assert code == 2 and '--delta is required' in err and not (tmp_path / 'none.json').exists(), err


def test_flag_refusals_come_before_the_ledger_file_is_made(data_csv, tmp_path):
    """Audit 18 F4 (in part): a covariate range with lo >= hi (effect commands) and a missing --x-bound (anm release) were
    refused after a new ledger file had been made, which fixed its total. Both are refused first now."""
    ledger = tmp_path / 'study.json'
    effect = ['gformula', data_csv, '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,b', '--outcome-bounds', '0:1',
              '--epsilon', '1', '--delta', '1e-6', '--seed', '1', '--ledger', str(ledger), '--budget', '3,1e-5']
    code, _, err = call(*effect, '--covariate-bounds', 'a=3:-3,b=-3:3')
    assert code == 2 and '--covariate-bounds a=' in err and 'lo < hi' in err and not ledger.exists(), err
    trial = [a for a in effect if a not in ('--covariates', 'a,b')] + ['--randomised', '--covariate-bounds', 'a=-3:3']
    code, _, err = call('effect', *trial[1:])  # ranges without covariates were silently ignored (audit 19 F1)
    assert code == 2 and '--covariate-bounds: no --covariates are named' in err and not ledger.exists(), err
    rng = np.random.default_rng(0)
    pair = tmp_path / 'pair.csv'
    pd.DataFrame({'x': rng.uniform(0, 1, 200), 'y': rng.uniform(0, 1, 200)}).to_csv(pair, index=False)
    code, _, err = call('anm', str(pair), '--y-bound', '0,1', '--epsilon', '1', '--ledger', str(ledger), '--budget', '3')
    assert code == 2 and '--x-bound must give PUBLIC bounds' in err and not ledger.exists(), err
    code, out, err = call('anm', str(pair), '--epsilon', '1', '--dry-run')  # a plan needs no bounds
    assert code == 0 and 'nothing spent' in out, err


def test_refusals_of_the_plan_come_before_the_ledger_file_is_made(data_csv, tmp_path):
    """Audit 19 F2 (the rest of audit 18 F4): refusals that need DATA's row count or column names but no value came after
    a new ledger file was made, which fixed its total. The file is now made at the ledger check, after the plan; a valid
    run then makes it and charges it."""
    ledger = tmp_path / 'study.json'
    rng = np.random.default_rng(0)
    pair = tmp_path / 'pair.csv'
    pd.DataFrame({'x': rng.uniform(0, 1, 200), 'y': rng.uniform(0, 1, 200)}).to_csv(pair, index=False)
    anm = ['anm', str(pair), '--x-bound', '0,1', '--y-bound', '0,1', '--epsilon', '1', '--seed', '1', '--ledger', str(ledger),
           '--budget', '3']
    base = ['--treatment', 'treat', '--outcome', 'y', '--outcome-bounds', '0:1', '--epsilon', '1', '--delta', '1e-6',
            '--seed', '1', '--ledger', str(ledger), '--budget', '3,1e-5']
    refused = [(anm + ['--train-fraction', '1.5'], '--train-fraction'),
               (anm + ['--lam', '-1'], '--lam'),
               (['gformula', data_csv, '--covariates', 'a,b', '--covariate-bounds', 'a=-3:3,c=0:1', *base], 'c'),
               (['gformula', data_csv, '--covariates', 'a,treat', *base], 'treat'),
               (['aipw', data_csv, '--covariates', 'a,b', '--covariate-bounds', 'a=-3:3,c=0:1', *base], 'c'),
               (['ipw', data_csv, '--covariates', 'a,zz', '--covariate-bound', '1', '--propensity-bound', '0.05', *base], 'zz'),
               (['wate', data_csv, '--treatment', 'treat', '--outcome', 'y', '--covariates', 'a,zz', '--epsilon', '1', '--seed', '1',
                 '--ledger', str(ledger), '--budget', '3'], 'zz'),
               # audit 20 F1-F3: a total that cannot afford the release, a norm bound <= 0, levels given twice or not declared
               (['gformula', data_csv, '--covariates', 'a,b', '--covariate-bounds', 'a=-3:3,b=-3:3', *base[:-1], '0.5,1e-5'], 'exceeds the total'),
               (['gformula', data_csv, '--covariates', 'a,b', '--covariate-bounds', 'a=-3:3,b=-3:3', *base[:-1], '3,1e-9'], 'exceeds the total'),
               (['ipw', data_csv, '--covariates', 'a,b', '--covariate-bound=-1', '--propensity-bound', '0.05', *base], '--covariate-bound'),
               (['gformula', data_csv, '--covariates', 'a,cat', '--categorical', 'cat=u,u,v', '--covariate-bounds', 'a=-3:3', *base],
                'given more than once'),
               (['gformula', data_csv, '--covariates', 'a,cat', '--categorical', 'cat=u,v', '--other', 'cat=x', '--covariate-bounds',
                 'a=-3:3', *base], 'not one of the declared levels'),
               (['gformula', data_csv, '--covariates', 'a,cat', '--categorical', 'cat=u,v', '--other', 'cat=u,v', '--covariate-bounds',
                 'a=-3:3', *base], '--other takes COL=LEVEL'),
               (['gformula', data_csv, '--covariates', 'a,b', '--categorical', 'cat=u,v', '--covariate-bounds', 'a=-3:3,b=-3:3', *base],
                'not among --covariates')]
    for argv, word in refused:
        code, _, err = call(*argv)
        assert code == 2 and word in err and not ledger.exists(), (argv, err)
    code, _, err = call(*anm)
    assert code == 0 and len(PrivacyLedger.load(ledger).entries) == 1, err


def test_a_ledger_path_that_became_a_folder_is_refused_by_flag(tmp_path):
    "Audit 20 F6: a --ledger path that became a folder between the look and the ledger check ended in a traceback."
    from privcausal.cli import NewLedger, _create_ledger
    folder = tmp_path / 'study.json'
    folder.mkdir()
    with pytest.raises(ValueError, match='not a path to a ledger file'):
        _create_ledger(NewLedger(str(folder), (1.0, 0.0), '1'))
