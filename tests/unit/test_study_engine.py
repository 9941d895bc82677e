"""A study's decision points in the engine (docs/studies.md), with in-memory fakes and a
controllable clock: the decision written with the daily prompt's commit (one row however often the
event is delivered), the arm shaping the message, the end-of-day check-in and its outcome, the
daily sweep's rows for participants who are not available, the study's end, test participants."""

from __future__ import annotations

from datetime import timedelta

import pytest

from promptpipe.models.api import ParticipantUpdate
from promptpipe.models.decision import DecisionDelivery, ProximalOutcomeValue, UnavailableReason
from promptpipe.models.messaging import OutboundKind
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.safety import ConversationHold, HoldReason
from promptpipe.models.state import DataKey
from promptpipe.models.study import FRAMING_LABEL, StudyDefinition, study_setting
from promptpipe.usecases.participants import update_participant
from promptpipe.usecases.studies import sweep_study, with_study
from tests.support import MemoryHarness
from tests.unit.test_delivery_and_timers import MONDAY, StubLLM, at_local, deliver, fire_due, given, reply


def study(no_prompt: float = 0.0, *, duration: int = 28, check_in_at: str = "20:00") -> StudyDefinition:
    return StudyDefinition.model_validate(
        {
            "id": "s1",
            "name": "Test study",
            "duration_days": duration,
            "closing_message": "The study has ended. Thank you!",
            "decision_points": [
                {
                    "name": "daily_prompt",
                    "arms": [
                        {"name": "no_prompt", "probability": no_prompt},
                        {"name": "framing_a", "probability": 1 - no_prompt, "framing": "Lead with their benefit."},
                    ],
                }
            ],
            "proximal_outcome": {"check_in_at": check_in_at, "check_in_text": "Did you do it today? YES or NO"},
        }
    )


def in_study(definition: StudyDefinition, **given_args: object):  # type: ignore[no-untyped-def]
    llm = StubLLM()
    h, p, daily = given(llm=llm, **given_args)  # type: ignore[arg-type]
    with_study(h.app, definition)
    return h, p, daily, llm


def rows(h: MemoryHarness, p: ConversationParticipant):  # type: ignore[no-untyped-def]
    assert h.app.decisions is not None
    return h.app.decisions.for_participant(p.id)


def test_a_framing_arm_decides_in_the_prompts_commit_and_the_model_gets_the_framing() -> None:
    h, p, daily, llm = in_study(study())
    deliver(h, daily, at_local(MONDAY, "09:30"), event_id="fire-1")
    [row] = rows(h, p)
    assert (row.study_day, row.available, row.arm, row.probability) == (1, True, "framing_a", 1.0)
    assert row.probabilities == {"no_prompt": 0.0, "framing_a": 1.0}
    assert row.delivery is DecisionDelivery.SENT and row.sent_at is not None and row.intended_send_at is not None
    [prompt] = [m for m in h.outbox.messages(p.id) if m.kind is OutboundKind.DAILY_PROMPT]
    assert row.message_id == prompt.message_id
    [request] = llm.generator_requests()
    assert f"{FRAMING_LABEL} Lead with their benefit." in (request.messages[0].content or "")


def test_a_redelivered_daily_prompt_draws_the_same_arm_and_makes_one_row() -> None:
    h, p, daily, _ = in_study(study(0.5))
    first = deliver(h, daily, at_local(MONDAY, "09:30"), event_id="fire-1")
    again = deliver(h, daily, at_local(MONDAY, "09:31"), event_id="fire-1")  # the scheduler's retry
    later = deliver(h, daily, at_local(MONDAY, "09:40"), event_id="fire-2")  # another firing, same day
    assert again.replayed and not again.decisions and not later.decisions
    [row] = rows(h, p)
    assert first.decisions[0].arm == row.arm
    prompts = [m for m in h.outbox.messages(p.id) if m.kind is OutboundKind.DAILY_PROMPT]
    # the later firing follows the day's arm: a prompt only on a framing arm, never a second decision
    assert len(prompts) == (0 if row.arm == "no_prompt" else 2)


def test_the_no_prompt_arm_sends_nothing_but_keeps_the_schedule_and_the_check_in() -> None:
    h, p, daily, llm = in_study(study(1.0))
    outcome = deliver(h, daily, at_local(MONDAY, "09:30"))
    [row] = rows(h, p)
    assert (row.arm, row.available, row.delivery, row.intended_send_at) == ("no_prompt", True, "not_sent", None)
    assert not h.outbox.messages(p.id) and not llm.generator_requests()
    assert outcome.delivery is not None and outcome.delivery.study_arm == "no_prompt"
    assert daily.name in h.timers.schedules  # not an orphan
    assert f"{p.id}-checkin" in h.timers.schedules


@pytest.mark.parametrize(
    ("answer", "expected"),
    [("yes!! did it after lunch", ProximalOutcomeValue.DONE), ("nope, too tired", ProximalOutcomeValue.REPLIED)],
)
def test_the_check_in_goes_in_every_arm_and_its_answer_is_the_outcome(answer: str, expected: str) -> None:
    h, p, daily, _ = in_study(study(1.0))
    deliver(h, daily, at_local(MONDAY, "09:30"))
    fire_due(h, at_local(MONDAY, "20:05"))
    [check_in] = h.outbox.messages(p.id)
    assert check_in.body == "Did you do it today? YES or NO"
    reply(h, p, answer, at=at_local(MONDAY, "20:30"))
    [row] = rows(h, p)
    assert row.outcome == expected and row.outcome_at is not None
    reply(h, p, "done", at=at_local(MONDAY, "20:40"))  # a later message does not change it
    assert rows(h, p)[0].outcome == expected


def test_no_answer_within_the_window_is_none_at_the_next_sweep() -> None:
    h, p, daily, _ = in_study(study(0.0))
    deliver(h, daily, at_local(MONDAY, "09:30"))
    fire_due(h, at_local(MONDAY, "21:00"))
    h.clock.set(at_local(MONDAY + timedelta(days=1), "09:00"))
    sweep_study(h.app)
    assert rows(h, p)[0].outcome is None  # the window (24 h) is still open
    h.clock.set(at_local(MONDAY + timedelta(days=1), "09:31"))
    reply(h, p, "yes", at=h.clock.now())  # too late: not read as the answer
    report = sweep_study(h.app)
    assert report.outcomes_closed == 1 and rows(h, p)[0].outcome is ProximalOutcomeValue.NONE


def test_a_paused_participant_gets_an_unavailable_row_each_day_from_the_sweep() -> None:
    h, p, daily, _ = in_study(study(0.5))
    deliver(h, daily, at_local(MONDAY, "09:30"))
    h.clock.set(at_local(MONDAY, "12:00"))
    update_participant(h.app, p.id, ParticipantUpdate(status=ParticipantStatus.PAUSED))
    for day in range(1, 5):
        h.clock.set(at_local(MONDAY + timedelta(days=day), "03:00"))
        sweep_study(h.app)
        sweep_study(h.app)  # twice a day: still one row a day
    found = rows(h, p)
    assert [r.study_day for r in found] == [1, 2, 3, 4]
    assert all(not r.available and r.unavailable_reason is UnavailableReason.PAUSED for r in found[1:])
    assert all(r.arm is None and r.delivery is DecisionDelivery.NOT_SENT for r in found[1:])


def test_a_held_participant_gets_an_on_hold_row_and_no_check_in() -> None:
    h, p, daily, _ = in_study(study(0.0))
    h.store.flows[p.id].state_data[DataKey.HOLD.value] = ConversationHold(
        reason=HoldReason.STAFF, since=h.clock.now(), set_by="staff"
    ).model_dump_json()
    deliver(h, daily, at_local(MONDAY, "09:30"))
    [row] = rows(h, p)
    assert (row.available, row.unavailable_reason, row.arm) == (False, UnavailableReason.ON_HOLD, None)
    assert f"{p.id}-checkin" not in h.timers.schedules and not h.outbox.messages(p.id)


def test_the_study_end_sends_the_closing_message_once_and_stops_everything() -> None:
    h, p, daily, _ = in_study(study(0.0, duration=2))
    for day in range(2):
        deliver(h, daily, at_local(MONDAY + timedelta(days=day), "09:30"))
    deliver(h, daily, at_local(MONDAY + timedelta(days=2), "09:30"))  # day 3: past the study
    deliver(h, daily, at_local(MONDAY + timedelta(days=2), "09:35"), event_id="again")
    h.clock.set(at_local(MONDAY + timedelta(days=3), "09:30"))
    sweep_study(h.app)
    closing = [m for m in h.outbox.messages(p.id) if m.body == "The study has ended. Thank you!"]
    assert len(closing) == 1
    assert h.store.participants[p.id].status is ParticipantStatus.COMPLETED
    assert not [n for n, s in h.timers.schedules.items() if s.payload.participant_id == p.id]
    assert [r.study_day for r in rows(h, p)] == [1, 2]


def test_a_paused_participant_past_the_end_gets_no_closing_message() -> None:
    h, p, _, _ = in_study(study(0.0, duration=1))
    update_participant(h.app, p.id, ParticipantUpdate(status=ParticipantStatus.PAUSED))
    h.clock.set(at_local(MONDAY + timedelta(days=3), "09:00"))
    report = sweep_study(h.app)
    assert report.ended == 1 and not h.outbox.messages(p.id)
    [row] = rows(h, p)
    assert (row.study_day, row.unavailable_reason) == (1, UnavailableReason.PAUSED)
    assert sweep_study(h.app).ended == 0


def test_an_active_participant_whose_prompt_never_fired_gets_a_not_scheduled_row() -> None:
    h, p, _, _ = in_study(study(0.0))
    h.clock.set(at_local(MONDAY + timedelta(days=1), "08:00"))
    sweep_study(h.app)
    [row] = rows(h, p)
    assert (row.study_day, row.available, row.unavailable_reason) == (1, False, UnavailableReason.NOT_SCHEDULED)


def test_test_participants_are_never_decided_for() -> None:
    h, p, daily, _ = in_study(study(1.0))
    update_participant(h.app, p.id, ParticipantUpdate(test_participant=True))
    deliver(h, daily, at_local(MONDAY, "09:30"))
    h.clock.set(at_local(MONDAY + timedelta(days=2), "09:00"))
    assert sweep_study(h.app).skipped_test == 1
    assert rows(h, p) == []
    assert [m.kind for m in h.outbox.messages(p.id)][:1] == [OutboundKind.DAILY_PROMPT]  # the usual prompt


def test_a_study_setting_overrides_the_deployments_only_where_set() -> None:
    definition = study().model_copy(update={"settings": study().settings.model_copy(update={"contact": "Dr. A"})})
    assert study_setting(definition, "contact", "team") == "Dr. A"
    assert study_setting(definition, "help_text", "default help") == "default help"
    assert study_setting(None, "contact", "team") == "team"
    with pytest.raises(KeyError):
        study_setting(definition, "not_a_setting", None)


@pytest.mark.parametrize(
    ("framing", "expected"),
    [
        ("Frame the prompt around the benefit the participant named for themselves.", "Remember: "),
        ("Frame the prompt as a tiny, concrete next step tied to their anchor.", "One tiny step today: "),
    ],
)
def test_the_offline_coach_honours_each_framing_of_the_example_study(framing: str, expected: str) -> None:
    from promptpipe.adapters.offline_coach.habit_prompt import build_habit_prompt

    user = "Habit domain: exercise\nMotivation: feel energetic\nAnchor routine: after coffee"
    framed = build_habit_prompt(user, f"Generator\n{FRAMING_LABEL} {framing}\nIntensity: normal")
    plain = build_habit_prompt(user, "Generator\nIntensity: normal")
    assert framed.startswith(expected) and framed != plain and "study" not in framed.casefold()
    sms = build_habit_prompt(user + "\nIt is sent by SMS: at most 60 characters", f"{FRAMING_LABEL} {framing}")
    assert len(sms) <= 60 or not sms.startswith(expected)  # a framing never breaks the SMS limit
    assert build_habit_prompt(user, f"{FRAMING_LABEL} Be playful.") == plain  # not readable by rules: default


def test_a_study_file_is_read_and_checked_as_the_engine_reads_it(tmp_path: pytest.TempPathFactory) -> None:
    from pathlib import Path

    from promptpipe.errors import ValidationFailed
    from promptpipe.settings import Settings
    from promptpipe.usecases.studies import load_study, parse_study
    from promptpipe.wiring import _study

    directory = Path(str(tmp_path))
    (directory / "s1.json").write_text(study().model_dump_json())
    assert load_study(directory, "s1") == study()
    (directory / "s2.json").write_text(study().model_dump_json())
    with pytest.raises(ValidationFailed, match="declares the study 's1'"):
        load_study(directory, "s2")
    with pytest.raises(ValidationFailed, match="no study 'nope'"):
        load_study(directory, "nope")
    with pytest.raises(ValidationFailed, match="not JSON"):
        parse_study("{")
    with pytest.raises(ValidationFailed, match=r"decision_points\.0\.arms"):
        parse_study(study().model_dump_json().replace('"probability":1.0', '"probability":0.9'))
    # the deployment's study: STUDY_ID's file when there is one; a STUDY_ID without one routes models only
    assert _study(Settings(study_id="s1", studies_dir=directory)) == study()
    assert _study(Settings(study_id="routes-only", studies_dir=directory)) is None
    assert _study(Settings()) is None


def test_studies_validate_says_whether_a_file_is_a_study(
    tmp_path: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    # main() quiets Powertools through the environment; keep that from leaking into other tests.
    for name, value in (("POWERTOOLS_METRICS_DISABLED", "true"), ("POWERTOOLS_LOG_LEVEL", "ERROR")):
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")

    from promptpipe.cli.commands import main

    good, bad = Path(str(tmp_path)) / "good.json", Path(str(tmp_path)) / "bad.json"
    good.write_text(study().model_dump_json())
    bad.write_text('{"id": "x"}')
    assert main(["studies", "validate", str(good)]) == 0
    assert "valid: study 's1', 28 days, daily_prompt (2 arms)" in capsys.readouterr().out
    assert main(["studies", "validate", str(bad)]) == 1
    assert "closing_message: Field required" in capsys.readouterr().err
