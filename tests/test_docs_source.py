"""The documentation's sources (notebooks, exported modules): citations, parameter docs, no timing prints.

No build and no browser: these read the notebooks and import the package. tests/test_site.py checks the built site.
"""
import importlib, inspect, json, re, subprocess, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'tools'))
import cite  # noqa: E402  (tools/cite.py)

NBS = sorted(p for p in (ROOT / 'nbs').rglob('*.ipynb')
             if not any(q.startswith(('_', '.')) for q in p.relative_to(ROOT / 'nbs').parts))


# ----------------------------------------------------------------------------------------------- citations
def test_no_internal_paper_keys():
    "Papers are cited by authors and year, never by the internal keys [000], [003] (fix: python tools/cite.py)."
    left = cite.find_keys(ROOT)
    assert not left, (f'{len(left)} internal paper keys left; run `python tools/cite.py`, then nbdev_export the '
                      'changed notebooks:\n  ' + '\n  '.join(f'{w}: {c}' for w, c in left[:40]))


def _nb(cells):
    return {'cells': cells, 'metadata': {}, 'nbformat': 4, 'nbformat_minor': 5}


def _code(src, outputs=()):
    return {'cell_type': 'code', 'execution_count': None, 'id': 'c', 'metadata': {}, 'outputs': list(outputs),
            'source': src.splitlines(keepends=True)}


def test_cite_rewrites_and_checks(tmp_path):
    "tools/cite.py on a small project: every form, code still valid and consistent, --check 1 before and 0 after."
    nbs = tmp_path / 'nbs'
    (nbs / 'experiments').mkdir(parents=True)
    (nbs / 'references.ipynb').write_text(json.dumps(_nb([])))
    md = {'cell_type': 'markdown', 'id': 'm', 'metadata': {}, 'source': [
        '# Reproduction (Table 2 of [000], row of [003] Table 1)\n', '\n',
        "[000]'s eq. (8) differs; see [000] Table 3 and (Lemma 6, [000] App. B). Code `x[000]` stays.\n"]}
    code = _code('def f(x):  # [002] Theorem 5\n'
                 '    "Algorithm 1 of [004]: the release."\n'
                 "    return {'[000] tau': x}['[000] tau'], f'paper [003] {x}'\n",
                 [{'output_type': 'stream', 'name': 'stdout', 'text': ['paper [003] 1\n']}])
    nb = nbs / 'experiments' / 'x.ipynb'
    nb.write_text(json.dumps(_nb([md, code])))
    run = lambda *a: subprocess.run([sys.executable, str(ROOT / 'tools/cite.py'), *a], capture_output=True, text=True)
    r = run('--check', '--root', str(tmp_path))
    assert r.returncode == 1 and 'internal paper key' in r.stdout, r.stdout + r.stderr
    assert cite.rewrite_notebook(nb) == 2
    cells = json.loads(nb.read_text())['cells']
    text = ''.join(cells[0]['source'])
    assert text.startswith('# Reproduction (Table 2 of Lee et al. 2019b, row of Lee et al. 2019a, Table 1)\n'), text
    assert "[Lee et al.'s (2019b)](../references.ipynb#lee2019b) eq. (8)" in text
    assert '[Lee et al. (2019b)](../references.ipynb#lee2019b), Table 3' in text
    assert '(Lemma 6, [Lee et al. 2019b](../references.ipynb#lee2019b), App. B)' in text and '`x[000]`' in text
    src = ''.join(cells[1]['source'])
    compile(src, 'cell', 'exec')
    ns = {}
    exec(src, ns)
    assert ns['f'](1) == (1, 'paper Lee et al. 2019a 1')                   # the label key still matches itself
    assert '# Kusner et al. (2016), Theorem 5' in src and '"Algorithm 1 of Guha & Reiter (2024): the release."' in src
    assert ''.join(cells[1]['outputs'][0]['text']) == 'paper Lee et al. 2019a 1\n'    # as a re-run prints it
    r = run('--check', '--root', str(tmp_path))
    assert r.returncode == 0, r.stdout


# ------------------------------------------------------------------------------------------ parameter docs
def _exported():
    sys.path.insert(0, str(ROOT))
    seen = set()
    for f in sorted((ROOT / 'privcausal').glob('*.py')):
        if f.stem.startswith('_'): continue
        mod = importlib.import_module(f'privcausal.{f.stem}')
        for name in getattr(mod, '__all__', []):
            obj = getattr(mod, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and id(obj) not in seen:
                seen.add(id(obj))
                yield f'{obj.__module__}.{obj.__qualname__}', obj


def test_every_exported_parameter_is_documented():
    "House style: docments (a trailing comment) for every parameter of every exported function and class."
    from fastcore.docments import docments
    missing = []
    for qual, obj in _exported():
        try: params = [n for n in inspect.signature(obj).parameters if n not in ('self', 'cls')]
        except (TypeError, ValueError): continue                  # e.g. an exception class: no own signature
        docs = docments(obj, args_kwargs=True)
        if (bad := [n for n in params if not docs.get(n)]): missing.append(f'{qual}: {", ".join(bad)}')
    assert not missing, (f'{len(missing)} exported functions/classes with undocumented parameters (their table on '
                         'the site has blank Details):\n  ' + '\n  '.join(missing))


# ----------------------------------------------------------------------------------------- timing prints
TIMER = re.compile(r'perf_counter|time\.time\(\)|time\.monotonic|%%?time\b|%%?timeit\b')


def timing_cells():
    "[(notebook, cell index, first line)] of code cells that time themselves and print or show the time."
    out = []
    for p in NBS:
        for i, c in enumerate(json.loads(p.read_text(encoding='utf-8'))['cells']):
            src = ''.join(c.get('source', ''))
            if c['cell_type'] == 'code' and TIMER.search(src) and not re.search(r'^\s*#\s*\|\s*export', src, re.M):
                out.append((str(p.relative_to(ROOT)), i, next(l for l in src.split('\n') if TIMER.search(l)).strip()))
    return out


def test_no_timing_prints_in_narrative_cells():
    "Timings depend on the machine: they belong in benchmarks/, not in the lessons (`t0 = time.perf_counter()`)."
    cells = timing_cells()
    assert not cells, f'{len(cells)} notebook cells time themselves:\n  ' + '\n  '.join(
        f'{nb} cell {i}: {line[:90]}' for nb, i, line in cells)


# ------------------------------------------------------------------------------- the site's table builder
def test_show_doc_signature_is_python():
    "With tools/build_docs.py's patch, show_doc keeps the bare `*`, drops inferred `NoneType`, says `class`."
    import build_docs
    from nbdev.showdoc import show_doc
    from privcausal.ipw import IPWRelease, pp_ipw
    md = show_doc(pp_ipw)._repr_markdown_()
    sig = re.search(r'```python\n(.*?)\n```', md, re.S).group(1)
    assert re.search(r'^\s*\*, outcome', sig, re.M) and 'NoneType' not in sig, sig
    sig_nb, table = build_docs._signature_table(sig)
    assert re.search(r'^\s*\*,$', sig_nb, re.M) and '#' not in sig_nb, sig_nb
    assert table.startswith('{.docments}')
    assert '| `epsilon` | `float` |  | $\\varepsilon$ of the whole release |' in table
    assert show_doc(IPWRelease)._repr_markdown_().count('```python\nclass IPWRelease(') == 1


def test_table_builder_fails_loudly():
    "A show_doc signature that is not Python is an error naming the entry, not a page with raw comments."
    import build_docs
    bad = ('### f\n\n```python\ndef f(\n    a=1, # first\n    b:int, # a parameter without default after one with\n'
           ')->int:\n```\n\n*Doc.*')
    with pytest.raises(build_docs.SiteError, match='show_doc signature of f'):
        build_docs.docments_table(bad, 'x.ipynb')
    good = build_docs.docments_table(bad.replace('b:int,', 'b:int=2,'), 'x.ipynb')
    assert '{.docments}' in good and '| `b` | `int` | `2` | a parameter without default after one with |' in good
    assert good.index('*Doc.*') < good.index('{.docments}')         # the table after the docstring
