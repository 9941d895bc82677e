"""The two fixed-answer questions (the original's polls) and how answers are read back.

A question goes out as reply buttons where the channel has them (button id
``"<question id>:<option id>"``, e.g. ``"done:done"``) and as numbered text elsewhere. Answers come
back as a button id, as the original's canonical text (``"Q: Did you do it? A: Done"``), or as a
text reply to an outstanding question that is unambiguous: the option's number ("1"), its title or
id ("done", "next time"), or a word the text form offers ("less", "same", "more", "low"). Anything
else — a bare "yes" or "no" included, since every generated prompt ends with a yes/no question —
is not an answer and reaches the model exactly as typed. This works on every channel
(docs/behaviour.md#B-INT-4).
"""

import re
from collections.abc import Sequence

from pydantic import ConfigDict

from promptpipe.lazy_model import LazyModel
from promptpipe.models.messaging import Question, QuestionOption

DONE_QUESTION_ID = "done"
INTENSITY_QUESTION_ID = "intensity"
INTENSITY_LEVELS = ("low", "normal", "high")
# The answered-questions mark set when the day's poll went out in the combined line (SMS): the value
# is the prompt's ``lastPromptSentAt``, and the combined numbers answer that prompt's questions only.
COMBINED_MARK = "intensity_combined"
DEFAULT_INTENSITY = "normal"

# Module constants are built with model_construct (checked by tests/unit/test_cold_start.py): a
# validated instance would build the models when any function imports this module.
DONE_QUESTION = Question.model_construct(
    id=DONE_QUESTION_ID,
    text="Did you do it?",
    options=[
        QuestionOption.model_construct(id="done", title="Done"),
        QuestionOption.model_construct(id="next_time", title="Next time"),
    ],
)

_INTENSITY_TEXT = "How's the intensity?"
_DECREASE = QuestionOption.model_construct(id="decrease", title="Decrease")
_KEEP = QuestionOption.model_construct(id="keep", title="Keep current")
_INCREASE = QuestionOption.model_construct(id="increase", title="Increase")
# docs/behaviour.md#B-INT-3: no option that cannot change anything.
_INTENSITY_OPTIONS = {
    "low": [_KEEP, _INCREASE],
    "normal": [_DECREASE, _KEEP, _INCREASE],
    "high": [_DECREASE, _KEEP],
}
_ALL_INTENSITY_OPTIONS = [_DECREASE, _KEEP, _INCREASE]
_STEP = {"decrease": -1, "keep": 0, "increase": 1}

# The words the text form of the intensity poll offers (render_text), besides the option titles.
_OPTION_WORDS: dict[tuple[str, str], frozenset[str]] = {
    (INTENSITY_QUESTION_ID, "decrease"): frozenset({"less"}),
    (INTENSITY_QUESTION_ID, "keep"): frozenset({"same"}),
    (INTENSITY_QUESTION_ID, "increase"): frozenset({"more"}),
}
_ABSOLUTE_LEVELS = {"low": "low", "normal": "normal", "high": "high"}
_NUMBER = re.compile(r"^\s*([1-9])\s*[.)!]?\s*$")
_CANONICAL = re.compile(r"\bq:\s*(?P<question>.+?)\s*a:\s*(?P<answer>.+?)\s*$")


class Answer(LazyModel):
    """A recognised answer to a fixed-answer question.

    For an absolute intensity reply ("low", "normal", "high") ``option_id`` is that level and
    ``absolute_intensity`` is set.
    """

    model_config = ConfigDict(frozen=True)

    question_id: str
    option_id: str
    canonical_text: str
    absolute_intensity: str | None = None


def intensity_question(current: str) -> Question:
    """The intensity poll for the participant's current level (unknown levels count as normal)."""
    level = _level(current)
    return Question(id=INTENSITY_QUESTION_ID, text=_INTENSITY_TEXT, options=list(_INTENSITY_OPTIONS[level]))


def button_id(question: Question, option: QuestionOption) -> str:
    """The on-the-wire id of a reply button; namespaced so that ids of two questions never collide."""
    return f"{question.id}:{option.id}"


_INTENSITY_WORDS = {"decrease": "LESS", "keep": "SAME", "increase": "MORE"}


def render_text(question: Question) -> str:
    """The question as text for channels without buttons.

    The "Done" question is answered by number. The intensity question, sent right after it, is
    answered by word, so that a bare "1" always means the daily prompt was done.
    """
    if question.id == INTENSITY_QUESTION_ID:
        words = [f"{_INTENSITY_WORDS.get(o.id, o.title)} ({o.title.lower()})" for o in question.options]
        return f"{question.text} Reply {_join_or(words)} — or low, normal or high."
    choices = [f"{i} for {option.title}" for i, option in enumerate(question.options, start=1)]
    return f"{question.text} Reply {_join_or(choices)}."


def render_combined_text(intensity: Question) -> str:
    """The Done question and the intensity poll as one short paragraph (SMS, docs/behaviour.md#B-SMS-1),
    numbered on from the Done options: "Did you do it? 1 Done, 2 Next time. Intensity: 3 less, 4 same,
    5 more". The numbers never overlap, so "1", "4" and "done, 4" each read one way."""
    first = len(DONE_QUESTION.options) + 1
    done = ", ".join(f"{i} {option.title}" for i, option in enumerate(DONE_QUESTION.options, start=1))
    levels = ", ".join(
        f"{i} {_INTENSITY_WORDS[option.id].lower()}" for i, option in enumerate(intensity.options, start=first)
    )
    return f"{DONE_QUESTION.text} {done}. Intensity: {levels}"


def with_question_text(body: str, question: Question | None, follow_up: Question | None = None) -> str:
    """The message text for channels without buttons: each question on its own paragraph; the Done
    question followed by the intensity poll as one combined line (``render_combined_text``)."""
    if question is not None and question.id == DONE_QUESTION_ID and follow_up and follow_up.id == INTENSITY_QUESTION_ID:
        combined = render_combined_text(follow_up)
        return f"{body.rstrip()}\n{combined}" if body.strip() else combined
    for asked in (question, follow_up):
        if asked is not None:
            rendered = render_text(asked)
            body = f"{body.rstrip()}\n\n{rendered}" if body.strip() else rendered
    return body


def canonical_answer_text(question_id: str, option_id: str) -> str:
    """The original's canonical form, e.g. ``"Q: Did you do it? A: Done"``. ``KeyError`` if the
    pair is unknown."""
    if question_id == DONE_QUESTION_ID:
        title = {o.id: o.title for o in DONE_QUESTION.options}[option_id]
        return f"Q: {DONE_QUESTION.text} A: {title}"
    if question_id == INTENSITY_QUESTION_ID:
        titles = {o.id: o.title for o in _ALL_INTENSITY_OPTIONS}
        titles.update({level: level.capitalize() for level in INTENSITY_LEVELS})
        return f"Q: {_INTENSITY_TEXT} A: {titles[option_id]}"
    raise KeyError(question_id)


def parse_answer(text: str | None, answer_id: str | None, outstanding: Sequence[Question]) -> Answer | None:
    """Read an answer from a button id or a text reply; ``None`` when it is not one.

    ``outstanding`` lists the questions still open (``flow.conversation.outstanding_questions``):
    a bare number answers the "Done" question only, a word the first question that has it. Button
    ids and the canonical "Q: … A: …" text are recognised even when no question is outstanding.
    """
    if answer_id:
        answer = _from_button_id(answer_id.strip())
        if answer is not None:
            return answer
    if not text:
        return None
    canonical = _from_canonical_text(text)
    if canonical is not None:
        return canonical
    asked = [q for q in outstanding if q.id in (DONE_QUESTION_ID, INTENSITY_QUESTION_ID)]
    number = _NUMBER.match(text)
    if number is not None:
        # Only the "Done" question is answered by number (render_text words the intensity poll).
        done = next((q for q in asked if q.id == DONE_QUESTION_ID), None)
        return _from_number(done, int(number[1])) if done is not None else None
    for question in asked:
        answer = _from_words(question, text)
        if answer is not None:
            return answer
    return None


# Further words a reply to the combined question may use for the Done question (docs/behaviour.md#B-SMS-1).
# A bare "yes" stays out: every generated prompt may end with a yes/no question of its own.
_COMBINED_DONE_WORDS = {"not today": "next_time", "not yet": "next_time"}
_COMBINED_DONE_WORDS_WITH_LEVEL = {
    "yes": "done",
    "y": "done",
    "yep": "done",
    "yeah": "done",
    "si": "done",
    "no": "next_time",
}
_SEPARATORS = re.compile(r"[\s,;.+&/]+(?:and\s+|y\s+)?")


def parse_answers(
    text: str | None, answer_id: str | None, outstanding: Sequence[Question], *, combined: bool = False
) -> list[Answer]:
    """The answers in one reply. ``combined``: the open questions went out as one combined line
    (``render_combined_text``): the intensity options are then also numbered (3, 4, 5 on from the
    Done options), and one reply may answer both — "done, 4", "yes 4", "1 less", "4", "not today"."""
    single = parse_answer(text, answer_id, outstanding)
    if single is not None or not combined or not text:
        return [single] if single is not None else []
    done = next((q for q in outstanding if q.id == DONE_QUESTION_ID), None)
    intensity = next((q for q in outstanding if q.id == INTENSITY_QUESTION_ID), None)
    words = _SEPARATORS.split(_normalise(text))
    if intensity is not None and len(words) == 1:
        level = _combined_intensity(intensity, words[0])
        if level is not None:
            return [level]
    phrase = " ".join(words)
    if done is not None and phrase in _COMBINED_DONE_WORDS:
        return [_answer(DONE_QUESTION_ID, _COMBINED_DONE_WORDS[phrase])]
    if intensity is None or len(words) < 2:
        return []
    # One part answers Done, the other the poll, in either order: "done 4", "4, done", "next time less".
    # A part that answers a question no longer open is left out ("done, 4" after an earlier "done").
    for done_words, level_word in ((words[:-1], words[-1]), (words[1:], words[0])):
        level = _combined_intensity(intensity, level_word)
        answer = _combined_done(" ".join(done_words))
        if answer is not None and level is not None:
            return [answer, level] if done is not None else [level]
    return []


def _combined_intensity(intensity: Question, word: str) -> Answer | None:
    first = len(DONE_QUESTION.options) + 1
    if word.isdigit():
        index = int(word) - first
        return (
            _answer(INTENSITY_QUESTION_ID, intensity.options[index].id) if 0 <= index < len(intensity.options) else None
        )
    return _from_words(intensity, word)


def _combined_done(phrase: str) -> Answer | None:
    if phrase.isdigit():
        return _from_number(DONE_QUESTION, int(phrase))
    option = _COMBINED_DONE_WORDS.get(phrase) or _COMBINED_DONE_WORDS_WITH_LEVEL.get(phrase)
    if option is not None:
        return _answer(DONE_QUESTION_ID, option)
    return _from_words(DONE_QUESTION, phrase)


def apply_intensity(current: str, answer: Answer) -> str:
    """The new intensity after ``answer`` (docs/behaviour.md#B-INT-3); an absolute level wins."""
    level = _level(current)
    if answer.question_id != INTENSITY_QUESTION_ID:
        return level
    if answer.absolute_intensity in INTENSITY_LEVELS:
        return answer.absolute_intensity
    step = _STEP.get(answer.option_id, 0)
    index = INTENSITY_LEVELS.index(level) + step
    return INTENSITY_LEVELS[max(0, min(len(INTENSITY_LEVELS) - 1, index))]


def _level(current: str) -> str:
    value = (current or "").strip().lower()
    return value if value in INTENSITY_LEVELS else DEFAULT_INTENSITY


def _answer(question_id: str, option_id: str) -> Answer:
    absolute = option_id if option_id in INTENSITY_LEVELS else None
    return Answer(
        question_id=question_id,
        option_id=option_id,
        canonical_text=canonical_answer_text(question_id, option_id),
        absolute_intensity=absolute,
    )


def _known_options(question_id: str) -> list[str]:
    if question_id == DONE_QUESTION_ID:
        return [o.id for o in DONE_QUESTION.options]
    if question_id == INTENSITY_QUESTION_ID:
        return [o.id for o in _ALL_INTENSITY_OPTIONS]
    return []


def _from_button_id(answer_id: str) -> Answer | None:
    question_id, sep, option_id = answer_id.lower().partition(":")
    if sep:
        return _answer(question_id, option_id) if option_id in _known_options(question_id) else None
    # A bare option id (e.g. a Twilio template payload "done"): every option id is unique.
    for qid in (DONE_QUESTION_ID, INTENSITY_QUESTION_ID):
        if question_id in _known_options(qid):
            return _answer(qid, question_id)
    return None


def _from_canonical_text(text: str) -> Answer | None:
    match = _CANONICAL.search(_fold(text))
    if match is None:
        return None
    asked = _normalise(match["question"])
    answer = _normalise(match["answer"])
    if asked == _normalise(DONE_QUESTION.text):
        options = [(o.id, o.title) for o in DONE_QUESTION.options]
        question_id = DONE_QUESTION_ID
    elif asked == _normalise(_INTENSITY_TEXT):
        options = [(o.id, o.title) for o in _ALL_INTENSITY_OPTIONS]
        options += [(level, level) for level in INTENSITY_LEVELS]
        question_id = INTENSITY_QUESTION_ID
    else:
        return None
    for option_id, title in options:
        if answer == _normalise(title):
            return _answer(question_id, option_id)
    return None  # e.g. "A: [responded]" (W13): not an answer we can use


def _from_number(question: Question, number: int) -> Answer | None:
    if number > len(question.options):
        return None
    option_id = question.options[number - 1].id
    return _answer(question.id, option_id) if option_id in _known_options(question.id) else None


def _from_words(question: Question, text: str) -> Answer | None:
    reply = _normalise(text)
    known = _known_options(question.id)
    for option in question.options:
        if option.id not in known:
            continue
        words = {_normalise(option.title), option.id, *_OPTION_WORDS.get((question.id, option.id), ())}
        if reply in words:
            return _answer(question.id, option.id)
    if question.id == INTENSITY_QUESTION_ID and reply in _ABSOLUTE_LEVELS:
        return _answer(question.id, _ABSOLUTE_LEVELS[reply])
    return None


def _fold(text: str) -> str:
    return text.replace("\u2019", "'").replace("\u2018", "'").lower()


def _normalise(text: str) -> str:
    """Lower case, typographic apostrophes folded, punctuation and emoji dropped, spaces collapsed."""
    kept = re.sub(r"[^\w' ]+", " ", _fold(text))
    return " ".join(kept.replace("'", "").split())


def _join_or(items: list[str]) -> str:
    if len(items) == 1:
        return items[0]
    return f"{', '.join(items[:-1])} or {items[-1]}"
