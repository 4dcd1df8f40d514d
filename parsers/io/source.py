"""Inputs as parsers see them, from paths, folders, zip archives or uploaded bytes.

Folders and archives are bounded: a cap on file count and total size, zip bombs (members
that inflate far beyond their compressed size, or past the size cap) are refused, and so are
member paths that would escape the archive. Every refusal is a Problem; the rest loads.
"""
from __future__ import annotations

import io
import os
import posixpath
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from parsers.model import Problem

HEAD_BYTES = 64 * 1024
MAX_FILES = 10_000
MAX_TOTAL_BYTES = 4 * 1024**3
MAX_MEMBER_BYTES = 2 * 1024**3
MAX_ZIP_RATIO = 200  # uncompressed / compressed, above which a large member is a bomb
SKIP_DIRS = {".git", "__pycache__", "node_modules", ".venv", ".hg", ".svn"}


@dataclass
class Source:
    """One input file. `name` is what users see (a path relative to what they opened)."""

    name: str
    size: int
    _open: Callable[[], BinaryIO]
    _head: bytes | None = None
    # Resolves a path relative to this file inside the same folder or archive; None when the
    # path is missing or would leave what was opened.
    _sibling: Callable[[str], "Source | None"] = field(default=lambda rel: None)
    # Lists a folder relative to this file's folder, inside what was opened: entry names,
    # folders ending in "/"; None when the folder is missing or would leave what was opened.
    _listdir: Callable[[str], "list[str] | None"] = field(default=lambda rel: None)

    def open(self) -> BinaryIO:
        return self._open()

    @property
    def head(self) -> bytes:
        if self._head is None:
            with self.open() as f:
                self._head = f.read(HEAD_BYTES)
        return self._head

    def read_bytes(self) -> bytes:
        with self.open() as f:
            return f.read()

    def sibling(self, rel: str) -> "Source | None":
        return self._sibling(rel)

    def listdir(self, rel_dir: str = ".") -> "list[str] | None":
        """Entries of a folder next to this file (for logs that name related files by id)."""
        return self._listdir(rel_dir)

    @property
    def basename(self) -> str:
        return posixpath.basename(self.name)


def from_bytes(name: str, data: bytes, siblings: dict[str, bytes] | None = None,
               _index: dict | None = None) -> Source:
    siblings = siblings or {}
    index = _index if _index is not None else {}  # filled on first listing, shared by siblings

    def sib(rel: str) -> Source | None:
        key = _join_inside(posixpath.dirname(name), rel)
        if key is None or key not in siblings:
            return None
        return from_bytes(key, siblings[key], siblings, index)

    def ls(rel: str) -> list[str] | None:
        if not index:
            index.update(_dir_index(siblings))
        return index.get(_join_inside(posixpath.dirname(name), rel))

    return Source(name, len(data), lambda: io.BytesIO(data), _sibling=sib, _listdir=ls)


def _join_inside(base: str, rel: str) -> str | None:
    """base/rel normalised, or None if it leaves the root."""
    if not rel or rel.startswith(("/", "\\")) or ":" in rel.split("/")[0]:
        return None
    joined = posixpath.normpath(posixpath.join(base, rel.replace("\\", "/")))
    if joined.startswith("../") or joined == ".." or joined.startswith("/"):
        return None
    return joined


def _dir_index(keys) -> dict[str, list[str]]:
    """Folder ("." for the top) -> its entries, folders ending in "/", from member paths."""
    index: dict[str, set[str]] = {}
    for key in keys:
        parts = key.split("/")
        for i, part in enumerate(parts):
            index.setdefault("/".join(parts[:i]) or ".", set()).add(part + ("/" if i < len(parts) - 1 else ""))
    return {d: sorted(v) for d, v in index.items()}


def from_path(path: Path, root: Path | None = None) -> Source:
    root = root or path.parent
    name = path.relative_to(root).as_posix() if root != path.parent else path.name

    def sib(rel: str) -> Source | None:
        key = _join_inside(path.parent.relative_to(root).as_posix() if root != path.parent else "", rel)
        if key is None:
            return None
        target = (root / key)
        try:
            real = target.resolve()
            if not real.is_relative_to(root.resolve()) or not real.is_file():
                return None
        except OSError:
            return None
        return from_path(target, root)

    def ls(rel: str) -> list[str] | None:
        key = _join_inside(path.parent.relative_to(root).as_posix() if root != path.parent else "", rel)
        if key is None:
            return None
        try:
            real = (root / key).resolve()
            if not real.is_relative_to(root.resolve()) or not real.is_dir():
                return None
            return sorted(e.name + ("/" if e.is_dir(follow_symlinks=False) else "") for e in os.scandir(real)
                          if not e.name.startswith(".") and e.name not in SKIP_DIRS)
        except OSError:
            return None

    return Source(name, path.stat().st_size, lambda: open(path, "rb"), _sibling=sib, _listdir=ls)


def expand(paths: list[str | Path], problems: list[Problem]) -> Iterator[Source]:
    """Files, folders (walked recursively, sorted) and zip archives -> Sources, bounded."""
    budget = _Budget()
    for p in paths:
        p = Path(p)
        if p.is_dir():
            files, root = _walk(p), p
        elif p.is_file():
            files, root = [p], p.parent
        else:
            problems.append(Problem(str(p), "no such file or folder"))
            continue
        for f in files:
            if not budget.take(f.name, f.stat().st_size, problems):
                return
            if f.suffix.lower() == ".zip" and zipfile.is_zipfile(f):
                yield from _zip_sources(f.read_bytes(), f.relative_to(root).as_posix(), budget, problems)
            else:
                yield from_path(f, root)


def expand_uploads(files: list[tuple[str, bytes]], problems: list[Problem]) -> Iterator[Source]:
    """Uploaded (name, bytes) pairs; zips are opened; names may carry folder paths."""
    budget = _Budget()
    plain = {}
    for name, data in files:
        safe = _join_inside("", name.replace("\\", "/").lstrip("/")) or posixpath.basename(name)
        if not budget.take(safe, len(data), problems):
            break
        if safe.lower().endswith(".zip") and zipfile.is_zipfile(io.BytesIO(data)):
            yield from _zip_sources(data, safe, budget, problems)
        else:
            plain[safe] = data
    index: dict = {}
    for name in sorted(plain):
        yield from_bytes(name, plain[name], plain, index)


class _Budget:
    def __init__(self):
        self.files = 0
        self.bytes = 0

    def take(self, name: str, size: int, problems: list[Problem]) -> bool:
        self.files += 1
        self.bytes += size
        if self.files > MAX_FILES:
            problems.append(Problem(name, f"not loaded: more than {MAX_FILES} files; the rest were skipped"))
            return False
        if self.bytes > MAX_TOTAL_BYTES:
            problems.append(Problem(name, f"not loaded: inputs exceed {MAX_TOTAL_BYTES // 1024**2} MB in total; the rest were skipped"))
            return False
        return True


def _walk(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for fn in sorted(filenames):
            if fn.startswith("."):
                continue
            f = Path(dirpath) / fn
            try:
                st = f.lstat()
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                yield f


def _zip_sources(data: bytes, zname: str, budget: _Budget, problems: list[Problem]) -> Iterator[Source]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError) as e:
        problems.append(Problem(zname, f"not a readable zip archive: {e}"))
        return
    members: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        if info.is_dir():
            continue
        inner = info.filename.replace("\\", "/")
        safe = _join_inside("", inner)
        where = f"{zname}!{inner}"
        if safe is None:
            problems.append(Problem(where, "refused: the member's path leaves the archive"))
            continue
        if any(part.startswith(".") or part in SKIP_DIRS for part in safe.split("/")[:-1]) or safe.startswith("__MACOSX/"):
            continue
        if info.file_size > MAX_MEMBER_BYTES or (
                info.file_size > 10 * 1024**2 and info.file_size > MAX_ZIP_RATIO * max(info.compress_size, 1)):
            problems.append(Problem(where, f"refused: inflates to {info.file_size} bytes from "
                                           f"{info.compress_size} (a zip bomb or too large)"))
            continue
        if not budget.take(where, info.file_size, problems):
            return
        members[safe] = info

    def opener(info):
        return lambda: io.BufferedReader(_LimitedReader(zf.open(info), info.file_size))

    index: dict[str, list[str]] = {}

    def make(key: str) -> Source:
        info = members[key]

        def sib(rel: str) -> Source | None:
            k = _join_inside(posixpath.dirname(key), rel)
            return make(k) if k in members else None

        def ls(rel: str) -> list[str] | None:
            if not index:
                index.update(_dir_index(members))
            return index.get(_join_inside(posixpath.dirname(key), rel))

        return Source(f"{zname}!{key}", info.file_size, opener(info), _sibling=sib, _listdir=ls)

    for key in sorted(members):
        yield make(key)


class _LimitedReader(io.RawIOBase):
    """Stops reading at the size the archive declared (a lying header cannot inflate more)."""

    def __init__(self, raw, limit: int):
        self.raw, self.left = raw, limit

    def readable(self):
        return True

    def readinto(self, b):
        if self.left <= 0:
            return 0
        n = self.raw.readinto(memoryview(b)[: min(len(b), self.left)])
        self.left -= n or 0
        return n

    def close(self):
        self.raw.close()
        super().close()
