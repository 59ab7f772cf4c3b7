"""The tracks worker told the moment a video with tracks or extras turns ready, by its webhook or by reconcile's
poll: the uploader's message met the video processing and comes back only after a wait that grows to 2 minutes
(trackworker.NOT_READY_CAP_S), and a target without webhooks (Vimeo) turns ready by polls alone. A lost send costs
that wait, nothing more: the caller has settled the ledger already."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from aws_lambda_powertools import Logger

from .tracks import item_needs_tracks_worker, tracks_message


def tracks_sender(queue_url: str, client: Callable[[], Any]) -> Callable[[str], None] | None:
    """Sends the tracks worker's message for an asset to `queue_url`, the SQS client made by `client` at the first
    send (most webhooks are not a ready video with tracks); None without a queue (a stack from before the worker)."""
    if not queue_url:
        return None
    made: list = []

    def send(asset_id: str) -> None:
        if not made:
            made.append(client())
        made[0].send_message(QueueUrl=queue_url, MessageBody=tracks_message(asset_id))

    return send


def tell_tracks_worker(
    send: Callable[[str], None] | None, item: Mapping, poster_time_later: bool, logger: Logger
) -> None:
    """Send `item`'s tracks message where its row gives the tracks worker anything to do."""
    if send is None or not item_needs_tracks_worker(item, poster_time_later):
        return
    try:
        send(item["asset_id"])
    except Exception as exc:
        logger.warning("could not tell the tracks worker: %s", type(exc).__name__)
