"""How the console words times, schedules and timers (console/views.py)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from promptpipe.console.views import local_time, pending_timers, schedule_words, shown_value

TORONTO = ZoneInfo("America/Toronto")


def test_times_are_local_with_the_zone_named_and_unknown_ones_are_a_dash() -> None:
    assert local_time("2026-03-02T13:00:00Z", TORONTO) == "Mon 02 Mar 08:00 EST"
    assert local_time("2026-07-02T13:00:00Z", TORONTO) == "Thu 02 Jul 09:00 EDT"
    assert local_time("0001-01-01T00:00:00Z", TORONTO) == "—"  # Go's zero time: the original's "never"
    assert local_time(None, TORONTO) == local_time("", TORONTO) == local_time("soon", TORONTO) == "—"
    assert shown_value("0001-01-01T00:00:00Z", TORONTO) == "—"
    assert shown_value("2026-03-02T13:00:00Z", TORONTO) == "Mon 02 Mar 08:00 EST"
    assert shown_value("after coffee", TORONTO) == "after coffee" and shown_value(3, TORONTO) == 3


def test_a_schedule_says_when_the_prompt_goes_out_and_why() -> None:
    fixed = {"type": "fixed", "fixed_time": "07:30", "timezone": "America/Toronto"}
    assert schedule_words(fixed, TORONTO, 10) == (
        "fixed at 07:30 (America/Toronto): the prompt goes out at 07:20, prepared 10 min ahead "
        "(SCHEDULER_PREP_TIME_MINUTES)"
    )
    random = {"type": "random", "random_start_time": "00:05", "random_end_time": "02:00", "timezone": ""}
    assert schedule_words(random, TORONTO, 10).startswith(
        "random between 00:05 and 02:00 (America/Toronto): the prompt goes out between 23:55 and 01:50"
    )
    assert schedule_words(fixed, TORONTO, 0) == "fixed at 07:30 (America/Toronto)"


def test_pending_timers_say_what_they_do_and_when_the_state_knows_it() -> None:
    state = {
        "pending_timers": {"dailyPromptReminderTimerID": "p_x-reminder", "autoFeedbackTimerID": "p_x-autofb"},
        "daily_prompt_pending": {"sent_at": "2026-03-02T12:20:00Z", "reminder_due_at": "2026-03-02T17:20:00Z"},
    }
    assert pending_timers(state, TORONTO) == [
        ("reminder (no answer yet)", "Mon 02 Mar 12:20 EST"),
        ("feedback conversation starts", "—"),
    ]
    assert pending_timers(None, TORONTO) == []


def test_the_list_filters_and_badges_those_who_need_a_person() -> None:
    from promptpipe.console.app import Console
    from promptpipe.coordinator.client import CoordinatorClient
    from tests.support.api_fakes import CannedApi, participant

    held, fine = participant("a1", name="Held"), participant("b2", name="Fine", phone_number="+14165550143")
    states = {
        held["id"]: {"sub_state": "INTAKE", "controller": {"needs_person": True, "hold": {"kind": "HANDOFF"}}},
        fine["id"]: {"sub_state": "FEEDBACK", "profile": {"created_at": "0001-01-01T00:00:00Z"}},
    }
    console = Console(CoordinatorClient(CannedApi([held, fine], {held["id"]: [], fine["id"]: []}, states)))

    everyone, needing = console.list_page({}), console.list_page({"needs": "1"})

    assert "Held" in everyone and "Fine" in everyone and everyone.count('class="flag badge">needs a person') == 1
    assert "Held" in needing and "Fine" not in needing
    assert '<td data-label="Zone">America/Toronto</td>' in everyone
    page = console.participant_page(fine["id"], {})
    assert "0001-01-01" not in page and "<dt>created at</dt><dd>—</dd>" in page


def test_the_list_is_paged_by_the_apis_cursor_in_one_call_a_page() -> None:
    from promptpipe.console.app import PAGE_ROWS, Console
    from promptpipe.coordinator.client import CoordinatorClient
    from tests.support.api_fakes import CannedApi, participant

    people = [participant(f"{n:04x}", name=f"P{n:03d}", phone_number=f"+1416555{n:04d}") for n in range(120)]
    api = CannedApi(people, {p["id"]: [] for p in people}, {p["id"]: {"sub_state": "INTAKE"} for p in people})
    console = Console(CoordinatorClient(api))

    first = console.list_page({})
    assert api.calls == ["GET /conversation/participant-rows"]  # one call, never one per row
    assert first.count('<tr>\n      <th scope="row">') == PAGE_ROWS == 50
    assert "1–50 of 120 participants" in first and f'href="/?after={people[49]["id"]}" rel="next"' in first
    # "Next" carries the cursor of the page shown; each page is one call
    second = console.list_page({"after": people[49]["id"]})
    last = console.list_page({"after": people[99]["id"]})
    assert api.calls == ["GET /conversation/participant-rows"] * 3
    assert "51–100 of 120" in second and "Page 2 of 3" in second and 'href="/?" rel="prev"' in second
    assert "101–120 of 120 participants" in last and "P119" in last and "P000" not in last
    assert 'rel="next"' not in last and f'href="/?after={people[49]["id"]}" rel="prev"' in last


def test_the_legend_has_the_strips_colours_in_the_stylesheet() -> None:
    # The console's CSP forbids inline styles: the legend's swatches are coloured by the stylesheet
    from pathlib import Path

    from promptpipe.console import charts
    from promptpipe.console.charts import COLOURS

    # Next to the package, wherever it is installed (the mutation stage has no shared/ directory)
    css = (Path(charts.__file__).resolve().parent / "static/style.css").read_text()
    assert all(f".swatch.day-{state} {{ background: {colour}; }}" in css for state, colour in COLOURS.items())
