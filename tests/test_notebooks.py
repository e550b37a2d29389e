"""Every notebook under nbs/ as one pytest test, through nbdev's own runner.

nbdev's runner honours `#| eval: false` and the tst_flags of settings.ini (`notest`, `slow`); set
NBDEV_FLAGS="slow" to force the full studies that are flagged slow.
"""
import os

import pytest
from nbdev.config import get_config
from nbdev.test import test_nb as _run_nb  # aliased, else pytest collects it as a test

cfg = get_config()
NBS = sorted(p for p in cfg.nbs_path.rglob('*.ipynb')
             if not any(q.startswith(('_', '.')) for q in p.relative_to(cfg.nbs_path).parts))
FORCE = os.environ.get('NBDEV_FLAGS', '').split()


@pytest.mark.parametrize('nb', NBS, ids=lambda p: str(p.relative_to(cfg.nbs_path)))
def test_notebook(nb):
    ok, secs = _run_nb(nb, skip_flags=cfg.tst_flags.split(), force_flags=FORCE, basepath=cfg.config_path)
    assert ok, f'{nb.name} failed; its traceback is in the captured stderr'


def test_found_the_notebooks():
    names = {p.name for p in NBS}
    assert {'index.ipynb', '00_mechanisms.ipynb'} <= names, names
