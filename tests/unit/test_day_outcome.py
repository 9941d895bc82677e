"""The day's outcome, read and recorded in one place (docs/pipeline.md, "The day's outcome"), and the
plain-language opt-out the coach's tool honours as STOP is honoured.

With a model (the scripted adapter): ``record_outcome`` counts a typed "done" once per daily prompt
through the same recorder as the poll's button; the reply's count is the record's. Without one: the
reader of ``rules/outcome.py`` on the words people write."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.controller import tool_table
from promptpipe.flow.lifecycle import OPT_OUT_CONFIRMATION, opt_out
from promptpipe.flow.tools.base import ToolContext
from promptpipe.flow.tools.opt_out import OptOutTool
from promptpipe.flow.tools.outcome import OutcomeTool
from promptpipe.models.messaging import OutboundKind
from promptpipe.models.participant import ParticipantStatus
from promptpipe.models.state import DataKey, StateData
from promptpipe.rules.clock import to_rfc3339
from promptpipe.rules.outcome import correct_count, read_outcome
from tests.support import memory_harness
from tests.unit.test_conversation_flow import turn

RECORD, OPT_OUT = tool_table.OUTCOME.name, tool_table.OPT_OUT.name


def in_feedback(h, *, prompt_hours_ago: float | None = 1.0, done: int = 2, delivered: int = 5):
    p = h.enroll()
    raw = h.data(p.id)
    raw[DataKey.CONVERSATION_STATE.value] = "FEEDBACK"
    profile = {"habit_domain": "movement", "prompt_anchor": "after coffee", "preferred_time": "08:00",
               "success_count": done, "total_prompts": delivered}  # fmt: skip
    raw[DataKey.USER_PROFILE.value] = json.dumps(profile)
    if prompt_hours_ago is not None:
        raw[DataKey.LAST_PROMPT_SENT_AT.value] = to_rfc3339(h.clock.now() - timedelta(hours=prompt_hours_ago))
    return p


def done_count(h, pid) -> int:
    return StateData(dict(h.data(pid))).profile().success_count


def sent(h) -> list[str]:
    return [m.body for m in h.outbox.messages()]


# --- the reader (the brief's words; the held-out list is scored in test_outcome_heldout.py) -----------
@pytest.mark.parametrize(
    "text", ["finished my stretches 💪", "did it before breakfast", "sí, lo hice", "done and done",
             "👍 did a short one", "Done, 20 pushups", "listo", "hecho"],
)  # fmt: skip
def test_a_report_of_doing_it_in_any_words_is_done(text: str) -> None:
    assert read_outcome(text, asked=True) == "done"
    assert read_outcome(text, asked=False) == "done"  # it says so itself


@pytest.mark.parametrize("text", ["nah", "didn't get to it", "maybe later", "missed it again"])
def test_a_report_of_not_doing_it_is_not_done(text: str) -> None:
    assert read_outcome(text, asked=True) == "not_done"


@pytest.mark.parametrize("text", ["sure", "ok I'll try", "yes", "sounds good", "👍"])
def test_agreeing_to_try_is_not_a_report(text: str) -> None:
    assert read_outcome(text, asked=False) == "no_report"  # the answer to "Would that feel doable?"


def test_a_bare_yes_reports_only_when_the_coach_asked_whether_they_did_it() -> None:
    assert read_outcome("yes!", asked=True) == "done"
    assert read_outcome("sure", asked=True) == "no_report"  # agreement words never report


def test_a_stated_count_is_corrected_to_the_record_and_other_numbers_are_kept() -> None:
    assert correct_count("That's 7 done so far!", 3) == "That's 3 done so far!"
    assert correct_count("You've done 7 of 9 prompts.", 3) == "You've done 3 of 9 prompts."
    untouched = "Try 2 of 3 sets, 10 times, at 7pm."
    assert correct_count(untouched, 3) == untouched


# --- with a model: the tool, the one recorder, the record's count ------------------------------------
def test_a_typed_done_is_recorded_once_per_prompt_and_the_reply_says_the_records_count() -> None:
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call(RECORD, {"done": True}),
            ScriptedLLM.text("Nice work! That's 7 done so far."),  # a count the record does not hold
            ScriptedLLM.tool_call(RECORD, {"done": True}),  # the same day again
            ScriptedLLM.text("Still 3 done so far!"),
        ]
    )
    h = memory_harness(llm)
    p = in_feedback(h, done=2)
    turn(h, p, "finished my stretches 💪")
    assert done_count(h, p.id) == 3
    assert sent(h)[-1] == "Nice work! That's 3 done so far."  # corrected before it was sent
    offered = [t.name for t in llm.requests[0].tools]
    assert offered == list(tool_table.names_for("feedback")) and RECORD in offered
    assert "prompts completed: 2 of 5 delivered" in (llm.requests[0].messages[1].content or "")
    assert "Done so far: 3 of 5" in (llm.requests[1].messages[-1].content or "")  # the tool's result
    turn(h, p, "did it again lol")
    assert done_count(h, p.id) == 3  # once per prompt
    assert "already counted" in (llm.requests[3].messages[-1].content or "")


def test_the_poll_button_and_a_typed_report_share_the_recorder() -> None:
    llm = ScriptedLLM(
        [ScriptedLLM.text("Great!"), ScriptedLLM.tool_call(RECORD, {"done": True}), ScriptedLLM.text("Yay")]
    )
    h = memory_harness(llm)
    p = in_feedback(h, done=0)
    turn(h, p, "1", answer_id="done")  # the poll's button
    assert done_count(h, p.id) == 1
    turn(h, p, "yes I did it")
    assert done_count(h, p.id) == 1  # the same prompt: never counted twice


def test_not_done_counts_nothing_and_a_report_outside_the_window_counts_nothing() -> None:
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call(RECORD, {"done": False}),
            ScriptedLLM.text("No worries."),
            ScriptedLLM.tool_call(RECORD, {"done": True}),
            ScriptedLLM.text("Nice."),
        ]
    )
    h = memory_harness(llm)
    p = in_feedback(h, done=1)
    turn(h, p, "didn't get to it")
    assert done_count(h, p.id) == 1
    h.data(p.id)[DataKey.LAST_PROMPT_SENT_AT.value] = to_rfc3339(h.clock.now() - timedelta(hours=24, seconds=1))
    turn(h, p, "did it")
    assert done_count(h, p.id) == 1
    assert "nothing counted" in (llm.requests[3].messages[-1].content or "")


# --- opt-out in plain language -----------------------------------------------------------------------
@pytest.mark.parametrize("module", ["intake", "feedback"])
def test_a_plain_request_to_stop_opts_out_as_stop_does(module: str) -> None:
    llm = ScriptedLLM([ScriptedLLM.tool_call(OPT_OUT, {}), ScriptedLLM.text("Okay, I've stopped everything.")])
    h = memory_harness(llm)
    p = in_feedback(h) if module == "feedback" else h.enroll()
    assert OPT_OUT in tool_table.names_for(module)  # type: ignore[arg-type]
    before = len(h.outbox.messages())
    turn(h, p, "can you stop sending me these")
    participant = h.store.get(p.id)
    assert participant.status is ParticipantStatus.PAUSED and participant.opted_out
    new = h.outbox.messages()[before:]
    assert [(m.body, m.kind) for m in new] == [(OPT_OUT_CONFIRMATION, OutboundKind.NOTICE)]  # one, how to restart
    assert "START" in OPT_OUT_CONFIRMATION


def test_the_opt_out_tool_says_an_unclear_request_gets_a_question() -> None:
    assert "stop texting me at night" in tool_table.OPT_OUT.description
    assert "ask" in tool_table.OPT_OUT.description


def test_the_tool_refuses_a_done_that_is_not_true_or_false() -> None:
    h = memory_harness()
    p = in_feedback(h)
    session = h.app.sessions.open(p.id, "evt-1")
    result = OutcomeTool().execute(ToolContext(deps=h.app.deps, session=session), {"done": "yes"})
    assert not result.ok and "true or false" in result.text
    assert done_count(h, p.id) == 2


def test_done_no_problem_is_done_and_a_question_is_no_report() -> None:
    assert read_outcome("done, no problem", asked=True) == "done"
    assert read_outcome("when should I do it?", asked=True) == "no_report"


def test_opting_out_someone_already_paused_changes_nothing() -> None:
    h = memory_harness()
    p = h.enroll()
    h.store.participants[p.id].status = ParticipantStatus.PAUSED
    session = h.app.sessions.open(p.id, "evt-1")
    assert opt_out(h.app.deps, session) is False
    result = OptOutTool().execute(ToolContext(deps=h.app.deps, session=session), {})
    assert result.ok and "nothing changed" in result.text
    assert not h.store.get(p.id).opted_out
