"""Fixtures shared by test modules."""
import pytest


@pytest.fixture(scope='module')
def client():
    "A LocalCluster of 2 single-threaded worker processes (each with its own memory, as a real cluster's), per module."
    distributed = pytest.importorskip('distributed')
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address='127.0.0.1:0') as cluster, \
            distributed.Client(cluster) as c:
        yield c
