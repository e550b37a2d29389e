"""The `privcausal anm` console command: JSON contract, refusal, NOT PRIVATE marking and errors (exit status 2)."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

EXE = str(Path(sys.executable).parent / 'privcausal')
from privcausal.release import KEYS
KEYS = KEYS + ('input',)


class Out:
    def __init__(self, returncode, stdout, stderr): self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def cli(*argv):
    "In-process run of the console script (fast); `cli_subprocess` checks the installed entry point once."
    from cli_call import call
    return Out(*call(*argv))


def cli_subprocess(*argv):
    return subprocess.run([EXE, *argv], capture_output=True, text=True)


@pytest.fixture(scope='module')
def csv(tmp_path_factory):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 400)
    df = pd.DataFrame({'a': x, 'b': x**3 + 0.3 * rng.uniform(-1, 1, 400),
                       'part': np.where(np.arange(400) % 2, 'train', 'test')})
    path = tmp_path_factory.mktemp('anm') / 'pair.csv'
    df.to_csv(path, index=False)
    return str(path)


def test_json_contract_on_csv(csv):
    out = cli_subprocess('anm', csv, '--x', 'a', '--y', 'b', '--score', 'hsic', '--epsilon', '2', '--x-bound', '1', '--y-bound', '1.3',
              '--split-column', 'part', '--train-rows', '200', '--json')
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    for k in KEYS: assert k in res
    assert res['method'] == 'ANM' and res['privacy']['noise_source'] == 'opendp' and res['privacy']['epsilon'] == 2.0
    assert (res['privacy']['public']['n_train'], res['privacy']['public']['n_test']) == (200, 200)
    assert {'score_x_to_y', 'score_y_to_x'} <= set(res['released']) and res['direction'] in ('x->y', 'y->x')
    assert res['input'] == {'data': csv, 'x': 'a', 'y': 'b'}
    assert 'non_private' not in res


def test_research_seed_is_reproducible_and_labelled(csv):
    args = ('anm', csv, '--x', 'a', '--y', 'b', '--score', 'spearman', '--epsilon', '1', '--x-bound=-1,1',
            '--y-bound', '1.3', '--seed', '4', '--json')
    r1, r2 = json.loads(cli(*args).stdout), json.loads(cli(*args).stdout)
    assert r1['released'] == r2['released'] and r1['privacy']['noise_source'] == 'numpy-research'
    assert r1['privacy']['is_secure'] is False


def test_non_private_is_marked(csv):
    out = cli('anm', csv, '--x', 'a', '--y', 'b', '--score', 'kendall', '--epsilon', '1', '--x-bound', '1', '--y-bound', '1.3',
              '--non-private', '--json')
    res = json.loads(out.stdout)
    assert res['non_private']['NOT_PRIVATE'] is True and 'NOT PRIVATE' in out.stderr


def test_refusal_is_null(csv):
    res = json.loads(cli('anm', csv, '--x', 'a', '--y', 'b', '--score', 'iqr', '--epsilon', '1', '--delta', '1e-6',
                         '--x-bound', '1', '--y-bound', '1.3', '--json').stdout)
    assert res['released']['refused'] is True and res['released']['score_x_to_y'] is None
    assert res['direction'] is None and res['privacy']['delta'] == 1e-6


def test_tuebingen_pair():
    res = json.loads(cli('anm', 'tuebingen:1', '--epsilon', '1', '--x-bound', '0,4000', '--y-bound=-10,20', '--split-seed', '0',
                         '--json').stdout)
    assert res['privacy']['public']['n_test'] == 175 and res['input']['data'] == 'tuebingen:1'


@pytest.mark.parametrize('argv,msg', [
    (['--epsilon', '1', '--y-bound', '1.3'], '--x-bound'),
    (['--epsilon', '1', '--x-bound', '0.5', '--y-bound', '1.3'], 'outside the public bounds'),
    (['--epsilon', '-1', '--x-bound', '1', '--y-bound', '1.3'], 'epsilon'),
    (['--epsilon', '1', '--x-bound', '1', '--y-bound', '1.3', '--score', 'iqr', '--delta', '2'], 'delta'),
    (['--epsilon', '1', '--x-bound', '1', '--y-bound', '1.3', '--lam', '0'], 'lam'),
    (['--epsilon', '1', '--x-bound', '1', '--y-bound', '1.3', '--privacy', 'both'], 'HSIC score only'),
    (['--epsilon', '1', '--x-bound', 'wide', '--y-bound', '1.3'], '--x-bound'),
    (['--epsilon', '1', '--x-bound', '1', '--y-bound', '1.3', '--split-column', 'nope', '--train-rows', '200'], 'nope'),
])
def test_errors_exit_2(csv, argv, msg):
    out = cli('anm', csv, '--x', 'a', '--y', 'b', *argv)
    assert out.returncode == 2 and msg in out.stderr, out.stderr
    assert out.stdout == ''


def test_iqr_json_has_a_fixed_shape(tmp_path):
    # one column has IQR exactly 0 on the test part, its neighbour has IQR > 0: the JSON must have the same shape
    x0 = np.r_[-.5, -.4, np.zeros(8), .4, .5]
    x1 = x0.copy(); x1[2] = -.45
    shapes = []
    for k, xt in enumerate((x0, x1)):
        rng = np.random.default_rng(0)
        x = np.r_[rng.uniform(-1, 1, 12), xt]
        df = pd.DataFrame({'a': x, 'b': np.clip(x**3 + 0.3 * rng.uniform(-1, 1, 24), -1.3, 1.3),
                           'part': ['train'] * 12 + ['test'] * 12})
        path = tmp_path / f'n{k}.csv'; df.to_csv(path, index=False)
        for seed in range(20):
            res = json.loads(cli('anm', str(path), '--x', 'a', '--y', 'b', '--score', 'iqr', '--epsilon', '1', '--delta', '1e-3',
                                 '--x-bound', '1', '--y-bound', '1.3', '--split-column', 'part', '--train-rows', '12', '--seed', str(seed),
                                 '--json').stdout)
            assert res['privacy']['guarantee_holds'] is True and res['privacy']['caveats'] == []
            shapes.append((k, tuple(sorted(res)), tuple(sorted(res['released']))))
    assert {s[1:] for s in shapes if s[0] == 0} == {s[1:] for s in shapes if s[0] == 1}
    assert all(sum(name.startswith('noisy_distance') for name in t) == 8 for _, _, t in shapes)


def test_numeric_strings_are_refused(tmp_path):
    path = tmp_path / 's.csv'
    pd.DataFrame({'a': ['0.1x'] + [str(v) for v in np.linspace(-1, 1, 39)], 'b': np.linspace(-1, 1, 40)}).to_csv(path, index=False)
    out = cli('anm', str(path), '--x', 'a', '--y', 'b', '--epsilon', '1', '--x-bound', '1', '--y-bound', '1')
    assert out.returncode == 2 and "--x 'a' is not a column of numbers" in out.stderr, out.stderr


def test_options_are_the_plan_fields():
    "`privcausal anm` is generated from ANMPlan: every field with a flag is an option; no hand-kept table of flags is left."
    import dataclasses, re
    from privcausal import anm, cli
    from privcausal.method import field_flag
    help_text = cli.build_parser()._subparsers._group_actions[0].choices['anm'].format_help()
    for f in dataclasses.fields(anm.ANMPlan):
        shown = f.init and f.metadata.get('cli', True) and f.name not in ('n', 'epsilon', 'delta')
        listed = re.search(re.escape(field_flag(f)) + r'(?![\w-])', help_text) is not None
        assert listed == shown or f.name in ('epsilon', 'delta'), f.name
    assert not any(hasattr(cli, name) for name in ('FLAGS_BY_COMMAND', 'FLAGS', 'flag_names'))
    assert '--clip-data' in help_text and '--allow-unsafe' in help_text  # a field with a flag like any other


@pytest.mark.parametrize('argv,flag,text', [
    (['--privacy', 'both'], '--privacy', 'HSIC score only'),
    (['--lam', '0'], '--lam', '--lam'),
    (['--score', 'iqr', '--delta', '1e-3', '--iqr-threshold', 'paper'], '--iqr-threshold', 'NOT hold'),
    (['--train-fraction', '0.3', '--split-column', 'part'], '--split-column', 'not both'),
])
def test_json_errors_name_the_flag(csv, argv, flag, text):
    out = cli('anm', csv, '--x', 'a', '--y', 'b', '--epsilon', '1', '--x-bound', '1', '--y-bound', '1.3', *argv, '--json')
    doc = json.loads(out.stderr)
    assert out.returncode == 2 and out.stdout == '' and doc['flag'] == flag and text in doc['error'], doc
    assert 'privacy=' not in doc['error'] and 'lam must' not in doc['error']


def test_unsafe_refusal_names_the_flag(csv):
    "The refusal of an option that voids the guarantee tells a command-line user the switch that accepts it (the field's flag, by `flag_message`), never the Python keyword; the switch runs it, announced and marked."
    base = ('anm', csv, '--x', 'a', '--y', 'b', '--epsilon', '1', '--x-bound', '1', '--y-bound', '1.3', '--score', 'iqr',
            '--delta', '1e-3', '--iqr-threshold', 'paper', '--seed', '0')
    for out in (cli(*base), cli(*base, '--json')):
        text = out.stderr
        assert out.returncode == 2 and 'Pass --allow-unsafe to run it anyway' in text, text
        assert 'allow_unsafe' not in text and '--epsilon=' not in text  # the tests' own epsilon is not the user's --epsilon
    ran = cli(*base, '--allow-unsafe', '--json')
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)['privacy']['guarantee_holds'] is False
    assert '--allow-unsafe: the stated privacy guarantee does NOT hold' in ran.stderr and 'allow_unsafe' not in ran.stderr


def test_clip_data(csv):
    "--clip-data (what it clips: the data, to --x-bound/--y-bound) is announced; without it values outside are refused."
    base = ('anm', csv, '--x', 'a', '--y', 'b', '--epsilon', '1', '--x-bound', '1', '--y-bound', '1', '--seed', '0', '--json')
    refused = cli(*base)
    doc = json.loads(refused.stderr)  # names the column's flag first (review 8 F4), and the way out
    assert refused.returncode == 2 and doc['flag'] == '--y' and '--clip-data' in doc['error'], doc
    out = cli(*base, '--clip-data')
    assert out.returncode == 0 and '--clip-data: values' in out.stderr, out.stderr


def test_dry_run_plans_at_the_margin(csv):
    base = ('anm', csv, '--x', 'a', '--y', 'b', '--epsilon', '1', '--dry-run', '--json')
    d = json.loads(cli(*base).stdout)
    assert d['margin'] == 0.05 and d['prob_correct'] > 0.5 and d['n'] == 400   # no bounds needed to plan
    d = json.loads(cli(*base, '--margin', '0.1', '--score', 'hsic', '--hsic-bandwidths', '0.3').stdout)
    assert d['margin'] == 0.1 and d['settings']['hsic_bandwidths'] == [0.3, 0.3]
    d = json.loads(cli(*base, '--split-column', 'part', '--train-rows', '200').stdout)
    assert (d['n_train'], d['n_test']) == (200, 200) and 'the split size --train-rows declares' in d['data_read']


def test_an_unreadable_file_is_an_error_document(tmp_path):
    "A file that is not UTF-8 text is one JSON document, exit 2, naming DATA; the codec's byte and position are not shown (review 9 G4: they come from the data)."
    path = tmp_path / 'binary.csv'
    path.write_bytes(b'\xff\xfe\x00binary')
    out = cli('anm', str(path), '--epsilon', '1', '--x-bound', '1', '--y-bound', '1', '--json')
    error = json.loads(out.stderr)['error']
    assert out.returncode == 2 and out.stdout == '' and 'not UTF-8' in error and '0xff' not in error and 'position' not in error, error


def test_part_sizes_name_the_flag_that_set_them(tmp_path):
    "Audit 8 A5: a training part too small for the plan names --train-rows (declared) or --train-fraction."
    rng = np.random.default_rng(0)
    path = tmp_path / 's.csv'
    pd.DataFrame({'a': rng.uniform(-1, 1, 100), 'b': rng.uniform(-1, 1, 100), 's': ['train'] * 3 + ['test'] * 97}).to_csv(path, index=False)
    base = ('anm', str(path), '--x', 'a', '--y', 'b', '--epsilon', '1', '--dry-run', '--json')
    for extra, flag in ((('--split-column', 's', '--train-rows', '3'), '--train-rows'), (('--train-fraction', '0.03'), '--train-fraction')):
        out = cli(*base, *extra)
        assert out.returncode == 2 and json.loads(out.stderr)['flag'] == flag, out.stderr
