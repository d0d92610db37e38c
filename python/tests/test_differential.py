"""`Workspace.check` against `verdict check --format json`: for every capture of every
`samples/` workspace (every shape the samples hold), the verdict text is byte-identical to
the CLI's line for it, given the record's text and source. Records the CLI gives no verdict
(MCP messages other than tools/call, batch input requests) give `None`."""

import gzip
import json

import pytest

import verdict
from conftest import REPO, SAMPLES


def cli_verdicts(cli, ws_dir):
    """The verdict lines of `check --format json`, as printed (without the separator)."""
    out = cli("check", ws_dir, "--format", "json").stdout.decode()
    lines = out.split("\n")
    assert lines[0] == '{"verdicts": ['
    verdicts = []
    for line in lines[1:]:
        if not line.startswith("  {"):
            break
        verdicts.append(line[2:].removesuffix(","))
    return verdicts


def file_bytes(path):
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    assert not path.name.endswith(".zst"), "no .zst sample: add its decoder here"
    return data


def split_source(source):
    """(file, line) of a verdict's source; a part of a record of several captures
    (`FILE#N`, `FILE:LINE#N`) lies in its record's file and line."""
    source = source.partition("#")[0]
    file, _, line = source.rpartition(":")
    if file and line.isdigit() and ".json" in file:
        return file, int(line)
    return source, None


def records_of(ws_dir, files):
    """Every record of each file as `check` reads it: (source, bytes); a log's lines
    numbered from 1, blank lines skipped."""
    out = []
    for rel in files:
        data = file_bytes(ws_dir / rel)
        if not any(rel.endswith(e) or rel.endswith(e + ".gz") for e in (".jsonl", ".ndjson", ".jsonl.out")):
            out.append((rel, data))
            continue
        for n, line in enumerate(data.split(b"\n"), 1):
            line = line.rstrip(b"\r\n")
            if line.strip():
                out.append((f"{rel}:{n}", line))
    return out


@pytest.mark.parametrize("ws_dir", SAMPLES, ids=[p.name for p in SAMPLES])
def test_check_is_byte_identical_to_the_cli(cli, ws_dir):
    expected = cli_verdicts(cli, ws_dir)
    assert expected, "the sample has captures"
    by_source = {json.loads(v)["source"]: v for v in expected}
    assert len(by_source) == len(expected)
    ws = verdict.Workspace(ws_dir)
    files = sorted({split_source(s)[0] for s in by_source})
    records = records_of(ws_dir, files)
    got = {}
    for source, data in records:
        # every capture of the record: one, or one per part (`SOURCE#N`)
        for text in ws.check_all_json(data, source=source):
            got[json.loads(text)["source"]] = text
        first = ws.check_json(data, source=source)
        if first is None:
            assert ws.check_all_json(data, source=source) == []
    # every capture the CLI reports, and nothing else, with the same text byte for byte
    assert sorted(got) == sorted(by_source)
    for source, text in got.items():
        assert text == by_source[source], source
    # a part named by its source is the verdict of that part
    data_of = dict(records)
    for source in by_source:
        if "#" in source:
            base = source.partition("#")[0]
            assert ws.check_json(data_of[base], source=source) == by_source[source], source
    # the dict is the parsed text; check_many gives the same texts, in order
    assert [ws.check(d, source=s) for s, d in records[:5]] == [
        None if t is None else json.loads(t)
        for t in (ws.check_json(d, source=s) for s, d in records[:5])
    ]
    many = ws.check_many_json([d for _, d in records], [s for s, _ in records])
    assert [t for t in many if t is not None] == [
        t for t in (ws.check_json(d, source=s) for s, d in records) if t is not None
    ]
    # check_many's Verdicts build their dicts from the verdicts (no text in between): each
    # is json.loads of the CLI's line, and json.dumps gives the same text for both (the same
    # keys in the same order, the same types: 1 is not 1.0, nor True); v.json() is the
    # CLI's line itself; the attributes are the dict's values
    dicts = ws.check_many([d for _, d in records], [s for s, _ in records])
    assert [d is None for d in dicts] == [t is None for t in many]
    got = {d["source"]: d for d in dicts if d is not None}
    assert sorted(got) == sorted({json.loads(t)["source"] for t in many if t is not None})
    for d, t in zip(dicts, many):
        if d is not None:
            assert isinstance(d, verdict.Verdict)
            assert d == json.loads(t), d["source"]
            assert d.json() == t == by_source[d["source"]], d["source"]
            plain = d.to_dict()
            assert type(plain) is dict
            assert json.dumps(plain, ensure_ascii=False) == json.dumps(json.loads(t), ensure_ascii=False)
            assert plain == json.loads(by_source[d["source"]]), d["source"]
            for name in ("id", "source", "contract", "format", "stage", "decision", "reason"):
                assert getattr(d, name) == plain.get(name), (d["source"], name)


def test_the_samples_cover_every_shape(cli):
    """The differential test above runs on every record shape the samples hold."""
    formats = set()
    for ws_dir in SAMPLES:
        formats |= {json.loads(v).get("format") for v in cli_verdicts(cli, ws_dir)}
    assert {"capture", "response", "openai-batch", "anthropic-batch", "gemini-batch",
            "bedrock-batch", "bedrock-converse", "ollama", "cohere",
            "mcp", "otlp", "openinference", "litellm", "langfuse", "langsmith"} <= formats, formats


def test_a_shared_id_carries_the_warning_the_cli_gives(cli):
    """samples/chains retries a batch with the same custom_ids: check marks DUPLICATE_ID,
    and so does Workspace.check for the record at the same source."""
    ws_dir = [p for p in SAMPLES if p.name == "chains"][0]
    dup = [v for v in cli_verdicts(cli, ws_dir) if "DUPLICATE_ID" in v]
    assert dup
    first = json.loads(dup[0])
    (source, data), = [r for r in records_of(ws_dir, [split_source(first["source"])[0]]) if r[0] == first["source"]]
    v = verdict.Workspace(ws_dir).check(data, source=source)
    assert [w["code"] for w in v["warnings"]] == [w["code"] for w in first["warnings"]]
    assert "DUPLICATE_ID" in [w["code"] for w in v["warnings"]]


def test_check_many_gives_check_many_jsons_verdicts():
    ws = verdict.Workspace(REPO / "samples" / "refund")
    records = ['{"id": "a", "output": "{}"}', '{"jsonrpc": "2.0", "method": "ping", "id": 1}',
               {"id": "b", "output": '{"order_id": 1}'}]
    got = ws.check_many(records)
    with pytest.raises(TypeError):
        ws.check_many([5])
    texts = ws.check_many_json(records)
    assert texts[1] is None
    assert got == [None if t is None else json.loads(t) for t in texts]
    assert [v["id"] for v in got if v] == ["a", "b"]
