"""What a feedback reply carries beside done or not done (rules/report_details.py): the habit judged to be
working, who it was done with, the change they will try, what got in the way without the words of the
miss, a clause that can say what helped, a time proposed for the prompt. Phrasings no corpus
conversation uses, and their near misses."""

from __future__ import annotations

import pytest

from promptpipe.rules.report_details import (
    carries_a_why,
    cause_words,
    company,
    planned_tweak,
    proposes_a_time,
    says_it_helps,
    tweak_in,
)


@pytest.mark.parametrize(
    ("said", "helps"),
    [
        ("ty, this is really helping", True),
        ("honestly it helps a lot", True),
        ("me está funcionando bien", True),
        ("ça me fait du bien", True),
        ("it's not really helping tbh", False),  # a negation in the same clause
        ("is it supposed to be helping?", False),  # a question
        ("thanks!", False),
    ],
)
def test_the_habit_judged_to_be_working(said: str, helps: bool) -> None:
    assert says_it_helps(said) is helps


@pytest.mark.parametrize(
    ("said", "who"),
    [
        ("went w my bf after work", "my bf"),
        ("did it with my little brother", "my little brother"),
        ("leí un rato con mis hijos", "mis hijos"),
        ("j'ai médité avec ma coloc", "ma coloc"),
        ("did it with my morning coffee", ""),  # a routine, not a companion
        ("with my knee acting up, no", ""),
    ],
)
def test_who_it_was_done_with(said: str, who: str) -> None:
    assert company(said) == who


@pytest.mark.parametrize(
    ("said", "tweak"),
    [
        ("i think i'll keep the bottle on my desk", "keep the bottle on my desk"),
        ("next time I'm gonna lay my clothes out the night before", "lay my clothes out the night before"),
        ("I'll try to do it right after my shower", "do it right after my shower"),
        ("mañana voy a poner el libro en la almohada", "poner el libro en la almohada"),
        ("je vais laisser mon tapis dans le salon", "laisser mon tapis dans le salon"),
        ("ok I'll try that", ""),  # agreeing to the coach's tweak, no tweak of their own
        ("i'll do it tonight", ""),  # a plan for today
        ("will do", ""),
        ("I'll set it for 9?", ""),  # a question
        ("did it, I'll keep going", ""),  # a report
    ],
)
def test_the_change_they_will_try(said: str, tweak: str) -> None:
    assert planned_tweak(said) == tweak


@pytest.mark.parametrize(
    ("said", "cause"),
    [
        ("nope, the baby was up all night", "the baby was up all night"),
        ("no pude, se fue la luz", "se fue la luz"),
        ("pas fait, trop de monde à la maison", "trop de monde à la maison"),
        ("traffic was insane so no", "traffic was insane"),
        ("nah", ""),
        ("no, forgot again", ""),  # only the miss (its kind is read elsewhere)
    ],
)
def test_what_got_in_the_way_without_the_words_of_the_miss(said: str, cause: str) -> None:
    assert cause_words(said) == cause


@pytest.mark.parametrize(
    ("clause", "why"),
    [
        ("the dog was staring at me", True),
        ("finally", False),
        ("lol", False),
        ("pero el viernes no puedo", False),  # a limit, not what helped
        ("I'll keep going", False),  # a plan
        ("is that ok?", False),
    ],
)
def test_a_clause_that_can_say_what_helped(clause: str, why: bool) -> None:
    assert carries_a_why(clause) is why


@pytest.mark.parametrize(
    ("said", "proposes"),
    [
        ("could we try 6:45?", True),
        ("let's go with 7 then", True),
        ("¿podríamos probar a las 8?", True),
        ("et si on mettait 20h ?", True),
        ("can we try a shorter one?", False),  # no time said
        ("how about tomorrow", False),
    ],
)
def test_a_time_proposed_for_the_prompt(said: str, proposes: bool) -> None:
    assert proposes_a_time(said) is proposes


def test_their_own_change_in_any_clause() -> None:
    assert tweak_in("forgot again, i'll put a note on the fridge") == "put a note on the fridge"
    assert tweak_in("forgot again, sorry") == ""
    assert cause_words("work ran late, gonna try mornings") == "work ran late"  # the plan is no barrier
