"""eg.data: the digits shipped with scikit-learn (read from its file, no network) and mini-batches."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import engine as eg
from engine import data


def test_load_digits_shapes_scaling_and_split():
    x_train, y_train, x_test, y_test = eg.data.load_digits()
    assert x_train.shape == (1437, 8, 8, 1) and x_test.shape == (360, 8, 8, 1)
    assert x_train.dtype == np.float32 and y_train.dtype == np.int32
    assert x_train.min() == 0.0 and x_train.max() == 1.0
    assert set(np.unique(y_train)) == set(range(10)) == set(np.unique(y_test))
    # the whole data set, whatever the split: 1,797 images with sklearn's class counts
    labels = np.concatenate([y_train, y_test])
    np.testing.assert_array_equal(np.bincount(labels), [178, 182, 177, 183, 181, 182, 181, 179, 174, 180])
    total = np.concatenate([x_train, x_test]).reshape(-1, 64).sum()
    np.testing.assert_allclose(total * 16, data._digits_table()[:, :64].sum(), rtol=1e-6)


def test_the_first_digit_is_sklearns_first_digit():
    table = data._digits_table()
    assert table.shape == (1797, 65)
    np.testing.assert_array_equal(table[0, :8], [0, 0, 5, 13, 9, 1, 0, 0])
    assert table[0, 64] == 0


def test_split_is_seeded_and_flatten_works():
    a = eg.data.load_digits(seed=0)
    b = eg.data.load_digits(seed=0)
    c = eg.data.load_digits(seed=1)
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[1], c[1])
    x_train, y_train, x_test, y_test = eg.data.load_digits(test_fraction=0.5, flatten=True, dtype="float64")
    assert x_train.shape == (898, 64) and x_test.shape == (899, 64) and x_train.dtype == np.float64
    np.testing.assert_array_equal(x_train.reshape(-1, 8, 8, 1), eg.data.load_digits(0.5)[0])
    with pytest.raises(ValueError, match="test_fraction"):
        eg.data.load_digits(test_fraction=1.0)


def test_batches_cover_every_example_once():
    x = np.arange(10 * 2).reshape(10, 2)
    y = np.arange(10)
    got = list(eg.data.batches(x, y, batch_size=4, seed=3))
    assert [len(yb) for _, yb in got] == [4, 4, 2]
    seen = np.concatenate([yb for _, yb in got])
    assert sorted(seen.tolist()) == list(range(10)) and seen.tolist() != list(range(10))
    for xb, yb in got:
        np.testing.assert_array_equal(xb[:, 0] // 2, yb)     # x and y stay paired
    again = [yb for _, yb in eg.data.batches(x, y, batch_size=4, seed=3)]
    assert all(np.array_equal(a, b) for a, (_, b) in zip(again, got))
    ordered = [yb.tolist() for _, yb in eg.data.batches(x, y, 4, shuffle=False, drop_remainder=True)]
    assert ordered == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_batches_follow_the_global_seed_and_keep_tensors():
    x, y = np.arange(8.0), np.arange(8)
    eg.random.set_seed(1)
    first = [b.tolist() for _, b in eg.data.batches(x, y, 3)]
    eg.random.set_seed(1)
    assert first == [b.tolist() for _, b in eg.data.batches(x, y, 3)]
    xb, yb = next(eg.data.batches(eg.constant(x), eg.constant(y), 3, shuffle=False))
    assert isinstance(xb, eg.Tensor) and isinstance(yb, eg.Tensor)
    np.testing.assert_array_equal(xb.numpy(), [0.0, 1.0, 2.0])


def test_batches_errors():
    with pytest.raises(ValueError, match="x has 3 examples but y has 2"):
        next(eg.data.batches(np.zeros(3), np.zeros(2), 1))
    with pytest.raises(ValueError, match="batch_size"):
        next(eg.data.batches(np.zeros(3), np.zeros(3), 0))


def test_importing_engine_stays_light():
    code = ("import sys, engine, engine.data, engine.layers, engine.training; "
            "heavy = [m for m in ('sklearn', 'tqdm', 'matplotlib', 'cupy', 'scipy') if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
