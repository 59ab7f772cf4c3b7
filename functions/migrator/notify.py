"""Done and stalled notices, sent: reconcile's run reads the tally's aggregates and intake's depth, decides with
`notices.py`, claims each notice with one conditional write on the ledger's `#notices` item, then publishes it to
the stack's alarm topic (NOTICE_TOPIC_ARN: AlarmTopic, or the operator's AlarmTopicArn; AlarmEmail receives it).

Environment: NOTICE_TOPIC_ARN (empty: no notices), STATS_TABLE, INTAKE_QUEUE_URL (messages not yet recorded count
as work left), STALL_AFTER_MINUTES (0: no stall notice), WORKING_HOURS and the `#window` override (`hours.py`:
time outside the window is not a stall), STACK_NAME (named in each notice).
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from .dynamo import is_condition_failure, to_item, typed
from .hours import Hours
from .notices import (
    NOTICES_ID,
    DoneStep,
    Notice,
    Progress,
    Seen,
    StallStep,
    done_notice,
    done_step,
    progress_of,
    seen_of,
    stall_notice,
    stall_step,
)
from .settings import env_number
from .tally import read_stats

logger = logging.getLogger(__name__)

QUEUE_DEPTH = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
)


@dataclass
class Notifier:
    dynamodb: Any
    sns: Any
    sqs: Any
    ledger_table: str
    stats_table: str
    topic_arn: str
    intake_queue_url: str = ""
    stack: str = "video-migrator"
    stall_after_s: float = 0.0
    hours: Hours = field(default_factory=lambda: Hours(""))
    clock: Callable[[], float] = time.time

    def run(self) -> dict:
        """Look once: what each notice called for and whether this run told it."""
        now = self.clock()
        stats = read_stats(self.dynamodb, self.stats_table, now, window_minutes=0)
        progress = progress_of(stats, self._unrecorded())
        seen = seen_of(self._item())
        done = done_step(progress, seen)
        stall = stall_step(progress, seen, now, self.stall_after_s, self.hours.current(now))
        result = {"done": done.value, "stall": stall.value}
        if done is DoneStep.TELL:
            result["done"] = self._tell_done(progress, seen, now)
        elif done is DoneStep.ARM:
            self._write("SET armed = :yes", "done_total = :seen AND armed = :no", {":seen": seen.done_total})
        if stall is StallStep.MOVED:
            self._moved(progress, seen, now)
        elif stall is StallStep.TELL:
            result["stall"] = self._tell_stall(progress, seen, now)
        return result

    # --- the claims and the publish -----------------------------------------------------------------

    def _tell_done(self, progress: Progress, seen: Seen, now: float) -> str:
        won = self._write(
            "SET done_total = :total, armed = :no, done_at = :now",
            "attribute_not_exists(done_total) OR done_total <> :total OR armed = :yes",
            {":total": progress.total, ":now": now},
        )
        if not won:
            return "told by another run"
        if not self._publish(done_notice(self.stack, progress, now)):
            self._write("SET armed = :yes", "done_at = :now", {":now": now})  # the next run tells it
            return "publish failed; the next run tries again"
        return "told"

    def _moved(self, progress: Progress, seen: Seen, now: float) -> None:
        """The counts changed (or were never noted): note them, and end a stall episode."""
        values: dict[str, Any] = {}
        if seen.fingerprint is None:
            condition = "attribute_not_exists(fingerprint)"
        else:
            condition, values[":seen"] = "fingerprint = :seen", seen.fingerprint
        values |= {":fp": progress.fingerprint, ":now": now}
        self._write("SET fingerprint = :fp, moved_at = :now, stall_told = :no", condition, values)

    def _tell_stall(self, progress: Progress, seen: Seen, now: float) -> str:
        won = self._write(
            "SET stall_told = :yes, stall_at = :now",
            "fingerprint = :fp AND (attribute_not_exists(stall_told) OR stall_told = :no)",
            {":fp": progress.fingerprint, ":now": now},
        )
        if not won:
            return "told by another run"
        if not self._publish(stall_notice(self.stack, progress, seen, now)):
            self._write("SET stall_told = :no", "stall_at = :now", {":now": now})
            return "publish failed; the next run tries again"
        return "told"

    def _publish(self, notice: Notice) -> bool:
        try:
            self.sns.publish(TopicArn=self.topic_arn, Subject=notice.subject, Message=notice.message)
        except Exception as exc:  # the claim is given back: the next run tries again
            logger.warning("could not publish the notice %r: %s", notice.subject, type(exc).__name__)
            return False
        logger.info("notice published: %s", notice.subject)
        return True

    # --- reads and writes -----------------------------------------------------------------------------

    def _item(self) -> dict | None:
        key = typed({"asset_id": NOTICES_ID})
        return to_item(self.dynamodb.get_item(TableName=self.ledger_table, Key=key, ConsistentRead=True).get("Item"))

    def _write(self, update: str, condition: str, values: Mapping[str, Any]) -> bool:
        """One conditional write on the `#notices` item; False when another run's write came first."""
        used = f"{update} {condition}"  # DynamoDB refuses a value the expressions do not use
        flags = {k: v for k, v in ((":yes", True), (":no", False)) if re.search(rf"{k}\b", used)}
        try:
            self.dynamodb.update_item(
                TableName=self.ledger_table,
                Key=typed({"asset_id": NOTICES_ID}),
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeValues=typed({**flags, **values}),
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True

    def _unrecorded(self) -> int:
        if not self.intake_queue_url:
            return 0
        found = self.sqs.get_queue_attributes(QueueUrl=self.intake_queue_url, AttributeNames=list(QUEUE_DEPTH))
        return sum(int(found.get("Attributes", {}).get(name, 0)) for name in QUEUE_DEPTH)


def from_env(dynamodb: Any, env: Mapping[str, str] | None = None) -> Notifier | None:
    """The stack's notifier; None where notices are off (no topic, or no stats table)."""
    import boto3

    env = os.environ if env is None else env
    topic, stats = env.get("NOTICE_TOPIC_ARN", "").strip(), env.get("STATS_TABLE", "").strip()
    if not topic or not stats:
        return None
    ledger = env.get("LEDGER_TABLE", "").strip()
    return Notifier(
        dynamodb=dynamodb,
        sns=boto3.client("sns"),
        sqs=boto3.client("sqs"),
        ledger_table=ledger,
        stats_table=stats,
        topic_arn=topic,
        intake_queue_url=env.get("INTAKE_QUEUE_URL", "").strip(),
        stack=env.get("STACK_NAME", "").strip() or "video-migrator",
        stall_after_s=60 * env_number(env, "STALL_AFTER_MINUTES", 0, 0, 30 * 24 * 60),
        hours=Hours(env.get("WORKING_HOURS", "").strip(), ledger, dynamodb),
    )


def look(notifier: Notifier | None) -> dict:
    """One look by reconcile's run, never failing it: what each notice did, or why it could not look."""
    if notifier is None:
        return {"off": "no NOTICE_TOPIC_ARN"}
    try:
        return notifier.run()
    except Exception as exc:
        logger.warning("the done and stalled notices could not look: %s", type(exc).__name__)
        return {"error": type(exc).__name__}
