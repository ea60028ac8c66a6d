"""The recording and benchmark options are declared once (compiler/model/_options.py): the
API's signatures, ``pt2-explorer record``'s flags and ``%%compile``'s flags agree with the
list on names, defaults and help, and an unknown keyword is one clear TypeError."""

from __future__ import annotations

import argparse
import dataclasses
import inspect

import pytest

import compiler
from explorer.cli import _parser
from explorer.notebook._magic import CompileMagics

RECORD_FLAGS = {
    "--fresh": "caches",
    "--triton-ir": "triton_ir",
    "--fusion-ir": "fusion_ir",
    "--fusion-log": "fusion_logs",
}
BENCH_FLAGS = {"--reps": "reps", "--mutates": "mutates"}


def _actions(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {flag: a for a in parser._actions for flag in a.option_strings}


def _record_parser() -> argparse.ArgumentParser:
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["record"]


def test_the_api_takes_each_list_by_its_declared_names_and_defaults():
    record = {f.name: f.default for f in dataclasses.fields(compiler.RecordOptions)}
    assert record == {
        "caches": True,
        "triton_ir": False,
        "fusion_ir": False,
        "fusion_logs": False,
        "provenance": True,
        "on_stage": None,
        "on_progress": None,
        "journal": None,
    }
    for fn in (compiler.recording, compiler.Recording):
        params = inspect.signature(fn).parameters
        assert {n: p.default for n, p in params.items() if n != "self"} == record
        assert all(p.kind is p.KEYWORD_ONLY for n, p in params.items() if n != "self")
    bench = {f.name: f.default for f in dataclasses.fields(compiler.BenchOptions)}
    assert bench == {
        "reps": None,
        "warmup": None,
        "profile": True,
        "mutates": False,
        "compiled": None,
        "compile_options": None,
        "name": None,
        "progress": True,
        "atol": None,
        "rtol": None,
    }
    params = inspect.signature(compiler.benchmark).parameters
    assert {n: p.default for n, p in params.items() if p.kind is p.KEYWORD_ONLY} == bench
    assert list(params)[:3] == ["report", "fn", "args"] and list(params)[-1] == "kwargs"


@pytest.mark.parametrize(
    ("surface", "flags", "options", "prefix"),
    [
        ("cli", RECORD_FLAGS, compiler.RecordOptions, ""),
        ("magic", RECORD_FLAGS, compiler.RecordOptions, ""),
        ("magic", BENCH_FLAGS, compiler.BenchOptions, "--bench: "),
    ],
)
def test_the_cli_and_the_magic_take_the_declared_flags(surface, flags, options, prefix):
    parser = _record_parser() if surface == "cli" else CompileMagics.compile.parser
    actions = _actions(parser)
    helps = options.help()
    for flag, name in flags.items():
        a = actions[flag]
        assert a.dest == name
        assert a.default == {f.name: f.default for f in dataclasses.fields(options)}[name]
        assert a.help.replace("%%", "%") == prefix + helps[name]
        assert a.nargs == (0 if name not in ("reps",) else None)
    # the flags land in the options they name, as the command line gave them
    line = ["--fresh", "--fusion-log"] if options is compiler.RecordOptions else ["--reps", "7", "--mutates"]
    parsed = parser.parse_args(line)
    want = {"caches": False, "triton_ir": False, "fusion_ir": False, "fusion_logs": True}
    if options is compiler.BenchOptions:
        want = {"reps": 7, "mutates": True}
    assert options.flagged(parsed) == want


def test_record_usage_and_the_cli_help_name_each_recording_flag():
    from explorer import cli
    from explorer.cli._record import RECORD_USAGE

    assert RECORD_USAGE == (
        "pt2-explorer record [--json OUT] [--html OUT] [--baseline R.json] [-q] [--bench] "
        "[--fresh] [--triton-ir] [--fusion-ir] [--fusion-log] (SCRIPT | -m MODULE) [ARGS...]"
    )
    record_line = next(line for line in cli.USAGE.splitlines() if line.startswith("pt2-explorer record"))
    assert all(f"[{flag}]" in record_line for flag in RECORD_FLAGS)


def test_advise_reps_says_what_the_api_says():
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert _actions(sub.choices["advise"])["--reps"].help == compiler.BenchOptions.help()["reps"]


def test_an_unknown_option_is_one_type_error_naming_it_and_the_known_ones():
    with pytest.raises(TypeError) as e:
        compiler.recording(cache=True)
    assert str(e.value) == (
        "compiler.recording() got an unexpected keyword argument 'cache' "
        "(its options: caches, triton_ir, fusion_ir, fusion_logs, provenance, on_stage, on_progress, journal)"
    )
    with pytest.raises(TypeError, match=r"^compiler\.Recording\(\) got an unexpected keyword argument 'x'"):
        compiler.Recording(x=1)
    rec = compiler.Recording(caches=False, fusion_ir=True)
    assert (rec.caches, rec.fusion_ir, rec.triton_ir, rec.provenance) == (False, True, False, True)


def test_benchmark_keywords_split_into_options_and_the_functions_own():
    options, own = compiler.BenchOptions.split({"reps": 3, "mutates": True, "lr": 0.1})
    assert options == compiler.BenchOptions(reps=3, mutates=True)
    assert own == {"lr": 0.1}
