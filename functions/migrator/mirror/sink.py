"""The mirror's sink for the shared sweep (migrator.sweeping): each listed row to the intake queue.

Rows are held for the page and sent when the lister flushes it, before the checkpoint is saved past them:
SendMessageBatch, ten entries and 256 KiB a call, as `migrator load` sends them; an entry the queue refuses is
sent again a few times, and one still refused fails the invocation before the save, so the next one lists the
page again (intake records each asset once: a repeat is dropped there). Intake does the rest: a video new to
the ledger is recorded and forwarded, one already there is not created twice (intake.intake_fate).

In a full sweep every listed id (rows, unfetchable, still processing) is also stamped on the ledger
(gone.stamp), so the gone check after it finds what the source no longer lists.

With the stack's MirrorWhere (`keep`: the triage's expression, migrator.where), a row it does not keep is not sent
and is counted (`left_behind`): what an operator left behind with `load --where` stays behind while the mirror runs.
It is still stamped in a full sweep: the source lists it, so it is not gone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..messages import AssetMessage, encode_message
from ..sources import Page, Unfetchable
from . import gone

SEND_BATCH = 10  # SendMessageBatch's most entries
MAX_BATCH_BYTES = 256 * 1024  # and its most bytes, all bodies together
SEND_TRIES = 4


class SendFailed(Exception):
    """Rows the queue would not take: the page is listed again by the next invocation."""


def batches(bodies: list[str]) -> list[list[str]]:
    """`bodies` in SendMessageBatch calls: at most SEND_BATCH entries and MAX_BATCH_BYTES each, in order."""
    out: list[list[str]] = []
    size = 0
    for body in bodies:
        weight = len(body.encode())
        if not out or len(out[-1]) >= SEND_BATCH or size + weight > MAX_BATCH_BYTES:
            out.append([])
            size = 0
        out[-1].append(body)
        size += weight
    return out


@dataclass
class IntakeSink:
    sqs: Any
    queue_url: str
    stamp: Callable[[list[str]], int] | None = None  # a full sweep's: the listed ids stamped on the ledger
    keep: Callable[[AssetMessage], bool] | None = None  # MirrorWhere's expression; None: every row goes
    sleep: Callable[[float], None] = time.sleep
    sent: int = 0  # rows sent since the last `taken()`
    left: int = 0  # rows `keep` left behind since the last `taken()`
    _rows: list[str] = field(default_factory=list)
    _ids: list[str] = field(default_factory=list)

    def row(self, msg: AssetMessage) -> bool:
        self._ids.append(msg.asset_id)
        if self.keep is not None and not self.keep(msg):
            self.left += 1
            return True
        self._rows.append(encode_message(msg))
        return True  # intake drops a repeat; the lister counts what it listed

    def unfetchable(self, entry: Unfetchable) -> None:
        self._ids.append(entry.asset_id)

    def pending(self, entry: Unfetchable) -> None:
        self._ids.append(entry.asset_id)

    def flush(self, page: Page) -> None:
        for batch in batches(self._rows):
            self._send(batch)
            self.sent += len(batch)
        self._rows.clear()
        if self.stamp is not None:
            self.stamp(self._ids)
        self._ids.clear()

    def taken(self) -> tuple[int, int]:
        """Rows sent and rows left behind since the last call (what the checkpoint adds to `sent`, `left_behind`)."""
        sent, left, self.sent, self.left = self.sent, self.left, 0, 0
        return sent, left

    def _send(self, bodies: list[str]) -> None:
        waiting = dict(enumerate(bodies))
        for attempt in range(SEND_TRIES):
            entries = [{"Id": str(i), "MessageBody": body} for i, body in waiting.items()]
            resp = self.sqs.send_message_batch(QueueUrl=self.queue_url, Entries=entries)
            refused = {int(f["Id"]) for f in resp.get("Failed", []) if not f.get("SenderFault")}
            hopeless = [f for f in resp.get("Failed", []) if f.get("SenderFault")]
            if hopeless:
                raise SendFailed(f"the intake queue refused a row: {hopeless[0].get('Code', 'refused')}")
            waiting = {i: body for i, body in waiting.items() if i in refused}
            if not waiting:
                return
            self.sleep(min(8.0, 0.5 * 2**attempt))
        raise SendFailed(f"the intake queue would not take {len(waiting)} rows after {SEND_TRIES} tries")


def stamper(client: Any, table: str, generation: int) -> Callable[[list[str]], int]:
    return lambda ids: gone.stamp(client, table, ids, generation)
