"""The report's file form (schema_version 4, compiler/model/_compact.py): each text once, kernel
sources as pieces of their output code, repeated graphs once, a graph's nodes as what its code
does not hold, defaults left out, gzipped where the path ends in .gz; reports of schema_version
1, 2 and 3 still load to the same answers."""

from __future__ import annotations

import dataclasses
import gzip
import json
import warnings
from pathlib import Path

import pytest

import compiler
from explorer import cli

FIXTURES = Path(__file__).parent / "fixtures"
CPU_BREAKS = FIXTURES / "traces" / "cpu-torch213-breaks.log.gz"
V1_REPORT = FIXTURES / "reports" / "h100-torch211-gpu-block.json.gz"


@pytest.fixture(scope="module")
def report() -> compiler.Report:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compiler.load_trace(CPU_BREAKS)


def test_round_trip_plain_and_gzipped(report, tmp_path):
    plain, packed = tmp_path / "r.json", tmp_path / "r.json.gz"
    text = report.to_json(plain)
    report.to_json(packed)
    assert plain.read_text(encoding="utf-8") == text
    assert packed.read_bytes()[:2] == b"\x1f\x8b"
    assert gzip.decompress(packed.read_bytes()).decode("utf-8") == text
    assert compiler.load(plain) == report
    assert compiler.load(packed) == report
    # the CLI takes .json.gz wherever it takes a report path
    out = tmp_path / "cli.json.gz"
    assert cli.main(["load", str(CPU_BREAKS), "--json", str(out), "-q"]) == 0
    assert compiler.load(out) == report
    assert cli.main(["report", str(out), "--html", str(tmp_path / "r.html")]) == 0


def test_each_text_once(report):
    data = json.loads(report.to_json())
    strings, texts = data["strings"], data["texts"]
    assert len(strings) == len(set(strings))
    assert len(texts) == len({tuple(t) for t in texts})
    assert data["schema_version"] == compiler.types.SCHEMA_VERSION == 4

    def text(ref):
        return "".join(strings[j] for j in texts[ref["$t"]])

    # a kernel's source is stored as pieces (lines) that its compile's output code has too
    pieces = {
        c.id: {
            p
            for ref in data["compiles"][i]["stages"]["codegen"]["output_code"]
            for p in texts[ref["code"]["$t"]]
        }
        for i, c in enumerate(report.compiles)
    }
    for k, stored in zip(report.kernels, data["kernels"]):
        assert text(stored["source"]) == k.source
        own = [p for p in texts[stored["source"]["$t"]] if p not in pieces[k.compile_id]]
        assert len(own) <= 2, [strings[p] for p in own]  # at most its first and last line differ
        assert "role" not in stored or stored["role"] != "forward"  # defaults left out
    # the guard tree of a recompile's failed entry is that entry's own guard tree: one text
    r = report.recompiles[0]
    i = next(i for i, c in enumerate(report.compiles) if c.id == r.failed_entry)
    stored = data["compiles"][i]["stages"]["capture"]["guards"]
    assert text(stored) == report.compiles[i].stages.capture.guards == r.entry_guards
    assert data["recompiles"][0]["entry_guards"] == stored
    full = json.dumps(report.to_dict(), separators=(",", ":"), ensure_ascii=False)
    assert len(report.to_json()) < len(full)


def test_a_long_text_is_cut_after_each_newline_and_each_comma_space():
    from compiler.model._pieces import pieces

    assert pieces("a, b\nc, \n, d") == ["a, ", "b\n", "c, ", "\n", ", ", "d"]
    assert pieces("x\x00, y\n") == ["x\x00, ", "y\n"]  # the mark the cuts use, in the text itself
    assert pieces("\n\n") == ["\n", "\n"] and pieces("") == []


def test_schema_version_1_loads_to_the_same_answers(tmp_path):
    raw = json.loads(gzip.decompress(V1_REPORT.read_bytes()))
    assert raw["schema_version"] == 1 and "strings" not in raw
    old = compiler.load(V1_REPORT)
    assert old.schema_version == compiler.types.SCHEMA_VERSION
    # the answers, read from the version-1 JSON directly
    assert [c.id for c in old.compiles] == [c["id"] for c in raw["compiles"]]
    assert [(k.compile_id, k.name, k.language, k.source) for k in old.kernels] == [
        (k["compile_id"], k["name"], k["language"], k["source"]) for k in raw["kernels"]
    ]
    assert [(b.type, b.filename, b.line, b.count) for b in old.graph_breaks] == [
        (b["type"], b["filename"], b["line"], b["count"]) for b in raw["graph_breaks"]
    ]
    assert [r.reasons for r in old.recompiles] == [tuple(r["reasons"]) for r in raw["recompiles"]]
    assert old.compiles[0].stages.capture.guards == raw["compiles"][0]["stages"]["capture"]["guards"]
    # saved again in the file form: equal, and smaller than the version-1 file (both gzipped)
    again = tmp_path / "again.json.gz"
    old.to_json(again)
    assert compiler.load(again) == old
    assert again.stat().st_size < V1_REPORT.stat().st_size


def test_a_reference_outside_its_table_is_named(report, tmp_path):
    data = json.loads(report.to_json())
    data["frames"][0]["filename"] = {"$s": len(data["strings"])}
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data))
    with pytest.raises(compiler.ReportFormatError) as e:
        compiler.load(p)
    assert (
        str(e.value)
        == f"{p}: $.frames[0].filename: string reference {len(data['strings'])} outside the {len(data['strings'])} strings"
    )
    data = json.loads(report.to_json())
    data["compiles"][0]["stages"]["capture"]["guards"] = {"$t": 9999}
    p.write_text(json.dumps(data))
    with pytest.raises(compiler.ReportFormatError) as e:
        compiler.load(p)
    assert (
        str(e.value)
        == f"{p}: $.compiles[0].stages.capture.guards: text reference 9999 outside the {len(data['texts'])} texts"
    )
    data["frames"][0]["filename"] = {"$g": 99}
    p.write_text(json.dumps(data))
    with pytest.raises(compiler.ReportFormatError) as e:
        compiler.load(p)
    assert (
        str(e.value)
        == f"{p}: $.frames[0].filename: graph reference 99 outside the {len(data['graphs'])} graphs"
    )


def test_a_graphs_nodes_are_what_its_code_does_not_hold(report, tmp_path, monkeypatch):
    data = json.loads(report.to_json())
    stages = data["compiles"][0]["stages"]
    joint = report.compiles[0].stages.autograd.joint
    # the nodes torch's code holds are parsed again when read: only what differs is stored
    assert stages["capture"]["graph"]["nodes"] == {"$c": {"fields": [], "rows": []}}
    table = stages["autograd"]["joint"]["nodes"]["$c"]
    assert table["fields"] == ["backward"]  # the side of each joint node, from torch's seq_nr
    backward = [i for i, n in enumerate(joint.nodes) if n.backward]
    assert backward == [2, 11, 12, 13] and len(joint.nodes) == 15
    assert table["rows"] == [
        [True] if i in backward else [] for i in range(14)
    ]  # rows after the last left out
    loaded = compiler.load(_written(tmp_path / "r.json", data))
    assert loaded == report
    # the graphs a log's report was built from kept what their file form stores (worked out
    # where each was parsed): writing it parses no code again, and writes what parsing would
    from compiler.model import _compact

    parse, parsed = _compact.node_parser, []
    monkeypatch.setattr(_compact, "node_parser", lambda code: parsed.append(code) or parse(code))
    written = report.to_json()
    assert json.loads(written) == data
    assert parsed == []
    assert loaded.to_json() == written  # a loaded report's graphs: their code parsed again
    assert len(parsed) == len(list(_found(data, "$c"))) == 28  # each graph once
    monkeypatch.undo()
    # nodes that are not their code's (renamed here) are stored whole, as rows of every field
    renamed = dataclasses.replace(
        joint, nodes=tuple(dataclasses.replace(n, name=n.name + "_") for n in joint.nodes)
    )
    other = dataclasses.replace(
        report.compiles[0],
        stages=dataclasses.replace(
            report.compiles[0].stages,
            autograd=dataclasses.replace(report.compiles[0].stages.autograd, joint=renamed),
        ),
    )
    odd = dataclasses.replace(report, compiles=(other, *report.compiles[1:]))
    rows = json.loads(odd.to_json())["compiles"][0]["stages"]["autograd"]["joint"]["nodes"]["$n"]
    assert rows["fields"] == [f.name for f in dataclasses.fields(compiler.types.Node)]
    assert rows["rows"][0][:3] == ["primals_1_", "placeholder", "primals_1"]  # stops at its last value
    odd.to_json(tmp_path / "odd.json")
    assert compiler.load(tmp_path / "odd.json") == odd
    # more rows than the code has nodes, a field a node has not: named
    table["rows"] = [[]] * 16
    with pytest.raises(compiler.ReportFormatError) as e:
        compiler.load(_written(tmp_path / "bad.json", data))
    assert str(e.value) == (
        f'{tmp_path / "bad.json"}: $.compiles[0].stages.autograd.joint.nodes["$c"]["rows"]: 16 rows for '
        "the 15 nodes the graph's code holds"
    )
    table["rows"], table["fields"] = [], ["colour"]
    with pytest.raises(compiler.ReportFormatError) as e:
        compiler.load(_written(tmp_path / "bad.json", data))
    assert str(e.value) == (
        f'{tmp_path / "bad.json"}: $.compiles[0].stages.autograd.joint.nodes["$c"]["fields"]: '
        '"colour" is not a field of a node'
    )


@pytest.mark.parametrize("name", sorted(p.name for p in (FIXTURES / "traces").glob("*.log.gz")))
def test_what_a_graph_keeps_for_its_file_form_is_what_parsing_its_code_gives(name):
    """Each graph of a log's report keeps, where it was made, the node fields its file form
    stores (compared only where its maker may have set them); a copy, which keeps nothing,
    works them out by parsing its code again and comparing every field: the same."""
    from compiler.model import _compact

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graphs = list(_found_graphs(compiler.load_trace(FIXTURES / "traces" / name)))
    assert graphs
    for g in graphs:
        assert _compact.kept_file_fields(g) == _compact._derived_fields(dataclasses.replace(g))


def test_schema_version_3_and_2_nodes_load_to_the_same_report(report, tmp_path, monkeypatch):
    from compiler.model import _compact

    monkeypatch.setattr(_compact, "node_parser", None)  # what schema 3 wrote: every node whole
    v3 = json.loads(report.to_json())
    monkeypatch.undo()
    v3["schema_version"] = 3
    assert compiler.load(_written(tmp_path / "v3.json", v3)) == report
    # schema_version 2: nodes as objects
    v2 = json.loads(json.dumps(v3))
    v2["schema_version"] = 2
    for c in v2["compiles"]:
        g = c["stages"]["capture"].get("graph")
        if g and "nodes" in g:
            t = g["nodes"]["$n"]
            g["nodes"] = [dict(zip(t["fields"], row)) for row in t["rows"]]
    assert compiler.load(_written(tmp_path / "v2.json", v2)).compiles == report.compiles
    table = v3["compiles"][0]["stages"]["capture"]["graph"]["nodes"]["$n"]
    table["rows"][1] = [*table["rows"][1], *[None] * len(table["fields"])]
    with pytest.raises(compiler.ReportFormatError) as e:
        compiler.load(_written(tmp_path / "v3.json", v3))
    assert str(e.value) == (
        f'{tmp_path / "v3.json"}: $.compiles[0].stages.capture.graph.nodes["$n"]["rows"][1]: expected a list '
        f"of at most {len(table['fields'])} values, got a list"
    )


def _written(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_a_dict_with_a_reference_key_of_its_own_round_trips(report, tmp_path):
    import dataclasses

    from compiler.model._report import RawEvent

    odd = RawEvent(compile_id="0/0", name="x", metadata={"$s": 0, "$d": {"$g": 1}}, payload="p")
    r = dataclasses.replace(report, unknown_events=(odd,))
    r.to_json(tmp_path / "odd.json")
    assert compiler.load(tmp_path / "odd.json").unknown_events == (odd,)


def _found(data, key: str):
    """The values of ``key`` in every dict of a JSON value."""
    todo = [data]
    while todo:
        v = todo.pop()
        if isinstance(v, dict):
            if key in v:
                yield v[key]
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)


def _found_graphs(report):
    """Every graph object in a report."""
    todo = [report]
    while todo:
        v = todo.pop()
        if type(v) is compiler.types.Graph:
            yield v
        elif isinstance(v, (list, tuple)):
            todo.extend(v)
        elif isinstance(v, dict):
            todo.extend(v.values())
        elif dataclasses.is_dataclass(v):
            todo.extend(getattr(v, f.name) for f in dataclasses.fields(v))
