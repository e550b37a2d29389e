"""Execute notebooks in place so that their stored outputs (shown on the site) are real.

    python tools/run_nbs.py                 # every notebook under nbs/
    python tools/run_nbs.py nbs/00_*.ipynb  # some of them
    python tools/run_nbs.py --flags slow    # also run cells flagged `#| slow` (full studies)

Cells are skipped by the same rules as `nbdev_test` (`#| eval: false`, tst_flags unless forced,
the `nbdev_export()` cell). Stops with exit 1 at the first failing cell. Run `nbdev_clean` afterwards.
"""
import argparse, os, sys, time
from pathlib import Path

from execnb.nbio import read_nb, write_nb
from execnb.shell import CaptureShell
from fastcore.foundation import working_directory
from nbdev.config import get_config
from nbdev.process import NBProcessor
from nbdev.processors import FrontmatterProc


def run_one(path, flags):
    cfg = get_config()
    skip = set(cfg.tst_flags.split()) - set(flags)
    nb = NBProcessor(path, procs=FrontmatterProc, process=True).nb

    def no_eval(cell):
        if cell.cell_type != 'code': return True
        if 'nbdev_export' + '(' in cell.source: return True
        direc = getattr(cell, 'directives_', {}) or {}
        if direc.get('eval:', [''])[0].lower() == 'false': return True
        return bool(skip & direc.keys())

    raw = read_nb(path)
    sys.path.insert(0, str(cfg.config_path))
    os.environ['IN_TEST'] = '1'
    shell = CaptureShell(path)
    with working_directory(path.parent):
        for cell, rcell in zip(nb.cells, raw.cells):
            if no_eval(cell):
                if cell.cell_type == 'code' and skip & (getattr(cell, 'directives_', {}) or {}).keys():
                    continue  # keep outputs of a previous full run of a slow cell
                continue
            rcell['outputs'], rcell['execution_count'] = [], None  # execnb keeps old outputs when a cell now prints nothing
            shell.cell(rcell)
            if shell.exc:
                sys.stderr.write(shell.prettytb(fname=path) + '\n')
                return False
    write_nb(raw, path)
    return True


if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('paths', nargs='*')
    ap.add_argument('--flags', default='')
    a = ap.parse_args()
    cfg = get_config()
    paths = [Path(p).resolve() for p in a.paths] or sorted(
        p for p in cfg.nbs_path.rglob('*.ipynb')
        if not any(q.startswith(('_', '.')) for q in p.relative_to(cfg.nbs_path).parts))
    for p in paths:
        t = time.time()
        ok = run_one(p, a.flags.split())
        print(f'{"ok  " if ok else "FAIL"} {p.relative_to(cfg.config_path)} ({time.time() - t:.1f}s)', flush=True)
        if not ok: sys.exit(1)
