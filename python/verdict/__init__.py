"""verdict in-process: the same core as the ``verdict`` CLI, for Python (docs/python.md).

``Workspace(path)`` opens a workspace as ``verdict check PATH`` does; ``ws.check(record)``
gives the verdict ``check --format json`` gives for that record, as a dict. Nothing here
judges anything: records go to the native module (the library crate) as JSON text (a dict
written as compact JSON there) and verdicts come back as the text ``check`` prints, or as
dicts built from the verdicts themselves, so Python and the CLI can never disagree.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Mapping as _MappingABC
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Union

from verdict._verdict import DEFAULT_SOURCE, Verdict, WorkspaceError
from verdict._verdict import Workspace as _Native
from verdict._verdict import record_json as _record_json

__all__ = ["Workspace", "Verdict", "WorkspaceError", "DEFAULT_SOURCE", "record_text"]

# a Verdict is a read-only mapping: isinstance(v, Mapping) holds, and Mapping's users take it
_MappingABC.register(Verdict)

Record = Union[Mapping[str, Any], str, bytes]

#: How many recent (verdict, record) pairs a Workspace keeps for ``feedback(verdict)``.
FEEDBACK_MEMORY = 1024


def record_text(record: Record) -> Union[str, bytes]:
    """A record as the text ``check`` reads: a dict as its compact JSON, written in the
    native module (no spaces, non-ASCII kept: the text ``max_capture_bytes`` counts), a
    str or bytes as it is. What ``json.dumps`` refuses is refused with its exception
    (``TypeError`` for a set, bytes or another type, or a key that is no str, int,
    float, bool or None; ``ValueError`` for a cycle; ``RecursionError`` for nesting too
    deep); a NaN or infinite float is written as ``json.dumps`` writes it, which is no JSON:
    the record's verdict is ``INVALID_CAPTURE``. Anything else is a ``TypeError``
    (docs/python.md#dict-records)."""
    return _record_json(record)




class Workspace:
    """A workspace opened as ``verdict check PATH`` opens it: its ``verdict.toml``, its
    contracts compiled once, and one read of its capture files (MCP facts, batch requests,
    shared ids). Raises ``WorkspaceError`` with the message ``check`` exits 2 with.

    Safe to share between threads; validation releases the GIL.
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"]):
        self._native = _Native(os.fspath(path))
        # (id, source, verdict, record text, source given) of the last checks, for feedback
        self._recent: "deque[tuple]" = deque(maxlen=FEEDBACK_MEMORY)

    @property
    def root(self) -> str:
        """The workspace folder (the one ``path`` belongs to)."""
        return os.fspath(self._native.root)

    @property
    def max_capture_bytes(self) -> int:
        """``max_capture_bytes``: a larger record is ``INVALID_CAPTURE``, never parsed."""
        return self._native.max_capture_bytes

    def _remember(self, verdict: dict, text: Union[str, bytes], source: Optional[str]) -> None:
        # a shallow copy (the caller may change the dict it was given), the oldest dropped
        self._recent.append((verdict["id"], verdict["source"], dict(verdict), text, source))

    def check_json(self, record: Record, source: Optional[str] = None) -> Optional[str]:
        """The verdict as the exact JSON text ``check --format json`` prints on its line,
        or ``None`` when the record is no capture (an MCP message other than a tools/call,
        a batch input request). ``source`` is where the record would lie in the workspace
        (``captures/a.json``, ``logs/x.jsonl:3``): the verdict's ``source``, its ``id`` when
        the record has none, what ``[[source]]`` and ``[[route]]`` globs match; default
        ``<python>``."""
        return self._native.check_json(record_text(record), source)

    def check(self, record: Record, source: Optional[str] = None) -> Optional[dict]:
        """The verdict of one record (a dict, or a JSON str or bytes of any shape ``check``
        reads) as a dict, equal to one verdict of ``check --format json``; ``None`` when
        the record is no capture. A record of several captures (an OTLP line of several
        LLM spans, a promptfoo results file) gives the part its ``source`` names
        (``SOURCE#N``), else its first: ``check_all`` gives them all. See ``check_json``
        for ``source``."""
        text = record_text(record)
        out = self._native.check(text, source)
        if out is None:
            return None
        verdict = out.to_dict()
        self._remember(verdict, text, source)
        return verdict

    def check_all_json(self, record: Record, source: Optional[str] = None) -> List[str]:
        """Every verdict text of one record, one per capture it holds, in the record's
        order: none for a record that is no capture, one for most records, one per part
        for a record of several captures (an OTLP line of several LLM spans, a promptfoo
        results file), each part's ``source`` ``SOURCE#N``."""
        return self._native.check_all_json(record_text(record), source)

    def check_all(self, record: Record, source: Optional[str] = None) -> List[dict]:
        """``check_all_json`` as dicts, each remembered for ``feedback``."""
        text = record_text(record)
        out = []
        for t in self._native.check_all_json(text, source):
            v = json.loads(t)
            self._remember(v, text, v.get("source", source))
            out.append(v)
        return out

    def check_many_json(
        self, records: Iterable[Record], sources: Optional[Sequence[Optional[str]]] = None
    ) -> List[Optional[str]]:
        """``check_json`` of many records, in order, validated in parallel on the
        library's thread pool with the GIL released."""
        recs = records if isinstance(records, list) else list(records)
        return self._native.check_many_json(recs, None if sources is None else list(sources))

    def check_many(
        self, records: Iterable[Record], sources: Optional[Sequence[Optional[str]]] = None
    ) -> List[Optional[Verdict]]:
        """``check`` of many records, in order, validated in parallel with the GIL
        released (``None`` for a record that is no capture).

        Each verdict is a ``Verdict``: one small object holding the library's verdict, a
        read-only mapping equal to the dict ``check`` gives (``v == ws.check(r)``,
        ``v["errors"]``, ``dict(v)``), whose dict is built the first time it is needed; its
        flat fields read as attributes without it (``v.decision``, ``v.stage``,
        ``v.reason``, ``v.id``, ``v.source``, ``v.contract``, ``v.format``);
        ``v.to_dict()`` is a plain dict and ``v.json()`` the exact text ``check --format
        json`` prints. Dict records are written as JSON text in the native module
        (``record_text``). See docs/python.md#verdict for why."""
        recs = records if isinstance(records, list) else list(records)
        srcs = None if sources is None else list(sources)
        return self._native.check_many(recs, srcs)

    def check_output(
        self,
        text: str,
        contract: Optional[str] = None,
        status: str = "completed",
        status_detail: Optional[str] = None,
        context: Optional[Mapping[str, Any]] = None,
        intent: Optional[Mapping[str, Any]] = None,
        *,
        id: Optional[str] = None,
        tool: Optional[str] = None,
        chain: Optional[str] = None,
        attempt: Optional[int] = None,
        meta: Optional[Mapping[str, Any]] = None,
        source: Optional[str] = None,
    ) -> dict:
        """The verdict of a model's raw output ``text``: ``check`` of the capture record
        ``{"output": text, "status": status, ...}`` (docs/capture-record.md) with the other
        keys given (``None`` leaves a key out). ``status`` is ``completed``, ``refusal``,
        ``incomplete`` or ``request_error``."""
        verdict = self.check(
            output_record(
                text,
                contract=contract,
                status=status,
                status_detail=status_detail,
                context=context,
                intent=intent,
                id=id,
                tool=tool,
                chain=chain,
                attempt=attempt,
                meta=meta,
            ),
            source,
        )
        assert verdict is not None, "a capture record always has a verdict"
        return verdict

    def feedback(
        self,
        verdict: Optional[Mapping[str, Any]] = None,
        *,
        record: Optional[Record] = None,
        source: Optional[str] = None,
    ) -> str:
        """The self-correction message ``verdict feedback`` prints for a verdict this
        workspace gave (one of the last ``FEEDBACK_MEMORY`` of ``check``/``check_output``),
        or for a ``record`` itself: for ``regenerate``, the message to re-inject into the
        model; otherwise why regenerating would not help. ``ValueError`` when the verdict is
        not one this workspace remembers, or the record is no capture."""
        if record is None:
            if verdict is None:
                raise TypeError("feedback needs a verdict or record=")
            vid, vsource = verdict.get("id"), verdict.get("source")
            kept = next(
                (k for k in reversed(self._recent)
                 if k[0] == vid and k[1] == vsource and k[2] == verdict),
                None,
            )
            if kept is None:
                raise ValueError(
                    "this verdict is not one of the last "
                    f"{FEEDBACK_MEMORY} this Workspace's check or check_output gave; "
                    "pass the record: ws.feedback(record=..., source=...)"
                )
            text, source = kept[3], kept[4]
        else:
            text = record_text(record)
        return self._native.feedback_text(text, source)

    def __repr__(self) -> str:
        return f"verdict.Workspace({self.root!r})"


def output_record(
    text: str,
    contract: Optional[str] = None,
    status: str = "completed",
    status_detail: Optional[str] = None,
    context: Optional[Mapping[str, Any]] = None,
    intent: Optional[Mapping[str, Any]] = None,
    *,
    id: Optional[str] = None,
    tool: Optional[str] = None,
    chain: Optional[str] = None,
    attempt: Optional[int] = None,
    meta: Optional[Mapping[str, Any]] = None,
) -> dict:
    """The capture record (docs/capture-record.md) ``check_output`` checks: ``output`` and
    ``status``, and each other key that is not ``None``. What an agent loop logs too."""
    rec: dict = {}
    for key, value in (
        ("id", id),
        ("contract", contract),
        ("tool", tool),
        ("output", text),
        ("status", status),
        ("status_detail", status_detail),
        ("context", context),
        ("intent", intent),
        ("chain", chain),
        ("attempt", attempt),
        ("meta", meta),
    ):
        if value is not None:
            rec[key] = value
    return rec


__all__.append("output_record")
