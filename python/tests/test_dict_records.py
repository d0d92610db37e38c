"""Records handed over as dicts (docs/python.md#dict-records): written as compact JSON text in
the native module (no json.dumps), the text `max_capture_bytes` counts; what json.dumps
refuses is refused with json.dumps' own exception and message; a NaN is the CLI's
INVALID_CAPTURE for the text json.dumps would write."""

import collections
import json
import shutil

import pytest

import verdict
from conftest import REPO, SAMPLES
from test_differential import cli_verdicts, records_of, split_source


@pytest.fixture()
def refund(tmp_path):
    ws = tmp_path / "refund"
    shutil.copytree(REPO / "samples" / "refund", ws)
    return ws


def test_a_dicts_text_is_its_compact_json():
    rec = {"id": "é-1", "n": [1, -2, 1.5, 1e16, 10**20, None, True, False], "t": ("a", "\"\\\n\x01"),
           7: "int key", 2.5: "float key", False: "bool key", None: "none key",
           "nested": {"k": [], "o": {}}}
    text = verdict.record_text(rec)
    assert text == (
        '{"id":"é-1","n":[1,-2,1.5,1e+16,100000000000000000000,null,true,false],'
        '"t":["a","\\"\\\\\\n\\u0001"],"7":"int key","2.5":"float key","false":"bool key",'
        '"null":"none key","nested":{"k":[],"o":{}}}'
    )
    # the same value as json.dumps' text, read back
    assert json.loads(text) == json.loads(json.dumps(rec, ensure_ascii=False))
    # str and bytes as they are
    assert verdict.record_text('{"a": 1}') == '{"a": 1}'
    assert verdict.record_text(b'{"a": 1}') == b'{"a": 1}'


def test_subclasses_are_written_as_json_dumps_writes_them():
    import enum

    class Level(enum.IntEnum):
        HIGH = 3

    od = collections.OrderedDict([("b", 1), ("a", 2)])
    od.move_to_end("b")
    rec = {"od": od, "level": Level.HIGH, "s": type("S", (str,), {})("x"), "l": type("L", (list,), {})([1])}
    assert verdict.record_text(rec) == '{"od":{"a":2,"b":1},"level":3,"s":"x","l":[1]}'
    assert json.loads(verdict.record_text(rec)) == json.loads(json.dumps(rec))


def test_max_capture_bytes_counts_the_compact_text(refund):
    limit = 300
    (refund / "verdict.toml").write_text(
        (refund / "verdict.toml").read_text() + f"max_capture_bytes = {limit}\n"
    )
    ws = verdict.Workspace(refund)
    assert ws.max_capture_bytes == limit

    def record(size):
        rec = {"id": "big", "output": "", "meta": {"note": "é"}}
        base = len(verdict.record_text(rec).encode())
        rec["output"] = "x" * (size - base)
        assert len(verdict.record_text(rec).encode()) == size
        # json.dumps' text is longer: its spaces are not counted
        assert len(json.dumps(rec, ensure_ascii=False).encode()) > size
        return rec

    at = record(limit)
    over = record(limit + 1)
    for check in (ws.check, lambda r: ws.check_many([r])[0], lambda r: json.loads(ws.check_json(r))):
        v = check(at)
        assert (v["stage"], v["reason"]) == ("parse", "INVALID_JSON"), v
        v = check(over)
        assert (v["stage"], v["decision"], v["reason"]) == ("input", "reject", "INVALID_CAPTURE")
        assert v["errors"][0]["message"] == (
            f"capture record is {limit + 1} bytes, over max_capture_bytes ({limit}); not parsed"
        )
    assert ws.check_many_json([at, over]) == [ws.check_json(verdict.record_text(r)) for r in (at, over)]


def json_error(value):
    """The exception json.dumps raises for `value`."""
    with pytest.raises(Exception) as e:
        json.dumps({"id": "x", "output": "{}", "meta": value}, ensure_ascii=False)
    return e.value


def cyclic_list():
    a = []
    a.append(a)
    return a


def cyclic_dict():
    d = {}
    d["self"] = d
    return d


def deep(n):
    v = {}
    for _ in range(n):
        v = {"a": v}
    return v


@pytest.mark.parametrize(
    "value, kind, message",
    [
        ({1, 2}, TypeError, "Object of type set is not JSON serializable"),
        (b"raw", TypeError, "Object of type bytes is not JSON serializable"),
        (object(), TypeError, "Object of type object is not JSON serializable"),
        ({(1, 2): "x"}, TypeError, "keys must be str, int, float, bool or None, not tuple"),
        (cyclic_list(), ValueError, "Circular reference detected"),
        (cyclic_dict(), ValueError, "Circular reference detected"),
        (deep(100_000), RecursionError, "maximum recursion depth exceeded while encoding a JSON object"),
    ],
    ids=["set", "bytes", "object", "tuple-key", "cyclic-list", "cyclic-dict", "deep"],
)
def test_what_json_dumps_refuses_is_its_exception(value, kind, message):
    ws = verdict.Workspace(REPO / "samples" / "refund")
    expected = json_error(value)
    assert type(expected) is kind and str(expected) == message
    rec = {"id": "x", "output": "{}", "meta": value}
    for call in (verdict.record_text, ws.check, ws.check_json, lambda r: ws.check_many([r]),
                 lambda r: ws.check_many_json(['{"output": "{}"}', r]), ws._native.check_json):
        with pytest.raises(kind) as e:
            call(rec)
        assert str(e.value) == message


def test_a_str_with_a_lone_surrogate_is_an_encode_error():
    ws = verdict.Workspace(REPO / "samples" / "refund")
    for rec in ({"output": "\ud800"}, {"\udc00": "x", "output": "{}"}):
        with pytest.raises(UnicodeEncodeError):
            ws.check(rec)
        with pytest.raises(UnicodeEncodeError):
            ws.check_many([rec])


@pytest.mark.parametrize("value, text", [(float("nan"), "NaN"), (float("inf"), "Infinity"),
                                         (float("-inf"), "-Infinity")])
def test_a_non_finite_float_is_the_verdict_of_the_text_json_dumps_writes(value, text):
    ws = verdict.Workspace(REPO / "samples" / "refund")
    rec = {"id": "nan", "output": "{}", "meta": {"x": value}}
    assert verdict.record_text(rec) == '{"id":"nan","output":"{}","meta":{"x":%s}}' % text
    v = ws.check(rec)
    assert (v["stage"], v["decision"], v["reason"]) == ("input", "reject", "INVALID_CAPTURE")
    assert v == ws.check(verdict.record_text(rec))
    assert ws.check_many([rec]) == [v]


def test_nesting_the_library_refuses_is_its_verdict(cli, refund):
    # 200 levels: written (json.dumps writes it too), then INVALID_CAPTURE as in a file
    rec = {"id": "deep", "output": "{}", "meta": deep(200)}
    (refund / "captures" / "deep.json").write_text(verdict.record_text(rec))
    line = cli("check", refund / "captures" / "deep.json", "--format", "json").stdout.decode()
    expected = json.loads(line.split("\n")[1][2:])
    assert expected["reason"] == "INVALID_CAPTURE"
    assert "nesting is too deep" in expected["errors"][0]["message"]
    ws = verdict.Workspace(refund)
    assert ws.check(rec, source="captures/deep.json") == expected
    assert ws.check_many([rec], ["captures/deep.json"]) == [expected]


def test_a_record_that_is_no_dict_is_a_type_error():
    ws = verdict.Workspace(REPO / "samples" / "refund")
    import types

    for rec in (types.MappingProxyType({"output": "{}"}), [{"output": "{}"}]):
        with pytest.raises(TypeError, match=r"^a record is a dict, a JSON str or bytes, not "):
            ws.check(rec)
        with pytest.raises(TypeError, match=r"^a record is a dict, a JSON str or bytes, not "):
            ws.check_many([rec])


@pytest.mark.parametrize("ws_dir", SAMPLES, ids=[p.name for p in SAMPLES])
def test_dict_records_get_the_clis_verdicts(cli, ws_dir):
    """Every JSON-object record of every sample, handed over as its dict (json.loads of its
    text): the CLI's verdict, as check and as check_many."""
    expected = {json.loads(v)["source"]: json.loads(v) for v in cli_verdicts(cli, ws_dir)}
    ws = verdict.Workspace(ws_dir)
    files = sorted({split_source(s)[0] for s in expected})
    dicts = []
    for source, data in records_of(ws_dir, files):
        try:
            rec = json.loads(data)
        except ValueError:
            continue
        if isinstance(rec, dict):
            dicts.append((source, rec))
    assert dicts
    many = ws.check_many([d for _, d in dicts], [s for s, _ in dicts])
    n = 0
    for (source, rec), v in zip(dicts, many):
        assert v == ws.check(rec, source=source)
        if v is None:
            continue
        assert v == expected[v["source"]], v["source"]
        n += 1
    assert n


def test_check_many_shares_the_strings_that_repeat():
    # python/src/topy.rs: names and short values one str for the process; ids and sources not
    ws = verdict.Workspace(REPO / "samples" / "refund")
    a, b = ws.check_many(['{"id": "a", "output": "{}"}', '{"id": "b", "output": "{}"}'])
    assert a == json.loads(ws.check_json('{"id": "a", "output": "{}"}'))
    assert (a["id"], b["id"]) == ("a", "b")
    for key in ("contract", "stage", "decision", "reason", "next_action"):
        assert a[key] is b[key], key
        assert next(k for k in a if k == key) is next(k for k in b if k == key), key
    assert a["errors"][0]["message"] is b["errors"][0]["message"]
    assert a.to_dict()["next_action"] is b["next_action"]
    c, d = ws.check_many(['{"id": "same", "output": "{}"}'] * 2, ["x.json", "x.json"])
    assert c == d and c["source"] == "x.json" and c["source"] is not d["source"]


def test_a_verdict_is_a_read_only_mapping_equal_to_checks_dict():
    """verdict.Verdict (python/src/lazy.rs): what check_many gives per capture."""
    import collections.abc
    import copy
    import pickle

    ws = verdict.Workspace(REPO / "samples" / "refund")
    rec = '{"id": "m", "output": "{\\"order_id\\": 1}"}'
    v, = ws.check_many([rec])
    d = ws.check(rec)
    assert isinstance(v, collections.abc.Mapping) and not isinstance(v, dict)
    # equal both ways, and to a Verdict of the same record; not to other types
    assert v == d and d == v and not (v != d)
    assert v == ws.check_many([rec])[0]
    assert v != {**d, "id": "other"} and {**d, "id": "other"} != v
    assert v != [d] and v != "m" and v != None  # noqa: E711
    # the mapping: keys in the CLI's order, values, items, get, in, len, dict()
    assert list(v) == list(d) == list(v.keys())
    assert list(v.values()) == list(d.values())
    assert list(v.items()) == list(d.items())
    assert len(v) == len(d) == 13
    assert dict(v) == d
    assert "stage" in v and "nope" not in v
    assert v.get("nope") is None and v.get("nope", 7) == 7 and v.get("id") == "m"
    with pytest.raises(KeyError) as e:
        v["nope"]
    assert e.value.args == ("nope",)
    # exact values: attributes without the dict, and the dict's
    assert (v.id, v.source, v.contract, v.format) == ("m", "<python>", "refund-v1", "capture")
    assert (v.stage, v.decision, v.reason) == ("schema", "regenerate", "SCHEMA_MISMATCH")
    assert (v["stage"], v["decision"], v["reason"]) == ("schema", "regenerate", "SCHEMA_MISMATCH")
    assert v["errors"][0]["pointer"] == d["errors"][0]["pointer"]
    # read-only; to_dict is a fresh plain dict the caller may change
    with pytest.raises(TypeError):
        v["id"] = "x"
    with pytest.raises(TypeError):
        hash(v)
    plain = v.to_dict()
    plain["errors"].clear()
    assert v["errors"] == d["errors"] != [] and v.to_dict() == d
    # the CLI's text, a repr that shows the dict, pickled and copied as the plain dict
    assert v.json() == ws.check_json(rec)
    assert repr(v) == f"verdict.Verdict({d!r})"
    assert pickle.loads(pickle.dumps(v)) == d and type(copy.copy(v)) is dict
    # feedback takes it as it takes a dict: a verdict equal to one check gave is found, a
    # check_many verdict alone is not remembered (its record is not kept)
    assert ws.feedback(v) == ws.feedback(d) == ws.feedback(record=rec)
    fresh = verdict.Workspace(REPO / "samples" / "refund")
    w, = fresh.check_many([rec])
    with pytest.raises(ValueError, match="not one of the last"):
        fresh.feedback(w)
    assert "SCHEMA_MISMATCH" in fresh.feedback(record=rec)


def test_feedback_finds_each_of_the_last_verdicts_even_of_one_id():
    """Workspace.feedback looks a verdict up by its id and source, then compares it whole:
    two checks of one id with other outputs are both found, a changed copy is not."""
    ws = verdict.Workspace(REPO / "samples" / "refund")
    bad = ws.check('{"id": "same", "output": "{\\"order_id\\": 1}"}')
    worse = ws.check('{"id": "same", "output": "{"}')
    assert (bad["reason"], worse["reason"]) == ("SCHEMA_MISMATCH", "TRUNCATED_JSON")
    assert "SCHEMA_MISMATCH" in ws.feedback(bad) and "TRUNCATED_JSON" in ws.feedback(worse)
    assert ws.feedback(dict(bad)) == ws.feedback(bad)
    bad["reason"] = "CHANGED"  # the workspace kept its own copy
    with pytest.raises(ValueError, match="not one of the last"):
        ws.feedback(bad)
    for i in range(verdict.FEEDBACK_MEMORY):
        ws.check(f'{{"id": "n{i}", "output": "{{}}"}}')
    with pytest.raises(ValueError, match="not one of the last"):
        ws.feedback(worse)
