"""The offline coach on perturbed built conversations (docs/offline-coach.md, "Robust to the path"):
``python -m scripts.corpus.perturb --split built``.

A corpus conversation is a fixed script: once a coach asks something other than what the model asked,
the participant's next message answers another question. This measures how much the offline coach's
intake depends on the path, without writing more conversations of the same shape: from each built
INTAKE conversation it derives variants whose expected END is unchanged, and plays them like
``scripts.corpus.offline`` (end state only, plus the invariants: false praise, non-facts saved,
claims contradicted):

* ``merge``: two consecutive participant messages that each give a fact sent as one ("7pm" + "after
  dinner" → "7pm after dinner");
* ``greeting``: a greeting sent first ("hey", "hola", "bonjour"), marked ``not_a_fact``;
* ``question``: a short question whose answer changes nothing ("is this a bot?", "¿quién eres?") sent
  before a message after the first, marked ``not_a_fact``;
* ``ack``: an acknowledgement ("ok", "vale", "d'accord") sent after a coach question, before a message
  that answers it with a fact;
* ``reorder``: the facts of the first message that gives them in a simple "X at T", "X after R" or
  "T after R" form said in the opposite order ("yoga at 7am" → "at 7am, yoga", "10.30 after the
  dishes" → "after the dishes, 10.30"); a conversation with no such message is skipped;
* ``typo``: two neighbouring letters swapped in one word of five letters or more of one fact message
  ("after dinner" → "after dinenr"), as a thumb types;
* ``lower``: every message in lower case with no punctuation but what a time needs ("7:30", "7.30"), as
  many people text ("Ok, after lunch." → "ok after lunch");
* ``runon``: two consecutive fact messages said as one voice-to-text run-on, joined by a filler or an
  "and" of the conversation's language ("7pm" + "after dinner" → "7pm um after dinner", "… y …", "… euh
  …");
* ``accents``: every accent left out of a Spanish or French conversation ("después del café" → "despues
  del cafe"); English conversations are skipped;
* ``impatient``: an impatient message that hands nothing over ("ugh so many questions", "qué pesado",
  "c'est long") sent before a message after the first that gives a fact, marked ``not_a_fact``.

Only the built split is perturbed (the held-out split is never tuned against). The variants are
deterministic: each choice is drawn from ``random.Random`` seeded with the seed, the conversation's id
and the kind. The per-turn expectations of a capable model (``calls``, ``replies``,
``max_model_calls``) are not what this measures: an inserted message has none, and a merged one has
both messages' calls (which the claims check reads) and no reply count.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import unicodedata
from collections.abc import Sequence
from typing import Any

from scripts.corpus.model import BUILT, NEXT_PROMPT, Conversation, Turn

KINDS = ("merge", "greeting", "question", "ack", "reorder", "typo", "lower", "runon", "accents", "impatient")
DEFAULT_SEED = 35
FACT_FIELDS = ("habit_domain", "motivational_frame", "preferred_time", "prompt_anchor")
GREETINGS = {"en": ("hey", "hi there", "hello!"), "es": ("hola", "buenas"), "fr": ("bonjour", "salut")}
QUESTIONS = {
    "en": ("is this a bot?", "who is this?", "how long does this take?"),
    "es": ("¿quién eres?", "¿eres un bot?"),
    "fr": ("c'est qui ?", "vous êtes un robot ?"),
}
ACKNOWLEDGEMENTS = {"en": ("ok", "okay", "got it"), "es": ("vale", "ok"), "fr": ("d'accord", "ok")}
IMPATIENCE = {
    "en": ("ugh so many questions", "this is taking forever", "omg can we hurry up"),
    "es": ("qué pesado", "cuántas preguntas", "ya, rápido por favor"),
    "fr": ("c'est long", "trop de questions"),
}
RUN_ON_JOINS = {"en": (" um ", " and ", " uh "), "es": (" eh ", " y ", " este "), "fr": (" euh ", " et ")}
# Punctuation a texter leaves out; a dot or colon between digits is part of a time and stays.
_PUNCTUATION = re.compile(r"(?<!\d)[.:]|[.:](?!\d)|[,;!?¿¡…]")
_TYPO_WORD = re.compile(r"\b[^\W\d_]{5,}\b")
_ANY_REPLY = "(any reply)"
# "X at T": a time at the end after its preposition; "X after R": a routine at the end; "T after R": a
# time, then its routine. The two parts are swapped: "at T, X", "after R, X", "after R, T".
_AT = r"(?:(?:como|tipo|like|about)\s+)?(?:at|around|a las|a eso de las|à|vers)"
_AT_TIME = re.compile(rf"^(?P<x>[^,.;!?]{{3,}}?),?\s+(?P<t>{_AT}\s+[^,.;!?]*\d[^,.;!?]*?)[.!]?$", re.I)
_ROUTINE = r"(?:after|before|when|después de|antes de|al|après|avant|quand)\s+[^,.;!?\d]{3,}?"
_AFTER_ROUTINE = re.compile(rf"^(?P<x>[^,.;!?\d]{{3,}}?),?\s+(?P<t>{_ROUTINE})[.!]?$", re.I)
_TIME_ROUTINE = re.compile(rf"^(?P<x>~?\d[\d:.]*\s*(?:am|pm|h|ish)?)\s+(?P<t>{_ROUTINE})[.!]?$", re.I)
_MAX_TAIL_WORDS = 5


def language_of(conversation: Conversation) -> str:
    from scripts.corpus.offline import language_of as of

    return of(conversation)


def _saves_a_fact(turn: Turn) -> bool:
    calls = [call for round_ in turn.rounds for call in round_]
    if any(call.tool in ("scheduler", "opt_out", "transition_state") for call in calls):
        return False
    return any(
        call.tool == "save_user_profile" and any(str(call.args.get(name) or "").strip() for name in FACT_FIELDS)
        for call in calls
    )


def gives_a_fact(turn: Turn) -> bool:
    """The message answers with a fact (the corpus saves one for it, and it reads as a fact: no yes, no
    greeting, no question), so another message may come before it or join it."""
    from promptpipe.rules.message_reading import read_message

    return turn.not_a_fact is None and _saves_a_fact(turn) and read_message(turn.say).kind == "fact"


def _inserted(say: str, not_a_fact: Any = None) -> Turn:
    return Turn(say=say, reply=_ANY_REPLY, not_a_fact=not_a_fact)


def _variant(conversation: Conversation, kind: str, turns: list[Turn]) -> Conversation:
    return conversation.model_copy(update={"id": f"{conversation.id}-p-{kind}", "turns": turns})


def merged(first: Turn, second: Turn) -> Turn:
    """Two messages sent as one: the words joined, both messages' calls, no reply count."""
    joined = f"{first.say.rstrip()} {second.say.lstrip()}"
    return Turn(say=joined, rounds=[*first.rounds, *second.rounds], reply=first.reply, wait=first.wait)


def reordered(say: str) -> str | None:
    """The facts of a simple "X at T" / "X after R" message in the opposite order, or None."""
    for pattern in (_AT_TIME, _AFTER_ROUTINE, _TIME_ROUTINE):
        match = pattern.match(say.strip())
        if match and len(match["t"].split()) <= _MAX_TAIL_WORDS:
            return f"{match['t']}, {match['x']}"
    return None


def run_on(first: Turn, second: Turn, join: str) -> Turn:
    """Two messages said as one voice-to-text run-on: the first's closing punctuation dropped, the
    filler or "and" between them, both messages' calls, no reply count."""
    joined = f"{first.say.rstrip().rstrip('.!')}{join}{second.say.lstrip()}"
    return Turn(say=joined, rounds=[*first.rounds, *second.rounds], reply=first.reply, wait=first.wait)


def lowered(say: str) -> str:
    """``say`` in lower case with no punctuation but a time's ("Ok, 7:30." → "ok 7:30")."""
    said = re.sub(r"\b([ap])\.m\b\.?", r"\1m", say.lower())  # "p.m." is "pm" without its dots
    return re.sub(r"\s+", " ", _PUNCTUATION.sub(" ", said)).strip() or say


def with_a_typo(say: str, rng: random.Random) -> str | None:
    """Two neighbouring letters of one word of five letters or more swapped (not the first letter, as a
    thumb slips mid-word), or None when no word is long enough."""
    found = list(_TYPO_WORD.finditer(say))
    if not found:
        return None
    word = rng.choice(found)
    at = rng.randrange(word.start() + 1, word.end() - 1)
    if say[at] == say[at + 1]:
        at = word.start() + 1 if at != word.start() + 1 else word.start() + 2
    return f"{say[:at]}{say[at + 1]}{say[at]}{say[at + 2 :]}"


def _turns_changed(turns: list[Turn], kind: str, language: str, rng: random.Random) -> list[Turn] | None:
    """The turns of a variant of the kinds that change messages rather than add one, or None."""
    if kind in ("merge", "runon"):
        pairs = [i for i in range(len(turns) - 1) if gives_a_fact(turns[i]) and gives_a_fact(turns[i + 1])]
        if not pairs:
            return None
        i = rng.choice(pairs)
        join = rng.choice(RUN_ON_JOINS[language])
        one = merged(turns[i], turns[i + 1]) if kind == "merge" else run_on(turns[i], turns[i + 1], join)
        return [*turns[:i], one, *turns[i + 2 :]]
    if kind == "typo":
        typed = [(i, with_a_typo(turn.say, rng)) for i, turn in enumerate(turns) if gives_a_fact(turn)]
        options = [(i, say) for i, say in typed if say is not None]
        if not options:
            return None
        i, say = rng.choice(options)
        return [*turns[:i], turns[i].model_copy(update={"say": say}), *turns[i + 1 :]]
    if kind in ("lower", "accents"):
        if kind == "accents" and language == "en":
            return None
        change = lowered if kind == "lower" else without_accents
        changed = [turn.model_copy(update={"say": change(turn.say)}) for turn in turns]
        return changed if changed != turns else None
    # reorder: the first message that gives its facts in a simple form (the opening one, where it does).
    for i, turn in enumerate(turns):
        said = reordered(turn.say) if gives_a_fact(turn) else None
        if said is not None:
            return [*turns[:i], turn.model_copy(update={"say": said}), *turns[i + 1 :]]
    return None


def _turns_added(turns: list[Turn], kind: str, language: str, rng: random.Random) -> list[Turn] | None:
    """The turns of a variant of the kinds that add a message (greeting, question, ack, impatient), or None."""
    if kind == "greeting":
        return [_inserted(rng.choice(GREETINGS[language]), "greeting"), *turns]
    if kind == "question":
        if len(turns) < 2:
            return None
        i = rng.randrange(1, len(turns))
        return [*turns[:i], _inserted(rng.choice(QUESTIONS[language]), "question"), *turns[i:]]
    places = [i for i in range(1, len(turns)) if gives_a_fact(turns[i])]
    if not places:
        return None
    i = rng.choice(places)
    if kind == "impatient":
        inserted = _inserted(rng.choice(IMPATIENCE[language]), "complaint")
    else:
        inserted = _inserted(rng.choice(ACKNOWLEDGEMENTS[language]))
    return [*turns[:i], inserted, *turns[i:]]


_ADDING = ("greeting", "question", "ack", "impatient")


def perturb(conversation: Conversation, kind: str, seed: int = DEFAULT_SEED) -> Conversation | None:
    """One variant of an intake conversation whose expected end is unchanged, or None when the kind does
    not apply to it (a feedback week, no two fact messages in a row, a first message not in simple form)."""
    if kind not in KINDS:
        raise ValueError(f"no perturbation {kind!r} (kinds: {', '.join(KINDS)})")
    if conversation.feedback_week:
        return None
    rng = random.Random(f"{seed}:{conversation.id}:{kind}")
    turns, language = list(conversation.turns), language_of(conversation)
    read = _turns_added if kind in _ADDING else _turns_changed
    changed = read(turns, kind, language, rng)
    return _variant(conversation, kind, changed) if changed is not None else None


# --- the feedback week --------------------------------------------------------------------------------
# The same measure for the feedback weeks (``--week``; docs/offline-coach.md, "The feedback week, robust
# to the path"): from each built feedback week, variants whose expected end is unchanged, each changing how the
# replies to the daily prompts are written, not what they say:
#
# * ``fb_merge``: an outcome report and the message after it (what helped or got in the way, or a
#   request) sent as one ("nope" + "just forgot" → "nope just forgot");
# * ``fb_swap``: the same, or a report and its reason in one message, said the other way round ("just
#   forgot. nope", "trop de boulot, non pas pu");
# * ``fb_thanks`` / ``fb_question``: a thanks ("thanks!", "gracias") or a question whose answer changes
#   nothing ("is this a bot?") joined to an outcome report;
# * ``fb_ack``: an acknowledgement or an emoji ("ok", "👍🏽", "vale gracias") after the coach's answer to a
#   report, before the next daily prompt;
# * ``fb_settle``: the week's first message still closes the intake ("thanks!", "ok cool", a question)
#   before any daily prompt was delivered;
# * ``fb_typo``: one outcome report typed as people do (a letter doubled or two swapped, no apostrophe);
# * ``fb_accents``: a Spanish or French week with its accents and ¿¡ left out.
WEEK_KINDS = ("fb_merge", "fb_swap", "fb_thanks", "fb_question", "fb_ack", "fb_settle", "fb_typo", "fb_accents")
WEEK_THANKS = {"en": ("thanks!", "ty", "thank you 🙏"), "es": ("gracias!", "gracias 🙏"), "fr": ("merci !", "merci 🙏")}
WEEK_QUESTIONS = {
    "en": ("btw how long does this study last?", "is this a bot?"),
    "es": ("¿cuánto dura esto?", "¿eres un bot?"),
    "fr": ("ça dure combien de temps ?", "vous êtes un robot ?"),
}
WEEK_ACKS = {
    "en": ("ok", "👍🏽", "got it", "cool thanks"),
    "es": ("ok", "👍🏽", "vale gracias", "sale"),
    "fr": ("ok", "👍🏽", "d'accord merci"),
}
WEEK_SETTLE = {
    "en": (("thanks!", None), ("ok cool", None), ("how long does this take?", "question")),
    "es": (("gracias!", None), ("ok", None), ("¿cuánto dura esto?", "question")),
    "fr": (("merci !", None), ("ok", None), ("ça dure combien de temps ?", "question")),
}
_WHY_FIELDS = ("last_barrier", "last_motivator", "last_tweak")


def _calls(turn: Turn) -> list[Any]:
    return [call for round_ in turn.rounds for call in round_]


def reports(turn: Turn) -> bool:
    """The corpus reads the message, typed by the participant (not a poll's button: "Q: … A: Done", nor a
    formula), as the day's outcome (done or not)."""
    return not re.match(r"Q: |=", turn.say) and any(
        call.tool == "record_outcome" or (call.tool == "save_user_profile" and "last_successful_prompt" in call.args)
        for call in _calls(turn)
    )


def gives_a_why(turn: Turn, tweak_too: bool = True) -> bool:
    """The corpus saves what helped or got in the way for it (or, ``tweak_too``, the tweak agreed), and
    nothing else changes."""
    calls, fields = _calls(turn), _WHY_FIELDS if tweak_too else _WHY_FIELDS[:2]
    return not any(call.tool in ("scheduler", "transition_state") for call in calls) and any(
        call.tool == "save_user_profile" and any(call.args.get(name) for name in fields) for call in calls
    )


def _says_more(turn: Turn) -> bool:
    """A message that says something of its own: no greeting, question or complaint, no bare yes or no
    (which answer the coach's reply, and mean nothing joined to what came before)."""
    from promptpipe.rules.message_reading import read_message

    return turn.not_a_fact is None and read_message(turn.say).kind not in ("yes", "no")


def _requests(turn: Turn) -> bool:
    return any(call.tool == "scheduler" for call in _calls(turn))


def _joined(first: str, second: str) -> str:
    """Two messages said as one, a full stop between them unless the first ends its sentence."""
    first = first.rstrip()
    return f"{first} {second.lstrip()}" if first[-1:] in ".!?,;…" or not first[-1:].isalnum() else f"{first}. {second}"


def typo(say: str, rng: random.Random) -> str | None:
    """``say`` typed as people do: no apostrophe, a letter doubled, or two letters swapped; None when no
    such change applies."""
    options: list[str] = []
    if "'" in say:
        options.append(say.replace("'", ""))
    words = [m for m in re.finditer(r"[^\W\d_]{3,}", say)]
    if words:
        word = max(words, key=lambda m: len(m[0]))
        options.append(f"{say[: word.end()]}{say[word.end() - 1]}{say[word.end() :]}")
    long = [m for m in words if len(m[0]) >= 6]
    if long:
        word = rng.choice(long)
        i = word.start() + rng.randrange(1, len(word[0]) - 2)
        if say[i] != say[i + 1]:
            options.append(f"{say[:i]}{say[i + 1]}{say[i]}{say[i + 2 :]}")
    return rng.choice(options) if options else None


def without_accents(say: str) -> str:
    """ "¿cuánto dura esto?" → "cuanto dura esto?": accents, ¿ and ¡ left out, as many people type."""
    stripped = "".join(c for c in unicodedata.normalize("NFD", say) if unicodedata.category(c) != "Mn")
    return unicodedata.normalize("NFC", stripped.replace("¿", "").replace("¡", ""))


def _report_with_its_why(conversation: Conversation, kind: str, rng: random.Random, start: int) -> Conversation | None:
    """``fb_merge`` / ``fb_swap``: a report and the message after it as one, in order or the other way
    round; or, for ``fb_swap``, the two clauses of a report that gives its reason."""
    turns = list(conversation.turns)
    reported = [i for i in range(start, len(turns)) if reports(turns[i])]
    follows = [
        i
        for i in reported
        if i + 1 < len(turns)
        and turns[i + 1].wait != NEXT_PROMPT
        and _says_more(turns[i + 1])
        and (gives_a_why(turns[i + 1], kind == "fb_merge") or (kind == "fb_merge" and _requests(turns[i + 1])))
    ]
    if kind == "fb_merge" and follows:
        i = rng.choice(follows)
        both = merged(turns[i], turns[i + 1]).model_copy(update={"say": _joined(turns[i].say, turns[i + 1].say)})
        return _variant(conversation, kind, [*turns[:i], both, *turns[i + 2 :]])
    if follows:
        i = rng.choice(follows)
        swapped = merged(turns[i], turns[i + 1]).model_copy(update={"say": _joined(turns[i + 1].say, turns[i].say)})
        return _variant(conversation, kind, [*turns[:i], swapped, *turns[i + 2 :]])
    # a report and its reason in one message ("non pas pu, trop de boulot"): the two clauses swapped
    within = [i for i in reported if gives_a_why(turns[i], False) and turns[i].say.count(",") == 1]
    if kind == "fb_merge" or not within:
        return None
    i = rng.choice(within)
    outcome, why = (part.strip() for part in turns[i].say.split(","))
    said = turns[i].model_copy(update={"say": f"{why}, {outcome}"})
    return _variant(conversation, kind, [*turns[:i], said, *turns[i + 1 :]]) if outcome and why else None


def perturb_week(conversation: Conversation, kind: str, seed: int = DEFAULT_SEED) -> Conversation | None:
    """One variant of a feedback week whose expected end is unchanged, or None when the kind does not
    apply to it (an intake, no outcome report, no report followed by its why, an English week for
    ``fb_accents``)."""
    if kind not in WEEK_KINDS:
        raise ValueError(f"no perturbation {kind!r} (kinds: {', '.join(WEEK_KINDS)})")
    if not conversation.feedback_week:
        return None
    rng = random.Random(f"{seed}:{conversation.id}:{kind}")
    turns, language = list(conversation.turns), language_of(conversation)
    start = next(i for i, turn in enumerate(turns) if turn.wait == NEXT_PROMPT)
    week = range(start, len(turns))
    reported = [i for i in week if reports(turns[i])]

    def replaced(i: int, say: str) -> Conversation:
        return _variant(conversation, kind, [*turns[:i], turns[i].model_copy(update={"say": say}), *turns[i + 1 :]])

    if kind in ("fb_merge", "fb_swap"):
        return _report_with_its_why(conversation, kind, rng, start)
    if kind in ("fb_thanks", "fb_question"):
        if not reported:
            return None
        i = rng.choice(reported)
        said = rng.choice((WEEK_THANKS if kind == "fb_thanks" else WEEK_QUESTIONS)[language])
        return replaced(i, _joined(turns[i].say, said) if kind == "fb_question" else f"{turns[i].say.rstrip()} {said}")
    if kind == "fb_ack":
        places = [
            i + 1
            for i in week
            if (reports(turns[i]) or gives_a_why(turns[i]))
            and (i + 1 == len(turns) or turns[i + 1].wait == NEXT_PROMPT)
        ]
        if not places:
            return None
        i = rng.choice(places)
        return _variant(conversation, kind, [*turns[:i], _inserted(rng.choice(WEEK_ACKS[language])), *turns[i:]])
    if kind == "fb_settle":
        say, mark = rng.choice(WEEK_SETTLE[language])
        return _variant(conversation, kind, [*turns[:start], _inserted(say, mark), *turns[start:]])
    if kind == "fb_typo":
        typed = [(i, said) for i in reported if (said := typo(turns[i].say, rng)) and said != turns[i].say]
        if not typed:
            return None
        i, said = rng.choice(typed)
        return replaced(i, said)
    if language == "en":  # fb_accents
        return None
    stripped = [
        turn.model_copy(update={"say": without_accents(turn.say)}) if n >= start else turn
        for n, turn in enumerate(turns)
    ]
    return _variant(conversation, kind, stripped) if stripped != turns else None


def variants(conversations: Sequence[Conversation], kind: str, seed: int = DEFAULT_SEED) -> list[Conversation]:
    """Every variant of one kind the conversations give."""
    of = perturb_week if kind in WEEK_KINDS else perturb
    found = (of(conversation, kind, seed) for conversation in conversations)
    return [variant for variant in found if variant is not None]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.corpus.perturb", description=__doc__.split("\n\n")[0])
    # Only the built split: the held-out one is never tuned against (docs/offline-coach.md).
    parser.add_argument("--split", choices=(BUILT,), default=BUILT, help="the split to perturb (built only)")
    parser.add_argument("--kinds", nargs="+", choices=(*KINDS, *WEEK_KINDS), help="the perturbations to play")
    parser.add_argument("--week", action="store_true", help="perturb the feedback weeks (default kinds: WEEK_KINDS)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the seed of the variants' choices")
    parser.add_argument("--only", nargs="+", default=[], metavar="ID", help="perturb only these conversations")
    parser.add_argument("--problems", action="store_true", help="list each variant's problems")
    args = parser.parse_args(argv)
    from scripts.bench.scenario import prepare_environment

    prepare_environment()
    from promptpipe.adapters.offline_coach import OfflineCoach
    from scripts.corpus.model import selected
    from scripts.corpus.offline import figures_of
    from scripts.corpus.player import Player

    conversations = selected(args.only, args.split)
    args.kinds = args.kinds or list(WEEK_KINDS if args.week else KINDS)
    total, of = 0, 0
    print(f"{args.split}, seed {args.seed}: kind: variants ending as expected; false praise, non-facts, claims")
    for kind in args.kinds:
        played = Player(lambda _cursor: OfflineCoach()).play_all(variants(conversations, kind, args.seed))
        figures, problems = figures_of(played)
        done = figures.intake_completed + figures.week_completed
        total, of = total + done, of + len(played)
        share = f" ({done / len(played):.0%})" if played else ""
        print(
            f"  {kind}: {done}/{len(played)}{share}; "
            f"{figures.false_praise}, {figures.non_facts_saved}, {figures.claims_contradicted}"
        )
        for line in problems if args.problems else ():
            print(f"    {line}")
    print(f"  all: {total}/{of}" + (f" ({total / of:.0%})" if of else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
