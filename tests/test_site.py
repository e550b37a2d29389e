"""The built documentation site, as a browser sees it (Debian's chromium, headless, offline).

    pytest -q -m browser tests/test_site.py

Builds the site once per session with tools/build_docs.py, serves `_docs/` with `python -m http.server` on
127.0.0.1, and loads pages in chromium with every host but 127.0.0.1 unresolvable, so anything fetched from a
CDN would be missing. Without chromium the tests skip, or fail when CI is set.
Environment: SITE_CONFIG=path builds another site description (development); CHROMIUM=path, another binary.
"""
import json, os, re, shutil, socket, subprocess, sys, tempfile, time, urllib.request
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group('site')]  # one worker builds and serves the site
bs4 = pytest.importorskip('bs4')

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / '_docs'
MANIFEST = ROOT / '_site_build' / 'manifest.json'
MODULE_PAGE = 'mechanisms.html'           # the module page checked in the browser besides the home page
SEARCH_TERM = 'check_epsilon'             # an exported name of that module
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
