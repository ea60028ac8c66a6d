"""A scenario of tests/hf_corpus.py recorded as a user would: ``pt2-explorer record -q`` in a
process of its own, with torch's own log of the same run beside it (TORCH_TRACE, the oracle)
and a fresh Inductor cache (every stage runs)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def env_with_root() -> dict[str, str]:
    """This environment, with this checkout first on PYTHONPATH."""
    return dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    )


def record_scenario(
    launcher: list[str], out: Path, scenario: str, outputs: list[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``LAUNCHER record -q OUTPUTS tests/hf_corpus.py SCENARIO inductor`` run in ``out``, its
    TORCH_TRACE log in ``out/trace``."""
    env = dict(env or env_with_root())
    env["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(dir=out)
    env["TORCH_TRACE"] = str(out / "trace")
    return subprocess.run(
        [*launcher, "record", "-q", *outputs, str(TESTS / "hf_corpus.py"), scenario, "inductor"],
        cwd=out,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
