"""The HTTP reads the `held` readers share: a session that never takes a proxy from the environment (the simulators
are on loopback), and a GET that must answer 200, made again while the account's rate refuses it (429: the limit is
shared with the stack's own calls on the same account)."""

from __future__ import annotations

import time
import urllib.parse

import requests

TIMEOUT_S = 10
THROTTLED_TRIES, THROTTLED_WAIT_S = 40, 2.0


def session() -> requests.Session:
    web = requests.Session()
    web.trust_env = False
    return web


def get(web: requests.Session, url: str, **kw) -> requests.Response:
    """A GET answered 200 (an assertion names its path, never its query, where a token may ride)."""
    return answered(lambda: web.get(url, timeout=TIMEOUT_S, **kw), "GET", url, 200)


def answered(send, method: str, url: str, status: int) -> requests.Response:
    """`send()`'s answer, which must have `status`; a 429 makes it send again."""
    for _ in range(THROTTLED_TRIES):
        answer = send()
        if answer.status_code != 429:
            break
        time.sleep(THROTTLED_WAIT_S)
    where = urllib.parse.urlsplit(url).path
    assert answer.status_code == status, f"{method} {where}: HTTP {answer.status_code}"
    return answer
