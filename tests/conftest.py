"""Fixtures shared by test modules."""
import pytest


@pytest.fixture(scope='module')
def client():
    "A LocalCluster of 2 single-threaded worker processes (each with its own memory, as a real cluster's), per module."
    distributed = pytest.importorskip('distributed')
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address='127.0.0.1:0') as cluster, \
            distributed.Client(cluster) as c:
        yield c


# Longest first, so that the two xdist workers finish together. Under --dist loadgroup, xdist queues the 'site' group
# first, then the other tests in collection order, each worker holding two at a time. The 08_audit notebook (12 min of
# one worker) came in the middle of that order, so the other worker idled for its last 7 minutes (measured on
# 2026-11-28: workers busy 1233 s and 827 s, wall 1265 s). Now it starts at once (08_proofs_ipw waits behind it on the
# same worker) and the rest fills the other: busy 1081 s and 1074 s, wall 1099 s. Measured durations, longest first.
LONGEST = ('test_notebook[08_audit.ipynb]', 'test_notebook[08_proofs_ipw.ipynb]',
           'test_release_on_both_or_neither_on_every_case', 'test_audit_of_whole_release',
           'test_notebook[09_cli.ipynb]', 'test_notebook[08_proofs_wate.ipynb]')


def pytest_collection_modifyitems(items):
    "Move the tests named in LONGEST to the front, in that order; the others keep theirs."
    rank = {name: i for i, name in enumerate(LONGEST)}
    items.sort(key=lambda item: rank.get(item.name, len(LONGEST)))  # stable: the rest stay in collection order
