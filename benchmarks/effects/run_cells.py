"""Run cells of the grid for given methods (ours registered): python run_cells.py OUT REPS N1,N2 EPS1,EPS2 DESIGN1,DESIGN2 METHOD1,METHOD2 [ESTIMANDS]"""
import sys
import harness, ours  # noqa: F401  (registers privcausal's methods)
out, reps = sys.argv[1], int(sys.argv[2])
ns = [int(v) for v in sys.argv[3].split(',')]; eps = [float(v) for v in sys.argv[4].split(',')]
designs, methods = sys.argv[5].split(','), sys.argv[6].split(',')
estimands = tuple(sys.argv[7].split(',')) if len(sys.argv) > 7 else ('ATE', 'ATT')
for d in designs:
    for n in ns:
        harness.run(d, n, eps, reps, methods=methods, estimands=estimands, out=out, progress=False)
        print('done', d, n, flush=True)
