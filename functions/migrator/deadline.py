"""A whole-request deadline for a guarded fetch: the connection is shut the moment it passes.

A socket timeout bounds each read, not the request: a server that sends its status line,
its headers or its body a byte at a time, each within the timeout, can hold a fetch for as
long as it likes. `Watchdog` is the bound on the whole: at the deadline it shuts the
connection's socket down (the raw one, so a TLS handshake or a read blocked inside TLS ends
too), the blocked call fails at once, and `fired` tells the caller that the failure, or a
body that looks complete, is the deadline's doing. Use it around every fetch of a URL from
outside (the tracks worker's caption fetch, `migrator verify`'s manifests).
"""

from __future__ import annotations

import socket
import threading


class Watchdog:
    """Shuts `connection`'s socket down after `seconds`, unless stopped first; a context manager."""

    def __init__(self, connection, seconds: float):
        self._connection = connection
        self._timer = threading.Timer(max(0.0, seconds), self._fire)
        self._timer.daemon = True
        self.fired = False

    def __enter__(self) -> Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()

    def _fire(self) -> None:
        self.fired = True
        shut(self._connection)


def shut(connection) -> None:
    """Shut down the connection's underlying socket, whatever state it is in (connecting, in a TLS
    handshake, reading): the raw socket where the connection keeps one, else its `sock`."""
    sock = getattr(connection, "raw_sock", None) or getattr(connection, "sock", None)
    if sock is None:
        return
    try:
        # socket.socket's own shutdown, not SSLSocket's: that one drops its TLS state first, from
        # this thread, under a read in progress in another.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # already closed, or never connected: nothing left to stop
