"""Round-trip a notebook through a plain 'percent' script, for editing notebooks as text.

    python tools/nbpct.py to-py nbs/00_mechanisms.ipynb  > /tmp/00.py   # edit the text ...
    python tools/nbpct.py to-nb /tmp/00.py nbs/00_mechanisms.ipynb     # ... and write it back

Cells are separated by `# %%` (code) or `# %% [markdown]` lines; markdown lines carry a `# ` prefix.
Writing back keeps the id and the outputs of every cell whose source did not change, so a
text edit does not churn the notebook. The notebook stays the source of truth; the script is scratch.
"""
import json, sys, uuid
from pathlib import Path

MD, CODE = '# %% [markdown]', '# %%'


def nb_to_py(nb_path):
    nb = json.loads(Path(nb_path).read_text())
    out = []
    for c in nb['cells']:
        src = ''.join(c['source'])
        if c['cell_type'] == 'markdown':
            out.append(MD + '\n' + '\n'.join(('# ' + l) if l else '#' for l in src.split('\n')))
        else:
            out.append(CODE + '\n' + src)
    return '\n\n'.join(out) + '\n'


def _split(text):
    cells, cur, kind = [], None, None
    for line in text.split('\n'):
        if line.strip() in (MD, CODE):
            if cur is not None: cells.append((kind, cur))
            kind, cur = ('markdown' if line.strip() == MD else 'code'), []
        elif cur is not None:
            cur.append(line)
    if cur is not None: cells.append((kind, cur))
    res = []
    for kind, lines in cells:
        while lines and not lines[-1].strip(): lines.pop()
        if kind == 'markdown':
            lines = [l[2:] if l.startswith('# ') else l[1:] if l.startswith('#') else l for l in lines]
        res.append((kind, '\n'.join(lines)))
    return res


def py_to_nb(py_path, nb_path):
    nb_path = Path(nb_path)
    old = {}
    if nb_path.exists():
        for c in json.loads(nb_path.read_text())['cells']:
            old.setdefault((c['cell_type'], ''.join(c['source'])), c)
    cells = []
    for kind, src in _split(Path(py_path).read_text()):
        prev = old.pop((kind, src), None)
        cid = prev['id'] if prev and 'id' in prev else uuid.uuid4().hex[:8]
        c = {'cell_type': kind, 'id': cid, 'metadata': {}, 'source': src.splitlines(keepends=True)}
        if kind == 'code':
            c['execution_count'] = None
            c['outputs'] = prev.get('outputs', []) if prev else []
        cells.append(c)
    nb = {'cells': cells,
          'metadata': {'kernelspec': {'display_name': 'python3', 'language': 'python', 'name': 'python3'}},
          'nbformat': 4, 'nbformat_minor': 5}
    nb_path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n')


if __name__ == '__main__':
    cmd, *args = sys.argv[1:]
    if cmd == 'to-py': sys.stdout.write(nb_to_py(args[0]))
    elif cmd == 'to-nb': py_to_nb(*args)
    else: sys.exit(f'unknown command {cmd!r}: use to-py or to-nb')
