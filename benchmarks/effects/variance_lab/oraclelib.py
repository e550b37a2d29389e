"""NOT PRIVATE lab helper of the oracle scripts: a G-formula release's exact (noise-free) statistics, captured."""
import privcausal.regression as R


def exact_statistics(release, **kw) -> dict:
    "Run `R.gformula(**kw)` with its statistics step patched to keep the exact vector: {'v': flat statistics, 'p', 'h': outcome half-width}."
    cap, orig = {}, R.gformula_statistics
    def grab(plan, cols, noise):
        s = orig(plan, cols, noise)
        cap.update(v=s.vector.copy(), p=s.carry['p'], h=s.carry['encoding'].outcome_halfwidth)
        return s
    R.gformula_statistics = grab
    try: release(**kw)
    finally: R.gformula_statistics = orig
    return cap
