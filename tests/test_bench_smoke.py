"""The benchmark workloads compute what they claim: each runs once at a tiny size, with the engine and
with the hand-written NumPy reference, from the same data, and both give the same numbers.

(A benchmark of a wrong computation is worthless; no timing is asserted here.)
"""

from __future__ import annotations

import numpy as np
import pytest

from bench import w1_overhead, w2_mlp, w3_matmul, w4_cnn, w5_hvp

TINY = {
    "W1": (w1_overhead, {"n": 4, "steps": 5}),
    "W2": (w2_mlp, {"sizes": (6, 8, 8, 10), "batch": 5}),
    "W3": (w3_matmul, {"n": 16}),
    "W4": (w4_cnn, {"batch": 3, "size": 4, "filters": (2, 3), "hidden": 8}),
    "W5": (w5_hvp, {"sizes": (3, 5, 4, 1), "batch": 6}),
}


@pytest.mark.parametrize("name", sorted(TINY))
def test_engine_and_numpy_reference_agree(name):
    module, size = TINY[name]
    results = {}
    impls = [i for i in ("engine", "traced", "numpy") if i in module.WORKLOAD.builders]
    for impl in impls:
        run = module.WORKLOAD.builders[impl](module.make_data(**size))
        run.step()
        first = [np.array(a, copy=True) for a in run.fetch()]
        run.step()  # a second step from the updated state (training workloads) must agree too
        results[impl] = (first, run.fetch())
    pairs = [(results[i], results["numpy"]) for i in impls if i != "numpy"]
    for engine_step, numpy_step in (p for a, b in pairs for p in zip(a, b)):
        assert len(engine_step) == len(numpy_step) > 0
        for k, (e, n) in enumerate(zip(engine_step, numpy_step)):
            assert np.shape(e) == np.shape(n), f"{name} result {k}"
            assert np.all(np.isfinite(e)), f"{name} result {k}"
            np.testing.assert_allclose(e, n, rtol=1e-4, atol=1e-5, err_msg=f"{name} result {k}")


def test_the_workloads_are_not_trivial():
    """The results depend on the data: a different seed gives different numbers (no constants)."""
    for name, (module, size) in TINY.items():
        outs = []
        for seed in (0, 1):
            run = module.WORKLOAD.builders["engine"](module.make_data(**size, seed=seed))
            run.step()
            outs.append(run.fetch())
        assert any(not np.allclose(a, b) for a, b in zip(*outs)), name


def test_every_workload_names_its_targets_and_peers():
    for module, _ in TINY.values():
        w = module.WORKLOAD
        assert {"engine", "numpy"} <= set(w.builders)
        assert w.targets and set(w.targets) <= set(w.builders)
        assert set(w.traced_targets) <= set(w.builders) and (not w.traced_targets or "traced" in w.builders)


def test_gpu_benchmark_runs_its_gpu_path_and_matches_the_cpu(capsys):
    """bench/gpu.py on the GPU (the fake CuPy's gpu:0 on machines without one) at small sizes."""
    from bench import gpu

    assert gpu.main(["--small", "--repeats", "1", "--min-time", "0"]) == 0
    out = capsys.readouterr().out
    assert out.count("engine: one step matches the engine on the CPU") == 3, out
    assert "does NOT match" not in out


def test_gpu_benchmark_without_a_gpu_says_so(capsys, no_gpu, monkeypatch):
    from bench import gpu

    monkeypatch.delenv("GRADLAB_REQUIRE_GPU", raising=False)
    assert gpu.main([]) == 0
    assert "skipped: the engine has no GPU here (CuPy is not installed)" in capsys.readouterr().out
    monkeypatch.setenv("GRADLAB_REQUIRE_GPU", "1")
    assert gpu.main([]) == 1
    assert "FAILED: the engine has no GPU here" in capsys.readouterr().out
