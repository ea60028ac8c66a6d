"""Whose code a report's runnables are. ``compiler.fill`` runs a compile's runnable repro
(torch's ``fx_graph_runnable``) in a fresh python: code taken from the report. A report is a
file that can be shared, copied, edited or crafted, so the fill runs only the runnables this
user's own recording wrote, unless asked (``trust=True``, ``--fill --trust``).

The recording marks its report with a keyed hash (HMAC-SHA256) of every compile's runnables,
under a key of this user's kept outside every report: ``$PT2X_CONFIG_DIR`` (else
``$XDG_CONFIG_HOME/pt2-explorer``, else ``~/.config/pt2-explorer``) ``/fill.key``, 32 random
bytes made at the first recording, readable by its owner alone (0600). A report recorded by
another user or machine carries another key's mark, a report edited after it was recorded a
mark that does not match, a crafted one none: none of these fills unasked. No torch here."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
import secrets
import stat

_VERSION = "v1"
_KEY_BYTES = 32


def key_path() -> str:
    """Where this user's key is (or will be made)."""
    base = os.environ.get("PT2X_CONFIG_DIR") or os.path.join(
        os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config"), "pt2-explorer"
    )
    return os.path.join(base, "fill.key")


def _read_key() -> bytes | None:
    """This user's key; None where there is none, or the file is not one only its owner, this
    user, can read and write (a key others can read marks nothing)."""
    flags = os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(key_path(), flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (
            not stat.S_ISREG(st.st_mode)
            or stat.S_IMODE(st.st_mode) & 0o077
            or (hasattr(os, "getuid") and st.st_uid != os.getuid())
        ):
            return None
        key = os.read(fd, _KEY_BYTES + 1)
    finally:
        os.close(fd)
    return key if len(key) == _KEY_BYTES else None


def _made_key() -> bytes | None:
    """This user's key, made (0600, never through a link) where there is none yet; None where
    it cannot be made (a read-only home): the report is then left unmarked."""
    key = _read_key()
    if key is not None:
        return key
    path = key_path()
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags, 0o600)
    except FileExistsError:  # made at once by another recording, or a file we refuse: read again
        return _read_key()
    except OSError:
        return None
    try:
        os.write(fd, secrets.token_bytes(_KEY_BYTES))
    finally:
        os.close(fd)
    return _read_key()


def _key_id(key: bytes) -> str:
    return hashlib.sha256(b"pt2-explorer fill key id\0" + key).hexdigest()[:16]


def runnables(report) -> list[tuple[str, str, str]]:
    """(compile id, "forward" / "backward", code) of each runnable the report holds."""
    out = []
    for c in report.compiles:
        cg = c.stages.codegen
        if cg is None:
            continue
        for role, code in (("forward", cg.fx_graph_runnable), ("backward", cg.fx_graph_runnable_backward)):
            if code:
                out.append((c.id, role, code))
    return out


def _digest(key: bytes, report) -> str:
    text = json.dumps([_VERSION, runnables(report)], ensure_ascii=True, separators=(",", ":"))
    return hmac.new(key, text.encode("ascii"), hashlib.sha256).hexdigest()


def marked(report):
    """``report`` with this user's mark on its runnables (the key made where there is none),
    as the recording leaves it; as it was where it holds no runnable or no key can be made."""
    if not runnables(report):
        return report
    key = _made_key()
    if key is None:
        return report
    return dataclasses.replace(report, fill_mark=f"{_VERSION}:{_key_id(key)}:{_digest(key, report)}")


def remarked(before, after):
    """``after`` (``before`` rewritten by us: its paths made relative) marked again where
    ``before``'s mark was this user's and whole; else unmarked."""
    if untrusted(before) is None and before.fill_mark is not None:
        key = _read_key()
        if key is not None:
            return dataclasses.replace(after, fill_mark=f"{_VERSION}:{_key_id(key)}:{_digest(key, after)}")
    return dataclasses.replace(after, fill_mark=None)


_last: list = []  # (weak reference to a report, its key's mark, the answer): views ask per compile


def untrusted(report) -> str | None:
    """Why the report's runnables are not this user's own recording's (one phrase), or None
    where they are (or it holds none: nothing would run)."""
    import weakref

    if _last and _last[0]() is report and _last[1] == (report.fill_mark, _read_key()):
        return _last[2]
    why = _untrusted(report)
    try:
        _last[:] = [weakref.ref(report), (report.fill_mark, _read_key()), why]
    except TypeError:  # not weakly referable
        pass
    return why


def _untrusted(report) -> str | None:
    if not runnables(report):
        return None
    mark = report.fill_mark
    if not mark:
        return "it carries no mark of a recording (a report made elsewhere, crafted, or loaded from a log)"
    parts = mark.split(":")
    key = _read_key()
    if key is None:
        return f"this user has no key to check its mark with ({key_path()}: missing, or readable by others)"
    if len(parts) != 3 or parts[0] != _VERSION:
        return "its mark is not one this version makes"
    if not hmac.compare_digest(parts[1], _key_id(key)):
        return "it was recorded by another user or on another machine (its mark is another key's)"
    if not hmac.compare_digest(parts[2], _digest(key, report)):
        return "its runnable code was changed after it was recorded (its mark no longer matches)"
    return None


class UntrustedReport(ValueError):
    """``compiler.fill`` of a report whose runnables are not this user's own recording's,
    without ``trust=True``: nothing was run."""


def check(report, trust: bool) -> None:
    """Raise UntrustedReport where the report's runnables would run unasked."""
    why = None if trust else untrusted(report)
    if why is not None:
        raise UntrustedReport(
            f"not filled, nothing run: the fill runs the report's runnable code, and {why}; "
            "read that code, then fill with trust=True (pt2-explorer report R --fill --trust) to run it"
        )
