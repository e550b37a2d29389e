"""Checks of privcausal.method beyond its notebook: documentation of classes a notebook cell defines, renamed
keywords, and the inverse planner `solve_plan`."""
import dataclasses
import inspect

import pytest
from fastcore.docments import docments

from privcausal import method
from privcausal.method import Plan, exported_twin, field_docs, public, renamed


def _cell_class(src, name):
    "A class made as a notebook cell makes it: module `__main__`, no source file to read."
    ns = {'__name__': '__main__'}
    exec(compile('import dataclasses\nfrom privcausal.method import Plan, public\n' + src, '<cell without source>', 'exec'), ns)
    return ns[name]


def test_a_cell_plan_reads_its_exported_twin():
    "A plan class a notebook cell defines has the field docs of the class the library exports under its name."
    from privcausal.doubly_robust import AIPWPlan
    cell = _cell_class('@dataclasses.dataclass(frozen=True, kw_only=True)\nclass AIPWPlan(Plan):\n    floor: float = public(0.1)\n',
                       'AIPWPlan')
    assert exported_twin(cell) is AIPWPlan and exported_twin(AIPWPlan) is None
    docs = field_docs(cell)
    assert docs['floor'] == field_docs(AIPWPlan)['floor'] != '' and docs['epsilon'].startswith('$\\varepsilon$')
    assert (cell.fields_table().doc != '').all()
    assert cell.__delwrap__ is AIPWPlan  # what fastcore's docments follows


def test_options_documented_by_a_cell_plan_need_no_workaround():
    "A function whose `**options` are a cell plan's fields (pp_ipw's pattern) gets their docs from fastcore's docments."
    import privcausal.ipw as ipw
    cell = _cell_class('@dataclasses.dataclass(frozen=True, kw_only=True)\nclass IPWPlan(Plan):\n    d: int = public()\n', 'IPWPlan')
    def fn(x,  # the x
           **options): pass
    P = inspect.Parameter
    names = [f.name for f in dataclasses.fields(ipw.IPWPlan) if f.init]
    fn.__signature__ = inspect.signature(fn).replace(parameters=[P('x', P.POSITIONAL_OR_KEYWORD)]
                                                     + [P(k, P.KEYWORD_ONLY, default=None) for k in names])
    fn.__delwrap__ = cell  # no `_readable` swap
    d = docments(fn)
    assert [k for k in names if not d.get(k)] == [] and d['x'] == 'the x'


def test_a_class_without_twin_or_source_has_no_docs_and_no_error():
    cell = _cell_class('@dataclasses.dataclass(frozen=True, kw_only=True)\nclass NoSuchPlan(Plan):\n    w: int = public(1)  # w\n',
                       'NoSuchPlan')
    assert exported_twin(cell) is None and 'w' not in field_docs(cell) and field_docs(cell)['n']
    assert cell.__delwrap__ is Plan


def test_renamed_keyword_names_the_new_one():
    @renamed(n_rows='n', clip='propensity_bounds')
    def f(a, n=None, propensity_bounds=None): return n, propensity_bounds
    assert f(1, n=3) == (3, None) and list(inspect.signature(f).parameters) == ['a', 'n', 'propensity_bounds']
    with pytest.raises(TypeError, match="f\\(\\) got an unexpected keyword argument 'clip': it is called 'propensity_bounds' now"):
        f(1, clip=0.1)
    with pytest.raises(TypeError, match="'n_rows'.*'n'"):
        f(1, n_rows=3)
