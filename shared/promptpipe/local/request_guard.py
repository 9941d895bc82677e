"""What the two local HTTP servers (``promptpipe serve`` and ``promptpipe console``) accept from a
browser (docs/architecture.md#local-runs).

Both listen on the operator's machine, where any web page the operator opens can make the browser
send requests to them. So every request must name, in ``Host``, an address the server serves on (a
page on ``evil.example`` that rebinds its name to 127.0.0.1 still sends ``Host: evil.example``: DNS
rebinding); a request that carries ``Origin`` must come from that same address; a fetch the browser
marks ``Sec-Fetch-Site: cross-site`` or ``same-site`` is refused. State-changing requests to the
local server's JSON routes must carry ``application/json`` bodies, which a foreign page cannot send without a
CORS preflight that these servers never grant (so a cross-site ``text/plain`` or form post is
refused even by a browser that sends no ``Origin``). The console binds its forms to a per-process
token, in the page and in a ``SameSite=Strict`` cookie.

Both also listen with a backlog that holds a burst of connections (``LocalHTTPServer``).
"""

from __future__ import annotations

import ipaddress
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Protocol
from urllib.parse import urlsplit

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
WILDCARD_HOSTS = ("", "0.0.0.0", "::")
JSON = "application/json"
_WITH_PORT = re.compile(r"(\[[0-9a-f:.]+\]|[^:\[\]]+):\d+")
# Connections the listening socket queues while every thread is busy; the standard library's 5
# resets a burst of a few dozen (docs/reliability.md, "Fault suite").
LISTEN_BACKLOG = 256


class LocalHTTPServer(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` with a listen backlog that holds 200 concurrent connections."""

    request_queue_size = LISTEN_BACKLOG
    daemon_threads = True

    @property
    def url(self) -> str:
        """The address it listens on, as a browser opens it (the port the system chose for port 0)."""
        host, port = self.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else host
        return f"http://{name}:{port}"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _authority(name: str, port: int) -> set[str]:
    name = name.lower()
    if ":" in name and not name.startswith("["):
        name = f"[{name}]"  # a bare IPv6 address
    found = {f"{name}:{port}"}
    if port == 80:
        found.add(name)  # a browser leaves the default port out of Host and Origin
    return found


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str


@dataclass(frozen=True)
class RequestGuard:
    """The addresses (``host:port``, lower case) a server answers requests for."""

    authorities: frozenset[str]

    @classmethod
    def serving(cls, host: str, port: int, extra_hosts: Iterable[str] = ()) -> RequestGuard:
        """The addresses of a server bound to ``host``:``port``: the loopback names when it listens
        on loopback or on every interface, the bound address itself otherwise, plus ``extra_hosts``
        (a name the operator serves it under: a tunnel, a LAN name; ``name`` or ``name:port``)."""
        found: set[str] = set()
        if host in WILDCARD_HOSTS or _is_loopback(host):
            for name in LOOPBACK_NAMES:
                found |= _authority(name, port)
        if host not in WILDCARD_HOSTS:
            found |= _authority(host, port)
        for given in extra_hosts:
            extra = given.strip().lower()
            if not extra:
                continue
            # A name without a port: as the operator wrote it (a tunnel's https name) and on this port.
            found |= {extra} if _WITH_PORT.fullmatch(extra) else {extra, *_authority(extra, port)}
        return cls(frozenset(found))

    def allows_origin(self, origin: str) -> bool:
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and parts.netloc.lower() in self.authorities

    def check(self, method: str, headers: Mapping[str, str], *, json_only: bool) -> Refusal | None:
        """Why a request is refused, or None. ``headers`` with lower-case names; ``json_only``: a
        state-changing request to this route must carry a JSON body (not a webhook's form post)."""
        host = (headers.get("host") or "").strip().lower()
        if host not in self.authorities:
            return Refusal(403, f"Host {host or '(none)'!r} is not an address this server serves on")
        origin = headers.get("origin")
        if origin is not None and not self.allows_origin(origin):
            return Refusal(403, f"requests from {origin!r} are not accepted (cross-origin)")
        if headers.get("sec-fetch-site", "").lower() in ("cross-site", "same-site"):
            return Refusal(403, "cross-site requests are not accepted")
        # POST is the one state-changing method a page sends unpreflighted; without a body (reconcile)
        # it can only repair schedules, so only a body must be JSON.
        if json_only and method == "POST" and headers.get("content-length", "0").strip() not in ("", "0"):
            media_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if media_type != JSON:
                return Refusal(415, f"send the request with content-type: {JSON}")
        return None


class _Stoppable(Protocol):
    def stop(self) -> None: ...


def serve_until_interrupted(server: _Stoppable) -> int:
    """Keep a started local server up until Ctrl-C, then stop it; the command's exit code (0)."""
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("stopping")
    finally:
        server.stop()
    return 0
