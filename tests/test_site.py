"""The built documentation site, as a browser sees it (Debian's chromium, headless, offline).

    pytest -q -m browser tests/test_site.py

Builds the site once per session with tools/build_docs.py, serves `_docs/` with `python -m http.server` on
127.0.0.1, and loads pages in chromium with every host but 127.0.0.1 unresolvable, so anything fetched from a
CDN would be missing. Without chromium the tests skip, or fail when CI is set.
Environment: SITE_CONFIG=path builds another site description (development); CHROMIUM=path, another binary.

`api_table_problems(docs)` (every exported function and class has its parameter table) also runs on its own:
    python tests/test_site.py [DOCS_DIR]        # exit 1 and the list when a page lacks a table
"""
import ast, importlib, inspect, io, json, os, re, shutil, socket, subprocess, sys, tempfile, time, tokenize, zlib
import urllib.request
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group('site')]  # one worker builds and serves the site
bs4 = pytest.importorskip('bs4')

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / '_docs'
MANIFEST = ROOT / '_site_build' / 'manifest.json'
MODULE_PAGE = 'mechanisms.html'           # the module page checked in the browser besides the home page
SEARCH_TERM = 'laplace_mechanism'         # an exported name of that module
KWONLY_PAGE = 'ipw.html'                  # pp_ipw: keyword-only parameters, LaTeX in its parameter docs
REFERENCES_PAGE = 'references.html'
DOCMENTS_CLASS = 'docments'               # tools/build_docs.py gives every parameter table this class
# Code inputs, signatures and markdown code (not outputs): what must not scroll sideways and gets a copy button
CODE_SELECTOR = 'div[class*="highlight-"]:not(.output) > div.highlight > pre'
LAYOUT_WIDTH, MIN_CODE_COLUMNS = 1440, 110   # at a 1440px wide window, at least 110 columns of code fit
_LOG_LINE = re.compile(r'"(\w+) (\S+) HTTP/[\d.]+" (\d{3})')


def soup(html): return bs4.BeautifulSoup(html, 'html.parser')


# ------------------------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope='session')
def chromium():
    exe = os.environ.get('CHROMIUM') or shutil.which('chromium') or '/usr/bin/chromium'   # CHROMIUM: another binary
    if not (Path(exe).is_file() and os.access(exe, os.X_OK)):
        msg = "Debian's chromium is missing (tools/setup.sh installs it: apt-get install -y chromium)"
        if os.environ.get('CI'): pytest.fail(msg)
        pytest.skip(msg)
    return exe


@pytest.fixture(scope='session')
def site(chromium):
    "Build the site once per session; returns the manifest (pages in sidebar order, with titles and sections)."
    cmd = [sys.executable, str(ROOT / 'tools/build_docs.py'), '-q']
    if os.environ.get('SITE_CONFIG'): cmd += ['--config', os.environ['SITE_CONFIG']]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f'site build failed:\n{r.stdout[-4000:]}\n{r.stderr[-8000:]}'
    return json.loads(MANIFEST.read_text(encoding='utf-8'))


class Server:
    def __init__(self, log):
        self.log = log
        with socket.socket() as s:
            s.bind(('127.0.0.1', 0)); self.port = s.getsockname()[1]
        self.url = f'http://127.0.0.1:{self.port}/'
        self.f = open(log, 'w')
        self.proc = subprocess.Popen([sys.executable, '-u', '-m', 'http.server', str(self.port), '--bind', '127.0.0.1',
                                      '--directory', str(DOCS)], stdout=self.f, stderr=subprocess.STDOUT)
        for _ in range(100):
            try:
                with socket.create_connection(('127.0.0.1', self.port), timeout=0.2): return
            except OSError: time.sleep(0.1)
        raise RuntimeError(f'http.server did not start; see {log}')

    def requests(self, start=0):
        "[(method, path, status)] logged since byte offset `start`."
        return [(m, unquote(urlsplit(p).path), int(s))
                for m, p, s in _LOG_LINE.findall(self.log.read_text(encoding='utf-8')[start:])]

    def offset(self): return len(self.log.read_text(encoding='utf-8'))

    def close(self):
        self.proc.terminate()
        try: self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired: self.proc.kill(); self.proc.wait()
        self.f.close()


@pytest.fixture(scope='session')
def server(site, tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp('server') / 'requests.log')
    yield srv
    srv.close()


class Browser:
    def __init__(self, exe, server, tmp):
        self.exe, self.server, self.tmp, self.cache = exe, server, tmp, {}

    def run(self, url, *mode):
        args = [self.exe, '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                '--disable-background-networking', '--disable-component-update', '--disable-sync',
                f'--user-data-dir={tempfile.mkdtemp(dir=self.tmp)}',
                '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1', '--virtual-time-budget=15000',
                *mode, self.server.url + url]
        r = subprocess.run(args, capture_output=True, text=True, timeout=180)
        assert r.returncode == 0, f'chromium failed on {url}:\n{r.stderr[-3000:]}'
        return r.stdout

    def dom(self, url):
        "(DOM after scripts ran, [(method, path, status)] requested while loading it)."
        if url not in self.cache:
            start = self.server.offset()
            html = self.run(url, '--dump-dom')
            assert '</html>' in html, f'no DOM for {url}: {html[:300]!r}'
            self.cache[url] = html, self.server.requests(start)
        return self.cache[url]


@pytest.fixture(scope='session')
def browser(chromium, server, tmp_path_factory):
    return Browser(chromium, server, tmp_path_factory.mktemp('chromium'))



# ------------------------------------------------------------------------------------------------- tests
def test_module_page_is_listed(site):
    assert MODULE_PAGE in [p['html'] for p in site['pages']], f'{MODULE_PAGE} is not a page of {site["pages"]}'


@pytest.mark.parametrize('page', ['index.html', MODULE_PAGE])
def test_math_is_typeset(browser, page):
    html, _ = browser.dom(page)
    static = soup((DOCS / page).read_text(encoding='utf-8'))
    n_inline, n_display = len(static.select('span.math')), len(static.select('div.math'))
    dom = soup(html)
    boxes = dom.find_all('mjx-container')
    shown = [b for b in boxes if b.get('display') == 'true']
    assert not dom.find_all('mjx-merror'), f'MathJax errors: {[e.get_text()[:80] for e in dom.find_all("mjx-merror")]}'
    assert len(boxes) >= n_inline + n_display, f'{page}: {len(boxes)} typeset of {n_inline + n_display} math elements'
    assert len(shown) >= n_display, f'{page}: {len(shown)} display math typeset of {n_display}'
    for t in dom.find_all(['pre', 'code', 'script', 'style', 'mjx-container']): t.decompose()
    text = dom.get_text()
    assert '$$' not in text and '\\begin{' not in text, f'{page}: untypeset math left in the text'
    if page == MODULE_PAGE: assert n_inline + n_display > 0 and boxes, f'{page}: expected math on the module page'


def _figures_in_notebook(nb_path):
    "Image outputs the processed notebook shows (cells with `#| output: false` / `include: false` aside)."
    n = 0
    for c in json.loads(nb_path.read_text(encoding='utf-8'))['cells']:
        src = ''.join(c.get('source', ''))
        if re.search(r'^\s*#\s*\|\s*(output|include)\s*:\s*false', src, re.M): continue
        n += sum(any(k.startswith('image/') for k in o.get('data', {})) for o in c.get('outputs', []))
    return n


@pytest.mark.parametrize('page', ['index.html', MODULE_PAGE])
def test_figures_are_served(browser, site, page):
    html, reqs = browser.dom(page)
    nb = next(p['notebook'] for p in site['pages'] if p['html'] == page)
    expected = _figures_in_notebook(ROOT / '_proc' / nb)
    imgs = [i.get('src') for i in soup(html).select('.bd-article img') if i.get('src')]
    figs = [s for s in imgs if '_images/' in s]
    assert len(figs) >= expected, f'{page}: {expected} figures in {nb}, {len(figs)} <img> of them on the page'
    status = {p: s for _, p, s in reqs}
    for src in imgs:
        path = urlsplit(urljoin(browser.server.url + page, src)).path
        assert status.get(unquote(path)) in (200, 304), f'{page}: image {src} got {status.get(unquote(path))}'


def test_every_image_of_the_site_is_served(server):
    "Pages not browsed above too: each <img> the site references is served with 200."
    checked = 0
    for page in sorted(DOCS.rglob('*.html')):
        if '_static' in page.parts: continue
        rel = page.relative_to(DOCS).as_posix()
        for img in soup(page.read_text(encoding='utf-8')).find_all('img'):
            src = img.get('src') or ''
            if re.match(r'^[a-z]+:', src): continue
            with urllib.request.urlopen(urljoin(server.url + rel, src)) as r:
                assert r.status == 200 and r.headers['Content-Type'].startswith('image/'), (rel, src)
            checked += 1
    print(f'{checked} images served')


@pytest.mark.parametrize('page', ['index.html', MODULE_PAGE, f'search.html?q={SEARCH_TERM}'])
def test_every_request_succeeds(browser, page):
    _, reqs = browser.dom(page)
    assert reqs, f'no requests logged for {page}'
    bad = [(m, p, s) for m, p, s in reqs if s not in (200, 304) and p != '/favicon.ico']
    assert not bad, f'{page}: failed requests {bad}'


@pytest.mark.parametrize('page', ['index.html', MODULE_PAGE])
def test_internal_links_resolve(browser, page):
    html, _ = browser.dom(page)
    dom, base = soup(html), browser.server.url + page
    bad, external = [], []
    for tag in dom.find_all(['a', 'link', 'img', 'script', 'source', 'iframe']):
        for attr in ('href', 'src'):
            url = tag.get(attr)
            if not url: continue
            full = urlsplit(urljoin(base, url))
            if full.scheme not in ('http', 'https') or full.netloc != urlsplit(base).netloc:
                loads = tag.name != 'a' and not (tag.name == 'link' and {'canonical', 'alternate'} & set(tag.get('rel', [])))
                if loads and full.scheme in ('http', 'https'): external.append(url)     # a CDN load
                continue
            target = DOCS / unquote(full.path).lstrip('/')
            if target.is_dir(): target /= 'index.html'
            if not target.is_file(): bad.append(f'{attr}="{url}": no file'); continue
            if full.fragment and target.suffix == '.html':
                tdom = dom if target == DOCS / page else soup(target.read_text(encoding='utf-8'))
                ids = {t.get('id') for t in tdom.find_all(id=True)}
                if full.fragment not in ids: bad.append(f'{attr}="{url}": no id "{full.fragment}"')
    assert not bad, f'{page}: broken internal references: {bad}'
    assert not external, f'{page}: loads resources from other hosts: {external}'


@pytest.mark.parametrize('page', ['index.html', MODULE_PAGE])
def test_sidebar_lists_every_page_in_order(browser, site, page):
    html, _ = browser.dom(page)
    nav = soup(html).select_one('nav.bd-docs-nav')
    assert nav is not None, f'{page}: no sidebar navigation'
    links = [urlsplit(urljoin(page, a['href'])).path if a['href'] != '#' else page
             for a in nav.find_all('a', href=True)]
    links = [l for l in links if not re.match(r'^[a-z]+:', l)]
    want = [p['html'] for p in site['pages']]
    assert [l for l in links if l in want] == want, f'{page}: sidebar {links}, _quarto.yml order {want}'
    captions = [c.get_text(strip=True) for c in nav.select('p.caption')]
    want_caps = list(dict.fromkeys(p['section'] for p in site['pages'] if p['section']))
    assert captions == want_caps, f'{page}: sidebar sections {captions}, _quarto.yml sections {want_caps}'


def test_module_page_has_api_sections(browser):
    "Each show_doc entry: a section (heading in the page contents), its signature, Quarto's anchor; tables typeset."
    html, _ = browser.dom(MODULE_PAGE)
    dom = soup(html)
    sec = dom.find('section', id=SEARCH_TERM.replace('_', '-'))
    assert sec is not None and sec.find(['h2', 'h3', 'h4']).get_text(strip=True).rstrip('#') == SEARCH_TERM
    assert f'def {SEARCH_TERM}(' in sec.find('pre').get_text(), 'no signature under the show_doc heading'
    assert dom.find(id=SEARCH_TERM), 'no Quarto-style anchor (nbdev doc links point to #check_epsilon)'
    toc = dom.select_one('.bd-sidebar-secondary')
    assert toc and SEARCH_TERM in toc.get_text(), 'show_doc entry missing from the page contents'
    for t in dom.find_all(['pre', 'code', 'script']): t.decompose()
    assert not re.search(r'^\s*\|.*\|\s*$', dom.get_text(), re.M), 'a markdown table (docments?) was not rendered'


def test_no_markdown_left_unrendered(site):
    "No page shows a raw markdown table row or raw `$...$` math (outside code)."
    bad = []
    for page in [p['html'] for p in site['pages']]:
        dom = soup((DOCS / page).read_text(encoding='utf-8'))
        art = dom.select_one('article') or dom
        for t in art.find_all(['pre', 'code', 'script', 'style']): t.decompose()
        for t in art.select('.math, .output, .cell_output'): t.decompose()
        text = art.get_text()
        bad += [f'{page}: {l.strip()[:90]}' for l in text.split('\n') if re.match(r'^\s*\|.*\|\s*$', l)]
        bad += [f'{page}: {m.group(0)[:90]}' for m in re.finditer(r'\$[^$\n]{0,80}\\[A-Za-z]+[^$\n]{0,80}\$', text)]
    assert not bad, 'unrendered markdown:\n  ' + '\n  '.join(bad[:30])


def test_search_finds_the_module_page(browser):
    html, _ = browser.dom(f'search.html?q={SEARCH_TERM}')
    results = soup(html).select('#search-results ul.search li a')
    hits = [urlsplit(a['href']).path for a in results]
    assert MODULE_PAGE in hits, f'search for {SEARCH_TERM} listed {hits}'


def test_screenshot_of_home_page(browser, tmp_path):
    shot = tmp_path / 'home.png'
    browser.run('index.html', f'--screenshot={shot}', '--window-size=1400,1000')
    assert shot.is_file() and shot.stat().st_size > 20_000, 'no (or a blank) screenshot'
    print(f'screenshot: {shot}')


# --------------------------------------------------------------------------- API reference: parameter tables
def exported_objects():
    """[(qualified name, object, page, anchor)] for every function and class in a `privcausal/*.py` `__all__`.

    The page and anchor are nbdev's doc link (`privcausal/_modidx.py`), the one every backticked name links to;
    a name re-exported from another module is listed once, under the module that defines it."""
    sys.path.insert(0, str(ROOT))
    modidx = importlib.import_module('privcausal._modidx').d['syms']
    out, seen = [], set()
    for f in sorted((ROOT / 'privcausal').glob('*.py')):
        if f.stem.startswith('_'): continue
        mod = importlib.import_module(f'privcausal.{f.stem}')
        for name in getattr(mod, '__all__', []):
            obj = getattr(mod, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or id(obj) in seen: continue
            seen.add(id(obj))
            qual = f'{obj.__module__}.{obj.__qualname__}'
            link = modidx.get(obj.__module__, {}).get(qual)
            page, _, anchor = (link[0] if link else '').partition('#')
            out.append((qual, obj, page, anchor))
    return out


def _expected_parameters(obj):
    "The parameter names a table must list, in order (`*args`, `**kw` with their stars); None if unknowable."
    try: sig = inspect.signature(obj)
    except (TypeError, ValueError): return None
    P = inspect.Parameter
    return [('*' if p.kind == P.VAR_POSITIONAL else '**' if p.kind == P.VAR_KEYWORD else '') + n
            for n, p in sig.parameters.items() if n not in ('self', 'cls')]


def _signature_kinds(text):
    "{name: kind} of a signature as the page shows it (a Python `def`/`class` header), or an error string."
    src = re.sub(r'=<[^<>\n]*>', '=None', re.sub(r'^\s*(class|async def)\s', 'def ', text.strip(), count=1))
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(src + '\n    pass\n').readline))
        fn = ast.parse(src + '\n    pass\n').body[0]
    except (SyntaxError, tokenize.TokenError, IndexError) as e:
        return f'the signature is not Python ({e.__class__.__name__}: {e})'
    if any(t.type == tokenize.COMMENT for t in toks): return 'parameter comments left in the signature'
    a, P = fn.args, inspect.Parameter
    kinds = {x.arg: P.POSITIONAL_ONLY for x in a.posonlyargs} | {x.arg: P.POSITIONAL_OR_KEYWORD for x in a.args}
    if a.vararg: kinds[a.vararg.arg] = P.VAR_POSITIONAL
    kinds |= {x.arg: P.KEYWORD_ONLY for x in a.kwonlyargs}
    if a.kwarg: kinds[a.kwarg.arg] = P.VAR_KEYWORD
    kinds.pop('self', None); kinds.pop('cls', None)
    return kinds


def api_table_problems(docs=DOCS):
    """Every exported function and class: its show_doc entry on its page, a Python signature with the real
    parameter kinds (the bare `*` kept), and right after it a parameter table (class `docments`) listing exactly
    its parameters, with the math in it rendered. Returns the problems, one line each."""
    problems, pages = [], {}
    for qual, obj, page, anchor in exported_objects():
        if not page:
            problems.append(f"{qual}: not in nbdev's index (privcausal/_modidx.py): export it from a notebook")
            continue
        path = Path(docs) / page
        if not path.is_file():
            problems.append(f'{qual}: its page {page} was not built'); continue
        if page not in pages: pages[page] = soup(path.read_text(encoding='utf-8'))
        dom, where = pages[page], f'{qual} ({page}#{anchor})'
        el = dom.find(id=anchor)
        sec = el if el is not None and el.name == 'section' else el.find_next('section') if el is not None else None
        head = sec.find(['h2', 'h3', 'h4', 'h5', 'h6']) if sec is not None else None
        if head is None or head.get_text(strip=True).rstrip('#') != obj.__qualname__:
            problems.append(f'{where}: no show_doc entry (a section headed {obj.__qualname__!r})'); continue
        pre = sec.find('pre')
        if pre is None:
            problems.append(f'{where}: no signature under the heading'); continue
        kinds = _signature_kinds(pre.get_text())
        if isinstance(kinds, str):
            problems.append(f'{where}: {kinds}'); continue
        expected = _expected_parameters(obj)
        try: real = {n: p.kind for n, p in inspect.signature(obj).parameters.items() if n not in ('self', 'cls')}
        except (TypeError, ValueError): real = None
        if real is not None and kinds != real:
            problems.append(f'{where}: the page shows the signature ({", ".join(kinds)}) with kinds '
                            f'{[k.name for k in kinds.values()]}, the function has {[k.name for k in real.values()]}')
            continue
        if not kinds: continue                               # no parameter, nothing to tabulate
        table = pre.find_next('table')
        if table is None or DOCMENTS_CLASS not in (table.get('class') or []) or table.find_previous('pre') is not pre \
                or sec not in table.parents:
            problems.append(f'{where}: no parameter table after its signature'); continue
        names = [tr.find('td').get_text(strip=True) for tr in table.select('tbody tr') if tr.find('td')]
        names = [n for n in names if n != 'Returns']
        if expected is not None and names != expected:
            problems.append(f'{where}: the table lists {names}, the signature has {expected}')
        own = not (inspect.isclass(obj) and issubclass(obj, BaseException))  # an exception's (*args, **kwargs) are Python's
        blank = [tr.find('td').get_text(strip=True) for tr in table.select('tbody tr') if own
                 if tr.find('td') and tr.find('td').get_text(strip=True) != 'Returns'
                 and not tr.find_all('td')[-1].get_text(strip=True)]
        if blank: problems.append(f'{where}: no Details for {blank} (document each parameter or field with a trailing comment)')
        for td in table.select('td'):
            text = ''.join(t for t in td.find_all(string=True) if not t.find_parent(class_='math'))
            if re.search(r'\$[^$]*\\[A-Za-z]', text) or '\\(' in text:
                problems.append(f'{where}: untypeset math in its table: {td.get_text()[:80]!r}'); break
    return problems


def test_every_exported_function_has_its_parameter_table(site):
    problems = api_table_problems(DOCS)
    assert not problems, f'{len(problems)} API entries without a proper parameter table:\n  ' + '\n  '.join(problems)


def test_the_table_check_can_fail(site, tmp_path):
    "A copy of the site with one parameter table stripped (pp_ipw's), and one with the bare `*` dropped, fail."
    page = DOCS / KWONLY_PAGE
    dom = soup(page.read_text(encoding='utf-8'))
    sec = dom.find('section', id='pp-ipw')
    assert sec is not None and sec.find('table', class_=DOCMENTS_CLASS) is not None, 'pp_ipw has no table to strip'
    sec.find('table', class_=DOCMENTS_CLASS).decompose()
    copy = tmp_path / 'docs'
    shutil.copytree(DOCS, copy, ignore=shutil.ignore_patterns('_static', '_images'))
    (copy / KWONLY_PAGE).write_text(str(dom), encoding='utf-8')
    assert any('pp_ipw' in p and 'no parameter table' in p for p in api_table_problems(copy))
    dom = soup(page.read_text(encoding='utf-8'))
    pre = dom.find('section', id='pp-ipw').find('pre')
    pre.string = re.sub(r'\*,\s*', '', pre.get_text(), count=1)
    (copy / KWONLY_PAGE).write_text(str(dom), encoding='utf-8')
    problems = [p for p in api_table_problems(copy) if 'pp_ipw' in p]    # `epsilon` then follows defaults
    assert problems and ('not Python' in problems[0] or 'kinds' in problems[0]), problems


def test_keyword_only_entry_point_renders(browser):
    "pp_ipw (keyword-only): `*` in its signature, a parameter table after it, its LaTeX typeset in the browser."
    html, _ = browser.dom(KWONLY_PAGE)
    sec = soup(html).find('section', id='pp-ipw')
    assert sec is not None, f'no pp_ipw section on {KWONLY_PAGE}'
    assert re.search(r'^\s*\*,', sec.find('pre').get_text(), re.M), 'the bare * is missing from the signature'
    table = sec.find('table', class_=DOCMENTS_CLASS)
    assert table is not None, 'no parameter table'
    row = next(tr for tr in table.select('tbody tr') if tr.find('td').get_text(strip=True) == 'epsilon')
    assert row.find('mjx-container') is not None, 'the math of the epsilon row is not typeset'
    assert not soup(html).find_all('mjx-merror')


# ------------------------------------------------------------------ API index: py objects, genindex, intersphinx
INDEXED = {'privcausal.doubly_robust.aipw': 'py:function', 'privcausal.ipw.pp_ipw': 'py:function',
           'privcausal.accounting.PrivacyLedger': 'py:class', 'privcausal.ipw': 'py:module'}
INDEX_PAGES = ['genindex.html', 'py-modindex.html']     # Sphinx's index of names and module index, in the sidebar


def inventory(docs=DOCS):
    "{(name, role): uri} of the site's `objects.inv` (Sphinx inventory version 2, decoded with zlib)."
    raw = (Path(docs) / 'objects.inv').read_bytes()
    head = raw.split(b'\n', 4)
    assert head[0] == b'# Sphinx inventory version 2', head[0]
    out = {}
    for line in zlib.decompress(head[4]).decode('utf-8').splitlines():
        m = re.match(r'(.+?)\s+(\S+:\S+)\s+(-?\d+)\s+(\S*)\s+(.*)$', line)
        if m:
            name, role, _, uri, _ = m.groups()
            out[name, role] = uri[:-1] + name if uri.endswith('$') else uri
    return out


def test_objects_inv_lists_the_api(site):
    "Every show_doc entry and every exported function and class is a py object that intersphinx can link to."
    inv = inventory()
    py = {k: v for k, v in inv.items() if k[1].startswith('py:')}
    for name, role in INDEXED.items():
        assert (name, role) in py, f'{name} is not a {role} in objects.inv'
    api = site['api']                                   # what tools/build_docs.py registered, with the page
    assert len(api) >= 400 and len(py) == len(api), (len(api), len(py))
    missing = [f'{n} ({a["kind"]})' for n, a in api.items() if (n, a['kind']) not in py]
    assert not missing, f'registered but not in objects.inv: {missing[:20]}'
    wrong = [f'{n}: {py[n, a["kind"]]}' for n, a in api.items() if a['kind'] != 'py:module'
             and py[n, a['kind']] != f'{a["html"]}#{n}']
    assert not wrong, f'inventory entries that do not point at their show_doc entry: {wrong[:20]}'
    roles = {'py:function', 'py:class', 'py:exception'}
    absent = [q for q, obj, _, _ in exported_objects() if not any((q, r) in py for r in roles)]
    assert not absent, f'exported functions and classes missing from objects.inv: {absent}'
    print(f'{len(py)} py objects in objects.inv: ' + ', '.join(
        f'{r} {sum(k[1] == r for k in py)}' for r in sorted({k[1] for k in py})))


def test_inventory_targets_are_the_show_doc_entries(site):
    """Each object's anchor is on the section of its show_doc entry (the heading is its qualified name, `__dir__` not
    bold `dir`), and the entry's source link points at the file that defines it (not another function of that name)."""
    pages, bad, modules = {}, [], {n for n, a in site['api'].items() if a['kind'] == 'py:module'}
    for name, a in site['api'].items():
        if a['kind'] == 'py:module': continue
        if a['html'] not in pages: pages[a['html']] = soup((DOCS / a['html']).read_text(encoding='utf-8'))
        el = pages[a['html']].find(id=name)
        sec = el if el is not None and el.name == 'section' else el.find_parent('section') if el is not None else None
        head = sec.find(['h2', 'h3', 'h4', 'h5', 'h6']) if sec is not None else None
        if head is None or not name.endswith('.' + head.get_text(strip=True).rstrip('#')):
            bad.append(f'{a["html"]}#{name}: {head.get_text(strip=True) if head is not None else "no section"}')
            continue
        module = max((m for m in modules if name.startswith(m + '.')), key=len)
        path = module.replace('.', '/') + ('/__init__' if '.' not in module else '') + '.py#L'
        link = sec.select_one('p.nbdev-source a')
        if link is not None and path not in link['href']:
            bad.append(f'{a["html"]}#{name}: source link {link["href"]}, not {path}')
    assert not bad, f'{len(bad)} show_doc entries with a wrong anchor or source link:\n  ' + '\n  '.join(bad[:20])


def test_genindex_links_to_the_api(site):
    "genindex.html lists every registered object with a link to its entry; the module index lists every module."
    hrefs = {a['href'] for a in soup((DOCS / 'genindex.html').read_text(encoding='utf-8')).find_all('a', href=True)}
    for name in INDEXED:
        if INDEXED[name] != 'py:module': assert f'{site["api"][name]["html"]}#{name}' in hrefs, name
    inv = inventory()
    missing = [f'{n}: {u}' for (n, r), u in inv.items() if r.startswith('py:') and u not in hrefs]
    assert not missing, f'py objects that genindex.html does not link to: {missing[:20]}'
    mods = soup((DOCS / 'py-modindex.html').read_text(encoding='utf-8')).get_text()
    assert all(n in mods for (n, r) in inv if r == 'py:module'), 'a module is missing from py-modindex.html'


@pytest.mark.parametrize('page', ['index.html', KWONLY_PAGE, 'genindex.html'])
def test_sidebar_links_to_the_indexes(page):
    nav = soup((DOCS / page).read_text(encoding='utf-8')).select_one('nav.bd-docs-nav')
    links = {urlsplit(urljoin(page, a['href'])).path for a in nav.find_all('a', href=True)}
    assert set(INDEX_PAGES) <= links, f'{page}: the sidebar does not link to {set(INDEX_PAGES) - links}'


def test_mathjax_on_every_page(site):
    "The sidebar's titles hold math (`\\(n\\)`): every page loads MathJax, the index pages too."
    pages = [p for p in DOCS.rglob('*.html') if '_static' not in p.parts]
    without = [str(p.relative_to(DOCS)) for p in pages if 'mathjax/tex-mml-chtml.js' not in p.read_text(encoding='utf-8')]
    assert not without, f'pages without MathJax: {without}'


# ------------------------------------------------------------------------- reference pages: item 5 of issue 17
# Known problems left in notebooks other branches edit (see the report of the docs_index branch); the tests print them.
KNOWN_SPEC = {}
KNOWN_WARNINGS = {'experiments/wate_simulations.html': 'a #| slow cell (pandas PerformanceWarning): needs the full run'}


def _article(page):
    dom = soup((DOCS / page).read_text(encoding='utf-8'))
    return dom.select_one('article') or dom


def test_every_dataclass_field_is_documented(site):
    """Every dataclass on the site (results, plans, diagnostics): each field a parameter of its table with Details,
    each derived field (`init=False`, computed in `__post_init__`) named with its documentation in a table of the page."""
    import dataclasses
    problems, n = [], 0
    for name, a in site['api'].items():
        if a['kind'] != 'py:class': continue
        mod, _, qual = name.rpartition('.')
        obj = getattr(importlib.import_module(mod), qual)
        if not dataclasses.is_dataclass(obj): continue
        n += 1
        dom = _article(a['html'])
        sec = dom.find(id=name).find_parent('section')
        table = sec.find('table', class_=DOCMENTS_CLASS)
        rows = {tr.find('td').get_text(strip=True): tr.find_all('td')[-1].get_text(strip=True)
                for tr in (table.select('tbody tr') if table is not None else []) if tr.find('td')}
        named = {tr.find(['th', 'td']).get_text(strip=True) for tr in dom.select('table tr')    # a row with a doc
                 if len(tr.find_all(['th', 'td'])) > 1 and tr.find_all(['th', 'td'])[-1].get_text(strip=True)}
        for f in dataclasses.fields(obj):
            if not (rows.get(f.name) if f.init else f.name in named): problems.append(f'{name}.{f.name} ({a["html"]}): ' + ('no Details in its table' if f.init else
                                        'derived field not documented on the page (show `fields_table()`)'))
    assert n >= 40, f'only {n} dataclasses found on the site'
    assert not problems, f'{len(problems)} undocumented dataclass fields:\n  ' + '\n  '.join(problems)


def test_no_unpublished_spec_is_cited(site):
    "No page cites a `spec/*.md` file or a section of those digests (`spec §8`, `digest §10`): they are not part of the site."
    hits = {p['html']: re.findall(r'spec/[\w./-]+|(?:spec|digest) §[\d.]+', _article(p['html']).get_text()) for p in site['pages']}
    hits = {p: h for p, h in hits.items() if h}
    if hits: print('known:', {p: KNOWN_SPEC[p] for p in hits if p in KNOWN_SPEC})
    bad = {p: h for p, h in hits.items() if p not in KNOWN_SPEC}
    assert not bad, f'pages citing files that are not on the site: {bad}'


WARNING_TEXT = re.compile(r'\b\w*Warning: ')       # Python's warning line: `file:line: UserWarning: message`


def test_no_warnings_in_outputs(site):
    "No stored output shows a Python warning (RuntimeWarning, UserWarning, ...): cells expect or avoid theirs."
    hits = {}
    for page in [p['html'] for p in site['pages']]:
        for out in _article(page).select('div.cell_output'):
            hits.setdefault(page, []).extend(l.strip()[:120] for l in out.get_text().split('\n') if WARNING_TEXT.search(l))
    hits = {p: h for p, h in hits.items() if h}
    if hits: print('known:', {p: KNOWN_WARNINGS[p] for p in hits if p in KNOWN_WARNINGS})
    bad = {p: h for p, h in hits.items() if p not in KNOWN_WARNINGS}
    assert not bad, f'warnings in rendered outputs: {bad}'


def wide_output_lines(docs=DOCS, width=110):
    "{page: number of printed output lines longer than `width`}: they scroll inside their block (see the layout test)."
    out = {}
    for page in sorted(Path(docs).rglob('*.html')):
        if '_static' in page.parts: continue
        n = sum(len(l) > width for pre in soup(page.read_text(encoding='utf-8')).select('div.cell_output pre')
                for l in pre.get_text().split('\n'))
        if n: out[str(page.relative_to(docs))] = n
    return out


# -------------------------------------------------------------------------------- layout, copy, references
PROBE = """<!doctype html><meta charset="utf-8"><title>layout probe</title><body style="margin:0">
<pre id="out">pending</pre><iframe id="f" style="width:WIDTHpx;height:900px;border:0"></iframe>
<script>
const pages = PAGES, sel = SELECTOR, out = {}, f = document.getElementById('f');
let i = 0;
function measure(page) {
  const d = f.contentDocument, blocks = [...d.querySelectorAll(sel)], r = {blocks: blocks.length, wide: [], cols: null};
  r.buttons = blocks.filter(b => b.parentElement.querySelector('button.copybtn')).length;
  r.page_overflow = d.documentElement.scrollWidth - d.documentElement.clientWidth;
  r.outputs_wide = 0; r.outputs_unscrolled = [];
  for (const o of d.querySelectorAll('div.cell_output div.output')) {
    const box = o.querySelector('pre') || o, ox = getComputedStyle(box).overflowX;
    if (box.scrollWidth > box.clientWidth + 1) {
      r.outputs_wide++;
      if (ox != 'auto' && ox != 'scroll') r.outputs_unscrolled.push(box.textContent.trim().slice(0, 80));
    }
  }
  for (const b of blocks)
    if (b.scrollWidth > b.clientWidth + 1) r.wide.push(b.textContent.split('\\n')[0].slice(0, 80));
  const b = blocks.find(b => b.offsetParent !== null);
  if (b) {
    const s = d.createElement('span'); s.textContent = 'x'.repeat(100); b.appendChild(s);
    const cs = getComputedStyle(b), inner = b.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    r.cols = Math.floor(inner / (s.getBoundingClientRect().width / 100)); s.remove();
  }
  out[page] = r;
}
function next() {
  if (i >= pages.length) { document.getElementById('out').textContent = JSON.stringify(out); return; }
  f.onload = () => setTimeout(() => { measure(pages[i]); i++; next(); }, 300);
  f.src = pages[i];
}
next();
</script>"""


@pytest.fixture(scope='session')
def layout(browser, site):
    "{page: {blocks, buttons, wide, cols, page_overflow, outputs_wide, outputs_unscrolled}} in chromium at LAYOUT_WIDTH px."
    pages = [p['html'] for p in site['pages']]
    probe = DOCS / '_layout_probe.html'          # same origin as the pages, so it can measure inside them
    probe.write_text(PROBE.replace('WIDTH', str(LAYOUT_WIDTH)).replace('PAGES', json.dumps(pages))
                     .replace('SELECTOR', json.dumps(CODE_SELECTOR)), encoding='utf-8')
    try:
        html = browser.run(probe.name, '--dump-dom', f'--window-size={LAYOUT_WIDTH + 40},1000',
                           '--virtual-time-budget=120000')
    finally:
        probe.unlink()
    text = soup(html).find(id='out').get_text()
    assert text != 'pending', 'the layout probe did not finish'
    return json.loads(text)


def test_code_fits_without_sideways_scrolling(layout):
    wide = {p: r['wide'] for p, r in layout.items() if r['wide']}
    assert not wide, f'code blocks that scroll sideways at {LAYOUT_WIDTH}px: {wide}'
    cols = {p: r['cols'] for p, r in layout.items() if r['cols'] is not None}
    assert cols and min(cols.values()) >= MIN_CODE_COLUMNS, f'columns of code that fit (>= {MIN_CODE_COLUMNS}): {cols}'
    print(f'{min(cols.values())}-{max(cols.values())} columns of code fit at {LAYOUT_WIDTH}px')


def test_code_blocks_have_a_copy_button(layout):
    assert sum(r['blocks'] for r in layout.values()) > 50, layout
    missing = {p: f"{r['buttons']}/{r['blocks']}" for p, r in layout.items() if r['buttons'] < r['blocks']}
    assert not missing, f'code blocks without a copy button (with/all): {missing}'


def test_wide_outputs_scroll_inside_their_block(layout):
    "A printed output wider than the column (a ledger table, a summary) scrolls in its own block; the page never does."
    bad = {p: r['outputs_unscrolled'] for p, r in layout.items() if r['outputs_unscrolled']}
    assert not bad, f'outputs wider than their block that do not scroll: {bad}'
    side = {p: r['page_overflow'] for p, r in layout.items() if r['page_overflow'] > 0}
    assert not side, f'pages that scroll sideways at {LAYOUT_WIDTH}px (pixels): {side}'
    print(f'output blocks that scroll at {LAYOUT_WIDTH}px: {sum(r["outputs_wide"] for r in layout.values())}; '
          f'pages with output lines over 110 characters: {wide_output_lines()}')


def test_references_page(site):
    "The references page is in the sidebar, and each paper the library implements has an entry with an anchor."
    assert REFERENCES_PAGE in [p['html'] for p in site['pages']], 'the references page is not listed in _quarto.yml'
    dom = soup((DOCS / REFERENCES_PAGE).read_text(encoding='utf-8'))
    for key, words in {'lee2019b': ['Inverse Probability Weighting', '1905.12592'],
                       'lee2019a': ['Propensity Scores', '1905.12592'],
                       'guha2024': ['Weighted Average Treatment Effects', '2408.14766'],
                       'kusner2016': ['Private Causal Inference', 'AISTATS']}.items():
        a = dom.find(id=key)
        assert a is not None, f'no entry #{key} on {REFERENCES_PAGE}'
        entry = a.find_parent('li').get_text(' ')
        assert all(w in entry for w in words), f'#{key}: {entry[:200]}'


if __name__ == '__main__':
    found = api_table_problems(Path(sys.argv[1]) if len(sys.argv) > 1 else DOCS)
    print('\n'.join(found) or 'every exported function and class has its parameter table')
    sys.exit(1 if found else 0)
