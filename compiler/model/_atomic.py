"""Writing a file whole or not at all: every file PT2 Explorer writes (reports, pages) goes
through ``write_file``. No torch here (explorer/ imports it)."""

from __future__ import annotations

import errno
import os
import stat

# a directory opened only to name files in it (O_PATH where the system has it: no read right needed)
_DIRECTORY = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC


def write_file(path: str | os.PathLike[str], data: str | bytes) -> str:
    """Write ``data`` (text as UTF-8) to ``path`` through a temporary file beside it, then
    ``os.replace``: ``path`` holds either its old bytes, untouched, or the new ones whole. On
    a failure (a directory in the way, a read-only file, a full disk, a file size limit) the
    temporary file is removed and the OSError raised names ``path``. As ``open(path, "w")``:
    an existing file keeps its permission bits, a new one gets them from the umask, a
    read-only file is refused (even where replacing it would work), and a device or FIFO
    (``/dev/null``) is written to in place. A symlink is written through only where the
    kernel lets ``open`` follow it (``fs.protected_symlinks``: not another user's link in a
    sticky directory such as /tmp), to an existing file (a link to no file is refused); the
    file it names is replaced in its own directory. Every name is looked up in a directory
    held open (``dir_fd``), never through a path resolved beforehand. Returns ``path``."""
    name = os.fspath(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    directory, base = os.path.split(name)
    try:
        if base in ("", ".", ".."):  # "out/": as open(), a directory is no file to write
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
        dir_fd = os.open(directory or ".", _DIRECTORY)
        try:
            _write_at(dir_fd, directory or ".", base, raw)
        finally:
            os.close(dir_fd)
    except OSError as e:
        if e.filename == name or e.errno is None:
            raise
        raise type(e)(e.errno, e.strerror, name) from None  # not the temporary file's name
    return name


def _write_at(dir_fd: int, directory: str, base: str, raw: bytes) -> None:
    """Write ``base`` in the directory ``dir_fd`` (``directory`` names it)."""
    try:
        # follows a link as open() does: the kernel refuses one it protects; write access is
        # checked here (a read-only file is refused), a directory is EISDIR
        fd = os.open(base, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        if stat.S_ISLNK(_lstat(base, dir_fd)):
            raise  # a link to no file: not followed to create its target
        _replace(dir_fd, base, raw, None)
        return
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # a device, a FIFO: no file to replace
            view = memoryview(raw)
            while view:
                view = view[os.write(fd, view) :]
            return
    finally:
        os.close(fd)
    mode = stat.S_IMODE(st.st_mode)
    if not stat.S_ISLNK(_lstat(base, dir_fd)):
        _replace(dir_fd, base, raw, mode)
        return
    # through a link the kernel let us follow: replace the file it names, in that file's own
    # directory, once it is the very file that open() reached (nothing swapped in between)
    real_dir, real_base = os.path.split(os.path.realpath(os.path.join(directory, base)))
    real_fd = os.open(real_dir, _DIRECTORY)
    try:
        now = os.stat(real_base, dir_fd=real_fd, follow_symlinks=False)
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise OSError(errno.EAGAIN, "the file changed while it was written", base)
        _replace(real_fd, real_base, raw, mode)
    finally:
        os.close(real_fd)


def _lstat(base: str, dir_fd: int) -> int:
    try:
        return os.stat(base, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return 0


def _replace(dir_fd: int, base: str, raw: bytes, mode: int | None) -> None:
    for _ in range(100):  # a name nobody else holds, created by us alone, never through a link
        tmp = f".{base}.{os.urandom(4).hex()}.tmp"
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(tmp, flags, 0o666, dir_fd=dir_fd)  # the umask applies
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 collisions of 32 random bits
        raise FileExistsError(errno.EEXIST, "no free temporary name", base)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            if mode is not None:
                os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())  # a full disk may only say so here
        os.replace(tmp, base, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise
