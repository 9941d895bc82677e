"""The list's sorting and filters, at the use case's lowest layer (usecases/participant_listing.py):
a view the API would refuse, the cursor's own form, and the channel a send records."""

from __future__ import annotations

import pytest

from promptpipe.errors import ValidationFailed
from promptpipe.models.messaging import SendResult
from promptpipe.models.participant_list import ListView
from promptpipe.usecases.participant_listing import check_view, read_view_cursor, view_cursor
from promptpipe.usecases.sending import channel_of


@pytest.mark.parametrize(
    ("view", "field"),
    [
        (ListView(sort="age"), "sort"),
        (ListView(adherence="great"), "adherence"),
        (ListView(study_day_min=9, study_day_max=2), "study_day_min"),
    ],
)
def test_a_view_the_api_refuses(view: ListView, field: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        check_view(view)
    assert refused.value.field == field


def test_the_cursor_is_a_place_in_one_sort() -> None:
    place = (float("inf"), -4.0, "p_1")
    token = view_cursor("adherence", place)
    assert read_view_cursor(token, "adherence") == place
    for bad, sort in (
        (token, "activity"),
        ("x" + token[1:], "adherence"),
        ("v!!", "adherence"),
        ("v" + "A" * 500, "status"),
    ):
        with pytest.raises(ValidationFailed):
            read_view_cursor(bad, sort)
    import base64
    import json

    for values in (["status", True, 1, "p_1"], ["status", "x", 1, "p_1"], ["status", 1, 1, 7]):
        forged = "v" + base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")
        with pytest.raises(ValidationFailed):
            read_view_cursor(forged, "status")


def test_the_channel_a_send_records() -> None:
    assert channel_of(SendResult(provider="twilio", segments=2)) == "sms"
    assert channel_of(SendResult(provider="twilio")) == "whatsapp"  # Twilio's WhatsApp: no segments
    assert channel_of(SendResult(provider="whatsapp_cloud")) == "whatsapp"
    assert channel_of(SendResult(provider="other", template="t")) == "whatsapp"
    assert channel_of(SendResult(provider="local")) == "local"


def test_delivery_meanings_and_lines_the_console_cannot_pair() -> None:
    from promptpipe.console.delivery import deliveries_by_line, meaning_of

    assert meaning_of("", "participant paused") == "the participant was paused"
    assert meaning_of("", "some_new_reason") == "some new reason"  # never a raw code with underscores
    assert meaning_of("30003", "undelivered: whatever") == "the phone was unreachable (off or out of coverage)"
    assert deliveries_by_line([object()], []) == {}  # lines and entries that do not pair: nothing claimed
