"""The size of a DynamoDB item as DynamoDB counts it, attribute by attribute, and its table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import moto  # noqa: F401  (before any handler module: their import-time clients must be intercepted)

ITEM_TARGET_BYTES = 8 * 1024
KB = 1024


def _number_size(text: str) -> int:
    digits = text.lstrip("-").replace(".", "").strip("0") or "0"
    return (len(digits) + 1) // 2 + 1


def attribute_value_size(value: dict[str, Any]) -> int:
    """Bytes of one marshalled value as DynamoDB counts them (docs: "Item sizes and formats")."""
    (kind, inner), *_ = value.items()
    if kind == "S":
        return len(inner.encode())
    if kind == "N":
        return _number_size(inner)
    if kind == "B":
        return len(inner) if isinstance(inner, bytes) else len(inner.encode())
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(v.encode()) for v in inner)
    if kind == "NS":
        return sum(_number_size(v) for v in inner)
    if kind == "M":
        return 3 + sum(len(k.encode()) + attribute_value_size(v) + 1 for k, v in inner.items())
    if kind == "L":
        return 3 + sum(attribute_value_size(v) + 1 for v in inner)
    raise ValueError(f"unknown attribute type {kind}")


def dynamodb_item_size(item: dict[str, dict[str, Any]]) -> int:
    """An item's size: for each attribute, its name's UTF-8 bytes plus its value's size."""
    return sum(len(name.encode()) + attribute_value_size(value) for name, value in item.items())


def item_breakdown(item: dict[str, dict[str, Any]]) -> list[tuple[str, int]]:
    """Bytes per top-level attribute, and per key of ``state_data`` (as ``state_data.<key>``)."""
    parts: list[tuple[str, int]] = []
    for name, value in item.items():
        if name == "state_data" and "M" in value:
            parts.append(("state_data (map overhead)", len(name.encode()) + 3))
            for key, inner in value["M"].items():
                parts.append((f"state_data.{key}", len(key.encode()) + attribute_value_size(inner) + 1))
        else:
            parts.append((name, len(name.encode()) + attribute_value_size(value)))
    return sorted(parts, key=lambda p: -p[1])


@dataclass
class ItemSize:
    day: int
    bytes: int
    version: int
    recent_events: int
    history_messages: int
    breakdown: list[tuple[str, int]]

    @property
    def commit_write_units(self) -> int:
        """What writing this item costs each commit: 1 write unit per started KB, doubled because
        the session commits in a transaction (``TransactWriteItems``)."""
        return 2 * -(-self.bytes // KB)

    def to_json(self) -> dict[str, Any]:
        return {
            "day": self.day,
            "bytes": self.bytes,
            "commit_write_units": self.commit_write_units,
            "version": self.version,
            "recent_events": self.recent_events,
            "history_messages": self.history_messages,
            "breakdown": dict(self.breakdown),
        }


def _markdown(header: list[str], lines: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    out = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"]
    out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    out += ["| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |" for line in lines]
    return out


def render_sizes(sizes: list[ItemSize], top: int = 12) -> str:
    out = [
        "",
        "Flow-state item size, one participant (offline coach; daily answers 1 / Done / Next time / none / more)",
        "sized as DynamoDB sizes items (attribute names + values, map overheads):",
        "",
    ]
    out += _markdown(
        ["after day", "bytes", "KB", "write units per commit", "version", "event records", "history messages"],
        [
            [
                str(s.day),
                str(s.bytes),
                f"{s.bytes / KB:.2f}",
                str(s.commit_write_units),
                str(s.version),
                str(s.recent_events),
                str(s.history_messages),
            ]
            for s in sizes
        ],
    )
    last = sizes[-1]
    verdict = "OK" if last.bytes <= ITEM_TARGET_BYTES else "OVER"
    out += [
        "",
        "write units per commit: of this item alone (1 per started KB, doubled: every commit is a transaction);",
        "the commit's transcript entries, event claim and META check come on top (the table above).",
    ]
    out += ["", f"Target: <= {ITEM_TARGET_BYTES} bytes after day {last.day}: {last.bytes} bytes: {verdict}"]
    out += ["", f"Largest parts after day {last.day} (bytes):"]
    for name, size in last.breakdown[:top]:
        out.append(f"  {name:40s} {size:6d}  {100 * size / last.bytes:5.1f} %")
    return "\n".join(out)
