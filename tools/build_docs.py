"""Build the documentation site into `_docs/` from registry packages alone (no Quarto).

    python tools/build_docs.py                      # the site described by the top-level _quarto.yml
    python tools/build_docs.py --config other.yml   # a different site description (development only)

`_quarto.yml` is the one description of the site (title, description, sidebar sections, page order); it is
also what Quarto's `nbdev_docs` reads where Quarto exists. The route:

1. nbdev's own processing: refresh the module index, then `nbdev.serve.proc_nbs(force=True)` writes
   `_proc/` (show_doc entries added and rendered with signatures, hidden cells removed, title/description turned
   into frontmatter). `proc_nbs` does not call Quarto (only `nbdev_docs` / `nbdev_proc_nbs` do, through
   `_pre_docs`). show_doc's signatures are first made faithful Python (`patch_show_doc_signatures`: the bare `*`
   of keyword-only parameters kept), and each becomes a signature plus a parameter table (`docments_table`);
   a signature that gives no table is an error.
2. Clean the processed notebooks of Quarto-only syntax (see `clean_nb`) into a Sphinx source folder.
3. Sphinx + myst-nb + sphinx-book-theme with `-W` (warnings are errors), stored outputs only (nothing is
   executed), MathJax 3 served from the site itself (npm package `mathjax`), Sphinx's offline search.
4. Check every internal link, image and script reference of the built site (file and `#fragment`),
   then swap the result into `_docs/`.

Errors (exit 1): a page listed in the config but missing, a notebook in nbs/ not listed, two notebooks with
the same output page, a page without a title, a show_doc signature that gives no parameter table, any Sphinx
warning, any broken internal reference. Code blocks get a copy button (sphinx-copybutton) and wrap rather than
scroll sideways; printed outputs keep their alignment and scroll inside their own block (see CSS).

Every show_doc entry and every module is also a Python object of Sphinx's py domain (`add_api_index`): the site has
an index of names (`genindex.html`), a module index (`py-modindex.html`), both in the sidebar, and an `objects.inv`
that other Sphinx projects can link to with intersphinx (`privcausal.ipw.pp_ipw`, `privcausal.accounting.PrivacyLedger`).
An object show_doc cannot be found for (no module, or the module has no such name) is an error.
"""
import argparse, ast, contextlib, dataclasses, fcntl, functools, importlib, inspect, io, json, os, posixpath, re, shutil, subprocess, sys
import time, tokenize, uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / '_site_build'            # gitignored scratch: sphinx sources, doctrees, html before the swap
MATHJAX_VERSION = '3.2.2'
MATHJAX_CACHE = Path(os.environ.get('PRIVCAUSAL_MATHJAX_CACHE')
                     or Path(os.environ.get('XDG_CACHE_HOME') or Path.home() / '.cache') / 'privcausal-docs'
                     / f'mathjax-{MATHJAX_VERSION}')
# The parts of mathjax/es5 that tex-mml-chtml.js loads at run time (about 8 MB of the 24 MB package).
MATHJAX_PARTS = ['tex-mml-chtml.js', 'input', 'output/chtml.js', 'output/chtml', 'ui', 'a11y', 'sre', 'adaptors']


class SiteError(Exception):
    "A problem with the site's content or description: reported without a traceback."


# ------------------------------------------------------------------------------ show_doc signatures
class _Factory:
    "A dataclass field's `default_factory` shown as the call that makes the default (`dict()`, not `<factory>`)."
    def __init__(self, f): self.f = f
    def __repr__(self): return f'{getattr(self.f, "__qualname__", None) or repr(self.f)}()'


def patch_show_doc_signatures():
    """Make fastcore's show_doc signature (nbdev 2.4.14, fastcore 1.14.5) a faithful Python signature.

    fastcore's `DocmentText` drops the bare `*` before keyword-only parameters and the `/` after positional-only
    ones, shows `type(default)` (e.g. `NoneType`) for a parameter without annotation, `<factory>` for a dataclass
    field's default factory, and writes `def` (and `->None`, from `__init__`) for a class.
    The signature of `pp_ipw(data=None, ..., *, epsilon, ...)` then reads `epsilon:float` after defaulted
    parameters: not Python, so no parameter table could be built from it. Idempotent. It runs at import of this
    file, which is also how nbdev's spawned `proc_nbs` workers (they import the main script) get it."""
    try:
        import fastcore.docments as fd
    except ImportError: return
    if getattr(fd.DocmentText, '_privcausal_patched', False): return
    P = inspect.Parameter

    def params(self):
        try: real = inspect.signature(self.obj).parameters
        except (TypeError, ValueError): real = None
        items = [(k, v) for k, v in self.dm.items() if k != 'return']
        if inspect.isclass(self.obj) and real is not None:      # not object.__init__'s (*args, **kwargs)
            items = [(k, v) for k, v in items if k in real]
        real = real or {}
        factories = {f.name: _Factory(f.default_factory) for f in dataclasses.fields(self.obj)
                     if f.default_factory is not dataclasses.MISSING} if dataclasses.is_dataclass(self.obj) else {}
        kinds = [v.get('kind') for _, v in items]
        out = []
        for i, (k, v) in enumerate(items):
            kind = kinds[i]
            if kind == P.KEYWORD_ONLY and P.VAR_POSITIONAL not in kinds and P.KEYWORD_ONLY not in kinds[:i]:
                out.append(('*', ''))
            if k in real and real[k].annotation is P.empty: v = fd.AttrDict({**v, 'anno': fd.empty})
            if k in factories: v = fd.AttrDict({**v, 'default': factories[k]})
            out.append((self._fmt_param(k, v), v.get('docment') or ''))
            if kind == P.POSITIONAL_ONLY and (i + 1 == len(items) or kinds[i + 1] != P.POSITIONAL_ONLY):
                out.append(('/', ''))
        return out

    plain_str = fd.DocmentText.__str__

    def as_str(self):
        s = plain_str(self)
        return 'class ' + s[4:] if inspect.isclass(self.obj) and s.startswith('def ') else s

    plain_ret = fd.DocmentText._ret_str.fget

    def ret_str(self): return '):' if inspect.isclass(self.obj) else plain_ret(self)    # no `->None` on a class

    fd.DocmentText.params = property(params)
    fd.DocmentText._ret_str = property(ret_str)
    fd.DocmentText.__str__ = fd.DocmentText.__repr__ = as_str
    plain_docments = fd.docments

    def docments(s, *a, **kw):  # a class a notebook cell defined has no source file: read its exported twin's comments
        twin = library_twin(s)
        kw['args_kwargs'] = True  # `**options,  # what they are` documented like any parameter
        return plain_docments(s if twin is None else twin, *a, **kw)

    fd.docments = docments
    fd.DocmentText._privcausal_patched = True


def library_twin(obj):
    """The exported class of the same name as `obj`, a class defined in a notebook cell, or None.

    nbdev renders show_doc on the objects its cells define (module `__main__`); a function's source is in IPython's
    cell cache, a class's is not, so fastcore's docments found no field comments for dataclasses (the blank Details
    of every result and plan class). The exported module holds the same class with its source."""
    if not inspect.isclass(obj) or getattr(obj, '__module__', None) not in ('__main__', None): return None
    try: from privcausal._modidx import d
    except ImportError: return None
    for mod, syms in d.get('syms', {}).items():
        if f'{mod}.{obj.__qualname__}' in syms:
            try: return getattr(importlib.import_module(mod), obj.__qualname__, None)
            except Exception: return None
    return None


patch_show_doc_signatures()


# ---------------------------------------------------------------------------------------------- the config
def read_config(path):
    "Title, description, site url and the sidebar of a `_quarto.yml`, as plain data."
    import yaml
    cfg = yaml.safe_load(Path(path).read_text(encoding='utf-8')) or {}
    web = cfg.get('website') or {}
    side = web.get('sidebar') or {}
    if isinstance(side, list): side = side[0] if side else {}
    title = web.get('title')
    if not title: raise SiteError(f'{path}: website.title is missing')
    contents = side.get('contents')
    if not isinstance(contents, list) or not contents: raise SiteError(f'{path}: website.sidebar.contents is missing')
    return dict(title=str(title), description=str(web.get('description') or ''),
                site_url=str(web.get('site-url') or '').rstrip('/'), repo_url=str(web.get('repo-url') or ''),
                contents=contents)


def _entry(item, nbs, where):
    "Notebook paths (relative to nbs/, posix) or an external link for one sidebar item."
    if isinstance(item, dict) and 'href' in item and not ({'section', 'contents'} & item.keys()):
        href = str(item['href'])
        if re.match(r'^[a-z][a-z0-9+.-]*:', href): return [('link', str(item.get('text') or href), href)]
        item = href
    if not isinstance(item, str): raise SiteError(f'{where}: unsupported sidebar entry {item!r}')
    if any(c in item for c in '*?['):
        hits = sorted(p.relative_to(nbs).as_posix() for p in nbs.glob(item) if p.is_file())
        if not hits: raise SiteError(f'{where}: the pattern {item!r} matches no file in {nbs}')
        return [('page', h) for h in hits]
    return [('page', posixpath.normpath(item))]


def sidebar(contents, nbs, where):
    "[(caption or None, [entries])] in config order; consecutive top-level pages share one uncaptioned group."
    groups = []
    for item in contents:
        if isinstance(item, dict) and 'section' in item:
            sub = []
            for x in item.get('contents') or []:
                if isinstance(x, dict) and 'section' in x:
                    raise SiteError(f'{where}: nested sections are not supported (section {item["section"]!r})')
                sub += _entry(x, nbs, where)
            groups.append((str(item['section']), sub))
        else:
            ents = _entry(item, nbs, where)
            if groups and groups[-1][0] is None: groups[-1][1].extend(ents)
            else: groups.append((None, ents))
    return groups


def notebooks_in(nbs):
    "The notebooks nbdev processes: recursive, skipping files and folders that start with `_` or `.`."
    return sorted(p.relative_to(nbs).as_posix() for p in nbs.rglob('*.ipynb')
                  if not any(q.startswith(('_', '.')) for q in p.relative_to(nbs).parts))


# ------------------------------------------------------------------------------------------ cleaning
_DIRECTIVE = re.compile(r'^\s*#\s*\|\s?(.*)$')
_TARGET = re.compile(r'\{\s*target\s*=\s*"_blank"[^}]*\}')
_FENCE = re.compile(r'^\s*(```+|~~~+)')
_HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
_CALLOUT = re.compile(r'^(:{3,})\s*\{\s*\.callout-(note|tip|warning|important|caution)\b([^}]*)\}\s*$')
_DIV = re.compile(r'^(:{3,})\s*\{\s*\.([\w-]+)[^}]*\}\s*$')
_MDLINK = re.compile(r'(\]\(\s*<?)([^)\s>]+)')
_HTMLLINK = re.compile(r'''((?:href|src)\s*=\s*["'])([^"']+)''')


def split_directives(src):
    "({directive: value}, source without its leading `#|` lines)."
    lines, d = src.splitlines(), {}
    i = 0
    while i < len(lines) and (m := _DIRECTIVE.match(lines[i])):
        body = m.group(1).strip()
        if ':' in body.split(' ', 1)[0] or re.match(r'^[\w-]+\s*:', body):
            k, _, v = body.partition(':')
        else:
            k, _, v = body.partition(' ')
        d[k.strip().lower()] = v.strip().strip('"\'').lower()
        i += 1
    return d, '\n'.join(lines[i:]).strip('\n')


def pandoc_id(text):
    "The identifier pandoc (so Quarto, so nbdev's doc links) gives a heading."
    t = re.sub(r'`|\*\*?|\[|\]\([^)]*\)', '', text).lower()
    t = re.sub(r'[^\w\s.-]', '', t)
    t = re.sub(r'\s+', '-', t.strip())
    return re.sub(r'^[^a-z]+', '', t) or 'section'


class Cleaner:
    "Turns one processed notebook (`_proc/`) into what myst-nb renders like Quarto would."

    def __init__(self, site_url, nb_docs, page):
        self.site_url, self.nb_docs, self.page = site_url, nb_docs, page   # page: the notebook, relative to nbs/
        self.doc = nb_docs[page]

    def _rel(self, target_doc_html):
        "`target_doc_html` (site-relative) as seen from this page."
        return posixpath.relpath(target_doc_html, posixpath.dirname(self.doc) or '.')

    def link(self, url):
        if self.site_url and (url == self.site_url or url.startswith(self.site_url + '/')):
            rest = url[len(self.site_url):].lstrip('/') or 'index.html'
            return self._rel(rest)
        if re.match(r'^([a-z][a-z0-9+.-]*:|//|#)', url): return url
        path, frag = (url.split('#', 1) + [''])[:2]
        if path.endswith('.ipynb'):
            nb = posixpath.normpath(posixpath.join(posixpath.dirname(self.page), path))
            if nb not in self.nb_docs:
                raise SiteError(f'{self.page}: links to {url!r}, which is not a page of the site')
            return self._rel(self.nb_docs[nb] + '.html') + ('#' + frag if frag else '')
        return url

    def markdown(self, text, asis=False):
        "Clean markdown text: links, attributes, callouts, pandoc heading ids (and show_doc separators)."
        text = _TARGET.sub('', text)
        if asis:
            text = docments_table(text, self.page)
            # nbdev puts its source link before the heading (Quarto floats it right); keep it in the entry's section
            text = re.sub(r'^\[source\]\((\S+)\)\s*\n\n(#{2,6} [^\n]+)\n', r'\2\n\n{.nbdev-source}\n[source](\1)\n',
                          re.sub(r'^\s*---[ \t]*\n', '', text), flags=re.M)
        text = _MDLINK.sub(lambda m: m.group(1) + self.link(m.group(2)), text)
        text = _HTMLLINK.sub(lambda m: m.group(1) + self.link(m.group(2)), text)
        from docutils.nodes import make_id
        out, fence = [], None
        for line in text.split('\n'):
            f = _FENCE.match(line)
            if fence:
                if f and f.group(1)[0] == fence[0] and len(f.group(1)) >= len(fence): fence = None
                out.append(line); continue
            if f: fence = f.group(1); out.append(line); continue
            if asis and not out and line.strip() in ('', '---'): continue     # show_doc's leading separator
            if (h := _HEADING.match(line)) and len(h.group(1)) > 1:
                pid = pandoc_id(h.group(2))
                if pid != make_id(h.group(2)):          # keep Quarto's anchor (e.g. `#check_epsilon`) working
                    out += ['', f'<span id="{pid}"></span>', '']
                out.append(line); continue
            if (c := _CALLOUT.match(line)):
                t = re.search(r'title\s*=\s*"([^"]*)"', c.group(3))
                out += [f'{c.group(1)}{{admonition}} {t.group(1)}', f':class: {c.group(2)}'] if t else \
                       [f'{c.group(1)}{{{c.group(2)}}}']
                continue
            if (c := _DIV.match(line)):
                out.append(f'{c.group(1)}{{container}} {c.group(2)}'); continue
            out.append(line)
        while out and out[-1].strip() in ('', '---'): out.pop()
        return '\n'.join(out)


# show_doc's signature block: `def name(`, `async def name(` or `class Name(` (patched above), one parameter line
# or more, then `)...:` on a line of its own. A signature without parameters is one line (`def name()->T:`).
_SIG_BLOCK = re.compile(r'```python\n((?:async def|def|class) [^\n]*\(\n.*?\n\)[^\n]*)\n```', re.S)
_SIG_ANY = re.compile(r'```python\n((?:async def|def|class) \w+\(.*?)\n```', re.S)
DOCMENTS_CLASS = 'docments'        # the class of every parameter table (tests/test_site.py looks for it)


def _cell_md(s):
    s = ' '.join(s.split())
    return s.replace('|', '\\|')


def _signature_table(sig):
    """(plain signature, markdown table) for one show_doc signature (docments as `# comments`).

    Raises ValueError when the signature is not Python or has no parameter to put in a table."""
    reprs = {}                                  # defaults shown as `<...>` reprs are not Python: placeholders
    def hold(m):
        reprs[f'__repr{len(reprs)}__'] = m.group(1)
        return '=' + f'__repr{len(reprs) - 1}__'
    sig_py = re.sub(r'=(<[^<>\n]*>)', hold, sig)
    src = re.sub(r'^class ', 'def ', sig_py) + '\n    pass\n'
    toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    fn = ast.parse(src).body[0]
    comments = {t.start[0]: (t.start[1], t.string[1:].strip()) for t in toks if t.type == tokenize.COMMENT}
    lines = sig_py.split('\n')
    a = fn.args
    args = a.posonlyargs + a.args + ([a.vararg] if a.vararg else []) + a.kwonlyargs + ([a.kwarg] if a.kwarg else [])
    args = [x for x in args if x.arg not in ('self', 'cls')]
    if not args: raise ValueError('no parameters')
    pos_defaults = dict(zip([x.arg for x in (a.posonlyargs + a.args)][::-1], a.defaults[::-1]))
    kw_defaults = {x.arg: d for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None}
    def seg(node):
        t = ast.get_source_segment(src, node) if node is not None else ''
        return re.sub(r'__repr\d+__', lambda m: reprs[m.group(0)], t)
    rows, last = {}, None
    for ln in range(1, len(lines) + 1):
        on_line = [x for x in args if x.lineno == ln]
        if on_line: last = on_line[-1].arg
        if ln in comments:
            key = 'return' if lines[ln - 1].lstrip().startswith(')') else last
            if not key: raise ValueError(f'a comment on line {ln} belongs to no parameter')
            rows[key] = (rows.get(key, '') + ' ' + comments[ln][1]).strip()
    stars = {**({a.vararg.arg: '*'} if a.vararg else {}), **({a.kwarg.arg: '**'} if a.kwarg else {})}
    table = []
    for x in args:
        d = pos_defaults.get(x.arg, kw_defaults.get(x.arg))
        table.append([f'`{stars.get(x.arg) or ""}{x.arg}`', seg(x.annotation), seg(d), rows.get(x.arg, '')])
    if 'return' in rows or fn.returns is not None:
        table.append(['**Returns**', seg(fn.returns), '', rows.get('return', '')])
    cols = [i for i in (1, 2) if any(r[i] for r in table)] + [3]            # Details always: a blank one shows
    hdr = ['  '] + [['', '**Type**', '**Default**', '**Details**'][i] for i in cols]
    body = [[r[0]] + [(f'`{_cell_md(r[i])}`' if r[i] and i in (1, 2) else _cell_md(r[i])) for i in cols]
            for r in table]
    plain = '\n'.join(l[:comments[n][0]].rstrip() if n in comments else l for n, l in enumerate(lines, 1))
    plain = re.sub(r'^(\s*)([*/]), (?=\S)', r'\1\2,\n\1', plain, flags=re.M)   # a bare `*` or `/` on its own line
    plain = re.sub(r'__repr\d+__', lambda m: reprs[m.group(0)], '\n'.join(l for l in plain.split('\n') if l.strip()))
    tbl = '\n'.join('| ' + ' | '.join(r) + ' |' for r in [hdr, ['-' * max(2, len(h)) for h in hdr]] + body)
    return plain, f'{{.{DOCMENTS_CLASS}}}\n{tbl}'


def docments_table(md, where='show_doc'):
    """show_doc's signature with docments comments -> the plain signature plus a parameter table.

    nbdev 2.4.14 (fastcore 1.14) writes parameter docs as `# comments` inside the signature's code block, where
    their math is not typeset; Quarto sites of older nbdev showed a table. Every signature with a parameter gets a
    table (a blank Details cell shows an undocumented parameter). A signature that is not Python, or a signature
    block this cannot read, is an error (SiteError), never a silent fallback to the raw comments."""
    out, pos = [], 0
    for m in _SIG_BLOCK.finditer(md):
        head = re.findall(r'^#{1,6} (.+)$', md[:m.start()], re.M)
        name = head[-1].strip() if head else '?'
        try: sig, tbl = _signature_table(m.group(1))
        except (SyntaxError, tokenize.TokenError, IndexError, ValueError) as e:
            raise SiteError(f'{where}: the show_doc signature of {name} gives no parameter table ({e}):\n'
                            f'{m.group(1)}') from None
        rest = md[m.end():]
        para = re.match(r'\n\n(\*[^\n]*(?:\n(?!\n)[^\n]*)*)', rest)      # show_doc's italic docstring
        end = m.end() + (para.end() if para else 0)
        out += [md[pos:m.start()], f'```python\n{sig}\n```', md[m.end():end], '\n\n' + tbl + '\n']
        pos = end
    for m in _SIG_ANY.finditer(md):            # a signature with parameters must have been matched above
        if '(\n' in m.group(1) and not _SIG_BLOCK.fullmatch(m.group(0)):
            raise SiteError(f'{where}: unreadable show_doc signature block:\n{m.group(1)}')
    return ''.join(out) + md[pos:]


def _src(cell): return ''.join(cell.get('source', ''))


def _mk(kind, src, **kw):
    c = dict(cell_type=kind, id=uuid.uuid4().hex[:8], metadata={}, source=src)
    if kind == 'code': c.update(execution_count=None, outputs=[])
    c.update(kw)
    return c


def _asis_markdown(outputs):
    "The markdown an `output: asis` cell stands for, or None when it has non-text outputs."
    parts = []
    for o in outputs:
        if o.get('output_type') == 'stream':
            if o.get('name') == 'stdout': parts.append(_src({'source': o.get('text', '')}))
        elif o.get('output_type') in ('execute_result', 'display_data'):
            data = o.get('data', {})
            if 'text/markdown' in data: parts.append(_src({'source': data['text/markdown']}))
            elif set(data) <= {'text/plain'}: parts.append(_src({'source': data.get('text/plain', '')}))
            else: return None
    return '\n\n'.join(parts)


def clean_nb(nb, cleaner):
    "Quarto-only syntax out, frontmatter into an H1 title and a description paragraph. Returns (nb, title)."
    cells, fm = nb['cells'], {}
    if cells and cells[0]['cell_type'] == 'raw' and _src(cells[0]).lstrip().startswith('---'):
        import yaml
        fm = yaml.safe_load(_src(cells[0]).strip().strip('-')) or {}
        cells = cells[1:]
    title = str(fm.get('title') or '').strip()
    if not title: raise SiteError(f'{cleaner.page}: no title (start the notebook with a "# Title" markdown cell)')
    head = f'# {title}'
    if fm.get('description'): head += '\n\n{.page-description}\n' + cleaner.markdown(str(fm['description']).strip())
    out = [_mk('markdown', head)]
    for cell in cells:
        src, kind = _src(cell), cell['cell_type']
        if kind == 'markdown':
            if src.strip().startswith('<!-- WARNING: THIS FILE WAS AUTOGENERATED'): continue
            cell['source'] = cleaner.markdown(src)
            if cell['source'].strip(): out.append(cell)
            continue
        if kind != 'code': out.append(cell); continue
        d, body = split_directives(src)
        if d.get('include') == 'false': continue
        echo = d.get('echo', 'true') != 'false'
        outputs = [] if d.get('output') == 'false' else cell.get('outputs', [])
        if d.get('output') == 'asis' and (md := _asis_markdown(outputs)) is not None:
            if echo and body.strip(): out.append(_mk('code', body, metadata=cell.get('metadata', {})))
            if md.strip(): out.append(_mk('markdown', cleaner.markdown(md, asis=True)))
            continue
        for o in outputs:
            data = o.get('data', {})
            for mime in ('text/markdown', 'text/html'):
                if mime in data: data[mime] = cleaner.markdown(_src({'source': data[mime]}))
        tags = set(cell.get('metadata', {}).get('tags', []))
        if not echo: tags.add('remove-input')
        if d.get('code-fold') == 'true' and echo: tags.add('hide-input')
        if not (body.strip() and echo) and not outputs: continue
        cell.update(source=body, outputs=outputs)
        cell.setdefault('metadata', {})['tags'] = sorted(tags)
        out.append(cell)
    for c in out: c.setdefault('id', uuid.uuid4().hex[:8])
    nb = dict(nb, cells=out, nbformat=4, nbformat_minor=max(5, nb.get('nbformat_minor', 5)))
    return nb, title


def output_name(proc_nb, page):
    "The page (docname, no suffix) nbdev/Quarto writes a notebook to: its `output-file`, else its stem."
    cells = json.loads(proc_nb.read_text(encoding='utf-8')).get('cells', [])
    fm = {}
    if cells and cells[0]['cell_type'] == 'raw' and _src(cells[0]).lstrip().startswith('---'):
        import yaml
        fm = yaml.safe_load(_src(cells[0]).strip().strip('-')) or {}
    name = str(fm.get('output-file') or Path(page).with_suffix('.html').name)
    return posixpath.join(posixpath.dirname(page), posixpath.splitext(name)[0])


# ------------------------------------------------------------------------------- the API index (py domain)
# A show_doc entry as clean_nb leaves it: its heading (the object's qualified name), then nbdev's source link or
# directly its signature block.
_API_ENTRY = re.compile(r'^(#{2,6}) ([A-Za-z_][\w.]*)[ \t]*\n\n'
                        r'(?:\{\.nbdev-source\}\n\[source\]\(([^)\s]+)\)'
                        r'|(?=```python\n(?:async def|def|class) ))', re.M)
_DEFAULT_EXP = re.compile(r'^\s*#\s*\|\s*default_exp\s+([\w.]+)', re.M)


def default_module(nb_path, lib='privcausal'):
    "The module a notebook exports to (`#| default_exp`), as a dotted name, or None."
    for c in json.loads(Path(nb_path).read_text(encoding='utf-8')).get('cells', []):
        if c.get('cell_type') == 'code' and (m := _DEFAULT_EXP.search(_src(c))):
            return lib if m.group(1) == '__init__' else f'{lib}.{m.group(1)}'
    return None


def lookup(module, qualname):
    "(owner, object) of `module.qualname`, or None."
    try: obj = importlib.import_module(module)
    except ImportError: return None
    owner = None
    for part in qualname.split('.'):
        if not hasattr(obj, part): return None
        owner, obj = obj, getattr(obj, part)
    return owner, obj


def py_kind(owner, obj, name):
    "(directive, options) that register `obj` (attribute `name` of `owner`) in Sphinx's py domain."
    if inspect.isclass(obj):
        return ('py:exception' if issubclass(obj, BaseException) else 'py:class'), []
    if inspect.isclass(owner):
        raw = inspect.getattr_static(owner, name)
        if isinstance(raw, (property, functools.cached_property)): return 'py:property', []
        opts = [':classmethod:'] if isinstance(raw, classmethod) else [':staticmethod:'] if isinstance(raw, staticmethod) else []
        if inspect.iscoroutinefunction(obj): opts.append(':async:')
        return 'py:method', opts
    if callable(obj): return 'py:function', [':async:'] if inspect.iscoroutinefunction(obj) else []
    return 'py:data', []


def py_directive(kind, name, module, opts=()):
    "A MyST directive that registers `module.name` (index entry, inventory, target) without typesetting it again."
    return '\n'.join([f'```{{{kind}}} {name}', f':module: {module}', *opts, ':no-typesetting:', '```'])


def source_line(obj):
    "The first line of `obj`'s source in its file (a property: its getter's), or None."
    f = obj.fget if isinstance(obj, property) else getattr(obj, '__func__', obj)
    try: return inspect.getsourcelines(inspect.unwrap(f))[1]
    except (OSError, TypeError): return None


def add_api_index(nbs_out, nb_docs, modules, titles, lib='privcausal'):
    """Register every show_doc entry, and each module, as a Python object of Sphinx's py domain, in place.

    show_doc writes markdown (a heading, a signature block, a table), which Sphinx does not know as API: the site
    had an empty `genindex` and no `py:` objects in `objects.inv`. Before each entry's heading this adds a
    `py:function`/`py:class`/`py:method`/`py:property`/`py:exception` directive with `:no-typesetting:` (an index
    entry and a target `privcausal.<module>.<qualname>` on the entry's section, nothing visible), and on each
    module's page a `py:module` (the module index).

    The object is the one nbdev's doc links (`_modidx`) place at this page and heading, else the page's module
    (`default_exp`), else the module of nbdev's source link; its full name is where it is defined. nbdev finds source
    links by the bare name, so two functions of one name (`data.dummy_code`, `bayes_wate.dummy_code`) shared one
    link: a link to another file than the object's is rewritten to the object's file and line. A heading with `__`
    (`__getattr__`) is escaped, not read as bold. An object documented on several pages is registered once: on the
    page nbdev's doc links point to, else the first in sidebar order. An entry whose object cannot be found is an
    error (SiteError). Returns {full name: (directive, page)}."""
    try: syms = importlib.import_module(f'{lib}._modidx').d.get('syms', {})
    except ImportError: syms = {}
    doc_page = {q: link[0].partition('#')[0] for m in syms.values() for q, link in m.items()}
    at_page = {(link[0].partition('#')[0], q[len(m) + 1:]): m for m, ms in syms.items() for q, link in ms.items()}
    repo = re.compile(rf'^(.*/){re.escape(lib)}((?:/\w+)*?)\.py(#L\d+)?$')
    found, errors = {}, []                     # full name -> [(page, cell index, match, directive, source link)]
    for page, nb in nbs_out.items():
        for ci, cell in enumerate(nb['cells']):
            if cell['cell_type'] != 'markdown': continue
            for m in _API_ENTRY.finditer(_src(cell)):
                qual, url = m.group(2), m.group(3)
                src = repo.match(url or '')
                by_link = lib + (src.group(2) or '').replace('/', '.').removesuffix('.__init__') if src else None
                hit = None
                for module in dict.fromkeys([at_page.get((nb_docs[page] + '.html', qual)), modules.get(page), by_link]):
                    if module and (hit := lookup(module, qual)): break
                if not hit:
                    errors.append(f'{page}: show_doc entry {qual}: no module of {lib} has it (nbdev doc link, '
                                  f'default_exp {modules.get(page)}, source link {url})'); continue
                owner, obj = hit
                home = getattr(obj, '__module__', None)
                if home and home.split('.')[0] == lib and (h := lookup(home, qual)) and h[1] is obj: module = home
                kind, opts = py_kind(owner, obj, qual.split('.')[-1])
                fixed = None
                if src and (line := source_line(obj)) is not None:
                    want = module.replace('.', '/') + ('/__init__' if module == lib else '') + '.py'
                    if f'{lib}{src.group(2)}.py' != want: fixed = f'{src.group(1)}{want}#L{line}'
                found.setdefault(f'{module}.{qual}', []).append((page, ci, m, py_directive(kind, qual, module, opts), fixed))
    if errors: raise SiteError('API index:\n  ' + '\n  '.join(errors))
    chosen, edits = {}, {}
    for full, hits in found.items():
        home = [h for h in hits if nb_docs[h[0]] + '.html' == doc_page.get(full)]
        first = (home or hits)[0]
        chosen[full] = (first[3].split('}', 1)[0].lstrip('`{'), nb_docs[first[0]])
        for h in hits: edits.setdefault((h[0], h[1]), []).append((h[2], h[3] if h is first else None, h[4]))
    for (page, ci), items in edits.items():
        cell = nbs_out[page]['cells'][ci]
        s = _src(cell)
        for m, directive, fixed in sorted(items, key=lambda x: x[0].start(), reverse=True):
            text = m.group(0)
            if fixed: text = text.replace(f'[source]({m.group(3)})', f'[source]({fixed})')
            if '__' in m.group(2): text = text.replace(m.group(2), m.group(2).replace('_', '\\_'), 1)
            s = s[:m.start()] + (directive + '\n\n' if directive else '') + text + s[m.end():]
        cell['source'] = s
    for page, module in modules.items():
        if not module or page not in nbs_out: continue
        synopsis = ' '.join(titles.get(page, '').split())
        cells = nbs_out[page]['cells']
        cells.insert(1, _mk('markdown', '\n'.join([f'```{{py:module}} {module}'] + ([f':synopsis: {synopsis}'] if synopsis else [])
                                                  + [':no-typesetting:', '```'])))
        chosen[module] = ('py:module', nb_docs[page])
    return chosen


# -------------------------------------------------------------------------------------------- sphinx
CSS = """
.page-description { font-size: 1.2rem; color: var(--pst-color-text-muted); margin-bottom: 1.5rem; }
p.nbdev-source { text-align: right; font-size: .85rem; margin: -2.4rem 0 .8rem 0; }
/* Code without sideways scrolling: a wider page and article column than the theme's (88rem page, 60em article,
   25% and 17rem sidebars) and 12px code, so that about 115 columns of code fit beside both sidebars in a 1440px
   window (160 at 1920px); code that is still wider wraps (inputs and signatures; printed outputs keep their
   alignment and scroll). tests/test_site.py measures it in chromium. */
.bd-page-width { max-width: 110rem; }
html { --pst-sidebar-secondary: 14rem; }
@media (min-width: 960px) { .bd-sidebar-primary { width: 16rem; flex: 0 0 16rem; } }
.bd-main .bd-content .bd-article-container { max-width: 100%; }
div[class*="highlight-"]:not(.output) > div.highlight > pre { white-space: pre-wrap; overflow-wrap: anywhere; }
pre { font-size: .75rem; }
table.docments td:first-child { white-space: nowrap; }
/* Printed outputs (ledger tables, plan and release summaries) keep their alignment: a line wider than the column
   scrolls inside its own output block, never the page; so does a wide HTML output (a DataFrame). tests/test_site.py
   measures it in chromium. */
div.cell_output div.output > div.highlight > pre { white-space: pre; overflow-x: auto; }
div.cell_output div.output.text_html { overflow-x: auto; }
"""
# The code blocks that get a copy button: inputs, signatures and markdown code, not outputs.
CODE_SELECTOR = 'div[class*="highlight-"]:not(.output) > div.highlight > pre'


def conf_py(site, copyright_, author):
    o = dict(
        project=site['title'], html_title=site['title'], copyright=copyright_, author=author, language='en',
        extensions=['myst_nb', 'sphinx.ext.githubpages', 'sphinx_copybutton'],
        copybutton_selector=CODE_SELECTOR,
        root_doc='index', exclude_patterns=['_build', 'jupyter_execute', '**.ipynb_checkpoints'],
        html_theme='sphinx_book_theme',
        html_theme_options=dict(home_page_in_toc=True, show_toc_level=2, repository_url=site['repo_url'],
                                use_repository_button=bool(site['repo_url']), use_download_button=False,
                                search_bar_text='Search the docs…',
                                navbar_persistent=[]),   # pydata-sphinx-theme 0.20 would add a 2nd search box
        html_static_path=['_static'], html_css_files=['privcausal.css'],
        html_baseurl=site['site_url'] + '/' if site['site_url'] else '',
        html_show_sourcelink=False, html_copy_source=False, html_last_updated_fmt=None,
        # MathJax 3 from the site itself (copied from the npm package): no CDN in the browser.
        mathjax_path='mathjax/tex-mml-chtml.js',
        # An undefined macro (a typo) becomes a MathJax error (mjx-merror) instead of red text: testable.
        mathjax3_config={'tex': {'packages': {'[-]': ['noundefined']}}},
        nb_execution_mode='off',                  # show the stored outputs; never execute
        nb_render_markdown_format='myst',         # so math in show_doc / Markdown outputs is typeset
        nb_merge_streams=True,
        myst_enable_extensions=['dollarmath', 'amsmath', 'attrs_block', 'colon_fence'],
        myst_dmath_double_inline=True,           # `$$...$$` inside a paragraph is display math, as in pandoc
        # Links are written as Quarto would publish them (`mechanisms.html#check_epsilon`); they are checked
        # after the build (every internal href, src and #fragment of the site), not resolved by myst.
        myst_all_links_external=True,
        # nbdev's show_doc emits fixed-level headings (### functions, #### methods) wherever it is called,
        # and Quarto accepts level jumps; myst would warn "Non-consecutive header level increase".
        suppress_warnings=['myst.header'],
    )
    return '# Generated by tools/build_docs.py from _quarto.yml: do not edit.\n' + \
        ''.join(f'{k} = {v!r}\n' for k, v in o.items()) + SETUP_PY


# MathJax on every page, not only on pages with math: the sidebar's page titles hold math (`\(n\)`), and the index
# pages (genindex, search) have none of their own.
SETUP_PY = '''

def setup(app):
    app.set_html_assets_policy('always')
'''


INDEX_PAGES = [('API index', 'genindex'), ('Module index', 'modindex')]   # (sidebar text, Sphinx's page)


def toctree_md(groups, nb_docs):
    blocks = []
    for caption, ents in groups:
        lines = []
        for e in ents:
            if e[0] == 'link': lines.append(f'{e[1]} <{e[2]}>')
            elif nb_docs[e[1]] != 'index': lines.append(nb_docs[e[1]])
        if not lines: continue
        blocks.append('```{toctree}\n:hidden:\n' + (f':caption: {caption}\n' if caption else '') + '\n'
                      + '\n'.join(lines) + '\n```')
    # Sphinx's index of every documented name (add_api_index) and its module index, last in the sidebar
    blocks.append('```{toctree}\n:hidden:\n\n' + '\n'.join(f'{t} <{d}>' for t, d in INDEX_PAGES) + '\n```')
    return '\n\n'.join(blocks)


def mathjax_dir(install=True):
    "The `es5` folder of the npm package mathjax (installed into the cache on first use)."
    for d in [os.environ.get('PRIVCAUSAL_MATHJAX_DIR'), MATHJAX_CACHE / 'node_modules/mathjax',
              ROOT / 'node_modules/mathjax']:
        if d and all((Path(d) / 'es5' / part).exists() for part in MATHJAX_PARTS):
            v = json.loads((Path(d) / 'package.json').read_text(encoding='utf-8')).get('version', '')
            if v.startswith('3.'): return Path(d) / 'es5'
    if not install or not shutil.which('npm'):
        raise SiteError(f'MathJax 3 not found in {MATHJAX_CACHE}: run tools/setup.sh (needs npm)')
    MATHJAX_CACHE.mkdir(parents=True, exist_ok=True)
    print(f'installing mathjax@{MATHJAX_VERSION} into {MATHJAX_CACHE} (npm) ...', flush=True)
    subprocess.run(['npm', 'install', '--no-audit', '--no-fund', '--no-save', '--silent', '--prefix',
                    str(MATHJAX_CACHE), f'mathjax@{MATHJAX_VERSION}'], check=True)
    return mathjax_dir(install=False)


# ------------------------------------------------------------------------------------- link checking
def check_links(site):
    "Every internal href/src of every page resolves to a file of the site, and its #fragment to an id."
    from bs4 import BeautifulSoup
    ids, errors = {}, []

    def ids_of(p):
        if p not in ids:
            s = BeautifulSoup(p.read_text(encoding='utf-8', errors='replace'), 'html.parser')
            ids[p] = {t.get('id') for t in s.find_all(id=True)} | {t.get('name') for t in s.find_all('a', attrs={'name': True})}
        return ids[p]

    for page in sorted(site.rglob('*.html')):
        if '_static' in page.relative_to(site).parts: continue
        soup = BeautifulSoup(page.read_text(encoding='utf-8', errors='replace'), 'html.parser')
        for tag in soup.find_all(['a', 'link', 'img', 'script', 'source', 'iframe']):
            for attr in ('href', 'src'):
                url = tag.get(attr)
                if not url or re.match(r'^([a-z][a-z0-9+.-]*:|//)', url, re.I): continue
                path, _, frag = url.partition('#')
                path = path.split('?', 1)[0]
                target = (page.parent / path).resolve() if path else page
                if target.is_dir(): target = target / 'index.html'
                where = f'{page.relative_to(site)}: {attr}="{url}"'
                if not target.is_file() or site.resolve() not in target.resolve().parents:
                    errors.append(f'{where}: no such file'); continue
                if frag and target.suffix == '.html' and frag not in ids_of(target):
                    errors.append(f'{where}: no element with id "{frag}"')
    return errors


# ---------------------------------------------------------------------------------------------- main
def build(config=None, out=None, quiet=False):
    t0 = time.time()
    config = Path(config or ROOT / '_quarto.yml').resolve()
    out = Path(out or ROOT / '_docs').resolve()
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))            # proc_nbs imports the package (spawned workers inherit sys.path)
    os.environ['PYTHONPATH'] = os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get('PYTHONPATH')] if p])
    from nbdev.config import get_config
    cfg = get_config()
    nbs = Path(cfg.nbs_path)
    site = read_config(config)
    groups = sidebar(site['contents'], nbs, config.name)
    listed = [e[1] for _, ents in groups for e in ents if e[0] == 'page']
    errors = [f'{config.name} lists {p}, which is not in {nbs.name}/' for p in listed if not (nbs / p).is_file()]
    errors += [f'{config.name} lists {p} more than once' for p in sorted({p for p in listed if listed.count(p) > 1})]
    errors += [f'{p} is not listed in {config.name}: add it to website.sidebar.contents'
               for p in notebooks_in(nbs) if p not in listed]
    errors += [f'{config.name}: only notebooks can be pages, not {p}' for p in listed if not p.endswith('.ipynb')]
    if 'index.ipynb' not in listed: errors.append(f'{config.name} must list index.ipynb (the home page)')
    if errors: raise SiteError('\n'.join(errors))
    mj = mathjax_dir()
    try: import sphinx_copybutton  # noqa: F401  (the copy button on code blocks)
    except ImportError: raise SiteError('sphinx-copybutton is missing: run tools/setup.sh (.[dev] extras)') from None

    BUILD.mkdir(exist_ok=True)
    lock = open(BUILD / '.lock', 'w')
    fcntl.flock(lock, fcntl.LOCK_EX)          # one build at a time (proc_nbs always writes _proc/)
    try:
        import nbdev.doclinks
        from nbdev.serve import proc_nbs
        nbdev.doclinks._build_modidx()
        # nbdev's spawned workers import the main script, which patches show_doc (patch_show_doc_signatures);
        # when this file is not the main script (imported by other code), process in this patched process instead.
        main_file = getattr(sys.modules.get('__main__'), '__file__', None)
        spawned_ok = bool(main_file) and Path(main_file).resolve() == Path(__file__).resolve()
        workers = min(os.cpu_count() or 1, 8) if spawned_ok else 0
        try: proc = Path(proc_nbs(force=True, n_workers=workers))
        except Exception as e:                # nbdev runs exported, import and show_doc cells to render show_doc
            raise SiteError(f"nbdev's notebook processing (proc_nbs) failed:\n{e}\nIt executes every cell that "
                            'imports something; keep imports in cells of their own (see the warnings above).') from None
        t1 = time.time()

        nb_docs = {p: output_name(proc / p, p) for p in listed}
        seen = {}
        for p, d in nb_docs.items():
            if d in seen: errors.append(f'{seen[d]} and {p} both become {d}.html')
            seen[d] = p
        if nb_docs['index.ipynb'] != 'index': errors.append('index.ipynb must be written to index.html')
        if errors: raise SiteError('\n'.join(errors))

        for sub in ('src', 'html', 'doctrees', 'jupyter_execute'):
            shutil.rmtree(BUILD / sub, ignore_errors=True)
        src = BUILD / 'src'
        for f in proc.rglob('*'):                # images and other files the notebooks refer to
            rel = f.relative_to(proc)
            if f.is_file() and f.suffix not in ('.ipynb', '.md', '.qmd', '.yml', '.yaml', '.py', '.rst') \
                    and not any(q.startswith(('.', '_')) for q in rel.parts):
                (src / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, src / rel)
        titles, cleaned = {}, {}
        for p in listed:
            raw = json.loads((proc / p).read_text(encoding='utf-8'))
            cleaned[p], titles[p] = clean_nb(raw, Cleaner(site['site_url'], nb_docs, p))
        lib = Path(cfg.lib_path).name
        api = add_api_index(cleaned, nb_docs, {p: default_module(nbs / p, lib) for p in listed}, titles, lib)
        for p, nb in cleaned.items():
            if p == 'index.ipynb': nb['cells'].append(_mk('markdown', toctree_md(groups, nb_docs)))
            dest = src / (nb_docs[p] + '.ipynb')
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(json.dumps(nb, indent=1), encoding='utf-8')
        static = src / '_static'
        static.mkdir(parents=True)
        (static / 'privcausal.css').write_text(CSS, encoding='utf-8')
        for part in MATHJAX_PARTS:
            a, b = mj / part, static / 'mathjax' / part
            b.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(a, b) if a.is_dir() else shutil.copy2(a, b)
        (src / 'conf.py').write_text(conf_py(site, cfg.get('copyright', ''), cfg.get('author', '')), encoding='utf-8')

        from sphinx.cmd.build import build_main
        args = ['-b', 'html', '-W', '--keep-going', '-E', '-d', str(BUILD / 'doctrees'), str(src), str(BUILD / 'html')]
        if quiet: args.insert(0, '-q')
        if build_main(args) != 0: raise SiteError('sphinx-build failed: see the warnings above (-W: warnings are errors)')
        with contextlib.suppress(OSError): (BUILD / 'html' / '_sources').rmdir()   # empty
        if (bad := check_links(BUILD / 'html')):
            raise SiteError('broken internal references:\n  ' + '\n  '.join(bad) + '\n(a backticked name links to its '
                            "show_doc entry, e.g. `Class.method` -> page.html#class.method: add show_doc(Class.method) "
                            'to the notebook, or write the name without backticks)')

        manifest = dict(title=site['title'], pages=[dict(notebook=p, html=nb_docs[p] + '.html', title=titles[p],
                        section=cap) for cap, ents in groups for e in ents if e[0] == 'page' for p in [e[1]]],
                        api={name: dict(kind=kind, html=doc + '.html') for name, (kind, doc) in sorted(api.items())})
        (BUILD / 'manifest.json').write_text(json.dumps(manifest, indent=1), encoding='utf-8')
        old = BUILD / 'old_docs'
        shutil.rmtree(old, ignore_errors=True)
        if out.exists(): shutil.move(out, old)
        shutil.move(BUILD / 'html', out)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
    print(f'built {len(listed)} pages in {time.time() - t0:.1f} s (nbdev processing {t1 - t0:.1f} s); '
          f'open {out / "index.html"}')
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--config', help='site description (default: the top-level _quarto.yml)')
    ap.add_argument('--out', help='output folder (default: _docs/)')
    ap.add_argument('-q', '--quiet', action='store_true', help="less of Sphinx's progress output")
    ap.add_argument('--setup-mathjax', action='store_true', help='only install MathJax (npm) if missing; print where')
    a = ap.parse_args()
    try:
        if a.setup_mathjax: print(mathjax_dir().parent)
        else: build(a.config, a.out, a.quiet)
    except SiteError as e:
        print(f'build_docs: error:\n{e}', file=sys.stderr)
        sys.exit(1)


if __name__ == '__main__':                      # proc_nbs uses multiprocessing 'spawn'
    main()
