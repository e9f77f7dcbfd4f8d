"""Small CPU matrix products run on one BLAS thread and restore the library's count afterwards; large
ones keep the library's threads (engine/threads.py)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import engine as eg
from engine import threads
from tests.helpers import assert_ulps


class FakeBlas:
    """A BLAS library controller that records the thread counts it is set to."""

    def __init__(self, n: int):
        self.n, self.log = n, []
        self.lock = threading.Lock()

    def get_num_threads(self) -> int:
        return self.n

    def set_num_threads(self, n: int) -> None:
        with self.lock:
            self.n = n
            self.log.append(n)


@pytest.fixture
def fake_blas(monkeypatch):
    lib = FakeBlas(4)
    monkeypatch.setattr(threads, "_controllers", [lib])
    return lib


def test_a_small_product_runs_on_one_thread_and_restores(fake_blas, monkeypatch):
    seen = []
    real = np.matmul
    monkeypatch.setattr(threads.np, "matmul", lambda a, b: (seen.append(fake_blas.n), real(a, b))[1])
    a, b = np.ones((50, 800), np.float32), np.ones((800, 64), np.float32)
    assert_ulps(threads.matmul(np, a, b), np.full((50, 64), 800.0))
    assert seen == [1] and fake_blas.log == [1, 4] and fake_blas.n == 4


def test_a_large_product_keeps_the_library_threads(fake_blas, monkeypatch):
    monkeypatch.setattr(eg.config, "blas_single_thread_below", 1000)
    monkeypatch.setattr(threads, "TINY", 10)
    threads.matmul(np, np.ones((10, 10)), np.ones((10, 10)))          # 1,000 multiply-adds: large
    assert fake_blas.log == []
    threads.matmul(np, np.ones((2, 9, 10)), np.ones((10, 10)))        # batch 2 × 900: large
    assert fake_blas.log == []
    threads.matmul(np, np.ones((9, 10)), np.ones((10, 10)))           # 900: small
    assert fake_blas.log == [1, 4]


def test_nothing_to_change_when_the_library_runs_one_thread(fake_blas):
    fake_blas.n = 1
    threads.matmul(np, np.ones((100, 100)), np.ones((100, 100)))
    assert fake_blas.log == []


def test_tiny_products_are_left_alone(fake_blas):
    threads.matmul(np, np.ones((64, 64)), np.ones((64, 64)))       # 2**18 multiply-adds
    assert fake_blas.log == []


def test_concurrent_products_restore_the_count_once_all_are_done(fake_blas):
    a = np.random.default_rng(0).normal(size=(80, 80)).astype(np.float32)
    errors = []

    def work():
        try:
            for _ in range(200):
                threads.matmul(np, a, a)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    workers = [threading.Thread(target=work) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == [] and fake_blas.n == 4 and threads._depth == 0


def test_the_engine_products_go_through_it(fake_blas, monkeypatch):
    monkeypatch.setattr(threads, "TINY", 0)
    x = eg.random.normal((2, 6, 6, 3), seed=0)
    w = eg.Variable(eg.random.normal((3, 3, 3, 4), seed=1))
    d = eg.Variable(eg.random.normal((4, 5), seed=2))
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = eg.sum(eg.reshape(eg.nn.conv2d(x, w, padding="SAME"), (-1, 4)) @ d)
    tape.gradient(y, [x, w, d])
    # conv forward, its two gradients, the matmul and its two gradients: six single-thread products
    assert fake_blas.log == [1, 4] * 6


def test_real_blas_threads_are_restored():
    before = threads.blas_threads()
    a = np.ones((32, 32), np.float32)
    (eg.constant(a) @ eg.constant(a)).numpy()
    assert threads.blas_threads() == before
