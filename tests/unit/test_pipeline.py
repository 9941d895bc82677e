"""The turn pipeline's stages: parse, validate, intent, tools, model loop, synthesis, finalize."""

from __future__ import annotations

import json

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.controller import tool_table
from promptpipe.errors import LLMError
from promptpipe.flow import intent as intents
from promptpipe.flow.intent import FEEDBACK_TOOLS, INTAKE_TOOLS, Intent, TTLCache
from promptpipe.flow.intent_rules import TurnContext, decide, normalise
from promptpipe.flow.modules import TRY_AGAIN_FALLBACK
from promptpipe.flow.pipeline import (
    TRUNCATION_MARK,
    ParsedTurn,
    StageTimer,
    estimate_tokens,
    parse,
    split_tool_calls,
    synthesis_messages,
    validate_inbound,
)
from promptpipe.models.llm import ChatMessage, ChatResponse, TokenUsage, ToolCall
from promptpipe.models.state import DataKey, ScheduleInfo, ScheduleType, StateData
from promptpipe.settings import Settings
from tests.support import memory_harness, turn

SAVE, GENERATE, SCHEDULER, TRANSITION = INTAKE_TOOLS[0], INTAKE_TOOLS[1], INTAKE_TOOLS[2], INTAKE_TOOLS[3]


def save_profile(h, pid, **fields):
    profile = json.loads(h.data(pid).get(DataKey.USER_PROFILE.value) or "{}")
    profile.update(fields)
    h.store.flows[pid].state_data[DataKey.USER_PROFILE.value] = json.dumps(profile)


# --- parse ----------------------------------------------------------------------------------------
def test_parse_strips_and_recognises_a_system_hint() -> None:
    assert parse("  hello \n") == ParsedTurn(text="hello", is_hint=False)
    assert parse("<Hint: greet them>").is_hint


# --- validate -------------------------------------------------------------------------------------
def test_validate_clips_over_the_token_budget_and_marks_it() -> None:
    long = ParsedTurn(text="a" * 401, is_hint=False)
    clipped = validate_inbound(long, max_tokens=100)
    assert clipped.clipped and clipped.text == "a" * 400 + TRUNCATION_MARK
    assert estimate_tokens("a" * 400) == 100
    short = ParsedTurn(text="a" * 400, is_hint=False)
    assert validate_inbound(short, max_tokens=100) is short


def test_split_tool_calls_runs_the_first_n() -> None:
    calls = [ToolCall(id=f"c{i}", name="scheduler") for i in range(12)]
    run, refused = split_tool_calls(calls, 10)
    assert [c.id for c in run] == [f"c{i}" for i in range(10)] and [c.id for c in refused] == ["c10", "c11"]


def test_too_many_tool_calls_runs_none_beyond_the_limit_and_tells_the_model() -> None:
    # Given a limit of 2 calls per response and a model that asks for 3 list calls
    calls = [("scheduler", {"action": "list"}, f"c{i}") for i in range(3)]
    llm = ScriptedLLM([ScriptedLLM.tool_calls(calls), ScriptedLLM.text("Done.")])
    h = memory_harness(llm, settings=Settings(max_tool_calls_per_response=2))
    p = h.enroll()
    outcome = turn(h, p, "when is my reminder?")
    # Then two ran, the third got a tool error saying it was not run, and the turn answered
    tool_messages = [m for m in llm.requests[1].messages if m.role == "tool"]
    assert [m.tool_call_id for m in tool_messages] == ["c0", "c1", "c2"]
    assert tool_messages[2].content.startswith("ERROR: not run") and "at most 2" in tool_messages[2].content
    assert [r["name"] for r in outcome.turn.audit["tool_calls"]] == ["scheduler", "scheduler"]
    assert outcome.turn.audit["pipeline"]["refused_tool_calls"] == 1
    assert outcome.outbound[0].body == "Done."


def test_unknown_tool_and_malformed_arguments_are_tool_errors_with_detail() -> None:
    bad = ChatResponse(
        tool_calls=[ToolCall(id="u1", name="launch_rocket"), ToolCall(id="m1", name=SAVE, arguments="[1, 2")],
        model="scripted",
    )
    llm = ScriptedLLM([bad, ScriptedLLM.text("Sorry, let me try again.")])
    h = memory_harness(llm)
    p = h.enroll()
    outcome = turn(h, p, "I want to sleep better")
    unknown, malformed = [m.content for m in llm.requests[1].messages if m.role == "tool"]
    assert "unknown tool: launch_rocket" in unknown and "available:" in unknown
    assert "invalid arguments" in malformed
    assert outcome.outbound[0].body == "Sorry, let me try again."


# --- intent ---------------------------------------------------------------------------------------
def decided_on(module, text, *, missing_required, has_schedule=False, last_reply="", node=None, node_tools=()):
    context = TurnContext(
        module=module,
        text=text,
        missing_required=tuple(missing_required),
        has_schedule=has_schedule,
        last_reply=last_reply,
        node=node,
        node_tools=node_tools,
    )
    return decide(context)


@pytest.mark.parametrize(
    "case",
    [
        ("intake", "<Hint: greet>", ["prompt_anchor"], "greeting", (), "auto"),
        ("intake", "Thanks! 🙏", ["prompt_anchor"], "small_talk", (), "auto"),
        ("intake", "I'd like to exercise more", ["prompt_anchor", "preferred_time"], "profile", (SAVE,), "auto"),
        ("intake", "Mornings at 7:30, after my coffee.", ["prompt_anchor", "preferred_time"], "completes_profile",
         INTAKE_TOOLS, "auto"),
        ("intake", "After lunch.", ["prompt_anchor"], "completes_profile", INTAKE_TOOLS, "auto"),
        ("intake", "sounds fun, what next", [], "profile", INTAKE_TOOLS, "auto"),
        ("feedback", "stop sending me messages", [], "stop_messages", (SAVE, SCHEDULER), "auto"),
        ("feedback", "I want a new habit", [], "change_habit", (SAVE, TRANSITION), "auto"),
        ("feedback", "Q: How's the intensity? A: Increase", [], "intensity_answer", (), "auto"),
        ("feedback", "Q: Did you do it? A: Done", [], "done_answer", (SAVE,), "auto"),
        ("feedback", "I walked for a bit", ["prompt_anchor"], "repair", (TRANSITION,), "auto"),
    ],
)  # fmt: skip
def test_the_rules(case) -> None:
    module, text, missing, name, tools, choice = case
    decided = decided_on(module, text, missing_required=missing, has_schedule=True)
    assert (decided.name, set(decided.tools), decided.tool_choice) == (name, set(tools), choice)


def test_an_action_request_is_hinted_only_when_there_is_something_to_act_on() -> None:
    with_schedule = decided_on("intake", "Please move my reminder to 8pm", missing_required=[], has_schedule=True)
    assert (with_schedule.name, with_schedule.tool_choice) == ("change_time", "auto")
    assert {SAVE, SCHEDULER} <= set(with_schedule.tools)
    assert SCHEDULER in (intents.intent_hint(with_schedule) or "")
    before = decided_on("intake", "Please move my reminder to 8pm", missing_required=[], has_schedule=False)
    assert before.tool_choice == "auto" and SCHEDULER in before.tools and intents.intent_hint(before) is None


def test_the_controller_nodes_tools_are_offered() -> None:
    decided = decided_on("intake", "I like to run", missing_required=["prompt_anchor"], node="schedule",
                         node_tools=(SCHEDULER, SAVE))  # fmt: skip
    assert decided.source == "controller" and set(decided.tools) == {SAVE, SCHEDULER}


def test_the_rules_are_unsure_about_a_question_mid_intake() -> None:
    decided = decided_on("intake", "can you explain how this works?", missing_required=["prompt_anchor"])
    assert not decided.confident
    assert not decided_on("feedback", "why is it so hard?", missing_required=[]).confident


def test_normalise_is_the_cache_key() -> None:
    assert normalise("  Hello   THERE!! ") == "hello there"


def test_every_turn_is_offered_all_the_modules_tools_in_the_tables_order() -> None:
    # docs/pipeline.md, "Tools by context": the words of a message never take a tool away, and the
    # same tool list on every turn keeps the cached prefix byte-stable.
    llm = ScriptedLLM([ScriptedLLM.text("Great choice, noted."), ScriptedLLM.text("You're welcome!")])
    h = memory_harness(llm)
    p = h.enroll()
    turn(h, p, "I'd like to exercise more")
    turn(h, p, "thanks")
    first, second = llm.requests
    assert tuple(t.name for t in first.tools) == tool_table.names_for("intake") and first.tool_choice == "auto"
    assert first.parallel_tool_calls is True
    assert second.tools == first.tools and second.tool_choice == "auto"
    assert first.messages[0].content == second.messages[0].content  # the byte-stable prefix


def test_an_unsure_turn_without_the_classifier_gets_the_whole_tool_set() -> None:
    llm = ScriptedLLM([ScriptedLLM.text("Sure!")])
    h = memory_harness(llm)
    p = h.enroll()
    save_profile(h, p.id, habit_domain="sleep")
    turn(h, p, "can you explain how this works?")
    assert {t.name for t in llm.requests[0].tools} == set(tool_table.names_for("intake"))


def add_daily_schedule(h, pid: str) -> None:
    data = StateData(h.store.flows[pid].state_data)
    daily = ScheduleInfo(id="s1", type=ScheduleType.FIXED, fixed_time="08:30", timezone="UTC",
                         created_at=h.clock.now(), timer_id=f"{pid}-d1")  # fmt: skip
    data.set_schedules([daily])


def test_an_explicit_action_is_hinted_in_the_context_never_forced() -> None:
    llm = ScriptedLLM([ScriptedLLM.tool_call("scheduler", {"action": "list"}), ScriptedLLM.text("It's at 8.")])
    h = memory_harness(llm)
    p = h.enroll()
    add_daily_schedule(h, p.id)  # something to move
    turn(h, p, "Please move my reminder to 8pm")
    assert [r.tool_choice for r in llm.requests] == ["auto", "auto"]
    hints = [m.content or "" for m in llm.requests[0].messages if (m.content or "").startswith(intents.HINT_HEADER)]
    assert len(hints) == 1 and "change time" in hints[0] and "scheduler" in hints[0]
    assert llm.requests[0].messages[-1].role == "user"  # the hint sits just before the message it reads


def test_classifier_when_unsure_then_cached_by_normalised_text() -> None:
    classifier = ScriptedLLM.text(json.dumps({"intent": "schedule", "tools": ["scheduler", "bogus"]}))
    llm = ScriptedLLM([classifier, ScriptedLLM.text("Here's how."), ScriptedLLM.text("Again.")])
    h = memory_harness(llm, settings=Settings(intent_classifier_enabled=True))
    p = h.enroll()
    save_profile(h, p.id, habit_domain="sleep")
    outcome = turn(h, p, "can you explain how this works?")
    turn(h, p, "  Can you explain how THIS works?? ")  # same normalised text: no classifier call
    purposes = [r.purpose for r in llm.requests]
    assert purposes == ["classifier", "intake", "intake"]
    request = llm.requests[0]
    assert request.response_format == {"type": "json_object"} and request.max_tokens == 60
    # every tool is offered; the classifier's tool, added to what is pending, is named in the hint
    for request in llm.requests[1:]:
        assert {t.name for t in request.tools} == set(tool_table.names_for("intake"))
        hint = next(m.content or "" for m in request.messages if (m.content or "").startswith(intents.HINT_HEADER))
        assert f"{SAVE}, scheduler." in hint and "bogus" not in hint
    assert outcome.turn.audit["intent"]["source"] == "classifier"
    assert outcome.turn.audit["llm_calls"][0]["stage"] == "intent"


def test_classifier_failure_falls_back_to_the_whole_tool_set() -> None:
    llm = ScriptedLLM([LLMError("down"), ScriptedLLM.text("Sure!")])
    h = memory_harness(llm, settings=Settings(intent_classifier_enabled=True))
    p = h.enroll()
    save_profile(h, p.id, habit_domain="sleep")
    turn(h, p, "can you explain how this works?")
    assert {t.name for t in llm.requests[1].tools} == set(tool_table.names_for("intake"))


def test_ttl_cache_expires_and_is_bounded() -> None:
    now = [0.0]
    cache = TTLCache(ttl=300, max_entries=2, now=lambda: now[0])
    one = Intent("a", ())
    cache.put("a", one)
    cache.put("b", one)
    cache.get("a")  # a is now the most recent
    cache.put("c", one)
    assert cache.get("b") is None and cache.get("a") is one and len(cache) == 2
    now[0] = 301
    assert cache.get("a") is None


def test_classifier_answer_is_limited_to_the_available_tools() -> None:
    response = ScriptedLLM.text('{"intent": "small_talk", "tools": ["scheduler"]}')
    assert intents.parse_classifier(response, FEEDBACK_TOOLS).tools == ()
    assert intents.parse_classifier(ScriptedLLM.text("not json"), FEEDBACK_TOOLS) is None


# --- model loop: reflection, then synthesis ------------------------------------------------------
def failing_schedule() -> ChatResponse:
    return ScriptedLLM.tool_call("scheduler", {"action": "create", "type": "fixed"})  # no fixed_time


def test_failed_tool_gets_a_reflection_hint_then_three_corrective_rounds_then_synthesis() -> None:
    llm = ScriptedLLM([failing_schedule() for _ in range(4)] + [ScriptedLLM.text("I couldn't set the time yet.")])
    h = memory_harness(llm)
    p = h.enroll()
    outcome = turn(h, p, "Please move my reminder to 8pm")
    assert len(llm.requests) == 5  # the failing call + 3 corrective rounds + synthesis
    assert "Reflect briefly" in llm.requests[1].messages[-1].content
    synthesis = llm.requests[4]
    assert synthesis.purpose == "synthesis" and synthesis.tools == []
    assert all(m.role != "tool" and not m.tool_calls for m in synthesis.messages)
    notes = [m.content for m in synthesis.messages if m.role == "user" and m.content.startswith("[Note")]
    assert any("fixed_time is required" in n for n in notes)
    assert outcome.outbound[0].body == "I couldn't set the time yet."
    audit = outcome.turn.audit
    assert audit["pipeline"]["retries_exhausted"] and audit["pipeline"]["synthesised"]
    assert audit["llm_calls"][-1]["stage"] == "synthesis" and not audit["used_fallback"]


def test_synthesis_failure_is_the_only_fixed_text() -> None:
    llm = ScriptedLLM([failing_schedule() for _ in range(4)] + [LLMError("down")])
    h = memory_harness(llm)
    p = h.enroll()
    outcome = turn(h, p, "Please move my reminder to 8pm")
    assert outcome.outbound[0].body and outcome.turn.audit["used_fallback"]


def test_round_cap_keeps_one_call_for_the_synthesis() -> None:
    llm = ScriptedLLM([ScriptedLLM.tool_call("scheduler", {"action": "list"}) for _ in range(9)])
    llm.add(ScriptedLLM.text("You have no schedule yet."))
    h = memory_harness(llm)
    p = h.enroll()
    outcome = turn(h, p, "when is my reminder?")
    assert len(llm.requests) == 10 and llm.requests[-1].purpose == "synthesis"
    assert outcome.outbound[0].body == "You have no schedule yet."
    assert outcome.turn.audit["pipeline"]["round_cap_hit"]


def test_synthesis_messages_rewrite_tool_exchanges_as_user_notes() -> None:
    messages = [
        ChatMessage(role="system", content="sys"),
        ChatMessage(role="user", content="hi"),
        ChatMessage(role="assistant", tool_calls=[ToolCall(id="1", name="scheduler", arguments="{}")]),
        ChatMessage(role="tool", tool_call_id="1", content="ERROR: x"),
    ]
    out = synthesis_messages(messages, "write it")
    assert [m.role for m in out] == ["system", "user", "user", "user", "system"]
    assert out[2].content == "[Note: the assistant called scheduler({})]"
    assert out[3].content == "[Note: tool result] ERROR: x" and out[-1].content == "write it"


# --- finalize: timings and per-call metrics -------------------------------------------------------
def test_stage_timer_sums_per_stage() -> None:
    ticks = iter([0.0, 0.002, 0.010, 0.011])
    timer = StageTimer(perf=lambda: next(ticks))
    with timer.stage("a"):
        pass
    with timer.stage("a"):
        pass
    assert timer.timings == {"a": 3.0}


def test_audit_has_stage_timings_prompt_version_and_the_nested_generator_call() -> None:
    generator = ChatResponse(
        content="After coffee, stretch.", model="gen-model", usage=TokenUsage(prompt_tokens=50, cached_tokens=0)
    )
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_calls(
                [
                    (SAVE, {"prompt_anchor": "after coffee", "preferred_time": "09:30"}),
                    (GENERATE, {"delivery_mode": "immediate"}),
                ]
            ),
            generator,
            ChatResponse(content="Try it!", model="m", usage=TokenUsage(prompt_tokens=900, cached_tokens=768)),
        ]
    )
    h = memory_harness(llm)
    p = h.enroll()
    audit = turn(h, p, "after coffee at 9:30").turn.audit
    assert {"parse", "validate", "intent", "tools", "model_loop", "finalize"} <= set(audit["stages_ms"])
    assert audit["prompt_version"].startswith("file:")
    calls = audit["llm_calls"]
    assert [(c["purpose"], c["stage"]) for c in calls] == [
        ("intake", "model_loop"),
        ("prompt_generator", "tools"),
        ("intake", "model_loop"),
    ]
    assert calls[1]["model"] == "gen-model" and calls[1]["prompt_version"].startswith("file:")
    assert calls[2]["cached_tokens"] == 768 and calls[0]["tools_offered"] == len(tool_table.names_for("intake"))


# -- the fixed reply never claims what did not happen (docs/reliability.md, "The record under faults") --
def test_a_failed_synthesis_after_every_tool_failed_asks_to_try_again_not_all_set() -> None:
    # Given a turn whose every tool call fails, then a synthesis that fails (model down)
    llm = ScriptedLLM([failing_schedule() for _ in range(4)] + [LLMError("down")])
    h = memory_harness(llm)
    p = h.enroll()
    outcome = turn(h, p, "Please move my reminder to 8pm")
    # Then the reply claims nothing was done: it asks the participant to try again
    body = outcome.outbound[0].body
    assert "All set" not in body and "taken care" not in body
    assert body == TRY_AGAIN_FALLBACK


def test_an_empty_synthesis_says_what_the_tools_did_and_what_failed() -> None:
    # Given a turn where the profile was saved but the schedule failed, then an empty synthesis
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_calls(
                [
                    ("save_user_profile", {"habit_domain": "walking"}),
                    ("scheduler", {"action": "create", "type": "fixed"}),
                ]
            ),
            *[failing_schedule() for _ in range(3)],
            ScriptedLLM.text(""),
        ]
    )
    h = memory_harness(llm)
    p = h.enroll()
    outcome = turn(h, p, "I want to walk, remind me at 8pm")
    # Then the reply says what the tool results say
    assert outcome.outbound[0].body == (
        "I've saved your details. I couldn't change your reminder schedule: could you try that again?"
    )


def test_fallback_reply_claims_only_changes() -> None:
    from promptpipe.flow.modules import ToolRun, fallback_reply

    listed = ToolRun(name="scheduler", arguments={"action": "list"}, ok=True, result="", duration_ms=0)
    assert fallback_reply([]) == TRY_AGAIN_FALLBACK
    assert fallback_reply([listed]) == TRY_AGAIN_FALLBACK
    made = ToolRun(name="scheduler", arguments={"action": "create"}, ok=True, result="", duration_ms=0)
    prompt = ToolRun(name="generate_habit_prompt", arguments={}, ok=True, result="", duration_ms=0)
    assert fallback_reply([made, prompt]) == "I've updated your reminder schedule and prepared your habit prompt."
    three = [made, prompt, ToolRun(name="transition_state", arguments={}, ok=True, result="", duration_ms=0)]
    assert fallback_reply(three) == (
        "I've updated your reminder schedule, prepared your habit prompt and moved our conversation on."
    )
