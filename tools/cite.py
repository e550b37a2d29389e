"""Replace the internal paper keys (`[000]`, `[003]`, ...) by author-year citations, or check that none is left.

    python tools/cite.py --check                    # exit 1 and a list if a key is left anywhere (sources, outputs,
                                                    #   exported modules, README); run by tests/test_docs_source.py
    python tools/cite.py nbs/04_ipw.ipynb ...       # rewrite these notebooks in place (default: every notebook)
    python tools/cite.py --dry-run                  # show what would change, write nothing

The keys are the file names of the papers in the project's shared folder and the labels the paper digests use
(`spec/ppipw.md`: [000] full version, [003] first version; `spec/anm.md`: [002] paper, [001] its appendix;
`spec/wate.md`: source 004). They mean nothing to a reader. Each becomes the citation of the entry on the
references page (nbs/references.ipynb):

| key   | narrative                | in parentheses / code labels | references anchor |
|-------|--------------------------|------------------------------|-------------------|
| [000] | Lee et al. (2019b)       | Lee et al. 2019b             | lee2019b          |
| [003] | Lee et al. (2019a)       | Lee et al. 2019a             | lee2019a          |
| [002] | Kusner et al. (2016)     | Kusner et al. 2016           | kusner2016        |
| [001] | Kusner et al. (2016, appendix) | Kusner et al. 2016, appendix | kusner2016  |
| [004] | Guha & Reiter (2024)     | Guha & Reiter 2024           | guha2024          |

Where a key stands decides the form:
* markdown: the narrative form as a link to the references page (`Table 3 of [000]` -> `Table 3 of
  [Lee et al. (2019b)](references.ipynb#lee2019b)`), the parenthetical form inside parentheses (`([000] App. B)`
  -> `([Lee et al. 2019b](...), App. B)`), a possessive moves the year (`[000]'s eq. (8)` -> `Lee et al.'s (2019b)
  eq. (8)`), a locator gets a comma (`[000] Table 2` -> `Lee et al. (2019b), Table 2`). Headings (page and
  sidebar titles) get no link.
* code: comments and docstrings as markdown but without links; other string literals (table labels, legends,
  printed text) the short label form `Lee et al. 2019b`, the same everywhere, so that a label used as a key
  (`paper.loc['[000] tau_n']`) still matches its definition.
* text outputs (stream, text/plain, text/html, text/markdown) as the string literals that printed them, so the
  stored outputs match a re-run. Images (figure legends) need the notebook re-run.
Exported modules (`privcausal/*.py`) are not touched: run `nbdev_export` on the rewritten notebooks.
"""
import argparse, ast, io, json, os, re, sys, tokenize
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
REFERENCES = NBS / 'references.ipynb'


@dataclass(frozen=True)
class Ref:
    authors: str
    year: str
    anchor: str
    note: str = ''

    def narrative(self, possessive=False):
        inner = self.year + (f', {self.note}' if self.note else '')
        return f"{self.authors}'s ({inner})" if possessive else f'{self.authors} ({inner})'

    def parenthetical(self, possessive=False):
        return f'{self.authors} {self.year}' + (f', {self.note}' if self.note else '') + ("'s" if possessive else '')

    def label(self, possessive=False):
        return f'{self.authors} {self.year}' + (f' {self.note}' if self.note else '') + ("'s" if possessive else '')


KEYS = {
    '000': Ref('Lee et al.', '2019b', 'lee2019b'),                 # Privacy-Preserving Causal Inference via IPW
    '003': Ref('Lee et al.', '2019a', 'lee2019a'),                 # Private Causal Inference using Propensity Scores
    '002': Ref('Kusner et al.', '2016', 'kusner2016'),             # Private Causal Inference (AISTATS 2016)
    '001': Ref('Kusner et al.', '2016', 'kusner2016', 'appendix'),  # its appendix
    '004': Ref('Guha & Reiter', '2024', 'guha2024'),              # DP estimation of WATEs for binary outcomes
}
# A bracketed three-digit key, not an index (`x[000]`, `a][000]`), not a markdown link text (`[000](...)`).
KEY = re.compile(r"(?<![\w\]\)\\])\[(\d{3})\]('s)?(?!\()")
LOCATOR = re.compile(r'\s+(?=§|(?:Tables?|Tab\.|eqs?\.|Eqs?\.|equations?|App\.|Appendix|Appendices|Corollary|'
                     r'Theorems?|Thms?\.?|Lemmas?|Figures?|Figs?\.|Sections?|Sec\.|Algorithms?|Alg\.|'
                     r'Definitions?|Def\.|Propositions?|Prop\.|Remark|footnote|pp?\.)(?!\w))')
TEXT_MIMES = ('text/plain', 'text/html', 'text/markdown')


def _depth(before):
    "Open parentheses before a key on its line, outside `$math$` and `code`."
    line = before.rsplit('\n', 1)[-1]
    line = re.sub(r'\$[^$]*\$|`[^`]*`', '', line)
    return line.count('(') - line.count(')')


def rewrite_text(text, mode, link_to=None):
    """`text` with every known key replaced. mode: 'prose' (markdown, comments, docstrings) or 'label'.
    link_to: the references page relative to the notebook, to make prose citations links (markdown)."""
    out, pos = [], 0
    for m in KEY.finditer(text):
        ref = KEYS.get(m.group(1))
        if ref is None: continue                     # unknown key: left for --check to report
        before, poss = text[:m.start()], bool(m.group(2))
        out.append(text[pos:m.start()])
        pos = m.end()
        if mode == 'label':
            out.append(ref.label(poss)); continue
        cite = ref.parenthetical(poss) if _depth(before) > 0 else ref.narrative(poss)
        line_start = before.rsplit('\n', 1)[-1]
        in_code = line_start.count('`') % 2 == 1
        heading = re.match(r'\s*#{1,6}\s', line_start) is not None
        if link_to and not in_code and not heading: cite = f'[{cite}]({link_to}#{ref.anchor})'
        out.append(cite)
        if not poss and (loc := LOCATOR.match(text, pos)):
            out.append(','); out.append(' '); pos = loc.end()
    return ''.join(out) + text[pos:]


def _docstring_spans(src):
    "[(start, end)] (line, col) spans of the docstrings in `src`; None when it is not Python (magics)."
    try: tree = ast.parse(src)
    except SyntaxError: return None
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            v = first.value if isinstance(first, ast.Expr) else None
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                spans.append(((v.lineno, v.col_offset), (v.end_lineno, v.end_col_offset)))
    return spans


def rewrite_code(src):
    "A code cell: comments and docstrings in prose form, other string literals in label form."
    if not KEY.search(src): return src
    try: toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return rewrite_text(src, 'label')            # not tokenizable: a uniform replacement keeps labels consistent
    docs = _docstring_spans(src) or []
    starts = [0]
    for line in src.splitlines(keepends=True): starts.append(starts[-1] + len(line))
    off = lambda rc: starts[rc[0] - 1] + rc[1]
    edits = []
    for t in toks:
        if t.type not in (tokenize.COMMENT, tokenize.STRING) and t.type != getattr(tokenize, 'FSTRING_MIDDLE', -1):
            continue
        if not KEY.search(t.string): continue
        is_doc = t.type == tokenize.STRING and any(a <= t.start and t.end <= b for a, b in docs)
        mode = 'prose' if t.type == tokenize.COMMENT or is_doc else 'label'
        edits.append((off(t.start), off(t.end), rewrite_text(t.string, mode)))
    for a, b, new in sorted(edits, reverse=True): src = src[:a] + new + src[b:]
    return src


def _join(x): return ''.join(x) if isinstance(x, list) else (x or '')


def _lines(text, like):
    return text.splitlines(keepends=True) if isinstance(like, list) else text


def rewrite_notebook(path, write=True):
    "Rewrite one notebook; returns the number of cells changed."
    nb = json.loads(Path(path).read_text(encoding='utf-8'))
    path = Path(path).resolve()
    nbs = next((q for q in path.parents if (q / REFERENCES.name).is_file()), NBS)   # the nbs/ of this notebook
    link = os.path.relpath(nbs / REFERENCES.name, path.parent).replace(os.sep, '/')
    changed = 0
    for cell in nb['cells']:
        before = json.dumps(cell, sort_keys=True)
        src = _join(cell.get('source', ''))
        if cell['cell_type'] == 'markdown': new = rewrite_text(src, 'prose', link_to=link)
        elif cell['cell_type'] == 'code': new = rewrite_code(src)
        else: new = src
        if new != src: cell['source'] = _lines(new, cell['source'])
        for o in cell.get('outputs', []):
            if o.get('output_type') == 'stream':
                o['text'] = _lines(rewrite_text(_join(o.get('text')), 'label'), o.get('text'))
            for mime in TEXT_MIMES:
                if mime in o.get('data', {}):
                    o['data'][mime] = _lines(rewrite_text(_join(o['data'][mime]), 'label'), o['data'][mime])
        changed += json.dumps(cell, sort_keys=True) != before
    if changed and write:
        Path(path).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n', encoding='utf-8')
    return changed


def notebooks():
    return _notebooks_in(NBS)


def _notebooks_in(nbs):
    "The notebooks nbdev processes: recursive, skipping names that start with `_` or `.`."
    return sorted(p for p in nbs.rglob('*.ipynb')
                  if not any(q.startswith(('_', '.')) for q in p.relative_to(nbs).parts))


def _context(text, m):
    a, b = max(0, m.start() - 40), min(len(text), m.end() + 30)
    return text[a:b].replace('\n', ' ')


def find_keys(root=ROOT):
    "[(where, context)] of every bracketed numeric key left: notebooks (sources, text outputs), modules, README."
    found = []
    nbs = root / 'nbs'
    for p in _notebooks_in(nbs):
        rel = p.relative_to(root)
        for i, cell in enumerate(json.loads(p.read_text(encoding='utf-8'))['cells']):
            src = _join(cell.get('source', ''))
            found += [(f'{rel} cell {i} ({cell["cell_type"]})', _context(src, m)) for m in KEY.finditer(src)]
            for o in cell.get('outputs', []):
                texts = [_join(o.get('text'))] + [_join(o.get('data', {}).get(k)) for k in TEXT_MIMES]
                found += [(f'{rel} cell {i} (output: re-run, or rewrite with tools/cite.py)', _context(t, m))
                          for t in texts for m in KEY.finditer(t)]
    for p in sorted((root / 'privcausal').glob('*.py')) + [root / 'README.md']:
        if p.is_file():
            t = p.read_text(encoding='utf-8')
            hint = ' (exported: run nbdev_export)' if p.suffix == '.py' else ''
            found += [(f'{p.relative_to(root)}:{t.count(chr(10), 0, m.start()) + 1}{hint}', _context(t, m))
                      for m in KEY.finditer(t)]
    return found


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('notebooks', nargs='*', help='notebooks to rewrite (default: every notebook under nbs/)')
    ap.add_argument('--check', action='store_true', help='write nothing; exit 1 if any key is left')
    ap.add_argument('--dry-run', action='store_true', help='write nothing; list the notebooks that would change')
    ap.add_argument('--root', default=str(ROOT), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.check:
        left = find_keys(Path(a.root))
        for where, ctx in left: print(f'{where}: ...{ctx}...')
        print(f'cite: {len(left)} internal paper key(s) left' if left else 'cite: no internal paper keys left')
        return 1 if left else 0
    paths = [Path(p) for p in a.notebooks] or notebooks()
    total = 0
    for p in paths:
        n = rewrite_notebook(p, write=not a.dry_run)
        if n: print(f'{p}: {n} cell(s) {"would change" if a.dry_run else "rewritten"}')
        total += n
    print(f'cite: {total} cell(s) {"would change" if a.dry_run else "rewritten"}; then nbdev_export and '
          'tools/cite.py --check' if total else 'cite: nothing to rewrite')
    return 0


if __name__ == '__main__':
    sys.exit(main())
