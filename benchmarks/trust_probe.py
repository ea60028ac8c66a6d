"""Hostile shared files against the CLI, as a user meets them: each probe crafts one input
(issue 38's list), runs `pt2-explorer` on it in a fresh process, and prints its exit status,
wall time, peak memory (the child's ru_maxrss), how many lines it wrote to stderr, whether a
Python traceback reached the user, and whether anything outside the probe's own output was
written.

    python benchmarks/trust_probe.py [--only NAME,...] [--keep DIR]

Each command runs with its address space capped at 4 GB (a runaway read ends in a
MemoryError, not in the machine's swap). A probe passes when it ends in under 30 s and 2 GB with no traceback and at most one error
line (the budget issue 38 sets for a report of at most 2 MB). Torch is not needed: the base
report is read from a TORCH_TRACE log of tests/fixtures.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
SITE = "make_cpu_trace.py:15"  # the base log's graph break
BASE_LOG = os.path.join(ROOT, "tests", "fixtures", "traces", "cpu-torch213-breaks.log.gz")
RANKS = os.path.join(ROOT, "tests", "fixtures", "traces", "cpu-torch271-ddp-4rank")
LIMIT_S, LIMIT_MB = 30.0, 2048.0


def run(args, cwd, timeout=120):
    """``pt2-explorer ARGS`` in a fresh process: (status, seconds, peak MB, stdout, stderr)."""
    import threading

    env = {**os.environ, "PYTHONPATH": ROOT, "COLUMNS": "100"}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        p = subprocess.Popen(
            [sys.executable, "-m", "explorer", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
            stdout=out, stderr=err, preexec_fn=_cap,
        )  # fmt: skip
        timer = threading.Timer(timeout, p.kill)
        timer.start()
        _pid, status, usage = os.wait4(p.pid, 0)  # reaped here, with its own rusage
        timer.cancel()
        secs = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = [f.read().decode("utf-8", "replace") for f in (out, err)]
    return p.returncode, secs, usage.ru_maxrss / 1024, *text


def _cap() -> None:
    """The child's address space capped at 4 GB: a probe that runs away fails, on its own."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def base_report():
    import compiler

    return compiler.load_trace(BASE_LOG)


def save(rep, path) -> str:
    rep.to_json(path)
    return path


def raw_json(path) -> dict:
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def write_raw(path, data) -> str:
    text = json.dumps(data, ensure_ascii=True)
    with (gzip.open if path.endswith(".gz") else open)(path, "wt", encoding="utf-8") as f:
        f.write(text)
    return path


# each probe: (name, what it is) -> a function of the probe's directory giving the commands
def p_shared_string(d):
    rep = base_report()
    big = "x" * (1 << 20)
    b = rep.graph_breaks[0]
    breaks = tuple(dataclasses.replace(b, reason=big, line=i + 1) for i in range(2000))
    path = save(dataclasses.replace(rep, graph_breaks=breaks), os.path.join(d, "shared.json.gz"))
    return [["report", path], ["report", path, "--view", "breaks"], ["report", path, "--html", "o.html"]]


def p_bytecode_spaces(d):
    rep = base_report()
    c = rep.compiles[0]
    listing = " " * 200_000 + "x\n"
    cap = dataclasses.replace(c.stages.capture, bytecode_original=listing, bytecode_modified=listing)
    c = dataclasses.replace(c, stages=dataclasses.replace(c.stages, capture=cap))
    path = save(dataclasses.replace(rep, compiles=(c, *rep.compiles[1:])), os.path.join(d, "bc.json.gz"))
    return [["report", path, "--view", "bytecode", "--compile", c.id], ["report", path, "--html", "o.html"]]


def p_surrogate(d):
    path = save(base_report(), os.path.join(d, "plain.json"))
    data = raw_json(path)
    data["torch_version"] = "2.13\ud800"
    bad = write_raw(os.path.join(d, "surrogate.json"), data)
    return [
        ["report", bad],
        ["report", bad, "--html", "o.html"],
        ["diff", bad, path],
        ["repro", bad, "--break", SITE],
    ]


def p_repro_header(d):
    rep = base_report()
    c = dataclasses.replace(rep.compiles[0], name="f\nimport os; os.system('echo pwned')\x1b]0;title\x07")
    path = save(dataclasses.replace(rep, compiles=(c, *rep.compiles[1:])), os.path.join(d, "repro.json"))
    return [
        ["repro", path, "--compile", "0/0"],
        ("repro", path, "--compile", "0/0", "-o", "b.py", lambda d: _no_injection(os.path.join(d, "b.py"))),
    ]


def _no_injection(path) -> str | None:
    if not os.path.exists(path):
        return "no file written"
    text = open(path, encoding="utf-8").read()
    if "\nimport os; os.system" in text or "\x1b" in text:
        return "the compile's name became lines of code or kept an ESC"
    return None


def p_repro_devices(d):
    rep = base_report()
    fifo = os.path.join(d, "fifo.py")
    os.mkfifo(fifo)
    out = []
    for i, name in enumerate(("/dev/zero", fifo)):
        b = rep.graph_breaks[0]
        frames = tuple(dataclasses.replace(f, filename=name) for f in b.user_stack)
        b = dataclasses.replace(b, filename=name, user_stack=frames)
        path = save(dataclasses.replace(rep, graph_breaks=(b,)), os.path.join(d, f"dev{i}.json"))
        out.append(["repro", path, "--break", f"{os.path.basename(name)}:{b.line}", "-o", f"b{i}.py"])
    return out


def p_diff_quadratic(d):
    rep = base_report()
    out = []
    for n, seed in (("a", 1), ("b", 2)):
        lines = "".join(("TENSOR_MATCH: x\n" if (i * seed) % 3 else "ID_MATCH: y\n") for i in range(32_000))
        c = rep.compiles[0]
        cap = (
            dataclasses.replace(c.stages.capture, guards=lines)
            if hasattr(c.stages.capture, "guards")
            else c.stages.capture
        )
        c = dataclasses.replace(c, stages=dataclasses.replace(c.stages, capture=cap))
        out.append(
            save(dataclasses.replace(rep, compiles=(c, *rep.compiles[1:])), os.path.join(d, f"{n}.json.gz"))
        )
    return [["diff", *out], ["diff", *out, "--full"]]


def p_outputs_replace_inputs(d):
    with open(os.path.join(d, "mymod.py"), "w") as f:
        f.write("print('hi')\n")

    def kept(d):
        return (
            None if open(os.path.join(d, "mymod.py")).read() == "print('hi')\n" else "mymod.py was replaced"
        )

    return [
        ("record", "--json", "mymod.py", "-m", "mymod", kept),
        ["load", BASE_LOG, "--json", "x.out", "--html", "x.out"],
    ]


def p_census_numbers(d):
    os.makedirs(os.path.join(d, "c"))
    row = {"model": "m", "mode": "eval", "status": "one graph"}
    with open(os.path.join(d, "c", "census.json"), "w") as f:
        f.write('{"format": "pt2-explorer-census", "version": 1, "rows": [' + json.dumps(row)[:-1])
        f.write(', "compile_time_s": 1' + "0" * 400 + "}]}")
    os.makedirs(os.path.join(d, "n"))
    with open(os.path.join(d, "n", "census.json"), "w") as f:
        f.write(
            '{"format": "pt2-explorer-census", "version": 1, "rows": ' + "[" * 100_000 + "]" * 100_000 + "}"
        )
    return [["census", "show", "c"], ["census", "diff", "c", "c"], ["census", "show", "n"]]


def p_ranks(d):
    import shutil

    dst = os.path.join(d, "ranks")
    shutil.copytree(RANKS, dst)
    logs = sorted(os.listdir(dst))
    with open(os.path.join(dst, logs[-1]), "wb") as f:
        f.write(os.urandom(4096))
    return [("load", dst, "--json", "r.json", _exit0), ("report", dst, "--view", "ranks", _exit0)]


def _exit0(d, status=None) -> str | None:
    return None


PROBES = {
    "shared-string": p_shared_string,
    "bytecode-spaces": p_bytecode_spaces,
    "surrogate": p_surrogate,
    "repro-header": p_repro_header,
    "repro-devices": p_repro_devices,
    "diff-quadratic": p_diff_quadratic,
    "outputs-replace-inputs": p_outputs_replace_inputs,
    "census-numbers": p_census_numbers,
    "ranks": p_ranks,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated probe names")
    ap.add_argument("--keep", help="make the probes' directories here (default: a temporary one)")
    ns = ap.parse_args()
    names = ns.only.split(",") if ns.only else list(PROBES)
    top = ns.keep or tempfile.mkdtemp(prefix="trust-probe-")
    failed = 0
    print(f"{'probe':24} {'command':44} {'exit':>4} {'s':>6} {'MB':>7} {'err':>3} tb  verdict")
    for name in names:
        d = os.path.join(top, name)
        os.makedirs(d, exist_ok=True)
        before = set(os.listdir(d))
        for cmd in PROBES[name](d):
            check = cmd[-1] if callable(cmd[-1]) else None
            args = list(cmd[:-1] if check else cmd)
            status, secs, mb, _out, err = run(args, d)
            tb = "Traceback" in err
            why = None if check is None else check(d)
            if check is _exit0 and status != 0:
                why = f"exit {status}: the good ranks should load"
            ok = secs < LIMIT_S and mb < LIMIT_MB and not tb and len(err.splitlines()) <= 1 and why is None
            failed += not ok
            shown = " ".join(os.path.basename(a) if os.sep in a else a for a in args)
            print(
                f"{name:24} {shown[:44]:44} {status:>4} {secs:6.1f} {mb:7.0f} {len(err.splitlines()):>3} "
                f"{'yes' if tb else 'no ':3} {'ok' if ok else 'FAIL'}"
            )
            for line in ([why] if why else []) + (err.strip().splitlines()[-1:] if err.strip() else []):
                print("    " + line[:160].encode("ascii", "backslashreplace").decode())
        print(f"{'':24} new files: {', '.join(sorted(set(os.listdir(d)) - before)) or '-'}")
    print(f"{failed} failing command(s); directories under {top}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
