"""A participants API answered from canned data, for the coordinator's pure parts (export, summary)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from promptpipe.coordinator.client import ApiAnswer

T0 = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)


def participant(pid_hex: str, **fields: Any) -> dict[str, Any]:
    return {
        "id": "p_" + pid_hex * (32 // len(pid_hex)),
        "phone_number": "+14165550142",
        "timezone": "America/Toronto",
        "enrolled_at": T0.isoformat(),
        "created_at": T0.isoformat(),
        "updated_at": T0.isoformat(),
        **fields,
    }


def entry(pid: str, minutes: float, direction: str, kind: str, content: str, **metadata: Any) -> dict[str, Any]:
    return {
        "participant_id": pid,
        "at": (T0 + timedelta(minutes=minutes)).isoformat(),
        "seq": f"s{minutes:09.2f}",
        "direction": direction,
        "kind": kind,
        "content": content,
        "metadata": metadata,
    }


class CannedApi:
    """Answers ``GET`` of the participants list, the list's rows (from the state views: sub-state and
    hold; paged by offset), a history, a state view and the (empty) audit; 404 for anything else."""

    description = "canned"

    def __init__(
        self,
        participants: list[dict[str, Any]],
        history: dict[str, list[dict[str, Any]]],
        states: dict[str, dict[str, Any] | None],
    ) -> None:
        self.participants, self.history, self.states = participants, history, states
        self.calls: list[str] = []

    def request(
        self, method: str, path: str, *, query: dict[str, str] | None = None, json_body: Any = None
    ) -> ApiAnswer:
        self.calls.append(f"{method} {path}")
        parts = path.strip("/").split("/")
        if parts == ["conversation", "participants"]:
            return ApiAnswer(200, {"result": {"participants": self.participants, "next_token": None}})
        if parts == ["conversation", "participant-rows"]:
            return ApiAnswer(200, {"result": self._rows(query or {})})
        if parts == ["conversation", "audit"]:  # the coordinators' audit: none recorded here
            return ApiAnswer(200 if method == "GET" else 201, {"result": {"records": []}})
        pid = parts[2] if len(parts) > 2 else ""
        if parts[3:] == ["history"] and pid in self.history:
            return ApiAnswer(200, {"result": {"messages": self.history[pid], "next_token": None}})
        if parts[3:] == ["state"] and self.states.get(pid) is not None:
            return ApiAnswer(200, {"result": self.states[pid]})
        if len(parts) == 3 and any(p["id"] == pid for p in self.participants):
            return ApiAnswer(200, {"result": next(p for p in self.participants if p["id"] == pid)})
        return ApiAnswer(404, {"message": "not found"})

    def _rows(self, query: dict[str, str]) -> dict[str, Any]:
        from promptpipe.models.participant_rows import ListedParticipant
        from promptpipe.usecases.participant_rows import matches

        rows = []
        for p in self.participants:
            state = self.states.get(p["id"]) or {}
            record = ListedParticipant.model_validate(p)
            if query.get("status") and record.status.value != query["status"]:
                continue
            if not matches(record, query.get("q", "")):
                continue
            needs = bool((state.get("controller") or {}).get("needs_person"))
            if query.get("needs_person") == "true" and not needs:
                continue
            row = {"participant": p, "sub_state": state.get("sub_state", ""), "needs_person": needs}
            rows.append(row | {"prompts_sent": 0, "done": 0} | state.get("row", {}))
        # the cursor is a place (the id of the last row shown), as the API's: rows listed since come first
        ids = [row["participant"]["id"] for row in rows]
        after, limit = query.get("next_token"), int(query.get("limit") or 50)
        start = ids.index(after) + 1 if after in ids else 0
        more = start + limit < len(rows)
        return {
            "rows": rows[start : start + limit],
            "total": len(rows),
            "next_token": ids[start + limit - 1] if more else None,
            "offset": start,
        }
