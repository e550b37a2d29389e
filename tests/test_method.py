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


# --- solve_plan ----------------------------------------------------------------------------------------------------

class _Toy:
    "A stand-in plan: half-width 1/n at any epsilon, or c/epsilon at any n."
    def __init__(self, n=1000, epsilon=1.0, first=10, by='n', calibration='analytic'):
        if n < first: raise ValueError(f'n: at least {first} rows')
        if calibration == 'classical' and epsilon >= 1: raise ValueError('epsilon must be < 1 for the classical calibration')
        self.n, self.epsilon, self.first, self.calibration = n, epsilon, first, calibration
        self.ci_halfwidth = 1.0 / n if by == 'n' else 0.5 / epsilon
    min_n = lambda self: self.first
    max_epsilon = Plan.max_epsilon


@pytest.mark.parametrize('target_n', [11, 46, 53, 88, 109, 158, 999, 12_345, 987_654])
def test_solving_for_n_gives_the_smallest_integer(target_n):
    "The old geometric search on floats returned n + 1 for about a quarter of these targets."
    p = method.solve_plan(_Toy, 1.0 / target_n, 'n')
    assert p.n == target_n and p.ci_halfwidth <= 1.0 / target_n < _Toy(n=p.n - 1).ci_halfwidth
    assert method.solve_plan(_Toy, 1.0 / target_n, 'n', lo=10.5, hi=10**6 + 0.7).n == target_n


def test_the_plan_states_where_the_search_over_n_starts():
    "A plan that needs more rows says so (`min_n`): no `lo=` needed, and a target reached there returns that plan."
    p = method.solve_plan(lambda **kw: _Toy(first=500, **kw), 1e-3, 'n')
    assert p.n == 1000
    assert method.solve_plan(lambda **kw: _Toy(first=500, **kw), 0.5, 'n').n == 500
    with pytest.raises(ValueError, match='at least 500'):
        method.solve_plan(lambda **kw: _Toy(first=500, **kw), 1e-3, 'n', lo=20)  # a start below the plan's minimum


def test_classical_calibration_is_searched_below_one():
    "calibration='classical' is valid only for epsilon < 1: the search ends there (no hi= needed), and says so when short."
    toy = lambda **kw: _Toy(by='epsilon', calibration='classical', **kw)
    p = method.solve_plan(toy, 0.5 / 0.8, 'epsilon')
    assert p.epsilon < 1 and p.epsilon == pytest.approx(0.8, rel=1e-5)
    with pytest.raises(ValueError, match='largest epsilon it can plan'):
        method.solve_plan(toy, 0.5 / 1.5, 'epsilon')
    assert method.solve_plan(lambda **kw: _Toy(by='epsilon', **kw), 0.5 / 1.5, 'epsilon').epsilon == pytest.approx(1.5, rel=1e-5)


def test_classical_calibration_of_a_real_plan():
    from privcausal.ipw import plan_ipw
    nsw = dict(d=9, delta=1e-6, outcome_bound=60_000, treated_share=297 / 722, outcome_sd=7_000, outcome_mean=5_500)
    kw = dict(nsw, calibration='classical', **{'clip': 0.1} if 'clip' in inspect.signature(plan_ipw).parameters else {'propensity_bounds': 0.1})
    analytic = method.solve_plan(plan_ipw, 6_000, 'epsilon', n=20_000, **{k: v for k, v in kw.items() if k != 'calibration'})
    classical = method.solve_plan(plan_ipw, 6_000, 'epsilon', n=20_000, **kw)
    assert classical.epsilon < 1 and classical.ci_halfwidth <= 6_000 and analytic.epsilon <= classical.epsilon
