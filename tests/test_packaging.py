"""A built wheel installed (non-editable) in a fresh virtual environment gives a working library and console script."""
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.xdist_group('site')  # the worker that builds the site: its nbdev pass rewrites privcausal/_modidx.py, which the wheel copies


@pytest.fixture(scope='module')
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp('dist')
    subprocess.run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '-q', '-w', str(out), str(ROOT)], check=True,
                   timeout=600)
    (whl,) = out.glob('privcausal-*.whl')
    return whl


def test_wheel_holds_the_exported_modules(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    modules = {Path(n).name for n in names if n.startswith('privcausal/') and n.endswith('.py')}
    exported = {p.name for p in (ROOT / 'privcausal').glob('*.py')}
    assert modules == exported, (modules ^ exported)
    meta = next(n for n in names if n.endswith('entry_points.txt'))
    assert 'privcausal = privcausal.cli:main' in zipfile.ZipFile(wheel).read(meta).decode()
    assert not any(n.startswith(('nbs/', 'tests/')) for n in names)


def test_fresh_venv_install_works(wheel, tmp_path):
    venv = tmp_path / 'venv'
    subprocess.run([sys.executable, '-m', 'venv', str(venv)], check=True)
    py, exe = venv / 'bin' / 'python', venv / 'bin' / 'privcausal'
    subprocess.run([str(py), '-m', 'pip', 'install', '-q', str(wheel)], check=True, timeout=900)
    r = subprocess.run([str(exe), '--version'], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip().startswith('privcausal '), r.stderr
    code = ('import numpy as np; from privcausal.mechanisms import laplace_mechanism;'
            'r = laplace_mechanism(0.5, 1.0, 1.0); assert r.noise == "opendp" and r.is_secure, r;'
            'import privcausal.accounting, privcausal.data; print("ok")')
    r = subprocess.run([str(py), '-c', code], capture_output=True, text=True, cwd=tmp_path)  # not the repo: no shadowing
    assert r.returncode == 0 and r.stdout.strip() == 'ok', r.stderr
    r = subprocess.run([str(py), '-m', 'pip', 'show', 'nbdev'], capture_output=True, text=True)
    assert r.returncode != 0, 'nbdev is a dev dependency and must not be installed by the library'
