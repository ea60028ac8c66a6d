"""Run a notebook with nbclient, working around a known stall: a cell that shows ipywidgets
sometimes gets its execute reply only after the whole cell timeout has passed, then the run
goes on without an error (jupyter/nbclient#312, open): the one long poll of the shell socket
misses the reply's wake-up. Polling in short steps up to the same deadline bounds a missed
wake-up to one step. Seen here in notebook 07 (the cell that builds the explorer of a benchmarked
report), only while the machine was loaded: 60 s lost with a 60 s timeout, 600 s with 600. Self-contained (standard library and nbclient only): the Binder
test runs it in a fresh venv by path."""

from __future__ import annotations

from queue import Empty
from time import monotonic

from nbclient import NotebookClient

STEP_S = 0.5


def _chunked(channel) -> None:
    get_msg = channel.get_msg

    async def get_msg_in_steps(timeout: float | None = None, **kw):
        deadline = None if timeout is None else monotonic() + timeout
        while True:
            step = STEP_S if deadline is None else min(STEP_S, max(0.0, deadline - monotonic()))
            try:
                return await get_msg(timeout=step, **kw)
            except Empty:
                if deadline is not None and monotonic() >= deadline:
                    raise

    channel.get_msg = get_msg_in_steps


def execute(nb, *, timeout: int, cwd: str, env: dict | None = None, kernel_name: str = "python3"):
    """Execute ``nb`` in place (raises CellExecutionError on any error); returns it."""
    client = NotebookClient(
        nb, kernel_name=kernel_name, timeout=timeout, resources={"metadata": {"path": cwd}}
    )

    def on_notebook_start(**_kw) -> None:  # the kernel client exists from here on
        _chunked(client.kc.shell_channel)

    client.on_notebook_start = on_notebook_start
    client.execute(**({} if env is None else {"env": env}))  # env=None is not "inherit" to jupyter_client
    return nb
