"""compiler.load on edited report JSON (issue 13, finding 6): every value is checked against
the schema the report dataclasses' type hints make, and the first problem is named by file
and JSON path (ReportFormatError, a ValueError). Unknown keys are ignored."""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import re
import warnings
from pathlib import Path

import pytest

import compiler
from explorer import cli

TRACES = Path(__file__).parent / "fixtures" / "traces"
REPORTS = Path(__file__).parent / "fixtures" / "reports"
_cache: dict[str, dict] = {}


def _data() -> dict:
    """A report's full JSON form (``to_dict``; ``compiler.load`` reads it as it reads the file
    form): the CPU trace fixture (4 compiles: 0/0, 1/0, 0/1, 1/1)."""
    if "cpu" not in _cache:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = compiler.load_trace(TRACES / "cpu-torch213-breaks.log.gz")
        _cache["cpu"] = json.loads(json.dumps(report.to_dict()))
    return json.loads(json.dumps(_cache["cpu"]))  # a fresh copy to edit


def _save(tmp_path: Path, data, name: str = "r.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return p


def _error(p: Path) -> str:
    with pytest.raises(compiler.ReportFormatError) as e:
        compiler.load(p)
    assert isinstance(e.value, ValueError)
    return str(e.value)


def test_a_good_report_loads_as_before(tmp_path):
    data = _data()
    p = _save(tmp_path, data)
    r = compiler.load(p)
    assert r.to_dict() == data and compiler.Report.from_dict(r.to_dict()) == r
    gpu = compiler.load(REPORTS / "h100-torch211-gpu-block.json.gz")  # no `benchmarks` key: defaults
    assert gpu.kernels and gpu.benchmarks == ()


def test_cache_key_components_of_an_older_report_load_as_lines(tmp_path):
    """Reports kept a cache key's components as one text (``components``); now as lines."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = compiler.load_trace(TRACES / "cpu-torch213-compiled-autograd.log.gz")
    data = json.loads(json.dumps(report.to_dict()))
    lookup = data["compiles"][0]["caches"][1]
    assert lookup["kind"] == "fx_graph" and len(lookup["component_lines"]) == 637
    text = "\n".join(lookup["component_lines"])
    lookup["components"] = text  # as an older report wrote it
    del lookup["component_lines"]
    data["ranks"] = [json.loads(json.dumps(data))]  # in a rank's report too
    old = compiler.load(_save(tmp_path, data))
    for r in (old, old.ranks[0]):
        assert r.compiles[0].caches[1].components == text
        assert r.compiles[0].caches[1].component_lines == report.compiles[0].caches[1].component_lines
        assert r.compiles[0].caches[0].component_lines == ()  # none logged: none read
    assert "components" in data["compiles"][0]["caches"][1]  # the dict given is left as it was
    # the file form writes the lines as one text (a key that recurs: one text, stored once)
    report.to_json(tmp_path / "r.json")
    written = json.loads((tmp_path / "r.json").read_text())
    fx = written["compiles"][0]["caches"][1]
    assert "component_lines" not in fx and list(fx["components"]) == ["$t"]
    back = compiler.load(tmp_path / "r.json")
    assert back == report
    lines = [ln for c in back.compiles for lk in c.caches for ln in lk.component_lines]
    assert len(lines) == 1925 and len({id(ln) for ln in lines}) == len(set(lines)) < 1000  # shared


def test_a_missing_key_is_named(tmp_path):
    data = _data()
    del data["compiles"][3]["id"]
    p = _save(tmp_path, data)
    assert _error(p) == f"{p}: $.compiles[3]: missing required key 'id' (Compile)"
    data = _data()
    del data["torch_version"]
    assert _error(_save(tmp_path, data)).endswith(": $: missing required key 'torch_version' (Report)")


def test_a_scalar_of_the_wrong_type_is_named(tmp_path):
    data = _data()
    assert data["compiles"][3]["stages"]["capture"]["guard_count"] is not None
    data["compiles"][3]["stages"]["capture"]["guard_count"] = "x"
    p = _save(tmp_path, data)
    assert _error(p) == f'{p}: $.compiles[3].stages.capture.guard_count: expected int or null, got "x"'


@pytest.mark.parametrize(
    "edit, where, expected",
    [
        (lambda d: d.__setitem__("compiles", {"a": 1}), "$.compiles", "expected a list, got an object"),
        (
            lambda d: d["compiles"][0].__setitem__("stages", []),
            "$.compiles[0].stages",
            "expected an object (Stages), got a list",
        ),
        (
            lambda d: d["compiles"][0].__setitem__("stages", None),
            "$.compiles[0].stages",
            "expected an object (Stages), got null",
        ),
        (
            lambda d: d["frames"][0].__setitem__("line", True),
            "$.frames[0].line",
            "expected int or null, got true",
        ),
        (
            lambda d: d["frames"][0].__setitem__("line", 1.5),
            "$.frames[0].line",
            "expected int or null, got 1.5",
        ),
        (
            lambda d: d["frames"][0].__setitem__("recompile_limit_hit", 0),
            "$.frames[0].recompile_limit_hit",
            "expected bool, got 0",
        ),
        (
            lambda d: d["graph_breaks"][0]["hints"].insert(1, 3),
            "$.graph_breaks[0].hints[1]",
            "expected string, got 3",
        ),
        (
            lambda d: d["graph_breaks"][0]["user_stack"][0].__setitem__("line", "9"),
            "$.graph_breaks[0].user_stack[0].line",
            'expected int, got "9"',
        ),
        (
            lambda d: d["compiles"][1]["phase_times_s"].__setitem__("a b", "x"),
            '$.compiles[1].phase_times_s["a b"]',
            'expected number, got "x"',
        ),
        (
            lambda d: d["compiles"][1]["stages"]["autograd"]["forward"].__setitem__("nodes", "x"),
            "$.compiles[1].stages.autograd.forward.nodes",
            'expected a list, got "x"',
        ),
        (
            lambda d: d["kernels"][0].__setitem__("metadata", []),
            "$.kernels[0].metadata",
            "expected an object, got a list",
        ),
        (lambda d: d.__setitem__("error", {"x": 1}), "$.error", "expected string or null, got an object"),
    ],
)
def test_containers_and_scalars(tmp_path, edit, where, expected):
    data = _data()
    edit(data)
    p = _save(tmp_path, data)
    assert _error(p) == f"{p}: {where}: {expected}"


def test_what_fits_loads(tmp_path):
    data = _data()
    data["compiles"][0]["compile_time_s"] = 3  # an int where a float is expected
    data["compiles"][0]["stage_times_s"]["capture"] = math.nan  # our own writer writes NaN
    data["compiles"][0]["metrics"] = {"anything": [1, {"goes": None}]}  # dict[str, Any]
    data["future_key"] = {"a": 1}  # unknown keys: ignored (forward compatible)
    data["compiles"][0]["stages"]["capture"]["future"] = 1
    r = compiler.load(_save(tmp_path, data))
    assert r.compiles[0].compile_time_s == 3 and r.compiles[0].metrics["anything"][1] == {"goes": None}
    assert not hasattr(r, "future_key")


def test_a_report_is_frozen_but_for_its_benchmarks():
    r = compiler.Report("2.13.0", "cpu")
    with pytest.raises(
        dataclasses.FrozenInstanceError, match="cannot assign to field 'device': it is frozen"
    ):
        r.device = "cuda"
    with pytest.raises(
        dataclasses.FrozenInstanceError, match="cannot delete field 'benchmarks': it is frozen"
    ):
        del r.benchmarks
    b = compiler.types.Benchmark("f", "cpu", "x86", "interleaved", 3)
    r.benchmarks = (*r.benchmarks, b)  # what compiler.benchmark(report) does
    assert r == compiler.Report("2.13.0", "cpu", benchmarks=(b,)) and r.device == "cpu"
    assert "OPEN" not in {f.name for f in dataclasses.fields(r)}  # not written to its file


def test_benchmark_records_are_checked(tmp_path):
    t = compiler.types.Timing(1.0, 0.9, 1.1, 0.8, 1.2, 5, (1.0, 0.9))
    b = compiler.types.Benchmark(
        "f", "cpu", "x86", "interleaved", 3, eager=t, compiled=t, stage_times_s={"capture": 0.1},
        kernels=(compiler.types.KernelTime("k", "cpp", 3, 1.0, 0.5, 1.0),),
    )  # fmt: skip
    data = _data()
    data["benchmarks"] = [compiler.Report("x", "cpu", benchmarks=(b,)).to_dict()["benchmarks"][0]]
    assert compiler.load(_save(tmp_path, data)).benchmarks == (b,)
    data["benchmarks"][0]["kernels"][0]["calls"] = "3"
    p = _save(tmp_path, data)
    assert _error(p) == f'{p}: $.benchmarks[0].kernels[0].calls: expected int, got "3"'


def test_files_that_are_not_reports(tmp_path):
    p = _save(tmp_path, {"schema_version": 99})
    assert _error(p) == f"{p}: report schema_version 99 is not supported (this reads [1, 2, 3, 4])"
    p = _save(tmp_path, [1, 2])
    assert _error(p) == f"{p}: not a PT2 Explorer report (no schema_version)"
    p = tmp_path / "cut.json"
    p.write_text(json.dumps(_data())[:1000])
    assert re.match(rf"{re.escape(str(p))}: not a report JSON file: Unterminated string|Expecting", _error(p))
    p = tmp_path / "latin1.json"
    p.write_bytes(b'{"schema_version": 1, "torch_version": "caf\xe9"}')
    assert _error(p) == f"{p}: not a report JSON file: byte 0xe9 at offset 43 is not UTF-8"
    p = tmp_path / "bad.json.gz"
    p.write_bytes(gzip.compress(json.dumps(_data()).encode())[:500])
    assert _error(p).startswith(f"{p}: corrupt gzip data: ")
    p = tmp_path / "deep.json"
    p.write_text("[" * 100_000 + "]" * 100_000)
    assert _error(p).startswith(f"{p}: not a report JSON file: ")
    assert _error(Path("/dev/zero")) == "/dev/zero: not a regular file (a device, FIFO or socket is not read)"


def test_from_dict_takes_subclasses_of_the_types():
    import torch

    data = _data()
    data["torch_version"] = torch.__version__  # a str subclass (TorchVersion), as recorded
    assert compiler.Report.from_dict(data).torch_version == torch.__version__
    data["frames"][0]["line"] = False  # still: a bool is no int
    with pytest.raises(
        compiler.ReportFormatError, match=re.escape("$.frames[0].line: expected int or null, got false")
    ):
        compiler.Report.from_dict(data)


def test_a_report_object_is_checked_as_its_json():
    """What load_trace checks: the objects it built, each node's fields among them (a node
    whose fields' types were seen to fit is not walked field by field)."""
    import dataclasses

    import torch

    from compiler.model import _schema

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = compiler.load_trace(TRACES / "cpu-torch213-breaks.log.gz")
    assert _schema.decode(compiler.Report, report) is report

    def with_node(**change):
        c = report.compiles[1]
        graph = c.stages.capture.graph
        nodes = (*graph.nodes[:2], dataclasses.replace(graph.nodes[2], **change), *graph.nodes[3:])
        capture = dataclasses.replace(c.stages.capture, graph=dataclasses.replace(graph, nodes=nodes))
        c = dataclasses.replace(c, stages=dataclasses.replace(c.stages, capture=capture))
        return dataclasses.replace(report, compiles=(report.compiles[0], c, *report.compiles[2:]))

    node = "$.compiles[1].stages.capture.graph.nodes[2]"
    for change, error in [
        ({"dtype": 5}, f"{node}.dtype: expected string or null, got 5"),
        ({"name": None}, f"{node}.name: expected string, got null"),
        ({"seq_nr": True}, f"{node}.seq_nr: expected int or null, got true"),
        ({"args": ("x", 3)}, f"{node}.args[1]: expected string, got 3"),
        ({"module": ["x"]}, f"{node}.module: expected string or null, got a list"),
    ]:
        with pytest.raises(_schema.SchemaError) as e:
            _schema.decode(compiler.Report, with_node(**change))
        assert str(e.value) == error
    bent = with_node(dtype=torch.__version__)  # a str subclass fits, as in JSON
    assert _schema.decode(compiler.Report, bent) is bent


def test_from_dict_names_the_path_without_a_file():
    data = _data()
    data["recompiles"][0]["reasons"] = "0/0: x"
    with pytest.raises(
        compiler.ReportFormatError, match=re.escape("$.recompiles[0].reasons: expected a list, got ")
    ):
        compiler.Report.from_dict(data)
    with pytest.raises(compiler.ReportFormatError, match="schema_version None is not supported"):
        compiler.Report.from_dict([])


def test_cli_report_of_a_bad_file(tmp_path, capsys):
    data = _data()
    data["compiles"][3]["stages"]["capture"]["guard_count"] = "x"
    p = _save(tmp_path, data)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    for argv, msg in [
        (["report", str(p)], f'{p}: $.compiles[3].stages.capture.guard_count: expected int or null, got "x"'),
        (
            ["report", str(tmp_path / "missing.json")],
            f"{tmp_path / 'missing.json'}: No such file or directory",
        ),
        (["report", str(tmp_path)], f"{tmp_path}: Is a directory"),
        (
            ["report", str(deep)],
            f"{deep}: not a report JSON file: maximum recursion depth exceeded while decoding a JSON array from a unicode string",
        ),
        (["report", "/dev/zero"], "/dev/zero: not a regular file (a device, FIFO or socket is not read)"),
    ]:
        assert cli.main(argv) == 2
        assert capsys.readouterr().err == f"pt2-explorer: error: {msg}\n"
