"""The installed `privcausal` console script, run as a user would (a subprocess)."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXE = shutil.which('privcausal') or str(Path(sys.executable).parent / 'privcausal')


def cli(*args):
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=120)


def test_help_and_version():
    r = cli('--help')
    assert r.returncode == 0 and 'data' in r.stdout
    r = cli('--version')
    assert r.returncode == 0 and r.stdout.startswith('privcausal ')


def test_data_list_json_is_one_document():
    r = cli('--json', 'data', 'list')
    assert r.returncode == 0, r.stderr
    names = sorted(d['name'] for d in json.loads(r.stdout)['datasets'])
    assert names == ['adult', 'ihdp', 'nsw', 'tuebingen']


@pytest.mark.parametrize('args, needle', [(('data', 'path', 'nope'), "got 'nope'"),
                                          (('data', 'fetch'), 'name'),
                                          ((), 'usage')])
def test_bad_input_exits_2_with_a_message(args, needle):
    r = cli(*args)
    assert r.returncode == 2
    assert needle in r.stderr
