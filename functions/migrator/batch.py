"""One SQS batch through a worker that works one record at a time (the tracks worker, the archiver): each record's
fate, a record to do later sent back by its visibility timeout and reported as the batch's failure, so only it
comes back; one record's unexpected error never fails the rest."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from .fate import Fate, FateKind
from .retry import visibility_for


def run_batch(
    event: dict,
    process: Callable[[dict, float], Fate],
    remaining_s: Callable[[], float],
    sqs: Any,
    queue_url: str,
    clock: Callable[[], float],
    rng: random.Random,
    logger: Logger,
    metrics: Metrics,
) -> dict:
    """`process(record, deadline)` for each record; the partial batch response (ReportBatchItemFailures)."""
    received_at = clock()
    failures = []
    for record in event.get("Records", []):
        try:
            fate = process(record, clock() + remaining_s())
        except Exception:  # one bad record never fails the rest of its batch
            logger.exception("unexpected error; the message will be retried")
            metrics.add_metric(name="Errors", unit=MetricUnit.Count, value=1)
            fate = Fate.later(rng.uniform(5, 15), "unexpected error")
        finally:
            logger.set_correlation_id(None)
        if fate.kind is FateKind.LATER:
            try:
                sqs.change_message_visibility(
                    QueueUrl=queue_url,
                    ReceiptHandle=record["receiptHandle"],
                    VisibilityTimeout=visibility_for(fate.delay_s, received_at, clock()),
                )
            except Exception as exc:  # the queue's own visibility timeout still brings it back
                logger.warning("could not set the retry delay: %s", type(exc).__name__)
            failures.append({"itemIdentifier": record.get("messageId", "")})
    return {"batchItemFailures": failures}
