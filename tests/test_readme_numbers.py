"""The README's printed planning numbers are what the code gives (they are public-input functions, no noise): the trial
of 2026-11-27 found the README's choose_method line showing 2.59e+03 where the code gave 2.68e+03."""
import re
from pathlib import Path

import privcausal as pc

README = (Path(__file__).resolve().parents[1] / 'README.md').read_text()
COVARIATES = ['age', 'educ', 'black', 'hisp', 'marr', 'nodeg', 're74', 're75']
BOUNDS = {'age': (16, 60), 'educ': (0, 20), 're74': (0, 100_000), 're75': (0, 100_000)}


def test_the_readme_choice_line_is_the_code_s():
    assert "pc.choose_method(len(nsw), 1.0, 1e-6, (0, 100_000), covariates, bounds, randomised=True)" in README
    shown = re.search(r'# (MethodChoice\(dim: .*?) \.\.\.\)', README).group(1)
    got = repr(pc.choose_method(722, 1.0, 1e-6, (0, 100_000), COVARIATES, BOUNDS, randomised=True))  # NSW: 722 rows
    assert got.startswith(shown), (shown, got)


def test_the_readme_plan_half_width_is_the_code_s():
    shown = float(re.search(r'\.ci_halfwidth\n# ([0-9.]+):', README).group(1))
    got = pc.plan_gformula(n=20_000, epsilon=1.0, delta=1e-6, outcome_bounds=(0, 100_000), covariates=COVARIATES,
                           covariate_bounds=BOUNDS, outcome_sd=7_000, treated_share=0.4).ci_halfwidth
    assert round(got, 1) == shown, (shown, got)
