"""A census row's files, named by a shared ``census.json``: untrusted.

A row's ``report`` and ``trace`` are paths relative to the census directory. Anyone can write
a census (a shard from another machine, a bundle from a colleague), so a path is used only
when it is relative, normalised and stays inside its census (``inside``), and the files are
reached without following a symbolic link at any step (``resolve``): a row naming
``../../.bashrc``, ``/etc/hostname`` or a link to either is never read, copied or written.
Copies (``copy_into``) create only regular files and directories under the target, never
through a link, and leave out links and special files found inside a copied tree.
"""

from __future__ import annotations

import os
import shutil
import stat


def unsafe(rel) -> str | None:
    """Why ``rel`` (a row's ``report`` or ``trace``) is not a path inside its census; None
    where it is one."""
    if not isinstance(rel, str) or not rel:
        return "not a path"
    if "\x00" in rel or "\\" in rel:
        return "not a plain relative path"
    if rel.startswith("/"):
        return "an absolute path"
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "not a normalised path inside the census"
    return None


def resolve(base: str, rel: str) -> str | None:
    """``base/rel`` where it exists and no step of ``rel`` is a symbolic link; else None."""
    if unsafe(rel):
        return None
    path = base
    for part in rel.split("/"):
        path = os.path.join(path, part)
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if stat.S_ISLNK(st.st_mode):
            return None
    return path


def copy_into(base: str, rel: str, out: str, to: str | None = None) -> list[str]:
    """Copy ``base/rel`` (a file, or a directory's tree; ``resolve`` found it) to ``out/rel``
    (``out/to`` where given); returns what was left out (links, special files, a target
    reached through a link), one line each."""
    if to is not None and to != rel:
        parent = os.path.dirname(to)
        if parent and not _mkdirs(out, parent):
            return [f"{parent}: the target is a symbolic link or not a directory: not copied"]
        src = os.path.join(base, *rel.split("/"))
        if stat.S_ISDIR(os.lstat(src).st_mode):
            shutil.copytree(src, os.path.join(out, *to.split("/")), symlinks=True, dirs_exist_ok=True)
            return []
        return _copy_file(src, out, to)
    src = os.path.join(base, *rel.split("/"))
    skipped: list[str] = []
    if stat.S_ISDIR(os.lstat(src).st_mode):
        for root, dirs, files in os.walk(src, followlinks=False):
            sub = os.path.relpath(root, base).replace(os.sep, "/")
            if not _mkdirs(out, sub):
                return [*skipped, f"{sub}: the target is a symbolic link or not a directory: not copied"]
            for name in sorted(dirs):
                if os.path.islink(os.path.join(root, name)):
                    skipped.append(f"{sub}/{name}: a symbolic link: not copied")
            for name in sorted(files):
                skipped += _copy_file(os.path.join(root, name), out, f"{sub}/{name}")
        return skipped
    parent = os.path.dirname(rel)
    if parent and not _mkdirs(out, parent):
        return [f"{parent}: the target is a symbolic link or not a directory: not copied"]
    return _copy_file(src, out, rel)


def _mkdirs(out: str, rel: str) -> bool:
    """``out/rel``'s directories, made where missing; False where one step is not a real
    directory (a link, a file)."""
    path = out
    os.makedirs(out, exist_ok=True)
    for part in rel.split("/") if rel and rel != "." else ():
        path = os.path.join(path, part)
        try:
            os.mkdir(path)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return False
    return True


def _copy_file(src: str, out: str, rel: str) -> list[str]:
    """One regular file, opened without following a link at either end."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(src, os.O_RDONLY | nofollow | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return [f"{rel}: a symbolic link or unreadable: not copied"]
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            return [f"{rel}: not a regular file: not copied"]
        dst = os.path.join(out, *rel.split("/"))
        try:
            wfd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | nofollow, 0o644)
        except OSError:
            return [f"{rel}: the target is a symbolic link or cannot be written: not copied"]
        with os.fdopen(wfd, "wb") as g:
            while chunk := f.read(1 << 20):
                g.write(chunk)
        os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
    return []
