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

# (what it shows, arguments of the privcausal console script)
ANALYSES = [
]


def main():
    for title, argv in ANALYSES:
        print(f'\n== {title}\n$ privcausal {" ".join(argv)}', flush=True)
        subprocess.run([EXE, *argv], check=True, cwd=ROOT)
    print('\n== documentation site', flush=True)
    subprocess.run([sys.executable, str(ROOT / 'tools' / 'build_docs.py')], check=True, cwd=ROOT)


if __name__ == '__main__':
    main()
