"""The issue's grid for privcausal's estimators and the rivals, resumable: python run_grid.py OUT [REPS_SMALL] [REPS_LARGE]
(n = 2,000 and 20,000 with REPS_SMALL data sets a cell, then n = 200,000 with REPS_LARGE; then the Lebeda cell)."""
import sys
import harness, ours  # noqa: F401
out = sys.argv[1]
small, large = (int(sys.argv[2]) if len(sys.argv) > 2 else 300), (int(sys.argv[3]) if len(sys.argv) > 3 else 100)
OURS = ['pc_effect', 'pc_gformula', 'pc_aipw']
RIVALS = ['dp_dim', 'diffprivlib_lr', 'pp_ipw', 'nonprivate_aipw']
for n, reps in ((2_000, small), (20_000, small), (200_000, large)):
    for d in harness.GRID_DESIGNS:
        methods = OURS + RIVALS + (['wate'] if d == 'exp3' else [])
        harness.run(d, n, list(harness.GRID_EPS), reps, methods=methods, out=out, progress=False)
        print('done', d, n, flush=True)
d, n, e, dl = harness.LEBEDA_CELL
harness.run(d, n, [e], small, methods=OURS + RIVALS + ['wate', 'lebeda_g', 'lebeda_ipw', 'lebeda_aipw', 'lebeda_aipw_derived'],
            delta=dl, out=out, progress=False, estimands=('ATE',))
print('done lebeda cell', flush=True)
