"""Webhook delivery for every scheme: each event's forged copy and duplicate drawn, then retries on backoff."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from .config import SimConfig
from .profile import Event, Profile
from .state import SimState
from .threads import Threads

WEBHOOK_TIMEOUT_S = 5.0


@dataclass
class Delivery:
    """One webhook event on its way, with the faults drawn for it."""

    cfg: SimConfig
    profile: Profile
    event: Event
    generation: int
    forged: bool  # precede the first attempt by a copy signed with a wrong secret
    duplicate: bool  # send it once more after it was accepted


def hooks_on(cfg: SimConfig) -> bool:
    return cfg.webhooks_enabled and bool(cfg.webhook_url)


class Webhooks:
    """Sends events to the configured receiver, with the same retries, duplicates and forgeries in every profile."""

    def __init__(self, state: SimState, threads: Threads) -> None:
        self._state = state
        self._threads = threads
        # Webhooks need an opener that ignores *_proxy variables: receivers are on loopback.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def send(self, cfg: SimConfig, profile: Profile, events: list[Event], generation: int, inline: bool) -> None:
        """Draw each event's webhook faults, then deliver it now (inline) or on the pool."""
        if not hooks_on(cfg):
            return
        rng = self._state.hook_rng
        for event in events:
            with self._state.lock:
                forged = cfg.webhook_forged_rate > 0 and rng.random() < cfg.webhook_forged_rate
                duplicate = cfg.webhook_duplicate_rate > 0 and rng.random() < cfg.webhook_duplicate_rate
            job = Delivery(cfg, profile, event, generation, forged, duplicate)
            if inline:
                self._deliver(job, 0)
            else:
                self._submit(job, 0)

    def _submit(self, job: Delivery, attempt: int) -> None:
        self._threads.deliver(self._deliver, job, attempt)

    def _post(self, job: Delivery, secret: str | None) -> int | None:
        """POST the event once; the receiver's status, or None if it did not answer."""
        cfg = job.cfg
        if not cfg.webhook_url:  # never: a delivery is made only where there is a URL (`enabled`)
            return None
        headers = {"Content-Type": "application/json", "User-Agent": "provider-sim"}
        headers.update(job.profile.signature_headers(cfg, job.event, secret, int(time.time())))
        request = urllib.request.Request(cfg.webhook_url, data=job.event.body, headers=headers, method="POST")
        try:
            with self._opener.open(request, timeout=WEBHOOK_TIMEOUT_S) as response:
                return response.status
        except urllib.error.HTTPError as exc:
            exc.close()
            return exc.code
        except (OSError, ValueError):  # URLError, refused, timeout, malformed URL.
            return None

    def _deliver(self, job: Delivery, attempt: int) -> None:
        """Make one delivery attempt; on failure schedule the next or give up."""
        state = self._state
        if job.generation != state.generation:
            return
        if attempt == 0 and job.forged:
            # Same body, signed with a secret the receiver does not have: it must refuse it.
            answer = self._post(job, (job.cfg.webhook_secret or "") + "-forged")
            with state.lock:
                state.counters["webhooks_forged_sent"] += 1
                accepted = answer is not None and 200 <= answer < 300
                state.counters["webhooks_forged_accepted" if accepted else "webhooks_forged_refused"] += 1
        answer = self._post(job, job.cfg.webhook_secret)
        ok = answer is not None and 200 <= answer < 300
        with state.lock:
            if job.generation != state.generation:
                return
            if ok:
                state.counters["webhooks_delivered"] += 1
            elif attempt >= len(job.profile.webhook_backoff_s):
                state.counters["webhooks_failed"] += 1
                return
        if ok:
            if job.duplicate:
                self._post(job, job.cfg.webhook_secret)  # The same delivery again, as providers may.
                with state.lock:
                    state.counters["webhooks_duplicated"] += 1
            return
        self._threads.later(job.profile.webhook_backoff_s[attempt], lambda: self._submit(job, attempt + 1))
