"""Property tests of privcausal.accounting: when parallel composition is allowed, delta sums, pure-DP ledgers.

Each rule is checked against a brute-force reading of the part labels, so that a check which only compares label
strings (the old behaviour) fails here.
"""
import itertools
import math

import numpy as np
import pytest

from privcausal.accounting import (BudgetExceededError, PrivacyCost, PrivacyLedger, advanced, charge, parallel,
                                   part_atoms, sequential)

ATOMS = ['D_m', 'D_n', 'D_k', 'partition 3']


def _labels():
    "Every label built from up to two atoms, plus 'all' and composite labels containing 'all'."
    one = list(ATOMS)
    two = [f'{a} + {b}' for a, b in itertools.combinations(ATOMS, 2)]
    return one + two + ['all', 'D_m + all', 'D_n+D_k']


def _disjoint_by_brute_force(labels):
    sets = []
    for lab in labels:
        atoms = {a.strip() for a in lab.split('+')}
        if 'all' in atoms: return False  # every record: overlaps everything
        sets.append(atoms)
    return all(not (a & b) for a, b in itertools.combinations(sets, 2))


@pytest.mark.parametrize('k', [2, 3])
def test_parallel_accepts_exactly_the_disjoint_parts(k):
    n_checked = 0
    for labels in itertools.permutations(_labels(), k):
        costs = [PrivacyCost(0.1 * (i + 1), 1e-7 * (i + 1), part=lab, split='one split') for i, lab in enumerate(labels)]
        if _disjoint_by_brute_force(labels):
            c = parallel(*costs)
            assert (c.epsilon, c.delta) == (max(x.epsilon for x in costs), max(x.delta for x in costs))
            assert part_atoms(c.part) == set().union(*(part_atoms(lab) for lab in labels))
        else:
            with pytest.raises(ValueError, match='parallel composition needs disjoint parts'):
                parallel(*costs)
        n_checked += 1
    assert n_checked > 100


def test_the_audit_reproduction_and_the_pp_ipw_call():
    S = 'one split'
    with pytest.raises(ValueError, match="'all', which overlaps every part"):
        parallel(PrivacyCost(1, split=S), PrivacyCost(1, part='D_n', split=S))
    with pytest.raises(ValueError, match="'all'"):
        parallel(PrivacyCost(1, part='D_n', split=S), PrivacyCost(1, split=S))  # either order
    c = parallel(PrivacyCost(0.5, 1e-6, part='D_m', split=S), PrivacyCost(0.5, 1e-6, part='D_n', split=S), label='PP-IPW ATE')
    assert (c.epsilon, c.delta, c.part, c.composition, c.split) == (0.5, 1e-6, 'D_m + D_n', 'parallel', S)
    # a composite result is the union of its atoms: composing it again with one of them is refused
    with pytest.raises(ValueError, match=r"share \['D_m'\]"):
        parallel(c, PrivacyCost(0.1, part='D_m', split=S))
    assert parallel(c, PrivacyCost(0.1, part='D_k', split=S)).epsilon == 0.5


def test_parts_of_different_splits_are_never_disjoint():
    # the independent review's case: the 'test' part of one random split and the 'train' part of another share records
    with pytest.raises(ValueError, match='ONE declared partition'):
        parallel(PrivacyCost(1, part='test', split='seed 0'), PrivacyCost(1, part='train', split='seed 1'))
    with pytest.raises(ValueError, match='ONE declared partition'):
        parallel(PrivacyCost(1, part='D_m'), PrivacyCost(1, part='test'))  # no declared split at all


def test_sequential_labels_the_union_and_never_claims_less_than_the_sum():
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(1, 6))
        parts = rng.choice(_labels(), size=k)
        costs = [PrivacyCost(float(rng.uniform(0.01, 2)), float(rng.uniform(0, 0.1)), part=str(p)) for p in parts]
        c = sequential(costs)
        assert math.isclose(c.epsilon, math.fsum(x.epsilon for x in costs), rel_tol=1e-15)
        assert c.delta == math.fsum(x.delta for x in costs)
        expected = set().union(*(part_atoms(x.part) for x in costs))
        assert part_atoms(c.part) == ({'all'} if 'all' in expected else expected)


@pytest.mark.parametrize('deltas', [(0.5, 0.5), (0.3,) * 4, (0.9999999999999999, 1e-16), (0.999, 0.001)])
def test_sequential_delta_at_or_above_one_is_an_error(deltas):
    with pytest.raises(ValueError, match='no privacy guarantee'):
        sequential([PrivacyCost(1.0, d) for d in deltas])


def test_sequential_delta_just_below_one_is_kept_exact():
    c = sequential(PrivacyCost(1.0, 0.5), PrivacyCost(1.0, 0.4999))
    assert c.delta == 0.5 + 0.4999  # not clamped


@pytest.mark.parametrize('tiny', [5e-324, 1e-320, 1e-300, 1e-100, 1e-12])
def test_pure_dp_ledger_refuses_any_positive_delta(tiny):
    ledger = PrivacyLedger(1.0)
    with pytest.raises(BudgetExceededError, match=r'pure-DP ledger \(delta=0\)'):
        ledger.spend(PrivacyCost(0.1, tiny))
    with pytest.raises(BudgetExceededError):
        charge(ledger, parallel(PrivacyCost(0.1, 0.0, part='D_m', split='s'), PrivacyCost(0.1, tiny, part='D_n', split='s')))
    assert ledger.entries == () and ledger.spent == (0.0, 0.0)  # nothing recorded
    ledger.spend(PrivacyCost(0.1, 0.0))
    assert len(ledger.entries) == 1


def test_approximate_ledger_delta_limit():
    ledger = PrivacyLedger(10.0, 1e-5)
    ledger.spend(PrivacyCost(1.0, 6e-6))
    with pytest.raises(BudgetExceededError, match='delta'):
        ledger.spend(PrivacyCost(1.0, 5e-6))
    ledger.spend(PrivacyCost(1.0, 4e-6))  # exactly fills it
    assert math.isclose(ledger.spent[1], 1e-5) and len(ledger.entries) == 2


def test_advanced_refuses_delta_at_or_above_one():
    with pytest.raises(ValueError, match='no guarantee'):
        advanced(PrivacyCost(0.1, 0.01), k=100, delta_slack=1e-6)


def test_part_labels_are_validated():
    for bad in ('', '   ', None, 3):
        with pytest.raises(ValueError, match='part must be a non-empty string'):
            PrivacyCost(1.0, part=bad)
    for bad in ('D_m + ', '+', 'D_m ++ D_n'):
        with pytest.raises(ValueError, match="empty name between '\\+' signs"):
            part_atoms(bad)
        with pytest.raises(ValueError, match="empty name"):
            PrivacyCost(1.0, part=bad)
    assert part_atoms(' D_m +D_n ') == {'D_m', 'D_n'} and part_atoms('all + D_m') == {'all'}


# ---- a ledger kept in a file (the CLI's --ledger)
import json
import multiprocessing as mp

from privcausal.accounting import BudgetExceededError, PrivacyCost, PrivacyLedger, parallel


def _spend_once(path, q):
    try:
        PrivacyLedger.load(path, autosave=True).spend(PrivacyCost(0.3, label='one analyst'))
        q.put('ok')
    except BudgetExceededError:
        q.put('refused')


def test_ledger_file_round_trip(tmp_path):
    path = tmp_path / 'l.json'
    led = PrivacyLedger(2.0, 1e-5, name='study')
    led.spend(parallel(PrivacyCost(0.5, 1e-6, 'w', 'gaussian', 'D_m', params={'sigma': 0.8, 'bounds': (0.1, 0.9)}, split='s'),
                       PrivacyCost(0.5, 1e-6, 'ATE', 'gaussian', 'D_n', split='s')))
    led.save(path)
    back = PrivacyLedger.load(path)
    assert back.entries == led.entries and back.spent == led.spent and (back.epsilon, back.delta) == (2.0, 1e-5)
    assert json.loads(path.read_text())['remaining'] == [1.5, pytest.approx(1e-5 - 1e-6)]


def test_autosave_writes_before_returning_and_refuses_overspend(tmp_path):
    path = tmp_path / 'l.json'
    PrivacyLedger(1.0).save(path)
    led = PrivacyLedger.load(path, autosave=True)
    led.spend(PrivacyCost(0.7, label='first'))
    assert [e['label'] for e in json.loads(path.read_text())['entries']] == ['first']   # on disk already
    with pytest.raises(BudgetExceededError):
        led.spend(PrivacyCost(0.4, label='second'))
    assert len(json.loads(path.read_text())['entries']) == 1                             # a refusal writes nothing


def test_concurrent_processes_cannot_overspend(tmp_path):
    path = str(tmp_path / 'l.json')
    PrivacyLedger(1.0).save(path)
    ctx = mp.get_context('fork')
    q = ctx.Queue()
    procs = [ctx.Process(target=_spend_once, args=(path, q)) for _ in range(6)]
    for p in procs: p.start()
    for p in procs: p.join(30)
    outcomes = sorted(q.get(timeout=5) for _ in procs)
    assert outcomes.count('ok') == 3 and outcomes.count('refused') == 3, outcomes   # 3 x 0.3 fit in 1.0, a 4th does not
    assert PrivacyLedger.load(path).spent[0] == pytest.approx(0.9)


def test_corrupt_or_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match='does not exist'):
        PrivacyLedger.load(tmp_path / 'nope.json')
    (tmp_path / 'bad.json').write_text('{not json')
    with pytest.raises(ValueError, match='not valid JSON'):
        PrivacyLedger.load(tmp_path / 'bad.json')
