"""A census is a shared file: the paths its rows name are untrusted.

`census merge` copies each row's report and trace from its shard into ``--out``, and
`census show --html` reads each row's report into a page. A row whose path leads outside its
census (``../../.bashrc``, ``/etc/hostname``, ``../..``), or through a symbolic link, is kept
without that path and named on stderr in one line; nothing outside the shard is read and
nothing outside ``--out`` is written. The shards are crafted here, in the layout
docs/census.md recommends (``shards/$i``, ``--out census``); no torch is needed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPORT = os.path.join(ROOT, "tests", "fixtures", "reports", "h100-torch211-flex-sliding-window.json.gz")


def _census(rows, **settings) -> dict:
    return {
        "format": "pt2-explorer-census",
        "version": 1,
        "torch_version": "2.13.0",
        "settings": {"backend": "inductor", **settings},
        "rows": [{"mode": "eval", "status": "one graph", "graphs": 1, "compiles": 1, **r} for r in rows],
    }


def _write(path, text: str | bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(text.encode() if isinstance(text, str) else text)


def _cli(*args, cwd):
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.run(
        [sys.executable, "-m", "explorer.cli", "census", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )


def _tree(top) -> dict[str, bytes]:
    """Every file under ``top`` (links as their target's name), relative path -> bytes."""
    out = {}
    for root, _dirs, files in os.walk(top):
        for name in files:
            p = os.path.join(root, name)
            rel = os.path.relpath(p, top)
            out[rel] = ("-> " + os.readlink(p)).encode() if os.path.islink(p) else open(p, "rb").read()
    return out


def test_merge_copies_nothing_from_or_to_outside(tmp_path):
    home = tmp_path / "home"
    work = home / "work"
    _write(str(home / ".bashrc"), "the user's own\n")
    _write(str(home / "secret" / "key"), "private\n")
    # shard 0: a good row, a row whose report climbs to ~/.bashrc, a trace of "../.."
    s0 = work / "shards" / "0"
    shutil.copy(REPORT, _mkdir(s0 / "reports") / "good.json.gz")
    _write(str(s0 / "traces" / "good" / "dedicated_log_torch_trace_rank_0.log"), "V1126 trace\n")
    _write(str(work / ".bashrc"), "shipped in the bundle\n")  # shards/0/../../.bashrc
    rows0 = [
        {"model": "good", "report": "reports/good.json.gz", "trace": "traces/good"},
        {"model": "climber", "report": "../../.bashrc"},
        {"model": "tree", "trace": "../.."},
    ]
    _write(str(s0 / "census.json"), json.dumps(_census(rows0)))
    # shard 1: an absolute path, a link out of the shard, a trace holding a link
    s1 = work / "shards" / "1"
    _mkdir(s1 / "reports")
    os.symlink(home / "secret" / "key", s1 / "reports" / "linked.json.gz")
    _write(str(s1 / "traces" / "t" / "rank_0.log"), "V1126 kept\n")
    os.symlink(home / "secret", s1 / "traces" / "t" / "secret")
    os.symlink(home / "secret" / "key", s1 / "traces" / "t" / "key.log")
    rows1 = [
        {"model": "absolute", "report": "/etc/hostname"},
        {"model": "linked", "report": "reports/linked.json.gz"},
        {"model": "traced", "trace": "traces/t"},
    ]
    _write(str(s1 / "census.json"), json.dumps(_census(rows1)))
    before = _tree(home)

    done = _cli("merge", "shards/0", "shards/1", "--out", "census", cwd=work)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "census: census/census.json (6 rows from 2 shards)\n"
    w = "pt2-explorer census: warning: "
    assert done.stderr.splitlines() == [
        f"{w}shards/0/census.json: $.rows[1].report: not a normalised path inside the census "
        "('../../.bashrc'): not read or copied",
        f"{w}shards/0/census.json: $.rows[2].trace: not a normalised path inside the census ('../..'): "
        "not read or copied",
        f"{w}shards/1/census.json: $.rows[0].report: an absolute path ('/etc/hostname'): not read or copied",
        f"{w}shards/1/census.json: linked:eval: report reports/linked.json.gz: missing, or reached through a link",
        f"{w}shards/1/census.json: traced:eval: traces/t/secret: a symbolic link: not copied",
        f"{w}shards/1/census.json: traced:eval: traces/t/key.log: a symbolic link or unreadable: not copied",
    ]
    after = _tree(home)
    added = {k for k in after if k not in before}
    assert {k: after[k] for k in before} == before  # nothing outside --out changed
    assert added == {
        "work/census/census.json",
        "work/census/reports/good.json.gz",
        "work/census/traces/good/dedicated_log_torch_trace_rank_0.log",
        "work/census/traces/t/rank_0.log",
    }
    assert after["work/census/reports/good.json.gz"] == open(REPORT, "rb").read()
    merged = json.load(open(work / "census" / "census.json"))
    paths = {r["model"]: (r.get("report"), r.get("trace")) for r in merged["rows"]}
    assert paths == {
        "good": ("reports/good.json.gz", "traces/good"),
        "climber": (None, None),
        "tree": (None, None),
        "absolute": (None, None),
        "linked": (None, None),
        "traced": (None, "traces/t"),
    }


def test_merge_never_writes_through_a_link_in_out(tmp_path):
    """``--out`` already holds ``reports`` as a link to elsewhere: nothing is written there."""
    s0 = tmp_path / "s0"
    shutil.copy(REPORT, _mkdir(s0 / "reports") / "good.json.gz")
    _write(
        str(s0 / "census.json"), json.dumps(_census([{"model": "good", "report": "reports/good.json.gz"}]))
    )
    elsewhere = _mkdir(tmp_path / "elsewhere")
    _mkdir(tmp_path / "out")
    os.symlink(elsewhere, tmp_path / "out" / "reports")

    done = _cli("merge", "s0", "--out", "out", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        "pt2-explorer census: warning: s0/census.json: good:eval: reports: the target is a symbolic link "
        "or not a directory: not copied\n"
    )
    assert os.listdir(elsewhere) == []


def test_show_html_reads_only_reports_inside_the_census(tmp_path):
    """The page of a census whose rows name ``/etc/hostname``, a file outside it, a link and a
    file that is not a report: the one real report gets its page; the others are named under
    the table, and nothing of theirs is on any page."""
    c = tmp_path / "c"
    shutil.copy(REPORT, _mkdir(c / "reports") / "good.json.gz")
    _write(str(tmp_path / "other" / "private.json"), '{"schema_version": "SECRET-OUTSIDE"}')
    os.symlink(tmp_path / "other" / "private.json", c / "reports" / "linked.json")
    _write(str(c / "reports" / "junk.json"), "SECRET-JUNK is not json")
    rows = [
        {"model": "good", "report": "reports/good.json.gz"},
        {"model": "absolute", "report": "/etc/hostname"},
        {"model": "outside", "report": "../other/private.json"},
        {"model": "linked", "report": "reports/linked.json"},
        {"model": "junk", "report": "reports/junk.json"},
    ]
    _write(str(c / "census.json"), json.dumps(_census(rows)))

    done = _cli("show", "c", "--html", "page.html", "--pages", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    # the warnings, then (piped) the progress line's whole lines: the row pages, n of N
    assert [ln for ln in done.stderr.splitlines() if not ln.startswith("census page: ")] == [
        "pt2-explorer census: warning: c/census.json: $.rows[1].report: an absolute path ('/etc/hostname'): "
        "not read or copied",
        "pt2-explorer census: warning: c/census.json: $.rows[2].report: not a normalised path inside the "
        "census ('../other/private.json'): not read or copied",
    ]
    progress = [
        re.sub(r"[\d.,]+ (MB|s)\b", r"X \1", ln)
        for ln in done.stderr.splitlines()
        if ln.startswith("census page: ")
    ]
    assert progress == [
        "census page: 2 row pages to write, about X MB in all (X s)",
        "census page: row page 1 of 2 (X MB written) (X s)",
    ]
    assert re.fullmatch(
        r"census page: page\.html \(\d+\.\d MB; row pages beside it: 1, \d+\.\d MB; \d+\.\d s\)",
        done.stdout.splitlines()[-1],
    )
    assert "left out (the census names these paths; they were not read):" in done.stdout
    assert sorted(os.listdir(tmp_path / "page.reports")) == ["good.html"]
    page = open(tmp_path / "page.html", encoding="utf-8").read()
    assert '<a href="page.reports/good.html">' in page
    notes = page.split('<ul class="left-out">')[1].split("</ul>")[0]
    assert notes.count("<li>") == 4
    assert "linked:eval: its report reports/linked.json is missing or reached through a link" in notes
    assert "junk:eval: its report is not read: " in notes
    good = open(tmp_path / "page.reports" / "good.html", encoding="utf-8").read()
    for secret in ("SECRET-OUTSIDE", "SECRET-JUNK"):
        assert secret not in page + good


def _mkdir(path):
    os.makedirs(path, exist_ok=True)
    return path
