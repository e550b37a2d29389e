"""The README's main job: a real private analysis with each estimator, then the documentation site.

Each analysis is a call of the `privcausal` console script on a real data set (fetched from a registry
package). The estimator issues each add one line to ANALYSES. Run from the repository root:
`.venv/bin/python tools/main_job.py`.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXE = str(Path(sys.executable).parent / 'privcausal')

NSW = ['ipw', 'nsw', '--treatment', 'trt', '--outcome', 're78',
       '--covariates', 'age,educ,black,hisp,marr,nodeg,re74,re75', '--epsilon', '1.0', '--delta', '1e-6',
       '--outcome-bound', '100000', '--covariate-bound', '100000', '--propensity-bound', '0.2']
LEDGER = ['--ledger', str(ROOT / '_main_job_ledger.json')]

# (what it shows, arguments of the privcausal console script); every release is charged to one ledger file
ANALYSES = [
    ('Plan before spending: what would a private ATE of the NSW programme give at epsilon = 1? (a dry run reads only '
     'the public size of the data, spends nothing, and says what interval to expect)',
     NSW + ['--dry-run', '--treated-share', '0.41', '--outcome-sd', '7000'] + LEDGER + ['--budget', '4,1e-5']),
    ('Private ATE of the NSW job-training programme on 1978 earnings (PP-IPW, Lee, Gresele, Park & Muandet; Hajek '
     'estimator with an intercept, the defaults); public bounds: |re78| <= $100,000, covariate rows <= 100,000 in L2 '
     'norm, propensities clipped to [0.2, 0.8]. The dry run above said it: 361 rows per part are far too few for '
     'these bounds at epsilon = 1, and the interval shows it',
     NSW + LEDGER + ['--budget', '4,1e-5']),
    ('Private ATE of the NSW programme with privcausal effect: the method is chosen from public inputs only (NSW was a '
     'randomised trial, declared with --randomised, so the DP difference in means is a candidate and wins at 722 rows); '
     'every covariate\'s PUBLIC range stated from domain knowledge (0/1 columns need none), earnings in [0, 100,000]',
     ['effect', 'nsw', '--treatment', 'trt', '--outcome', 're78', '--covariates', 'age,educ,black,hisp,marr,nodeg,re74,re75',
      '--covariate-bounds', 'age=16:60,educ=0:20,re74=0:100000,re75=0:100000', '--outcome-bounds', '0:100000',
      '--epsilon', '0.5', '--delta', '1e-6', '--randomised'] + LEDGER),
    ('Private ATE with its 95% interval of a bachelor\'s degree on income above $50K in the UCI Adult data (Guha & '
     'Reiter WATE): complete training cases (n = 30,162), categorical covariates coded with the levels of the '
     'published UCI schema, the number of partitions from the public n and d, epsilon = 1',
     ['wate', 'adult-wate', '--treatment', 'degree', '--outcome', 'high_income', '--covariates',
      'age,marital_status,race,sex,occupation,us_native', '--epsilon', '1.0', '--estimand', 'ATE'] + LEDGER),
    ('Private cause-effect direction on Tübingen pair 1 (the truth is altitude -> temperature, x->y), Kendall score, '
     'test-set privacy. With these fixed public settings ANM decides y->x on this pair even without privacy: '
     'additive-noise models are a weak classifier on Tübingen (accuracy about 0.5 over all pairs, see the '
     'Tübingen reproduction); the release is still exactly as private as stated',
     ['anm', 'tuebingen:1', '--score', 'kendall', '--epsilon', '1', '--x-bound', '0,4000', '--y-bound=-10,20',
      '--split-seed', '0'] + LEDGER),
    ('The study\'s ledger: every release above, charged before its noise was drawn',
     ['ledger', 'show', LEDGER[1]]),
]


def main():
    Path(LEDGER[1]).unlink(missing_ok=True)  # a fresh study each run
    for title, argv in ANALYSES:
        print(f'\n== {title}\n$ privcausal {" ".join(argv)}', flush=True)
        subprocess.run([EXE, *argv], check=True, cwd=ROOT)
    print('\n== documentation site', flush=True)
    subprocess.run([sys.executable, str(ROOT / 'tools' / 'build_docs.py')], check=True, cwd=ROOT)


if __name__ == '__main__':
    main()
