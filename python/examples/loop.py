"""An agent loop's post-tool-call hook on verdict (docs/python.md#the-agent-loop).

After each model call the hook checks the output with ``Workspace.check_output`` and routes
the verdict's decision:

* ``ready-for-commit``: done, the proposal goes to the write step;
* ``regenerate``: ask again with ``Workspace.feedback`` (the error and the contract);
* ``retry``: the same request again after a backoff (exponential);
* ``reject`` / ``recheck``: stop at once and hand it to a person (no retry can fix it);

bounded by ``max_attempts``. Every attempt is logged as a capture record with ``chain`` and
``attempt`` (docs/chains.md), so ``verdict chains`` and ``verdict check`` read the loop's
own log afterwards.

Run it offline against the scripted fake model:

    python python/examples/loop.py            # in a copy of python/examples/loop-workspace
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from typing import Any, Callable, List, Mapping, Optional

import verdict


@dataclasses.dataclass
class Reply:
    """One model reply: its text and how the provider ended it."""

    text: str
    status: str = "completed"  # completed | refusal | incomplete | request_error
    status_detail: Optional[str] = None
    usage: Optional[Mapping[str, int]] = None


#: A model: the conversation so far (``{"role", "content"}`` messages) in, a reply out.
Model = Callable[[List[dict]], Reply]


@dataclasses.dataclass
class Outcome:
    """How a loop ended: ``ready``, ``stopped`` (reject / recheck) or ``out-of-attempts``."""

    ended: str
    attempts: int
    verdicts: List[dict]
    proposal: Optional[Any] = None

    @property
    def last(self) -> dict:
        return self.verdicts[-1]


class Loop:
    """The post-tool-call hook and the loop around it."""

    def __init__(
        self,
        ws: verdict.Workspace,
        model: Model,
        log_path: str,
        max_attempts: int = 3,
        backoff_s: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        contract: Optional[str] = None,
    ):
        self.ws = ws
        self.model = model
        self.log_path = log_path
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.sleep = sleep
        self.contract = contract

    def log(self, record: dict) -> None:
        """Appends one attempt's capture record to the loop's log (JSON Lines)."""
        with open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")

    def run(
        self,
        chain: str,
        prompt: str,
        context: Optional[Mapping[str, Any]] = None,
        intent: Optional[Mapping[str, Any]] = None,
    ) -> Outcome:
        messages = [{"role": "user", "content": prompt}]
        verdicts: List[dict] = []
        for attempt in range(1, self.max_attempts + 1):
            reply = self.model(messages)
            record = verdict.output_record(
                reply.text,
                contract=self.contract,
                status=reply.status,
                status_detail=reply.status_detail,
                context=context,
                intent=intent,
                id=f"{chain}/{attempt}",
                chain=chain,
                attempt=attempt,
                meta={"usage": dict(reply.usage)} if reply.usage else None,
            )
            self.log(record)
            v = self.ws.check(record)
            verdicts.append(v)
            decision = v["decision"]
            if decision == "ready-for-commit":
                return Outcome("ready", attempt, verdicts, json.loads(reply.text))
            if decision in ("reject", "recheck"):
                return Outcome("stopped", attempt, verdicts)
            if decision == "regenerate":
                messages.append({"role": "assistant", "content": reply.text})
                messages.append({"role": "user", "content": self.ws.feedback(v)})
            elif decision == "retry":
                self.sleep(self.backoff_s * 2 ** (attempt - 1))
        return Outcome("out-of-attempts", self.max_attempts, verdicts)


# --- the scripted fake model of the tests and of the demo below ---------------------------

CONTEXT = {
    "actor": {"user_id": "U-7", "allowed_actions": ["refund", "view"]},
    "order": {"order_id": "O-1042", "owner_id": "U-7", "currency": "KRW",
              "paid_minor": 10000, "refunded_minor": 2000, "version": 7},
}
INTENT = {"order_id": "O-1042", "amount_minor": 5000, "currency": "KRW"}


def proposal(**changes: Any) -> str:
    p = {"schema_version": "refund-v1", "order_id": "O-1042", "amount_minor": 5000,
         "currency": "KRW", "expected_version": 7}
    p.update(changes)
    return json.dumps(p)


class ScriptedModel:
    """Replies from a script, one per call; records the conversations it was given."""

    def __init__(self, replies: List[Reply]):
        self.replies = list(replies)
        self.seen: List[List[dict]] = []

    def __call__(self, messages: List[dict]) -> Reply:
        self.seen.append([dict(m) for m in messages])
        return self.replies.pop(0)


def fails_twice_then_recovers() -> ScriptedModel:
    """A string amount (schema), then 8000 instead of the confirmed 5000 (intent), then right."""
    usage = {"input_tokens": 400, "output_tokens": 40, "total_tokens": 440}
    return ScriptedModel([
        Reply(proposal(amount_minor="5000"), usage=usage),
        Reply(proposal(amount_minor=8000), usage=usage),
        Reply(proposal(), usage=usage),
    ])


def refuses() -> ScriptedModel:
    return ScriptedModel([Reply("I can't help with refunds.", status="refusal"), Reply(proposal())])


def main(workspace: str) -> int:
    """Runs both scripted loops in a copy of ``workspace`` and prints where the log is."""
    import shutil
    import tempfile

    copy = os.path.join(tempfile.mkdtemp(prefix="verdict-loop-"), "workspace")
    shutil.copytree(workspace, copy)
    os.makedirs(os.path.join(copy, "captures"), exist_ok=True)
    ws = verdict.Workspace(copy)
    log = os.path.join(copy, "captures", "loop.jsonl")
    for chain, model in (("ticket-1", fails_twice_then_recovers()), ("ticket-2", refuses())):
        out = Loop(ws, model, log).run(chain, "Refund 5000 KRW on order O-1042", CONTEXT, INTENT)
        steps = ", ".join(f"{v['stage']}/{v['reason'] or 'ready'}" for v in out.verdicts)
        print(f"{chain}: {out.ended} after {out.attempts} attempt(s): {steps}")
    print(f"log: {log} (read it back: verdict chains {copy})")
    return 0


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "loop-workspace")))
