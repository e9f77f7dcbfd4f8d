"""Local copies of the scripts an exported page needs, so that it loads nothing from a CDN.

nbconvert's pages load RequireJS and MathJax from cdnjs and the Jupyter widgets HTML manager from
unpkg; the HTML manager then loads every other widget module (anywidget here) from jsDelivr.
Classrooms often cannot reach those, so ``install(out_dir, modules)`` copies what the pages need into
``out_dir/_static/`` and returns the URLs to use instead (relative to ``out_dir``)::

    assets = install(Path("site"), {"anywidget", "@jupyter-widgets/controls"})
    assets.require_js      # "_static/requirejs/require.js"
    assets.html_manager    # "_static/html-manager/embed-amd.js"
    assets.amd_paths       # {"anywidget": "_static/widgets/anywidget/index"}
    assets.mathjax         # "_static/mathjax/tex-chtml-full.js"

Where they come from (nothing third-party is committed to the repository):

* RequireJS, ``@jupyter-widgets/html-manager`` (its ``embed-amd.js`` bundle carries the base,
  controls and output widgets; plus its icon fonts) and MathJax 3: from the installed Python
  environment where a package ships them, else ``npm pack`` of a pinned version, once, into
  ``build/npm/`` (so ``make html`` needs npm the first time only).
* Other widget modules (anywidget): the AMD bundle their Python package installs as Jupyter's
  ``nbextensions/<module>/index.js``, i.e. the same version as the kernel that wrote the widget state.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sysconfig
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NPM_CACHE = ROOT / "build" / "npm"
STATIC = "_static"


@dataclass(frozen=True)
class Script:
    """A third-party script: its npm package, the file in it, how to recognise a local copy, and the
    files beside it (globs relative to the script's folder) that it loads at run time."""

    package: str
    version: str
    path: str  # inside the npm package
    mark: bytes  # a local file of the same name is this script only if it contains this
    extras: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return Path(self.path).name


REQUIREJS = Script("requirejs", "2.3.8", "require.js", b"RequireJS")
# Renders the widget state ipywidgets 8 writes (format 2): bundles @jupyter-widgets/base 6,
# controls 5 and output 6. Of its icon fonts, browsers use the .woff2 (else .woff) files.
HTML_MANAGER = Script(
    "@jupyter-widgets/html-manager", "1.0.15", "dist/embed-amd.js",
    b'define("@jupyter-widgets/html-manager"', ("*.woff2", "*.woff"),
)  # fmt: skip
# TeX input, HTML output; the safe-links filter, the menu's accessibility parts and the fonts are
# loaded on demand (not the 4 MB speech engine, which the menu loads only when asked).
MATHJAX = Script(
    "mathjax", "3.2.2", "es5/tex-chtml-full.js", b"MathJax",
    ("ui/safe.js", "a11y/*.js", "output/chtml/fonts/woff-v2/*.woff"),
)  # fmt: skip
# Widget modules that embed-amd.js defines itself.
BUILTIN_MODULES = frozenset({"@jupyter-widgets/base", "@jupyter-widgets/controls", "@jupyter-widgets/output"})
NAMED_DEFINE = re.compile(rb'define\("(@jupyter-widgets/[^"]+)"')


# An npm package name, scoped or not (npm's rules: at most 214 characters, URL-safe characters, not
# starting with "." or "_"; capitals only in old packages). Widget module names come from a notebook's
# saved widget state and become folder names below: anything else ("../x", "/etc", "a/b/c") is refused.
NPM_NAME = re.compile(r"(?:@[A-Za-z0-9~-][A-Za-z0-9._~-]*/)?[A-Za-z0-9~-][A-Za-z0-9._~-]*")


def is_package_name(name: str) -> bool:
    """Whether ``name`` is a valid npm package name (so it is safe as a relative folder name).

    >>> [is_package_name(n) for n in ("anywidget", "@jupyter-widgets/controls", "../../x", "/etc", "a/b")]
    [True, True, False, False, False]
    """
    return isinstance(name, str) and len(name) <= 214 and NPM_NAME.fullmatch(name) is not None


@dataclass
class Assets:
    """URLs (relative to the output folder) of the local scripts, the modules not found, and the
    module names refused (not npm package names)."""

    require_js: str
    html_manager: str
    mathjax: str
    amd_paths: dict[str, str] = field(default_factory=dict)
    missing_modules: list[str] = field(default_factory=list)
    refused_modules: list[str] = field(default_factory=list)


@functools.cache
def _environment_files() -> dict[str, list[Path]]:
    """Every file named like one of the scripts in this Python environment's packages and in
    Jupyter's data folders (where packages install their front-end files)."""
    from jupyter_core.paths import jupyter_path

    wanted = {s.name for s in (REQUIREJS, HTML_MANAGER, MATHJAX)}
    roots = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib"), *jupyter_path()])
    found: dict[str, list[Path]] = {}
    for top in roots:
        for root, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(wanted.intersection(files)):
                found.setdefault(name, []).append(Path(root, name))
    return found


def _in_environment(script: Script) -> Path | None:
    for path in _environment_files().get(script.name, []):
        with open(path, "rb") as f:
            if script.mark in f.read(1_000_000):
                return path
    return None


def _cache_name(name: str, version: str) -> str:
    return f"{name.replace('@', '').replace('/', '-')}-{version}"


def npm_package(name: str, version: str, cache: Path | None = None) -> Path:
    """The unpacked npm package ``name@version`` (its ``package/`` folder), fetched with ``npm pack``
    into ``cache`` (default: build/npm/) the first time."""
    cache = cache or NPM_CACHE
    folder = cache / _cache_name(name, version)
    if (folder / "package" / "package.json").exists():
        return folder / "package"
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(
            f"make html needs npm (Node.js) once, to fetch {name}@{version} into {cache}: the exported "
            "pages carry their own copies of the Jupyter widgets scripts and MathJax instead of "
            "loading them from a CDN. Install Node.js with npm (e.g. apt-get install npm) and run it again."
        )
    cache.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            [npm, "pack", f"{name}@{version}", "--pack-destination", str(cache), "--silent"],
            cwd=cache, capture_output=True, text=True, timeout=300, check=True,
        )  # fmt: skip
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"npm pack {name}@{version} failed:\n{exc.stderr.strip()}") from exc
    tarball = cache / done.stdout.strip().splitlines()[-1]
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    safe_extract(tarball, partial)
    tarball.unlink()
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return folder / "package"


def safe_extract(tarball: Path, target: Path) -> None:
    """Unpack ``tarball`` into ``target`` on every Python (``tarfile``'s ``filter=`` arguments are not
    in all 3.11 releases): check every member first, then write regular files and folders only.

    Refused, before anything is written: absolute names, ``..`` parts, names resolving outside
    ``target``, and anything that is not a regular file or a folder (links, devices, FIFOs).
    Files are written with mode 0o644, folders 0o755: nothing executable, nothing setuid.
    """
    root = target.resolve()
    with tarfile.open(tarball) as tar:  # gzip or plain: tarfile tells them apart
        members = tar.getmembers()
        for member in members:
            name = member.name
            if not (member.isfile() or member.isdir()):
                raise RuntimeError(f"{tarball.name}: {name!r} is not a regular file or folder; not unpacking")
            if name.startswith(("/", "\\")) or Path(name).is_absolute() or ".." in Path(name).parts:
                raise RuntimeError(f"{tarball.name}: unsafe member name {name!r}; not unpacking")
            if not (root / name).resolve().is_relative_to(root):
                raise RuntimeError(f"{tarball.name}: {name!r} would land outside {target}; not unpacking")
        root.mkdir(parents=True, exist_ok=True)
        for member in members:
            path = root / member.name
            if member.isdir():
                path.mkdir(mode=0o755, parents=True, exist_ok=True)
                continue
            path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            source = tar.extractfile(member)
            assert source is not None  # a regular file always has data
            with source, open(path, "wb") as out:
                shutil.copyfileobj(source, out)
            path.chmod(0o644)


def unavailable() -> str | None:
    """Why ``install`` cannot work here (a script is neither installed, nor cached, nor fetchable:
    no npm), or None."""
    for script in (REQUIREJS, HTML_MANAGER, MATHJAX):
        cached = NPM_CACHE / _cache_name(script.package, script.version) / "package" / script.path
        if not (_in_environment(script) or cached.exists() or shutil.which("npm")):
            return (
                f"npm is not installed and build/npm/ has no {script.package}@{script.version} "
                "(make html needs npm once, to fetch it)"
            )
    return None


def locate(script: Script) -> Path:
    """The script's file: in this Python environment if a package ships it, else from npm."""
    return _in_environment(script) or npm_package(script.package, script.version) / script.path


def _notices(path: Path, distribution: str | None = None) -> list[Path]:
    """The licence files (and an npm package's package.json, which names its licence) beside ``path``
    or one folder up, else those of the installed Python ``distribution``."""
    for folder in (path.parent, path.parent.parent):
        found = sorted(p for p in [*folder.glob("LICEN[CS]E*"), folder / "package.json"] if p.is_file())
        if found:
            return found
    if distribution:
        from importlib import metadata

        try:
            files = metadata.distribution(distribution).files or []
        except metadata.PackageNotFoundError:
            return []
        return [Path(f.locate()) for f in files if Path(f).name.upper().startswith(("LICENSE", "LICENCE"))]
    return []


def _copy(src: Path, dst: Path) -> None:
    """Copy ``src`` to ``dst`` unless a file of the same size is there already."""
    if not (dst.exists() and dst.stat().st_size == src.stat().st_size):
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)


def _install_script(script: Script, static: Path, folder: str) -> str:
    """Copy ``script`` (with its extras and licence) into ``static/folder``; return its URL."""
    path = locate(script)
    target = static / folder
    _copy(path, target / path.name)
    for pattern in script.extras:
        for extra in path.parent.glob(pattern):
            _copy(extra, target / extra.relative_to(path.parent))
    for notice in _notices(path):
        _copy(notice, target / notice.name)
    return f"{STATIC}/{folder}/{path.name}"


def amd_bundle(module: str) -> Path | None:
    """The AMD bundle that the installed Python package of widget ``module`` put in Jupyter's
    ``nbextensions/<module>/index.js`` (what classic Jupyter Notebook loads), or None."""
    from jupyter_core.paths import jupyter_path

    if not is_package_name(module):
        raise ValueError(f"widget module {module!r} is not an npm package name; not used as a path")
    for base in jupyter_path("nbextensions"):
        path = Path(base, module, "index.js")
        if path.is_file():
            return path
    return None


def install_mathjax(out_dir: Path) -> str:
    """Copy MathJax alone into ``out_dir/_static/mathjax/`` (graded feedback pages); return its URL."""
    return _install_script(MATHJAX, out_dir / STATIC, "mathjax")


def install(out_dir: Path, modules: Iterable[str] = ()) -> Assets:
    """Copy RequireJS, the widgets HTML manager, MathJax and the bundles of the widget ``modules``
    (npm names, as the widget state has them) into ``out_dir/_static/``; return their URLs."""
    static = out_dir / STATIC
    assets = Assets(
        require_js=_install_script(REQUIREJS, static, "requirejs"),
        html_manager=_install_script(HTML_MANAGER, static, "html-manager"),
        mathjax=_install_script(MATHJAX, static, "mathjax"),
    )
    # embed-amd.js defines its modules by name and looks for its fonts beside the URL RequireJS gives
    # each name (the page's folder + name by default): point those names at the bundle's folder.
    for name in NAMED_DEFINE.findall((out_dir / assets.html_manager).read_bytes()):
        module = name.decode()
        assets.amd_paths[module] = f"{STATIC}/html-manager/{module.rsplit('/', 1)[-1]}"
    for module in sorted(set(modules) - BUILTIN_MODULES, key=repr):
        if not is_package_name(module):
            assets.refused_modules.append(module)  # never a path: "../" would escape out_dir
            continue
        bundle = amd_bundle(module)
        if bundle is None:
            assets.missing_modules.append(module)
            continue
        target = static / "widgets" / module
        _copy(bundle, target / bundle.name)
        for notice in _notices(bundle, distribution=module):
            _copy(notice, target / notice.name)
        assets.amd_paths[module] = f"{STATIC}/widgets/{module}/{bundle.stem}"
    return assets
