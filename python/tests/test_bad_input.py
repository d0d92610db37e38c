"""Bad input from Python: exceptions or the verdicts the CLI gives for the same bytes, never
a crash of the interpreter."""

import json
import shutil

import pytest

import verdict
from conftest import REPO


@pytest.fixture()
def refund(tmp_path):
    ws = tmp_path / "refund"
    shutil.copytree(REPO / "samples" / "refund", ws)
    return ws


def cli_line(cli, ws, rel):
    """The CLI's verdict text for the one capture file `rel` of `ws`."""
    out = cli("check", ws / rel, "--format", "json").stdout.decode().split("\n")
    assert out[0] == '{"verdicts": ['
    assert not out[2].startswith("  {"), "one verdict"
    return out[1][2:]


@pytest.mark.parametrize("record", [5, 1.5, None, [1, 2], ("a",), object()])
def test_a_record_of_another_type_is_a_type_error(record):
    ws = verdict.Workspace(REPO / "samples" / "refund")
    with pytest.raises(TypeError, match=r"^a record is a dict, a JSON str or bytes, not "):
        ws.check(record)
    with pytest.raises(TypeError, match=r"^a record is a dict, a JSON str or bytes, not "):
        ws.check_many(['{"output": "{}"}', record])
    with pytest.raises(TypeError, match=r"^a record is a dict, a JSON str or bytes, not "):
        ws._native.check_json(record)


def test_invalid_utf8_bytes_get_the_clis_verdict(cli, refund):
    data = b'{"id": "bad-\xff", "output": "{}"}'
    (refund / "captures" / "bad.json").write_bytes(data)
    expected = cli_line(cli, refund, "captures/bad.json")
    ws = verdict.Workspace(refund)
    got = ws.check_json(data, source="captures/bad.json")
    assert got == expected
    v = json.loads(got)
    assert (v["stage"], v["decision"], v["reason"]) == ("input", "reject", "INVALID_CAPTURE")
    assert v["errors"][0]["message"] == "record is not valid UTF-8 (invalid byte at offset 12)"


def test_a_str_that_is_not_unicode_text_is_an_encode_error():
    ws = verdict.Workspace(REPO / "samples" / "refund")
    with pytest.raises(UnicodeEncodeError):
        ws.check('{"output": "\ud800"}')


def test_a_missing_workspace_is_the_clis_exit_2_message(cli, tmp_path):
    missing = tmp_path / "nope"
    p = cli("check", missing, check_rc=(2,))
    with pytest.raises(verdict.WorkspaceError) as e:
        verdict.Workspace(missing)
    assert str(e.value) == f"{missing}: no such file or folder"
    assert p.stderr.decode() == f"verdict: {e.value}\n"


def test_a_broken_config_is_the_clis_exit_2_message(cli, refund):
    (refund / "verdict.toml").write_text('schemas = "schemas"\ncapture = ["x"]\n')
    p = cli("check", refund, check_rc=(2,))
    with pytest.raises(verdict.WorkspaceError) as e:
        verdict.Workspace(refund)
    assert "verdict.toml" in str(e.value)
    assert p.stderr.decode() == f"verdict: {e.value}\n"


def test_a_record_of_100_mb_is_the_clis_invalid_capture(cli, refund):
    data = b'{"id": "huge", "output": "' + b"x" * (100 << 20) + b'"}'
    (refund / "captures" / "huge.json").write_bytes(data)
    expected = cli_line(cli, refund, "captures/huge.json")
    ws = verdict.Workspace(refund)
    got = ws.check_json(data, source="captures/huge.json")
    assert got == expected
    v = json.loads(got)
    assert (v["stage"], v["decision"], v["reason"]) == ("input", "reject", "INVALID_CAPTURE")
    assert v["errors"][0]["message"] == (
        f"capture record is {len(data)} bytes, over max_capture_bytes (16777216); not parsed"
    )
    # as a str and among many, the same
    assert ws.check_json(data.decode(), source="captures/huge.json") == expected
    assert ws.check_many_json([data, b'{"output": "{}"}'], ["captures/huge.json", None])[0] == expected


def test_a_dict_with_a_non_finite_number_is_the_verdict_of_its_compact_text():
    # written NaN as json.dumps writes it, in the compact text (docs/python.md#dict-records)
    ws = verdict.Workspace(REPO / "samples" / "refund")
    v = ws.check({"id": "nan", "output": "{}", "meta": {"x": float("nan")}})
    assert (v["stage"], v["reason"]) == ("input", "INVALID_CAPTURE")
    assert v["errors"][0]["message"] == (
        'record is not valid JSON at 1:39: non-standard number "NaN": JSON has no NaN or '
        "Infinity, expected a finite number"
    )
    assert v == ws.check('{"id":"nan","output":"{}","meta":{"x":NaN}}')


def test_feedback_of_a_verdict_it_never_gave_is_a_value_error():
    ws = verdict.Workspace(REPO / "samples" / "refund")
    with pytest.raises(ValueError, match="is not one of the last 1024"):
        ws.feedback({"id": "x"})
    v = ws.check_output('{"order_id": 1}', id="fb")
    assert v["decision"] == "regenerate"
    assert ws.feedback(v) == ws.feedback(record=verdict.output_record('{"order_id": 1}', id="fb"))
    assert ws.feedback(v).startswith("Your previous output does not meet the required JSON Schema (schema stage, SCHEMA_MISMATCH).")


def test_a_record_nested_100k_deep_is_the_clis_verdict_on_every_thread(cli, refund):
    # the record itself, and a proposal inside `output`: each 100,000 levels deep, checked on
    # the caller's thread (check_json) and on the pool's (check_many_json), whose stacks are
    # smaller: the CLI's verdicts (nesting is too deep), never a stack overflow
    d = 100_000
    record = b"[" * d + b"]" * d
    proposal = json.dumps({"id": "deep", "output": '{"a":' * d + "1" + "}" * d}).encode()
    (refund / "captures" / "deep-record.json").write_bytes(record)
    (refund / "captures" / "deep-output.json").write_bytes(proposal)
    ws = verdict.Workspace(refund)
    for data, rel, reason in (
        (record, "captures/deep-record.json", "INVALID_CAPTURE"),
        (proposal, "captures/deep-output.json", "TOO_DEEP"),
    ):
        expected = cli_line(cli, refund, rel)
        assert json.loads(expected)["reason"] == reason
        assert "nesting is too deep" in json.loads(expected)["errors"][0]["message"]
        assert ws.check_json(data, source=rel) == expected
        assert ws.check_many_json([data] * 4, [rel] * 4) == [expected] * 4


def test_invalid_utf8_bytes_among_many_get_the_clis_verdict(cli, refund):
    data = b'{"id": "bad-\xff", "output": "{}"}'
    (refund / "captures" / "bad.json").write_bytes(data)
    expected = cli_line(cli, refund, "captures/bad.json")
    ws = verdict.Workspace(refund)
    got = ws.check_many([b'{"id": "ok", "output": "{}"}', data], [None, "captures/bad.json"])
    assert got[1] == json.loads(expected)
    assert got[0]["id"] == "ok" and got[0]["reason"] == "SCHEMA_MISMATCH"
