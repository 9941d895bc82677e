"""Who uses the console (docs/console.md, "Coordinators and their tokens").

Each coordinator has a token of their own, made by ``promptpipe console-token add NAME --role …``:
128 random bits (``secrets``), printed once, kept only as its SHA-256 (the token is random, so a
plain hash is enough: there is no password to guess) in a JSON file beside the console, and compared
in constant time (``hmac.compare_digest``). Two roles: ``coordinator`` acts (enrol, edit, pause,
withdraw, delete, erase, message, release, export); ``viewer`` reads every page and does none of
those. The token printed at start (and ``--no-token``) is the console's operator, a coordinator named
by ``--operator`` ("console operator" unless given).

A page's forms carry a form token bound to the credential the request came with
(HMAC-SHA256 of it under a per-process secret): a viewer's page never holds a coordinator's form
token, and a foreign page can hold none.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from promptpipe.exit_codes import EXIT_USAGE, CliError

DEFAULT_OPERATOR = "console operator"


class Role(StrEnum):
    COORDINATOR = "coordinator"
    VIEWER = "viewer"


@dataclass(frozen=True)
class Identity:
    name: str
    role: Role

    @property
    def can_act(self) -> bool:
        return self.role is Role.COORDINATOR


_ROLES = {"coordinator", "viewer"}


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def form_token(secret: bytes, credential: str) -> str:
    """The form token of pages served to ``credential``."""
    return hmac.new(secret, credential.encode(), hashlib.sha256).hexdigest()[:32]


class TokenBook:
    """The coordinators' tokens, hashed, in one JSON file: ``{"tokens": [{"name", "role", "sha256",
    "created_at"}]}``. Read at every check, so a token added or removed applies without a restart."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _entries(self) -> list[dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise CliError(f"cannot read the console tokens in {self.path}: {exc}", EXIT_USAGE) from exc
        entries = data.get("tokens") if isinstance(data, dict) else None
        return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []

    def _write(self, entries: list[dict[str, str]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Written whole, then moved into place: a reader never sees half a file. Owner-only.
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".console-tokens-")
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump({"tokens": entries}, file, indent=2)
        Path(temporary).chmod(0o600)
        Path(temporary).replace(self.path)

    def add(self, name: str, role: Role, *, now: datetime | None = None) -> str:
        """A new token for ``name`` (replacing theirs, if they had one); returns it (shown once)."""
        name = name.strip()
        if not name:
            raise CliError("a console token names its coordinator: give a name", EXIT_USAGE)
        token = secrets.token_urlsafe(16)
        entries = [e for e in self._entries() if e.get("name") != name]
        at = (now or datetime.now(UTC)).isoformat(timespec="seconds")
        entries.append({"name": name, "role": role.value, "sha256": token_hash(token), "created_at": at})
        self._write(entries)
        return token

    def remove(self, name: str) -> bool:
        entries = self._entries()
        kept = [e for e in entries if e.get("name") != name]
        if len(kept) == len(entries):
            return False
        self._write(kept)
        return True

    def listed(self) -> list[tuple[str, str, str]]:
        """(name, role, created_at) of each token."""
        return [(e.get("name", ""), e.get("role", ""), e.get("created_at", "")) for e in self._entries()]

    def identify(self, token: str) -> Identity | None:
        """The coordinator whose token this is; every entry is compared (constant time each)."""
        given = token_hash(token)
        found: Identity | None = None
        for entry in self._entries():
            if hmac.compare_digest(given, str(entry.get("sha256", ""))) and entry.get("role") in _ROLES:
                found = Identity(str(entry.get("name", "")), Role(str(entry["role"])))
        return found


class Door:
    """Who comes in: the start-up token (the operator, a coordinator), each coordinator's own token
    (``TokenBook``), and with ``--no-token`` anyone local as the operator; and the form token of the
    pages served to each credential. Shared by the console's request threads: the identity and form
    token of the request a thread serves are the thread's own."""

    def __init__(self, token: str, tokens: TokenBook | None, operator: str, *, require_token: bool) -> None:
        self.token = token
        self.tokens = tokens
        self.operator = Identity(operator.strip() or DEFAULT_OPERATOR, Role.COORDINATOR)
        self.require_token = require_token
        self.form_secret = secrets.token_bytes(32)
        self._request = threading.local()

    def identify(self, credential: str | None) -> Identity | None:
        """The start-up token's operator, or the coordinator whose own token it is."""
        if not credential:
            return None
        if hmac.compare_digest(credential.encode(), self.token.encode()):
            return self.operator
        return self.tokens.identify(credential) if self.tokens is not None else None

    def credential_of(
        self, query_token: str | None, cookie: str | None, authorization: str
    ) -> tuple[str, Identity] | None:
        """The credential a request holds (``?token=``, the cookie, ``Authorization: token …``) and
        whose it is; with ``--no-token``, the operator's when it holds none. The address's token
        comes first: opening another coordinator's address switches to them."""
        scheme, _, given = authorization.partition(" ")
        for credential in (query_token, cookie, given.strip() if scheme.lower() == "token" else None):
            identity = self.identify(credential)
            if credential and identity is not None:
                return credential, identity
        return None if self.require_token else (self.token, self.operator)

    def form_identity(self, given_form_token: str, cookie: str | None) -> Identity | None:
        """Who posts: the cookie's credential, with the form token of that credential's pages (a
        foreign page can set neither; a viewer's page holds no coordinator's form token)."""
        identity = self.identify(cookie)
        if identity is None or cookie is None:
            return None
        expected = form_token(self.form_secret, cookie)
        return identity if hmac.compare_digest(given_form_token.encode(), expected.encode()) else None

    def serving(self, credential: str, identity: Identity) -> None:
        """This thread now serves a request of ``identity``: its pages carry that credential's form token."""
        self._request.identity = identity
        self._request.form_token = form_token(self.form_secret, credential)

    def page_token(self) -> str:
        return getattr(self._request, "form_token", None) or form_token(self.form_secret, self.token)

    def me(self) -> Identity:
        identity: Identity | None = getattr(self._request, "identity", None)
        return identity or self.operator
