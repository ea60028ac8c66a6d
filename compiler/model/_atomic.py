"""Writing a file whole or not at all: every file PT2 Explorer writes (reports, pages) goes
through ``write_file``. No torch here (explorer/ imports it)."""

from __future__ import annotations

import errno
import os
import stat


def write_file(path: str | os.PathLike[str], data: str | bytes) -> str:
    """Write ``data`` (text as UTF-8) to ``path`` through a temporary file beside it, then
    ``os.replace``: ``path`` holds either its old bytes, untouched, or the new ones whole. On
    a failure (a directory in the way, a read-only file, a full disk, a file size limit) the
    temporary file is removed and the OSError raised names ``path``. As ``open(path, "w")``:
    a symlink is written through, an existing file keeps its permission bits, a new one gets
    them from the umask, a read-only file is refused (even where replacing it would work),
    and a device or FIFO (``/dev/null``) is written to in place. Returns ``path``."""
    name = os.fspath(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    target = os.path.realpath(name)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    try:
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
        if st is not None and not stat.S_ISREG(st.st_mode):  # a device, a FIFO: no file to replace
            with open(target, "wb") as f:
                f.write(raw)
            return name
        if st is not None and not os.access(target, os.W_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)
        _replace(target, raw, None if st is None else stat.S_IMODE(st.st_mode))
    except OSError as e:
        if e.filename == name or e.errno is None:
            raise
        raise type(e)(e.errno, e.strerror, name) from None  # not the temporary file's name
    return name


def _replace(target: str, raw: bytes, mode: int | None) -> None:
    directory, base = os.path.split(target)
    for _ in range(100):  # a name nobody else holds, created by us alone (O_EXCL)
        tmp = os.path.join(directory, f".{base}.{os.urandom(4).hex()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 collisions of 32 random bits
        raise FileExistsError(errno.EEXIST, "no free temporary name", target)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())  # a full disk may only say so here
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
