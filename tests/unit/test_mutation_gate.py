"""The mutation gate's bookkeeping (scripts/tools/mutation_gate.py): which mutants a resumed run re-runs,
and how a module is scored."""

from __future__ import annotations

from scripts.tools.mutation_gate import module_of, pending, score

RESULTS = {
    "promptpipe.rules.tone.x__clamp__mutmut_1": "killed",
    "promptpipe.rules.tone.x__clamp__mutmut_2": "survived",
    "promptpipe.rules.tone.x__clamp__mutmut_3": "not checked",
    "promptpipe.rules.tone.x__clamp__mutmut_4": "timeout",
    "promptpipe.rules.tone.xǁProfileToneǁto_json_dict__mutmut_5": "no tests",
    "promptpipe.flow.questions.x__level__mutmut_1": "survived",
    "promptpipe.cli.commands.x_main__mutmut_1": "survived",  # not a gated module
}


def test_a_resumed_run_reruns_only_what_was_not_killed_in_the_modules_asked_for() -> None:
    assert pending(RESULTS, ["rules.tone"]) == [
        "promptpipe.rules.tone.x__clamp__mutmut_2",
        "promptpipe.rules.tone.x__clamp__mutmut_3",
        "promptpipe.rules.tone.xǁProfileToneǁto_json_dict__mutmut_5",
    ]
    assert pending(RESULTS, ["flow.questions", "rules.tone"])[0] == "promptpipe.flow.questions.x__level__mutmut_1"
    assert pending(RESULTS, ["rules.scheduling"]) == []


def test_module_names_of_functions_and_methods() -> None:
    assert module_of("promptpipe.flow.effects.x_put__mutmut_3") == "flow.effects"
    assert module_of("promptpipe.rules.tone.xǁProfileToneǁto_json_dict__mutmut_5") == "rules.tone"
    assert module_of("promptpipe.cli.commands.x_main__mutmut_1") is None
    assert module_of("other.tone.x_f__mutmut_1") is None


def test_a_score_counts_timeouts_and_accepted_survivors_as_caught_and_skips_unchecked() -> None:
    tone = score(RESULTS, {"promptpipe.rules.tone.x__clamp__mutmut_2": "equivalent"})["rules.tone"]
    assert (tone.checked, tone.killed, tone.accepted) == (4, 2, 1)  # "not checked" is not counted
    assert tone.survivors == ["promptpipe.rules.tone.xǁProfileToneǁto_json_dict__mutmut_5"]
    assert tone.percent == 75.0 and tone.raw_percent == 50.0
