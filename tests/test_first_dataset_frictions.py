"""A first real data set, as a new user meets it: what a dry run reads and assumes, --covariate-scale on 0/1 columns,
the README's ledger and output, no litter beside a ledger (issue 18, part 4). One test per friction."""
import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from privcausal.accounting import PrivacyLedger
from privcausal.cli import build_parser
from cli_call import call

ROOT = Path(__file__).resolve().parents[1]



@pytest.fixture(scope='module')
def survey(tmp_path_factory):
    "A real-looking file: an earnings outcome, a plain numeric 0/1 column and two continuous covariates."
    rng = np.random.default_rng(18)
    n = 800
    age, educ = rng.integers(18, 60, n), rng.integers(6, 18, n)
    married = rng.binomial(1, 0.4, n)  # numeric 0/1, not a --categorical dummy
    t = rng.binomial(1, expit(0.05 * (age - 35) + 0.5 * married - 0.3))
    y = np.clip(2000 + 300 * educ + 1500 * t + rng.normal(0, 3000, n), 0, 40_000)
    p = tmp_path_factory.mktemp('survey') / 'survey.csv'
    pd.DataFrame({'age': age, 'educ': educ, 'married': married, 'treat': t, 'earnings': y}).to_csv(p, index=False)
    return str(p)


IPW = ['--treatment', 'treat', '--outcome', 'earnings', '--covariates', 'age,educ,married', '--epsilon', '1', '--delta',
       '1e-6', '--outcome-bound', '40000', '--propensity-bound', '0.05']


def test_dry_run_says_what_it_read_of_data(survey):
    code, out, err = call('ipw', survey, *IPW, '--covariate-bound', '80', '--dry-run')
    assert code == 0, err
    assert 'no data read' not in out
    assert 'read DATA for its number of rows (N=800)' in out and 'nothing was spent' in out
    code, out, err = call('ipw', survey, *IPW, '--covariate-bound', '80', '--dry-run', '--json')
    assert json.loads(out)['data_read'].startswith('read DATA for its number of rows (N=800)')
    help_text = next(a.help for a in build_parser()._subparsers._group_actions[0].choices['ipw']._actions
                     if '--dry-run' in a.option_strings)
    assert 'DATA is read only for its number of rows' in help_text


def test_plan_states_its_assumptions_on_its_first_line_and_they_are_easy_to_set(survey):
    code, out, _ = call('ipw', survey, *IPW, '--covariate-bound', '80', '--dry-run')
    first = out.splitlines()[0]
    assert 'assuming treated share 0.5*' in first and 'outcome sd 20000* (C/2)' in first
    assert '--treated-share P, --outcome-sd SD' in out
    code, out, _ = call('ipw', survey, *IPW, '--covariate-bound', '80', '--dry-run', '--json', '--treated-share', '0.35',
                        '--outcome-sd', '3000', '--outcome-mean', '8000', '--propensity-sd', '0.4')
    d = json.loads(out)
    assert d['assumed_defaults'] == [] and d['treated_share'] == 0.35 and d['outcome_sd'] == 3000
    code, out, _ = call('ipw', survey, *IPW, '--covariate-bound', '80', '--dry-run', '--json')
    assert json.loads(out)['sampling_sd'] > 4 * d['sampling_sd']  # the default C/2 overstated this spread
    code, out, err = call('ipw', survey, *IPW, '--covariate-bound', '80', '--dry-run', '--outcome-mean', '1,2,3')
    assert code == 2 and '--outcome-mean takes M or M1,M0' in err
    code, out, _ = call('wate', survey.replace('survey.csv', 'survey.csv'), '--treatment', 'treat', '--outcome', 'married',
                        '--covariates', 'age,educ', '--epsilon', '1', '--dry-run')
    assert out.splitlines()[0].startswith('WATE plan assuming V = 1/n') and '--sampling-variance' in out.splitlines()[0]


def test_covariate_scale_help_matches_what_it_does_on_plain_01_columns(survey):
    help_text = next(a.help for a in build_parser()._subparsers._group_actions[0].choices['ipw']._actions
                     if '--covariate-scale' in a.option_strings)
    assert 'COL=1 for a 0/1 column' in help_text and 'dummies --categorical makes' in help_text
    assert '0/1 dummies default to 1' not in help_text  # the old claim, which plain 0/1 columns contradicted
    code, out, err = call('ipw', survey, *IPW, '--covariate-scale', 'age=60,educ=20', '--seed', '1')
    assert code == 2 and "['married'] too (COL=1 for a 0/1 column" in err and out == ''
    code, out, err = call('ipw', survey, *IPW, '--covariate-scale', 'age=60,educ=20,married=1', '--seed', '1', '--json')
    assert code == 0, err


def _readme_python(containing='pp_ipw('):
    "The README's Python example that contains `containing`."
    text = (ROOT / 'README.md').read_text()
    return next(b for b in re.findall(r'```python\n(.*?)```', text, re.S) if containing in b)


def test_readme_ledger_can_pay_for_a_pp_ipw_release():
    "The README's example builds the ledger a study needs: with a delta, so PP-IPW's (epsilon, delta) releases fit."
    code = _readme_python()
    ledger_line = next(l for l in code.splitlines() if 'PrivacyLedger(' in l)
    ledger = eval(ledger_line.split('=', 1)[1].split('#')[0].strip(), {'PrivacyLedger': PrivacyLedger})
    assert ledger.delta > 0
    assert 'pp_ipw(' in code and 'ledger=study' in code.split('pp_ipw(', 1)[1]


def test_readme_example_runs_and_its_printed_output_is_the_current_format(tmp_path):
    "Run the README's Python example (real data, secure noise): it charges its ledger, and the outputs it shows as comments have the current display format."
    code = _readme_python()
    ns = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out): exec(compile(code, 'README.md', 'exec'), ns)
    study = ns['study']
    assert len(study.entries) == 2 and study.spent[1] > 0  # the WATE and the PP-IPW release, both charged
    shown = [l.split('# ', 1)[1] for l in code.splitlines() if l.startswith('# ')]
    for value, comment in ((ns['effect'], shown[0]), (ns['ipw_effect'], shown[1])):
        pattern = re.sub(r'-?\d+(\.\d+)?(e[+-]?\d+)?', r'NUM', repr(value))
        assert re.sub(r'-?\d+(\.\d+)?(e[+-]?\d+)?', r'NUM', comment) == pattern, (comment, repr(value))


def test_readme_effect_example_runs_and_shows_the_current_format():
    "The README's effect() example runs (real data, secure noise), charges its ledger once, and its shown outputs have the current format."
    code = _readme_python('pc.effect(')
    ns = {}
    with contextlib.redirect_stdout(io.StringIO()): exec(compile(code, 'README.md', 'exec'), ns)
    assert len(ns['study'].entries) == 1
    shown = [l.split('# ', 1)[1] for l in code.splitlines() if l.startswith('# ')]
    num = lambda s: re.sub(r'-?\d+(\.\d+)?(e[+-]?\d+)?', 'NUM', s)
    assert num(shown[1]) == num(repr(ns['trial'])), (shown[1], repr(ns['trial']))
    assert num(shown[0].split(' ...')[0]) in num(f"MethodChoice(dim: {ns['trial'].choice})")  # choose_method's repr, as shown
