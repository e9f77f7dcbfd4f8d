"""tools/page_assets.py unpacks npm tarballs safely on every supported Python (3.11.0 and up, where
tarfile's ``filter=`` is not always there): bad members are refused before anything is written."""

from __future__ import annotations

import io
import stat
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import page_assets  # noqa: E402


def make_tarball(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return path


def regular(name: str, data: bytes = b"x", mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.mode = mode
    return info, data


def special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info, None


def folder(name: str) -> tuple[tarfile.TarInfo, None]:
    return special(name, tarfile.DIRTYPE)


def test_an_npm_like_tarball_is_unpacked(tmp_path):
    tarball = make_tarball(tmp_path / "p.tgz", [
        folder("package"),
        regular("package/package.json", b'{"name": "p"}'),
        regular("package/dist/embed.js", b"define()", mode=0o4755),  # setuid and executable: dropped
    ])
    target = tmp_path / "out"
    page_assets.safe_extract(tarball, target)
    assert (target / "package/package.json").read_bytes() == b'{"name": "p"}'
    script = target / "package/dist/embed.js"
    assert script.read_bytes() == b"define()"
    assert stat.S_IMODE(script.stat().st_mode) == 0o644


@pytest.mark.parametrize("bad", [
    regular("/etc/evil", b"x"),
    regular("package/../../evil", b"x"),
    regular("../evil", b"x"),
    special("package/link", tarfile.SYMTYPE, "/etc/passwd"),
    special("package/inside-link", tarfile.SYMTYPE, "package.json"),
    special("package/hard", tarfile.LNKTYPE, "package/package.json"),
    special("package/dev", tarfile.CHRTYPE),
    special("package/fifo", tarfile.FIFOTYPE),
], ids=["absolute", "dotdot-inside", "dotdot", "symlink-out", "symlink-in", "hardlink", "device", "fifo"])
def test_bad_members_are_refused_before_anything_is_written(tmp_path, bad):
    tarball = make_tarball(tmp_path / "p.tgz", [regular("package/package.json"), bad])
    target = tmp_path / "out"
    with pytest.raises(RuntimeError, match="not unpacking"):
        page_assets.safe_extract(tarball, target)
    assert not target.exists()
    assert not (tmp_path / "evil").exists()
