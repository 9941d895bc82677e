"""Request bodies as the HTTP functions receive them: size cap, base64, UTF-8, and the one JSON
reader of text from outside (bodies, flow files).

Pure functions of the body, used by the participants API, the webhooks, the local server and the
CLI before anything parses a body, so that a malformed one is a 400 (413 when too large) in the
error envelope, or one line in the CLI, and never an exception: Python's JSON parser raises
``RecursionError`` on deeply nested input, ``ValueError`` on an integer of more than 4,300 digits
(``sys.get_int_max_str_digits``), and silently keeps the last of two equal keys; decoding raises
``UnicodeDecodeError`` on bytes that are not UTF-8.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from promptpipe.errors import PromptPipeError, ValidationFailed, error_body

# No request of ours nests deeper than ~10 levels (a Meta webhook); 32 leaves room and stays far
# below the parser's recursion limit.
MAX_JSON_DEPTH = 32
# No number of ours needs more than a few digits (a token count, a version); a longer integer is
# refused before ``int()`` runs, which is quadratic in the digits and raises past 4,300 of them.
MAX_JSON_INTEGER_DIGITS = 64
PAYLOAD_TOO_LARGE = 413
_BRACKETS = re.compile(r"[\[\]{}]")
# A UTF-16 surrogate standing alone: JSON's "\ud83d" without its pair decodes to one, and no
# UTF-8 encoder (DynamoDB's, SQS's, the logger's) accepts it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT_CHARACTER = "\ufffd"


class MalformedBody(ValidationFailed):
    """A body that cannot be read; ``status`` is the HTTP answer (400, or 413 when too large)."""

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message, field="body")
        self.status = status


def body_bytes(body: str | None, is_base64: bool, *, max_bytes: int) -> bytes:
    """The raw bytes of an API Gateway body (base64-decoded when API Gateway encoded it), refused
    when over ``max_bytes`` (checked on the encoded length first, so a huge body is never decoded)."""
    text = body or ""
    if is_base64:
        if len(text) > (max_bytes + 2) // 3 * 4:
            raise _too_large(max_bytes)
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise MalformedBody("request body is not valid base64") from exc
    else:
        if len(text) > max_bytes:  # each character is at least one byte
            raise _too_large(max_bytes)
        raw = text.encode("utf-8", "surrogatepass")
    if len(raw) > max_bytes:
        raise _too_large(max_bytes)
    return raw


def decode_utf8(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedBody(f"request body is not UTF-8 (byte {exc.start})") from exc


def check_json_depth(text: str, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Refuse JSON text nested deeper than ``max_depth`` arrays/objects, without parsing it (the
    brackets inside strings do not count). Anything else wrong with it is left to the parser.
    Linear time in C: escaped backslashes and quotes are dropped, then every other ``"`` delimits
    a string, so the text outside strings is every second piece of a split on ``"``."""
    unescaped = text.replace("\\\\", "").replace('\\"', "")
    outside = "".join(unescaped.split('"')[::2])
    depth = 0
    for bracket in _BRACKETS.findall(outside):
        if bracket in "[{":
            depth += 1
            if depth > max_depth:
                raise MalformedBody(f"JSON is nested deeper than {max_depth} levels")
        else:
            depth -= 1


def valid_unicode(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (the rest unchanged): text from outside
    that Python decoded (JSON escapes, ``surrogateescape``) but no UTF-8 encoder would write."""
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub(REPLACEMENT_CHARACTER, text)


def repair_unicode(value: Any) -> Any:
    """A parsed JSON value with ``valid_unicode`` applied to every string in it, keys included: one
    bad field is repaired where it is, and the rest of the value is kept as it was. Iterative, so
    no nesting raises ``RecursionError`` (``read_json_text`` bounds it anyway)."""
    if isinstance(value, str):
        return valid_unicode(value)
    if not isinstance(value, dict | list):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        parent, key = stack.pop()
        item = parent[key]
        if isinstance(item, str):
            parent[key] = valid_unicode(item)
        elif isinstance(item, list):
            copy = list(item)
            parent[key] = copy
            stack.extend((copy, index) for index in range(len(copy)))
        elif isinstance(item, dict):
            copy_map = {valid_unicode(name) if isinstance(name, str) else name: child for name, child in item.items()}
            parent[key] = copy_map
            stack.extend((copy_map, name) for name in copy_map)
    return root[0]


class NotJson(MalformedBody):
    """Text that is not JSON at all (as opposed to JSON this reader refuses)."""


class _IntegerTooLong(PromptPipeError, ValueError):
    """Raised inside the JSON parser (``parse_int``); ``read_json_text`` turns it into ``MalformedBody``."""


def _parse_integer(digits: str) -> int:
    if len(digits) - digits.startswith("-") > MAX_JSON_INTEGER_DIGITS:
        raise _IntegerTooLong(f"an integer of {len(digits.lstrip('-'))} digits (at most {MAX_JSON_INTEGER_DIGITS})")
    return int(digits)


def read_json_text(text: str, max_depth: int = MAX_JSON_DEPTH) -> tuple[Any, list[str]]:
    """The one JSON reader of text from outside: the value and the keys that occur twice in one
    object (sorted, each once; the value keeps the last, as ``json.loads`` does). ``MalformedBody``
    when the text is nested deeper than ``max_depth``, has an integer longer than
    ``MAX_JSON_INTEGER_DIGITS`` or is not JSON. Linear in the text."""
    check_json_depth(text, max_depth)
    duplicates: set[str] = set()

    def pairs_to_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    duplicates.add(key)
                seen.add(key)
        return result

    try:
        value = json.loads(text, object_pairs_hook=pairs_to_object, parse_int=_parse_integer)
    except _IntegerTooLong as exc:
        raise MalformedBody(f"JSON has {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise NotJson(f"not valid JSON: {exc}") from None
    return value, sorted(duplicates)


def parse_json(raw: bytes | str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """UTF-8 JSON of at most ``max_depth`` levels, with no integer longer than
    ``MAX_JSON_INTEGER_DIGITS`` and no key twice in one object, or ``MalformedBody`` (400)."""
    text = raw if isinstance(raw, str) else decode_utf8(raw)
    try:
        value, duplicates = read_json_text(text, max_depth)
    except MalformedBody as exc:
        raise type(exc)(f"request body: {exc}") from None
    if duplicates:
        raise MalformedBody("request body: " + duplicate_keys_message(duplicates))
    return value


def duplicate_keys_message(keys: list[str]) -> str:
    return ("duplicate key " if len(keys) == 1 else "duplicate keys ") + ", ".join(repr(k) for k in keys)


# What a function returns to API Gateway (payload 2.0 answer).
HttpAnswer = dict[str, Any]
JSON = "application/json"


def http_answer(status_code: int, body: str | dict[str, Any], content_type: str = JSON) -> HttpAnswer:
    """An API Gateway (payload 2.0) answer; a mapping body is sent as JSON."""
    return {
        "statusCode": status_code,
        "headers": {"Content-Type": content_type},
        "body": body if isinstance(body, str) else json.dumps(body, separators=(",", ":")),
        "isBase64Encoded": False,
    }


def error_response(status_code: int, message: str) -> HttpAnswer:
    """The API's error envelope as an API Gateway answer: the webhook's answers, and those a
    function gives before its resolver runs."""
    return http_answer(status_code, error_body(message))


def _too_large(max_bytes: int) -> MalformedBody:
    return MalformedBody(f"request body is larger than {max_bytes} bytes", status=PAYLOAD_TOO_LARGE)
