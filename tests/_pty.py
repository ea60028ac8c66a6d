"""A command with its stdout on a pseudo-terminal: what a user's terminal would receive."""

from __future__ import annotations

import os
import pty
import struct
import subprocess
from fcntl import ioctl
from termios import TIOCSWINSZ


def run_in_pty(cmd: list[str], columns: int, rows: int, env: dict[str, str]) -> tuple[int, bytes]:
    """``cmd`` run on a terminal ``columns`` × ``rows``: its exit status and every byte it wrote."""
    leader, follower = pty.openpty()
    ioctl(follower, TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    proc = subprocess.Popen(cmd, stdout=follower, stderr=subprocess.PIPE, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    status = proc.wait()
    os.close(leader)
    return status, b"".join(chunks)
