"""Type stubs of the verdict package (docs/python.md)."""

import os
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Union

Record = Union[Mapping[str, Any], str, bytes]
Verdict = dict
FEEDBACK_MEMORY: int
DEFAULT_SOURCE: str

class WorkspaceError(Exception):
    """The workspace cannot be opened: the message `verdict check PATH` exits 2 with."""

def record_text(record: Record) -> Union[str, bytes]: ...
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
) -> dict: ...

class Workspace:
    def __init__(self, path: Union[str, os.PathLike[str]]) -> None: ...
    @property
    def root(self) -> str: ...
    @property
    def max_capture_bytes(self) -> int: ...
    def check_json(self, record: Record, source: Optional[str] = None) -> Optional[str]: ...
    def check(self, record: Record, source: Optional[str] = None) -> Optional[Verdict]: ...
    def check_all_json(self, record: Record, source: Optional[str] = None) -> List[str]: ...
    def check_all(self, record: Record, source: Optional[str] = None) -> List[Verdict]: ...
    def check_many_json(
        self, records: Iterable[Record], sources: Optional[Sequence[Optional[str]]] = None
    ) -> List[Optional[str]]: ...
    def check_many(
        self, records: Iterable[Record], sources: Optional[Sequence[Optional[str]]] = None
    ) -> List[Optional[Verdict]]: ...
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
    ) -> Verdict: ...
    def feedback(
        self,
        verdict: Optional[Mapping[str, Any]] = None,
        *,
        record: Optional[Record] = None,
        source: Optional[str] = None,
    ) -> str: ...
