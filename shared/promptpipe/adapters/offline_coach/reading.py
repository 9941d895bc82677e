"""A reply read against what the coach last asked: which question or offer it answers, whether it
accepts or declines, whether it asks one of the common questions.

The coach's own questions are recognised from its last message (the request's history), so a short
answer ("dinner", "yes", "9ish") is read as the answer to that question whatever the flow
controller pursues next; the controller's node is the fallback for questions worded by someone else.
"""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.text import ANCHOR, DOMAIN, MOTIVATION, TIME
from promptpipe.rules.change_of_when import asks_for_an_unnamed_time, asks_to_change_when
from promptpipe.rules.intent_patterns import is_capability_question
from promptpipe.rules.message_reading import read_message
from promptpipe.rules.opt_out import OptKind, read_opt_message

# Markers of the coach's own questions (intake.py words them; feedback.py asks the repair ones).
OFFER_SCHEDULE = "Shall I send you one like it every day"
# The offer in the three languages (phrases.py words it): a reply to it answers the offer.
_OFFER = re.compile(rf"{OFFER_SCHEDULE}|Te env[ií]o uno as[ií] cada d[ií]a|Je vous en envoie un comme")
SUGGEST_LEAD = "How about"  # "How about “after breakfast”?" / "How about 9pm?" — a suggestion to accept
_ASKED: tuple[tuple[str, re.Pattern[str]], ...] = (
    # the habit prompt's own question, in its languages (habit_prompt.py)
    ("first_prompt", re.compile(r"\bwould that feel doable\b|\bte parece factible\b|\bfaisable pour vous\b", re.I)),
    (
        "schedule",
        re.compile(
            r"\bshall i send you one\b|\bevery day at [\d:]+\s*(?:am|pm)?\?|\bte env[ií]o uno\b|"
            r"\bje vous en envoie un\b",
            re.I,
        ),
    ),
    (
        ANCHOR,
        re.compile(
            r"\balready do every day\b|\broutine\b|\bcould follow\b|\battach it to\b|"
            r"\bhaces ya cada d[ií]a\b|\bd[ée]j[àa] chaque jour\b",
            re.I,
        ),
    ),
    (TIME, re.compile(r"\bwhat time\b|\bwhen (?:should|would|do you want)\b|\ba qu[eé] hora\b|\bquelle heure\b", re.I)),
    (
        MOTIVATION,
        re.compile(
            r"\bmatter to you\b|\bwhy\b|\breason\b|\bwhat would it give\b|\bpor qu[eé]\b|"
            r"\bpourquoi\b|\bte aportar[ií]a\b|\bvous apporterait\b",
            re.I,
        ),
    ),
    (
        DOMAIN,
        re.compile(
            r"\bhabit you'd like to build\b|\bwhat (?:small )?habit\b|\bqu[eé] (?:peque[ñn]o )?h[aá]bito\b|"
            r"\bquelle (?:petite )?habitude\b",
            re.I,
        ),
    ),
)
_NODE_FIELDS = {"habit": DOMAIN, "motivation": MOTIVATION, "time": TIME, "anchor": ANCHOR, "schedule": "schedule"}


def is_schedule_offer(text: str) -> bool:
    """The coach's own offer of the daily prompt, in any of its languages."""
    return bool(_OFFER.search(text))


def last_question(reply: str) -> str:
    """The last sentence of ``reply`` that asks something ("" when it asks nothing)."""
    questions = re.findall(r"[^.!?…”]*\?", reply)
    return questions[-1].strip() if questions else ""


def asked_for(last_reply: str, node: str = "") -> str | None:
    """What the coach's last message asked for: a profile field, ``"schedule"`` (the offer of a
    daily prompt) or ``None``; the controller's ``node`` when the wording is not the coach's own."""
    question = last_question(last_reply)
    if question:
        for name, pattern in _ASKED:
            if pattern.search(question):
                return name
    return _NODE_FIELDS.get(node) if question else None


# The coach's suggestion in its three languages (phrases.py and intake.py word it: "How about 9pm —
# would that work?", "¿Qué tal a las 21:30?", "Que diriez-vous de 21h30 ?", "¿Qué tal “antes de dormir”?",
# "Et “avant de dormir” ?").
_SUGGESTED = re.compile(
    rf"(?:{SUGGEST_LEAD}|¿?Qu[ée] tal(?: a las)?|Que diriez-vous de) (?:“([^”]+)”|([^?—]+?))\s*(?: —[^?]*)?\?"
    r"|Et (?:“([^”]+)”|[àa] ([\dh:]+))(?:, [çc]a vous irait)? \?"
)


def suggestion(last_reply: str) -> str:
    """The value the coach suggested in its last message ("How about “after breakfast”?" →
    ``after breakfast``; "How about 9pm?" → ``9pm``; "¿Qué tal a las 21:30?" → ``21:30``), or ""."""
    match = _SUGGESTED.search(last_reply)
    return next((group.strip() for group in match.groups() if group), "") if match else ""


def suggestion_sentence(last_reply: str) -> str:
    """The coach's last message from its last suggestion on (to ask it again), or ""."""
    found = list(_SUGGESTED.finditer(last_reply))
    return last_reply[found[-1].start() :].strip() if found else ""


# --- acceptance and refusal --------------------------------------------------------------------
_YES = (
    r"y(?:es|e[sa]h?|ep|up|a|se|s)|ok(?:ay)?|k|kk|sure|alright|all right|fine|perfect|great|good|cool|"
    r"definitely|absolutely|of course|certainly|please|pls|sounds good|sounds great|that works|works for me|"
    r"works|do it|go ahead|go for it|let'?s do it|let'?s go|why not|deal|done deal|yes please|"
    r"s[ií]|vale|claro|dale|de acuerdo|perfecto|genial|bueno|porfa|por favor|venga|ok then"
)
_ACCEPT = re.compile(rf"^(?:(?:{_YES})\b[\s,!.]*)+(?:(?:then|yes|that|it|better|thanks?|thank you)\b[\s,!.]*)*", re.I)
_DECLINE = re.compile(
    r"^(?:no|nope|nah|not (?:now|yet|really)|no thanks?|don'?t|rather not|maybe later|later)\b|\bno quiero\b",
    re.I,
)
# Laughter or thanks alone acknowledges; it agrees to nothing.
_LAUGH_OR_THANKS = re.compile(r"^[\W_]*(?:(?:lol|haha+|jaja+|lmao|thanks?|thank you|thx|gracias|merci)[\W_]*)+$", re.I)
_THUMBS = re.compile(r"^[\s👍👌✅🙌💪🙂😊👏✔️]+$")


def accepts(text: str) -> bool:
    """ "yes", "ok", "sure 👍", "yes that works", "si", "dale!!", "👍": agreement with what was
    offered. Not a question, not a refusal, and not an answer with more in it ("yes but at 8")."""
    stripped = text.strip()
    if not stripped or "?" in stripped or _DECLINE.search(stripped):
        return False
    if _THUMBS.match(stripped):
        return True
    if read_message(stripped).kind == "yes" and not _LAUGH_OR_THANKS.match(stripped):
        return True  # "va, me parece bien", "ça marche", "👍🏾": the shared reader's yes
    plain = re.sub(r"[^\w\s',.!]", " ", stripped).strip()
    match = _ACCEPT.match(plain)
    if match is None:
        return False
    rest = plain[match.end() :].strip(" ,.!")
    # What follows the "yes" may only be a few words of agreement ("sure, why not", "fine, daily then").
    return not rest or (len(rest.split()) <= 3 and not re.search(r"\d|\bbut\b|\bnot\b|\binstead\b", rest, re.I))


def declines(text: str) -> bool:
    return bool(_DECLINE.search(text.strip()))


# --- formulas and the common questions ---------------------------------------------------------
_FORMULA = re.compile(r"^\s*[=+@]\s*[A-Za-z_.]+\s*\(|^\s*=\s*\S", re.I)


def is_formula(text: str) -> bool:
    """A spreadsheet formula (``=HYPERLINK("…","Done")``): not something a person reports with."""
    return bool(_FORMULA.match(text))


_QUESTIONS: tuple[tuple[str, re.Pattern[str] | None], ...] = (
    ("rephrase", re.compile(r"\bwhat do you mean\b|\bwhat does that mean\b|\bi don'?t understand\b|"
                            r"\bwhat\?+$|^huh\b|\bno entiendo\b|\bqu[eé] quieres decir\b", re.I)),
    ("change_time_later", re.compile(r"\b(?:change|move|switch|different|another|later|earlier)\b.*\btime\b|"
                                     r"\btext me at a different\b|\bcambiar la hora\b", re.I)),
    ("stop_later", re.compile(r"\b(?:stop|pause|cancel|unsubscribe|quit|dejar)\b", re.I)),
    ("my_habit", re.compile(r"\bwhat(?:'s| is| was)? my habit\b|\bwhich habit\b|\bwhat am i (?:doing|working on)\b",
                            re.I)),
    ("when_texts", re.compile(r"\bwhen (?:do|will|are) you (?:text|message|send|remind)|"
                              r"\bwhat time (?:do|will|are|does) (?:you|i get|my|it|they|the)|"
                              r"\bwhen (?:is|does) my (?:reminder|prompt|message)\b|"
                              r"\bwhen (?:do|will) i get\b|\bwhen (?:will|does|do) (?:it|they) (?:come|arrive)", re.I)),
    ("miss_a_day", re.compile(r"\b(?:miss|skip|forget)\b.*\bday\b|\bwhat if i (?:miss|skip|forget|don'?t)\b", re.I)),
    ("how_long", re.compile(r"\bhow long\b|\bhow much time\b|\bcu[aá]nto tiempo\b", re.I)),
    ("bot", None),  # the shared reader's "bot" topic: one spelling of the question in every language
    ("weekdays", re.compile(r"\b(?:weekdays?|weekends?)\b", re.I)),
    ("random_time", re.compile(r"\bdifferent time each day\b|\brandom\b|\bvar(?:y|ies)\b", re.I)),
)  # fmt: skip


def common_question(text: str) -> str | None:
    """Which of the common questions the message asks, if any (``rephrase``, ``change_time_later``,
    ``stop_later``, ``my_habit``, ``when_texts``, ``miss_a_day``, ``how_long``, ``bot``,
    ``weekdays``, ``random_time``)."""
    stripped = text.strip()
    asked = "?" in stripped or bool(
        re.match(r"(?:can|could|would|will|is|are|do|does|how|what|when|may|which)\b", stripped, re.I)
    )
    for name, pattern in _QUESTIONS:
        if pattern is None:  # asked of the shared reader, which checks the question's form itself
            if read_message(stripped).topic == name:
                return name
            continue
        # "antes que nada se puede cambiar la hora": a capability asked, its question mark left out
        capability = name in ("change_time_later", "stop_later") and is_capability_question(stripped)
        changes_when = name == "change_time_later" and asks_to_change_when(stripped)  # "change when they come?"
        # "can we change the time?" with none named: which one is asked, whether it means now or later
        unnamed = name == "change_time_later" and asks_for_an_unnamed_time(stripped)
        if not (pattern.search(stripped) or changes_when or unnamed) or not (asked or name == "rephrase" or capability):
            continue
        # "can you change my time to 7pm?" asks for the change now; "can I change it later?" asks what is possible
        if name in ("change_time_later", "stop_later") and not is_capability_question(stripped) and not unnamed:
            continue
        return name
    return None


# --- an unclear stop request ---------------------------------------------------------------------
STOP_WHICH = "Do you want me to stop all messages, or only change when they come?"


def unclear_stop(text: str) -> bool:
    """ "stop texting me at night", "stop the messages for a week": a stop request narrowed to a time
    or a kind, read by the webhook's opt-out reader (rules/opt_out.py), which leaves it to the coach. A
    clear request never reaches the coach: the webhook opts the participant out."""
    reading = read_opt_message(text)
    return reading is not None and reading.kind is OptKind.UNCLEAR_STOP
