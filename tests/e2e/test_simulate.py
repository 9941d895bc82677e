"""``promptpipe simulate``: a small seeded run through the real handlers, its counts asserted."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from promptpipe.cli.commands import main
from promptpipe.local.simulate import PromptPeaks, run_simulation


@pytest.fixture(autouse=True)
def _restore_runtime_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # main() quiets Powertools through the environment; keep that from leaking into other tests.
    for name in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_LOG_LEVEL", "POWERTOOLS_TRACE_DISABLED"):
        monkeypatch.setenv(name, "true" if name != "POWERTOOLS_LOG_LEVEL" else "ERROR")


@pytest.mark.slow
def test_simulate_two_participants_one_day(capsys: pytest.CaptureFixture[str]) -> None:
    # When two participants live through intake and one day (seed 7: both answer their daily prompt)
    assert main(["simulate", "--participants", "2", "--days", "1", "--seed", "7"]) == 0
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    # Then the counts add up: 5 intake messages each (the last: the yes to the proposed time) + 1 reply
    # each; a worker turn per inbound
    # message and per greeting; each schedule firing (2 daily prompts, the reminders and the
    # auto-feedback timers) is an event; events = webhooks + enrolments + turns + firings
    assert out[0] == "participants=2 days=1"
    # (20 messages: on SMS the 4 intensity polls ride in the daily prompts' messages)
    assert out[1] == "events=38 (webhook calls 12, worker turns 14, scheduler firings 10); messages sent 20"
    assert re.fullmatch(r"wall \d+\.\d s, \d+\.\d events/s, CPU \d+\.\d\d ms/event", out[2])
    segments = next(line for line in out if "messages, intake included)" in line)
    # on SMS the day's poll rides in the daily prompt's message: no poll of its own
    assert "(all 20 messages, intake included)" in segments and "(0 intensity polls on their own)" in segments
    by_kind = out[out.index(segments) + 1]
    assert "daily_prompt" in by_kind and "(n=4)" in by_kind
    # progress goes to stderr, one line per stage
    progress = captured.err.splitlines()
    assert progress[:2] == ["… enrolled 2 participants", "… intake done"]
    assert len(progress) == 3 and re.fullmatch(r"… day 1/1 done \(\d+ events, CPU \d+\.\d ms/event\)", progress[2])


@pytest.mark.slow
def test_simulation_report_is_consistent_and_seeded() -> None:
    report = run_simulation(2, 1, seed=7)
    assert report.worker_turns == report.webhook_calls + report.participants
    assert report.events == report.webhook_calls + report.participants + report.worker_turns + report.scheduler_firings
    assert report.sms is not None
    assert report.sms.messages == report.messages_sent
    assert report.sms.by_kind["greeting"][0] == 2
    assert sum(count for count, _, _ in report.sms.by_kind.values()) == report.messages_sent
    assert report.sms.after <= report.sms.before  # the SMS messenger never adds segments
    assert "intensity_poll" not in report.sms.by_kind  # on SMS it rides in the daily prompt's message
    assert report.sms.by_kind["daily_prompt"][2] == report.sms.by_kind["daily_prompt"][0]  # one segment each
    assert report.events_per_second > 0
    assert report.cpu_ms_per_event > 0
    # each participant's daily schedule fired twice (the intake day's and the next), within the
    # default 5-minute flexible window
    assert report.prompt_peaks is not None
    assert (report.prompt_peaks.firings, report.prompt_peaks.window_minutes) == (4, 5)
    assert 1 <= report.prompt_peaks.busiest_second <= report.prompt_peaks.busiest_minute <= 4


def test_prompt_peaks_count_the_busiest_second_and_minute() -> None:
    base = datetime(2026, 3, 3, 7, 20, tzinfo=UTC)
    times = [base, base, base + timedelta(seconds=30), base + timedelta(minutes=1, seconds=5)]
    peaks = PromptPeaks.of(times, 0)
    assert (peaks.firings, peaks.busiest_second, peaks.busiest_minute) == (4, 2, 3)
    assert peaks.line() == "daily-prompt firings 4 (no flexible window): busiest second 2, busiest minute 3"
    assert PromptPeaks.of([], 5).line() == (
        "daily-prompt firings 0 (5-minute flexible window): busiest second 0, busiest minute 0"
    )


@pytest.mark.parametrize("value", ["61", "-1", "five"])
def test_simulate_refuses_a_window_settings_would_refuse(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["simulate", "--participants", "1", "--days", "1", "--flexible-window", value])
    assert exit_info.value.code == 2
    assert f"argument --flexible-window: {value!r} is not a number of minutes from 0 to 60" in capsys.readouterr().err


@pytest.mark.slow
def test_the_in_memory_stack_lives_the_same_days_as_moto() -> None:
    # Given the same seeded population run on the in-memory adapters (simulate's default) and on moto
    in_memory = run_simulation(3, 2, seed=7)
    on_moto = run_simulation(3, 2, seed=7, stack="moto")
    # Then every count of the run is the same: the stand-ins change the cost, not what happens
    counted = ("events", "webhook_calls", "worker_turns", "scheduler_firings", "messages_sent")
    assert {name: getattr(in_memory, name) for name in counted} == {name: getattr(on_moto, name) for name in counted}
    assert in_memory.messages_sent > 0
    assert in_memory.sms is not None and on_moto.sms is not None
    assert in_memory.sms.by_kind == on_moto.sms.by_kind
