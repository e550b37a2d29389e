"""privcausal.checks is the bottom layer of argument checks: it imports no other privcausal module, no module
imports another's private names, and no module keeps its own copy of a check that lives in checks."""
import ast
from pathlib import Path

import pytest

import privcausal
from privcausal import checks

PKG = Path(privcausal.__file__).resolve().parent
MODULES = sorted(p for p in PKG.glob('*.py') if p.name not in ('_modidx.py',))


def _tree(path):
    return ast.parse(path.read_text(), filename=str(path))


def _own(module, level, current_pkg='privcausal'):
    "The privcausal module named by an import (absolute or relative), or None if it is not one of ours."
    if level:  # relative to privcausal/ (modules are flat)
        return 'privcausal' + ('.' + module if module else '')
    if module and (module == 'privcausal' or module.startswith('privcausal.')): return module
    return None


def _private(name):
    return name.startswith('_') and not (name.startswith('__') and name.endswith('__'))


def private_imports(path):
    "Every place `path` imports or reads a private name of another privcausal module: [(line, text)]."
    tree, found = _tree(path), []
    aliases = {}  # local name -> privcausal module it refers to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = _own(node.module, node.level)
            if mod is None: continue
            for a in node.names:
                if mod == 'privcausal':  # `from . import anm as _anm`: a module, not a name
                    aliases[a.asname or a.name] = f'privcausal.{a.name}'
                elif _private(a.name):
                    found.append((node.lineno, f'from {"." * node.level}{node.module or ""} import {a.name}'))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if _own(a.name, 0):
                    aliases[a.asname or a.name.split('.')[0]] = a.name if a.asname else a.name.split('.')[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            chain = []
            while isinstance(base, ast.Attribute): chain.append(base.attr); base = base.value
            if isinstance(base, ast.Name) and base.id in aliases:
                found.append((node.lineno, '.'.join([base.id, *reversed(chain), node.attr])))
    return found


def defined_functions(path):
    return {n.name for n in ast.walk(_tree(path)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_checks_imports_no_other_privcausal_module():
    tree = _tree(PKG / 'checks.py')
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or _own(node.module, 0)):
            bad.append(f'line {node.lineno}: from {"." * node.level}{node.module or ""}')
        elif isinstance(node, ast.Import):
            bad += [f'line {node.lineno}: import {a.name}' for a in node.names if _own(a.name, 0)]
    assert not bad, f'privcausal.checks must be the bottom layer, but imports {bad}'


@pytest.mark.parametrize('path', MODULES, ids=lambda p: p.name)
def test_no_module_imports_a_private_name_of_another(path):
    found = private_imports(path)
    assert not found, f'{path.name} uses private names of other privcausal modules: {found}'


def test_private_import_scan_can_fail(tmp_path):
    "The scan above finds each form it is meant to find (so a pass means something)."
    src = ('from .propensity import _augment\nfrom privcausal.ipw import _normaliser, pp_ipw\n'
           'from . import anm as _anm\nimport privcausal.bayes_wate as w\nimport privcausal\n'
           '_anm._check_options()\nw._check_int(1)\nprivcausal.data._as_array(1)\n'
           'from .data import dummy_code as _dummy_code\nfrom privcausal import __version__\n_anm.check_options()\n')
    p = tmp_path / 'm.py'
    p.write_text(src)
    got = [t for _, t in private_imports(p)]
    assert got == ['from .propensity import _augment', 'from privcausal.ipw import _normaliser',
                   '_anm._check_options', 'w._check_int', 'privcausal.data._as_array'], got


CHECK_NAMES = {n for n in vars(checks) if n.lstrip('_').startswith('check_') and callable(getattr(checks, n))
               and getattr(getattr(checks, n), '__module__', None) == 'privcausal.checks'}


def test_checks_defines_the_shared_checks():
    expected = {'check_epsilon', 'check_delta', 'check_sensitivity', 'check_value', 'check_positive', 'check_bound',
                'check_finite_number', 'check_fraction', 'check_int', 'check_size', 'check_choice', 'check_estimand',
                'check_calibration', 'check_lam', 'check_tol', 'check_constant', 'check_propensity_bounds',
                'check_truncation', 'check_numeric_dtype', 'check_finite', 'check_binary_treatment',
                'check_binary_outcome', 'check_same_index', 'check_unit_ball'}
    assert expected <= CHECK_NAMES, expected - CHECK_NAMES


@pytest.mark.parametrize('path', [p for p in MODULES if p.name != 'checks.py'], ids=lambda p: p.name)
def test_no_module_redefines_a_check_of_checks(path):
    "A module may import a check from privcausal.checks, never define its own of the same name (public or private)."
    dup = sorted(n for n in defined_functions(path)
                 if (n.startswith('check_') or n.startswith('_check_')) and n.lstrip('_') in CHECK_NAMES)
    assert not dup, f'{path.name} defines {dup}, which privcausal.checks already provides'


@pytest.mark.parametrize('module', sorted(p.stem for p in MODULES if p.stem not in ('checks', '__init__', '_modidx')))
def test_checks_are_imported_from_checks_only(module):
    "A module that uses the checks imports them from privcausal.checks and does not offer them as its own API."
    import importlib
    mod = importlib.import_module(f'privcausal.{module}')
    shared = {n for n in getattr(mod, '__all__', []) if hasattr(checks, n) and getattr(mod, n) is getattr(checks, n)}
    assert not shared, f'privcausal.{module} re-exports {sorted(shared)}; import them from privcausal.checks'


def test_error_messages_name_the_argument_and_no_private_value():
    for f, args, text in [
            (checks.check_positive, (float('nan'), 'outcome_bound'), 'outcome_bound must be a finite number > 0'),
            (checks.check_fraction, (1.0, 'treated_share'), 'treated_share must lie in (0, 1)'),
            (checks.check_int, (3, 'n_train', 4), 'n_train must be an integer >= 4'),
            (checks.check_choice, ('ATX', checks.ESTIMANDS, 'estimand'), "estimand must be one of 'ATE', 'ATT', 'ATC'"),
            (checks.check_lam, (2.0, 'lam (lambda of eq. (5))', 1e-8, 1), 'lam (lambda of eq. (5)) must be in [1e-08, 1]')]:
        with pytest.raises(ValueError) as e: f(*args)
        assert text in str(e.value)
    with pytest.raises(ValueError) as e: checks.check_binary_outcome([0, 1, 0.123456, 7])
    assert 'outcome must be binary' in str(e.value) and '0.123456' not in str(e.value) and '7' not in str(e.value)
    with pytest.raises(ValueError) as e: checks.check_binary_treatment([0, 1, 0.654321])
    assert '0.654321' not in str(e.value)
