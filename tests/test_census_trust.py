"""A census's files are input from anyone: reading one says what is wrong in one line naming
the file and the JSON path (``CensusFormatError``, explorer/census/_files.py), never a
traceback, for every reader (`census show`, `show --html`, `diff`, `merge`, resuming);
a damaged ``settings.json`` is never resumed; the run's limits are numbers a census can
hold. The files are crafted here; no torch is needed (no case runs).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from explorer.census import Census, CensusFormatError, Settings, cases, load_census, run_census
from explorer.census._child import run_case
from explorer.census._process import finished
from explorer.census._table import row_from_report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAD = '{"format": "pt2-explorer-census", "version": 1, "rows": [{"model": "m", "mode": "eval", '
ROW = '"status": "one graph", '


def _cli(*args, cwd):
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.run(
        [sys.executable, "-m", "explorer.cli", "census", *args], cwd=cwd, env=env, capture_output=True
    )


def _deep(n: int) -> str:
    return HEAD + ROW + '"family": ' + "[" * n + "]" * n + "}]}"


# (what the file holds, the one line naming its JSON path)
CRAFTED = {
    "huge int": (
        HEAD + ROW + '"compile_time_s": 1' + "0" * 400 + "}]}",
        "$.rows[0].compile_time_s: expected a finite number of at most 9,007,199,254,740,992, "
        "got an integer of 401 digits",
    ),
    "huge float": (
        HEAD + ROW + '"wall_s": 1e400}]}',
        "$.rows[0].wall_s: expected a finite number of at most 9,007,199,254,740,992, got inf",
    ),
    "NaN": (
        HEAD + ROW + '"speedup": NaN}]}',
        "$.rows[0].speedup: expected a finite number of at most 9,007,199,254,740,992, got nan",
    ),
    "negative": (HEAD + ROW + '"kernels": -3}]}', "$.rows[0].kernels: expected a number >= 0, got -3"),
    "100k deep": (_deep(100_000), "$.rows[0].family" + "[0]" * 13 + ": nested deeper than 16 levels"),
    "lone surrogate": (
        HEAD + '"status": "one graph", "error": "ok\\ud800"}]}',
        "$.rows[0].error: not text: a lone surrogate ('\\ud800') at character 2",
    ),
    "surrogate key": (
        HEAD + ROW + '"x\\udfff": 1}]}',
        "$.rows[0] (a key): not text: a lone surrogate ('\\udfff') at character 1",
    ),
    "settings a list": (
        '{"format": "pt2-explorer-census", "version": 1, "settings": [1], "rows": []}',
        "$.settings: expected an object of settings, got a list",
    ),
    "settings timeout": (
        '{"format": "pt2-explorer-census", "version": 1, "settings": {"timeout_s": "600"}, "rows": []}',
        "$.settings.timeout_s: expected a number of seconds > 0, got a string",
    ),
    "not UTF-8": (
        b'{"format": "pt2-explorer-census", "version": 1, "title": "\xff", "rows": []}',
        None,  # named by its byte, below
    ),
}


def _line(path: str, name: str) -> str:
    text, where = CRAFTED[name]
    if where is None:
        return f"{path}: not a census file: byte 0xff at offset 58 is not UTF-8"
    return f"{path}: {where}"


@pytest.mark.parametrize("name", list(CRAFTED))
def test_every_reader_refuses_a_crafted_census_in_one_line(tmp_path, name):
    """`show` (with its page), `diff` and `merge`: exit status 2, one line, nothing written."""
    text = CRAFTED[name][0]
    os.makedirs(tmp_path / "c")
    (tmp_path / "c" / "census.json").write_bytes(text if isinstance(text, bytes) else text.encode())
    (tmp_path / "ok.json").write_text('{"format": "pt2-explorer-census", "version": 1, "rows": []}')
    line = "pt2-explorer census: error: " + _line(os.path.join("c", "census.json"), name) + "\n"
    for args in (
        ["show", "c", "--html", "page.html"],
        ["diff", "ok.json", "c"],
        ["merge", "c", "--out", "merged"],
    ):
        done = _cli(*args, cwd=tmp_path)
        assert (done.returncode, done.stdout, done.stderr.decode()) == (2, b"", line), args
    assert sorted(os.listdir(tmp_path)) == ["c", "ok.json"]  # no page, no merged census


def test_the_python_reader_raises_census_format_error(tmp_path):
    (tmp_path / "census.json").write_text(CRAFTED["100k deep"][0])
    with pytest.raises(CensusFormatError) as e:
        load_census(tmp_path)
    assert str(e.value) == f"{tmp_path / 'census.json'}: {CRAFTED['100k deep'][1]}"


def test_nesting_is_counted_outside_strings_only(tmp_path):
    """Brackets inside strings are text: a census whose error quotes 40 of them loads."""
    text = HEAD + '"status": "error", "error": "IndexError: ' + "[" * 40 + '\\"]]"}]}'
    (tmp_path / "census.json").write_text(text)
    assert load_census(tmp_path).rows[0].error == "IndexError: " + "[" * 40 + '"]]'


# ---- resuming: settings.json ---------------------------------------------------------------------

MODELS = "def build():\n    raise ValueError('boom')\n\n\nCENSUS_MODELS = {'m': build}\n"


def _census_dir(tmp_path, settings: bytes | None) -> str:
    """A census directory with one finished row, run with --backend eager, and ``settings``."""
    out = tmp_path / "census"
    os.makedirs(out / "rows")
    (out / "rows" / "m.eval.json").write_text('{"model": "m", "mode": "eval", "status": "one graph"}')
    if settings is not None:
        (out / "settings.json").write_bytes(settings)
    (tmp_path / "models.py").write_text(MODELS)
    return str(out)


DAMAGED = {
    "not JSON": (b'{"backend": "eager"', "not JSON (Expecting ',' delimiter: line 1 column 20 (char 19))"),
    "a list": (b"[1]", "$: expected an object of settings, got a list"),
    "a wrong type": (b'{"backend": 1}', "$.backend: expected a string, got 1"),
    "NaN": (b'{"timeout_s": NaN}', "$.timeout_s: expected a finite number of at most 9,007,199,254,740,992, got nan"),
    "too deep": (b'{"modes": ' + b"[" * 20 + b"]" * 20 + b"}", "$.modes" + "[0]" * 15 + ": nested deeper than 16 levels"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(DAMAGED))
def test_a_damaged_settings_json_is_never_resumed(tmp_path, name):
    data, why = DAMAGED[name]
    out = _census_dir(tmp_path, data)
    done = _cli("--models", "models.py", "--backend", "aot_eager", "--out", "census", "-q", cwd=tmp_path)
    path = os.path.join("census", "settings.json")
    assert (done.returncode, done.stdout, done.stderr.decode()) == (
        2,
        b"",
        f"pt2-explorer census: error: {path}: {why}: census cannot be resumed with its settings "
        "unknown: use --rerun to run its cases again, or another --out\n",
    )
    assert os.listdir(os.path.join(out, "rows")) == ["m.eval.json"]  # nothing ran, nothing went
    assert open(os.path.join(out, "settings.json"), "rb").read() == data


def test_missing_settings_beside_finished_rows_is_never_resumed(tmp_path):
    _census_dir(tmp_path, None)
    done = _cli("--models", "models.py", "--out", "census", "-q", cwd=tmp_path)
    assert (done.returncode, done.stderr.decode()) == (
        2,
        f"pt2-explorer census: error: {os.path.join('census', 'settings.json')}: missing, beside "
        "finished rows: the settings they were run with are unknown, so census cannot be resumed: "
        "use --rerun to run its cases again, or another --out\n",
    )


def test_rerun_starts_a_damaged_census_over(tmp_path):
    out = _census_dir(tmp_path, b"[1]")
    census = run_census([], Settings(backend="aot_eager"), out, rerun=True, progress=False)
    assert census.rows == () and not os.path.exists(os.path.join(out, "rows"))
    with open(os.path.join(out, "settings.json")) as f:
        assert json.load(f) == {  # the modes and precisions pick cases: a resumed census may add some
            k: v
            for k, v in Settings(backend="aot_eager").to_dict().items()
            if k not in ("modes", "precisions")
        }


def test_a_damaged_row_file_is_run_again(tmp_path):
    """A row file that does not fit is no finished case (resuming runs it again)."""
    (tmp_path / "models.py").write_text(MODELS)
    (case,) = cases([str(tmp_path / "models.py")], ("eval",))
    os.makedirs(tmp_path / "rows")
    for text in ("[" * 100_000, '{"model": "m", "mode": "eval", "status": "one graph", "graphs": 1e999}'):
        (tmp_path / "rows" / "m.eval.json").write_text(text)
        assert finished(str(tmp_path), case) is None
    (tmp_path / "rows" / "m.eval.json").write_text('{"model": "m", "mode": "eval", "status": "one graph"}')
    assert finished(str(tmp_path), case).status == "one graph"


# ---- the run's options ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--timeout", "-1"], "argument --timeout: expected a number of seconds > 0 (at most 2**53), got '-1'"),
        (["--timeout", "0"], "argument --timeout: expected a number of seconds > 0 (at most 2**53), got '0'"),
        (["--timeout", "nan"], "argument --timeout: expected a number of seconds > 0 (at most 2**53), got 'nan'"),
        (["--timeout", "inf"], "argument --timeout: expected a number of seconds > 0 (at most 2**53), got 'inf'"),
        (["--memory", "-1"], "argument --memory: expected a number of GB >= 0 (at most 2**53), got '-1'"),
        (["--memory", "nan"], "argument --memory: expected a number of GB >= 0 (at most 2**53), got 'nan'"),
        (["--memory", "1e300"], "argument --memory: expected a number of GB >= 0 (at most 2**53), got '1e300'"),
    ],
)  # fmt: skip
def test_limits_that_are_no_limits_are_refused(tmp_path, args, line):
    done = _cli("--models", "models.py", *args, cwd=tmp_path)
    err = done.stderr.decode()
    assert (done.returncode, err.splitlines()[-1]) == (2, f"pt2-explorer census: error: {line}")
    assert err.startswith("usage: pt2-explorer census") and "Traceback" not in err
    assert not os.path.exists(tmp_path / "census")


def test_a_row_names_its_models_file_as_given(tmp_path, monkeypatch):
    """The row's source is the file as the command named it, not this machine's absolute path;
    the case's process (run elsewhere: in the census directory) still imports it."""
    (tmp_path / "models.py").write_text(MODELS)
    monkeypatch.chdir(tmp_path)
    (case,) = cases(["models.py"], ("eval",))
    assert (case.source, case.module) == ("models.py", str(tmp_path / "models.py"))
    assert row_from_report(case, None, None, "x").source == "models.py"
    monkeypatch.chdir(os.path.dirname(tmp_path))
    result = run_case({"case": case.__dict__, "settings": Settings().to_dict()})
    assert (result["error"], result["phase"]) == ("ValueError: boom", "build")


def test_what_a_census_writes_it_reads_back(tmp_path):
    """A model's error text or a name given as bytes that are not UTF-8 (a lone surrogate in
    Python) is written as U+FFFD, and a number no census holds is left out: the census that
    a run writes is never one its readers refuse."""
    (tmp_path / "models.py").write_text(MODELS)
    (case,) = cases([str(tmp_path / "models.py")], ("eval",))
    row = row_from_report(case, None, {"speedup": float("nan"), "wall_s": 1e999}, "ValueError: caf\udce9")
    census = Census((row,), {"backend": "eager\ud800"}, title="t\udcff")
    census.save(str(tmp_path / "census.json"))
    back = load_census(tmp_path)
    assert (back.title, back.settings, back.rows[0].error) == (
        "t\ufffd",
        {"backend": "eager\ufffd"},
        "ValueError: caf\ufffd",
    )
    assert (back.rows[0].speedup, back.rows[0].wall_s) == (None, None)
