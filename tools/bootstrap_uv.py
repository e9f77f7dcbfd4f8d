"""Install uv into a folder with nothing but Python: through pip when pip exists, else by fetching
uv's wheel from PyPI with the standard library (checked against PyPI's sha256) and unpacking it.

    python3 tools/bootstrap_uv.py 0.13.8 .tools     # → .tools/bin/uv
"""

from __future__ import annotations

import hashlib
import io
import platform
import re
import stat
import subprocess
import sys
import urllib.request
import zipfile
from html import unescape
from pathlib import Path
from urllib.parse import urljoin


def _has_pip() -> bool:
    probe = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
    return probe.returncode == 0


def _wheel_matches(filename: str) -> bool:
    system, machine = platform.system(), platform.machine().lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64" if system == "Linux" else "arm64"}.get(machine, machine)
    if system == "Linux":
        return "manylinux" in filename and machine in filename
    if system == "Darwin":
        return "macosx" in filename and machine in filename
    if system == "Windows":
        return "win_amd64" in filename if machine == "x86_64" else "win_arm64" in filename
    return False


def _from_pypi(version: str, dest: Path) -> None:
    # The simple index (PEP 503) lists every file as <a href="URL#sha256=HEX">FILENAME</a>.
    with urllib.request.urlopen("https://pypi.org/simple/uv/", timeout=60) as response:
        page = response.read().decode()
    links = re.findall(r'<a[^>]*href="([^"#]+)#sha256=([0-9a-f]{64})"[^>]*>([^<]+)</a>', page)
    wheels = [(urljoin("https://pypi.org/simple/uv/", unescape(url)), digest, name)
              for url, digest, name in links
              if name.startswith(f"uv-{version}-") and name.endswith(".whl") and _wheel_matches(name)]
    if not wheels:
        sys.exit(f"bootstrap_uv: no uv {version} wheel for {platform.system()} {platform.machine()}; "
                 "install uv yourself (https://docs.astral.sh/uv/) and run make again.")
    url, digest, name = wheels[0]
    with urllib.request.urlopen(url, timeout=300) as response:
        data = response.read()
    if hashlib.sha256(data).hexdigest() != digest:
        sys.exit(f"bootstrap_uv: {name} does not match PyPI's sha256; not installing it.")
    exe = "uv.exe" if platform.system() == "Windows" else "uv"
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        member = next(n for n in archive.namelist() if n.endswith(f".data/scripts/{exe}"))
        target = dest / "bin" / exe
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(archive.read(member))
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def main(version: str, dest: str) -> None:
    folder = Path(dest)
    if _has_pip():
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--target", str(folder), f"uv=={version}"], check=True)
    else:
        print(f"bootstrap_uv: pip is not available; fetching uv {version} from PyPI", file=sys.stderr)
        _from_pypi(version, folder)
    print(f"bootstrap_uv: uv {version} in {folder / 'bin'}", file=sys.stderr)


if __name__ == "__main__":
    main(*sys.argv[1:3])
