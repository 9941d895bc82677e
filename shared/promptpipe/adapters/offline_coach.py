"""An offline, deterministic, rule-based coach that implements the ``LLM`` port (docs/architecture.md#llm).

It lets the demo and the end-to-end tests run without an OpenAI key while exercising the real
engine: it answers through the normal tool loop, calling ``save_user_profile``,
``generate_habit_prompt``, ``scheduler`` and ``transition_state`` exactly as a model would, and it
never touches state itself. Every response is labelled ``"offline-coach (rule-based, no LLM)"``.

It is stateless: each call derives what to do from the request alone — the purpose, the context
block's ``- field: value`` lines, the history, the latest user message and the tool calls and
results already made in this loop — so the same request always gets the same answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse, TokenUsage, ToolCall

LABEL = "(rule-based, no LLM)"
INTAKE_HEADER = "INTAKE CONVERSATION CONTEXT:"
FEEDBACK_HEADER = "FEEDBACK TRACKING CONTEXT:"
HINT_PREFIX = "<Hint:"
# Placeholders the context blocks use for "nothing stored".
_EMPTY_VALUES = {"STILL NEEDED", "(unknown)", "(none recorded)", "(not given)", "(none)"}

SAVE, GENERATE, SCHEDULER, TRANSITION = "save_user_profile", "generate_habit_prompt", "scheduler", "transition_state"
DOMAIN, MOTIVATION, TIME, ANCHOR = "habit_domain", "motivational_frame", "preferred_time", "prompt_anchor"
INTAKE_ORDER = (DOMAIN, MOTIVATION, TIME, ANCHOR)  # the order intake asks in

HOLDING_REPLY = "Thanks for your patience — someone from our team will follow up with you soon."

# Markers in our own questions, read back from history to interpret a bare answer.
ASK_HELPED = "What helped you"
ASK_BARRIER = "What got in the way"


# ---------------------------------------------------------------------------------------------
# Text helpers (pure, module-level so they can be tested directly)
# ---------------------------------------------------------------------------------------------

_ACKS = {
    "hi", "hello", "hey", "hiya", "ok", "okay", "k", "thanks", "thank you", "yes", "no", "sure", "cool",
    "great", "hmm", "lol", "yo", "good", "fine", "nice", "what", "why", "huh", "something", "anything",
}  # fmt: skip
_GREETINGS = {"hi", "hello", "hey", "hiya", "yo", "good morning", "good evening", "hi there", "hello there"}
_NON_ANSWERS = ("i don't know", "i dont know", "idk", "not sure", "no idea", "whatever", "anything", "dunno")
_FILLER = re.compile(r"^(?:(?:um+|uh+|well|hmm+|so|maybe|probably|i guess|i think|honestly|ok(?:ay)?)[,\s]+)+", re.I)
_WORD = re.compile(r"[a-z']+", re.I)


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" \t\n,.;:!?-—\"'")


def _words(text: str, limit: int) -> str:
    parts = text.split()
    return " ".join(parts[:limit])


def _substantive(text: str) -> bool:
    """A real answer, not a greeting, an acknowledgement or a shrug."""
    norm = _clean(text).lower()
    if not norm or norm in _ACKS or any(norm.startswith(n) for n in _NON_ANSWERS):
        return False
    return len(_WORD.findall(norm)) >= 1 and len(norm) >= 3


def _is_hint(text: str) -> bool:
    return text.strip().startswith(HINT_PREFIX)


# -- times --------------------------------------------------------------------------------------

_RANGE = re.compile(
    r"\b(\d{1,2})(?:[:.]([0-5]\d))?\s*(?:-|–|to)\s*\d{1,2}(?:[:.][0-5]\d)?\s*(a\.?m\.?|p\.?m\.?)(?![a-z])", re.I
)
_AMPM = re.compile(r"\b(\d{1,2})(?:[:.]([0-5]\d))?\s*(a\.?m\.?|p\.?m\.?)(?![a-z])", re.I)
_HHMM = re.compile(r"\b([01]?\d|2[0-3])[:h]([0-5]\d)\b", re.I)
_AT_HOUR = re.compile(
    r"\b(?:at|around|about|by|for)\s+(\d{1,2})(?![\d:.])(?:\s*o'?clock)?\b(?!\s*(?:min|hour|day|time|x\b))", re.I
)
_PM_HINT = re.compile(r"\b(?:evening|night|tonight|afternoon|after work|dinner|pm)\b", re.I)
_AM_HINT = re.compile(r"\b(?:morning|breakfast|am|wake|waking)\b", re.I)
_VAGUE_TIMES: tuple[tuple[str, str], ...] = (
    (r"\bmornings?\b|\bbreakfast\b|\bwak(?:e|ing) up\b", "08:00"),
    (r"\bafter lunch\b", "13:00"),
    (r"\bnoon\b|\bmidday\b|\blunch(?:time)?\b", "12:00"),
    (r"\bafternoons?\b", "15:00"),
    (r"\bevenings?\b|\btonight\b", "19:00"),
    (r"\bafter work\b", "18:00"),
    (r"\bafter dinner\b", "20:00"),
    (r"\bdinner\b", "19:00"),
    (r"\bnights?\b|\bbed ?time\b|\bbefore bed\b|\bbefore sleep\b", "21:00"),
)
# A vague word counts as a time only when phrased like one ("in the morning", "every evening")
# unless we just asked for a time or an anchor.
_TIME_CONTEXT = re.compile(r"\b(?:in the|every|each|at|around|by|this|during the|mid|late|early)\s+$", re.I)


def _hhmm(hour: int, minute: int) -> str:
    return f"{hour % 24:02d}:{minute:02d}"


def parse_clock_time(text: str) -> str | None:
    """An explicit time of day ("8am", "7:30 pm", "19:00", "at 7") as HH:MM (24-hour)."""
    match = _RANGE.search(text) or _AMPM.search(text)  # a range: its start ("8-9am" → 08:00)
    if match:
        hour, minute = int(match[1]), int(match[2] or 0)
        if not 1 <= hour <= 12:
            return None
        is_pm = match[3].lower().startswith("p")
        return _hhmm(hour % 12 + (12 if is_pm else 0), minute)
    match = _HHMM.search(text)
    if match:
        return _hhmm(_guess_half_of_day(int(match[1]), text), int(match[2]))
    match = _AT_HOUR.search(text)
    if match and int(match[1]) <= 23:
        return _hhmm(_guess_half_of_day(int(match[1]), text), 0)
    bare = re.fullmatch(r"\s*(\d{1,2})\s*", text)
    if bare and int(bare[1]) <= 23:
        return _hhmm(_guess_half_of_day(int(bare[1]), text), 0)
    return None


def _guess_half_of_day(hour: int, text: str) -> int:
    """ "at 7" in the evening is 19:00; "at 3" is more likely the afternoon than the night."""
    if hour == 0 or hour >= 12:
        return hour
    if _PM_HINT.search(text):
        return hour + 12
    if _AM_HINT.search(text):
        return hour
    return hour + 12 if hour <= 6 else hour


def parse_vague_time(text: str, *, loose: bool = False) -> str | None:
    """A time-of-day word ("morning" → 08:00, "after lunch" → 13:00, "evening" → 19:00)."""
    for pattern, value in _VAGUE_TIMES:
        for match in re.finditer(pattern, text, re.I):
            before = text[: match.start()]
            if loose or _TIME_CONTEXT.search(before) or match[0].lower().startswith(("after", "before")):
                return value
    return None


def normalise_time(value: str) -> str | None:
    """A stored preferred time as HH:MM, reading legacy forms ("8am", "morning") too."""
    value = value.strip()
    if re.fullmatch(r"([01]?\d|2[0-3]):[0-5]\d", value):
        hours, minutes = value.split(":")
        return _hhmm(int(hours), int(minutes))
    return parse_clock_time(value) or parse_vague_time(value, loose=True)


def friendly_time(hhmm: str) -> str:
    """ "08:00" → "8am", "19:30" → "7:30pm"."""
    try:
        hour, minute = (int(part) for part in hhmm.split(":"))
    except ValueError:
        return hhmm
    suffix = "am" if hour < 12 else "pm"
    hour12 = hour % 12 or 12
    return f"{hour12}{suffix}" if minute == 0 else f"{hour12}:{minute:02d}{suffix}"


# -- intake facts -------------------------------------------------------------------------------

_MOTIVATION = re.compile(
    r"\b(?:because|'?cause|so that|so i can|so i|in order to|i want to (?=feel\b)|i'd like to (?=feel\b)|(?=to feel\b)"
    r"|(?=to (?:have|be|reduce|lower|improve|boost|lose|stay|keep|get more|get better)\b)"
    r"|motivat\w*(?:\s+(?:by|is|because))?|my reason is|the reason is|it helps me|helps me)\s*"
    r"(?P<rest>[^.;!?,]+)",
    re.I,
)
_ANCHOR = re.compile(
    r"\b(?P<a>(?:right |just )?(?:after|before)\s+(?!\d|noon\b|midnight\b|that\b|then\b)[^,.;!?]+"
    r"|(?:when|once|as soon as|while) i(?:'m| am)?\s+[^,.;!?]+)",
    re.I,
)
# Weaker cues ("with my coffee"): only while no anchor is known, as they also appear in other talk.
_SOFT_ANCHOR = re.compile(r"\b(?P<a>(?:with|during) my\s+[^,.;!?]+)", re.I)
_ANCHOR_TAIL = re.compile(
    r"\s+(?:at|around|about|by|because|so|since|and i|and then|and it|to feel|every ?day|each day|daily|"
    r"i think|maybe|probably|please)\b.*$|\s+\d.*$",
    re.I,
)
_ROUTINE_WORDS = re.compile(
    r"\b(?:coffee|tea|breakfast|lunch|dinner|shower|brush\w*|teeth|wake|waking|work|commute|school|bed|"
    r"meal|dog|kids|gym|class|alarm|get home|getting home|get up|getting up)\b",
    re.I,
)
_DOMAINS: tuple[tuple[str, str], ...] = (
    (r"\bwalk(?:s|ing)?\b", "walking"),
    (r"\bstretch\w*", "stretching"),
    (r"\byoga\b", "yoga"),
    (r"\b(?:run|running|jog\w*)\b", "running"),
    (r"\b(?:exercis\w*|work ?outs?|working out|fitness|gym|strength)\b", "exercise"),
    (r"\b(?:move more|movement|moving|active|activity|physical)\b", "physical activity"),
    (r"\bsleep\w*", "sleep"),
    (r"\b(?:water|hydrat\w*)\b", "hydration"),
    (r"\bread(?:ing)?\b|\bbooks?\b", "reading"),
    (r"\b(?:meditat\w*|mindful\w*|breath\w*)\b", "mindfulness"),
    (r"\b(?:journal\w*|gratitude)\b", "journaling"),
    (r"\b(?:diet|eat\w*|nutrition|veg\w*|fruits?|snack\w*|food)\b", "healthy eating"),
    (r"\b(?:stud(?:y|ying|ies)|learn\w*|homework|revision)\b", "studying"),
    (r"\b(?:focus\w*|productiv\w*|procrastinat\w*)\b", "focus"),
    (r"\b(?:stress\w*|anxi\w*|relax\w*|calm\w*)\b", "stress relief"),
    (r"\b(?:screen time|social media|doomscroll\w*)\b", "less screen time"),
)
_WANT = re.compile(
    r"\b(?:i want to|i'd like to|i would like to|i wanna|i'm trying to|i am trying to|i need to|i should|"
    r"help me|my goal is to|hoping to|i'd love to|habit of|get better at)\s+(?P<x>[^,.;!?]+)",
    re.I,
)
_DOMAIN_TAIL = re.compile(r"\s+(?:at|around|after|before|because|so|every|each|daily|when|with|in the)\b.*$", re.I)


def _span_removed(text: str, match: re.Match[str] | None) -> str:
    if match is None:
        return text
    return text[: match.start()] + " , " + text[match.end() :]


def parse_motivation(text: str) -> tuple[str, re.Match[str] | None]:
    match = _MOTIVATION.search(text)
    if match is None:
        return "", None
    return _words(re.sub(r"^to\s+", "", _clean(match["rest"]), flags=re.I), 15), match


def parse_anchor(text: str, *, soft: bool = False) -> tuple[str, re.Match[str] | None]:
    match = _ANCHOR.search(text) or (_SOFT_ANCHOR.search(text) if soft else None)
    if match is None:
        return "", None
    anchor = _clean(_ANCHOR_TAIL.sub("", match["a"]))
    if len(anchor.split()) < 2:
        return "", None
    return _words(anchor, 10), match


def parse_domain(text: str) -> str:
    """A known domain keyword (earliest wins), else the thing after "I want to …"."""
    hits = [(m.start(), label) for pattern, label in _DOMAINS for m in [re.search(pattern, text, re.I)] if m]
    if hits:
        return min(hits)[1]
    want = _WANT.search(text)
    if want:
        phrase = _clean(_DOMAIN_TAIL.sub("", want["x"]))
        if _substantive(phrase):
            return _words(phrase, 6).lower()
    return ""


def parse_intake_message(text: str, known: dict[str, str], expected: str | None) -> dict[str, str]:
    """The profile fields a message states; ``expected`` is the field we last asked for, so a
    bare answer ("my morning coffee", "more energy") can be read as that field."""
    if _is_hint(text) or not text.strip():
        return {}
    learned: dict[str, str] = {}
    motivation, m_match = parse_motivation(text)
    if not motivation and expected == MOTIVATION:
        motivation, m_match = _leading_clause_as_motivation(text)
    rest = _span_removed(text, m_match)
    anchor, a_match = parse_anchor(rest, soft=not known.get(ANCHOR))
    time = parse_clock_time(rest)
    if time is None and not known.get(TIME):
        time = parse_vague_time(rest, loose=expected in (TIME, ANCHOR))
    domain_text = _span_removed(rest, a_match)
    # A known domain changes only on an explicit "I want to …", not on a passing keyword.
    domain = parse_domain(domain_text) if not known.get(DOMAIN) or _WANT.search(domain_text) else ""
    for name, value in ((DOMAIN, domain), (MOTIVATION, motivation), (TIME, time or ""), (ANCHOR, anchor)):
        if value and value != known.get(name):
            learned[name] = value
    # Only a reply that said nothing else (bar a passing time-of-day word) is read as the answer.
    incidental = not learned or (set(learned) == {TIME} and parse_clock_time(rest) is None)
    if expected and incidental and expected not in learned and not known.get(expected) and _substantive(text):
        guess = _answer_for(expected, text, domain_text)
        if guess:
            learned[expected] = guess
    return learned


_TIME_WORDS = re.compile(
    r"\b(?:in|the|every|each|at|around|by|mornings?|evenings?|afternoons?|nights?|noon|midday|lunch|dinner|"
    r"breakfast|tonight|bed ?time)\b",
    re.I,
)


def _leading_clause_as_motivation(text: str) -> tuple[str, re.Match[str] | None]:
    """Answering "why does it matter?", the first clause is the reason ("to unwind before sleep")
    — unless it is plainly an anchor or a time instead."""
    match = re.match(r"\s*(?P<rest>[^.;!?,]+)", text)
    if match is None or text.rstrip().endswith("?") or _ANCHOR.match(match["rest"].strip()):
        return "", None
    clause = _clean(_FILLER.sub("", _clean(match["rest"])))
    if not _substantive(clause) or parse_clock_time(clause) or not _TIME_WORDS.sub("", clause).strip():
        return "", None
    if parse_vague_time(clause) and len(clause.split()) <= 3:  # "every evening please" is a time
        return "", None
    return _words(re.sub(r"^(?:to|because)\s+", "", clause, flags=re.I), 15), match


def _answer_for(expected: str, text: str, domain_text: str) -> str:
    """Read a bare reply as the answer to the question we asked."""
    if text.rstrip().endswith("?"):
        return ""
    answer = _clean(_FILLER.sub("", _clean(text)))
    if expected == DOMAIN:
        phrase = _clean(_FILLER.sub("", _clean(_DOMAIN_TAIL.sub("", domain_text))))
        return _words(phrase, 6).lower() if _substantive(phrase) else ""
    if expected == ANCHOR and _substantive(answer):
        if re.match(r"(?:after|before|when|once|while|with|during)\b", answer, re.I):
            return _words(answer, 10)
        if _ROUTINE_WORDS.search(answer) or answer.lower().startswith("my "):
            return "after " + _words(answer, 9)
    if expected not in INTAKE_ORDER and _substantive(answer):  # a field a flow definition added
        return _words(answer, 30)
    return ""


# -- prompt generator ---------------------------------------------------------------------------

_PRONOUNS = {
    "i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself", "i'm": "you're",
    "i've": "you've", "i'll": "you'll", "i'd": "you'd", "am": "are", "we": "you", "our": "your", "us": "you",
}  # fmt: skip
_VERBS = {
    "feel", "be", "have", "get", "sleep", "stay", "keep", "reduce", "lower", "improve", "boost", "lose", "build",
    "focus", "think", "relax", "manage", "move", "look", "enjoy", "play", "live", "become", "wake", "handle",
    "stop", "start", "breathe", "calm", "clear", "finish", "learn", "read", "walk", "run", "cope",
}  # fmt: skip
_QUANTITIES = {"low": "30 seconds", "normal": "1 minute", "high": "3 minutes"}
# (domain keyword pattern, activity variants, default benefit); variants rotate with successes.
_ACTIVITIES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (r"walk", ("walking", "brisk walking"), "feel more energetic"),
    (r"sleep|bed|rest", ("winding down with slow breaths", "screen-free winding down"), "rest better"),
    (r"read|book", ("reading a page", "reading a few lines"), "unwind and focus"),
    (r"mindful|meditat|breath|stress|anxi|calm|relax", ("slow breathing", "noticing five breaths"), "feel calmer"),
    (r"focus|study|productiv|work|learn", ("slow breathing before one focused task", "reviewing your notes"), "focus"),
    (r"journal|writ|gratitude", ("writing one line in your journal", "noting one good thing"), "reflect"),
    (r"exercis|move|movement|active|physical|stretch|yoga|run|fitness|gym|strength", ("stretching", "squats"),
     "feel more energetic"),
)  # fmt: skip
# Domains whose action is a thing, not a duration: (pattern, action per intensity, default benefit).
_COUNTED_ACTIONS: tuple[tuple[str, dict[str, str], str], ...] = (
    (r"water|hydrat|drink", {"low": "a few sips of water", "normal": "a glass of water",
                             "high": "two glasses of water"}, "stay energised"),
    (r"eat|diet|food|nutrition|veg|fruit|snack", {"low": "one bite of fruit",
     "normal": "adding a fruit or veg to your plate", "high": "adding two servings of veg to your plate"},
     "feel good about what you eat"),
)  # fmt: skip


def _second_person(text: str) -> str:
    return re.sub(r"[A-Za-z']+", lambda m: _PRONOUNS.get(m[0].lower(), m[0]), text)


def _field(text: str, label: str) -> str:
    match = re.search(rf"^{re.escape(label)}:\s*(.*)$", text, re.M)
    value = match[1].strip() if match else ""
    return "" if value in _EMPTY_VALUES else value


def _action(domain: str, intensity: str, successes: int) -> tuple[str, str]:
    """The 1-minute action and a default benefit for ``domain`` at ``intensity``."""
    quantity = _QUANTITIES.get(intensity, _QUANTITIES["normal"])
    key = domain.lower()
    for pattern, actions, benefit in _COUNTED_ACTIONS:
        if re.search(pattern, key):
            return actions.get(intensity, actions["normal"]), benefit
    for pattern, variants, benefit in _ACTIVITIES:
        if re.search(pattern, key):
            return f"{quantity} of {variants[successes % len(variants)]}", benefit
    if domain:
        step = {"low": "a 30-second", "high": "a 3-minute"}.get(intensity, "a 1-minute")
        return f"{step} step toward {_words(domain.lower(), 5)}", "build momentum"
    return f"{quantity} of something small for yourself", "build momentum"


def _benefit(motivation: str, default: str) -> str:
    phrase = _clean(_second_person(motivation)).lower()
    phrase = re.sub(r"^(?:you (?:want|need|would like|'d like)(?: to)?|to|so you can|you can)\s+", "", phrase)
    if not phrase:
        return f"it helps you {default}"
    first = phrase.split()[0]
    if first == "it":
        return _words(phrase, 8)
    if first == "for":
        return f"it's great {_words(phrase, 8)}"
    if first in _VERBS:
        return f"it helps you {_words(phrase, 8)}"
    if first in {"more", "less", "better", "a", "an", "some", "extra", "fewer"}:
        return f"it gives you {_words(phrase, 8)}"
    return f"it helps since {_words(phrase, 8)}"


def _anchor_phrase(anchor: str) -> str:
    phrase = _clean(_second_person(anchor))
    if not re.match(r"(?:right |just )?(?:after|before|when|once|while|with|during|as soon as)\b", phrase, re.I):
        phrase = "after " + phrase
    return phrase[0].upper() + phrase[1:]


def build_habit_prompt(user_text: str, system_text: str) -> str:
    """A MAP-shaped prompt ("After [anchor], try [action] — it helps you [benefit]. Would that feel
    doable?") from the generator request's profile lines; always under 30 words."""
    domain = _field(user_text, "Habit domain")
    motivation = _field(user_text, "Motivation")
    anchor = _field(user_text, "Anchor routine") or "your usual morning routine"
    intensity_match = re.search(r"Intensity:\s*(low|normal|high)", system_text, re.I)
    intensity = intensity_match[1].lower() if intensity_match else "normal"
    done = re.search(r"completed (\d+) habit prompt", system_text)
    action, default_benefit = _action(domain, intensity, int(done[1]) if done else 0)
    # Long phrases are replaced or cut at a natural joint rather than mid-sentence.
    lead = _words(_anchor_phrase(re.split(r"\s+(?:and|then)\s+", anchor)[0]), 8)
    short_motivation = motivation if 0 < len(motivation.split()) <= 8 else ""
    for benefit in (_benefit(short_motivation, default_benefit), f"it helps you {default_benefit}"):
        text = f"{lead}, try {action} — {benefit}. Would that feel doable?"
        if len(text.split()) < 30:
            return text
    return f"{lead}, try {action}. Would that feel doable?"


# -- feedback -----------------------------------------------------------------------------------

_DONE_CANON = re.compile(r"\bq:\s*did you do it\?\s*a:\s*(done|next time)\b", re.I)
_INTENSITY_CANON = re.compile(
    r"\bq:\s*how's the intensity\?\s*a:\s*(decrease|keep current|increase|low|normal|high)", re.I
)
_NEGATIVE = re.compile(
    r"\b(?:didn'?t|did not|couldn'?t|could not|haven'?t|have not|wasn'?t able|not yet|next time|no time|"
    r"forgot|forget|too busy|too tired|skipped|missed|not today|nope|no)\b",
    re.I,
)
_POSITIVE = re.compile(
    r"\b(?:done|did it|i did|completed|finished|yes|yep|yeah|nailed it|managed|went well|it was (?:great|good))\b",
    re.I,
)
_HELPED = re.compile(
    r"\b(?:because|since|thanks to|it helped that|what helped was|helped by)\s+(?P<m>[^.;!?]+)"
    r"|(?P<m2>[^.;!?,]+?)\s+(?:really )?helped\b",
    re.I,
)
_BARRIER_CAUSE = re.compile(r"\b(?:because|since|as)\s+(?P<b>[^.;!?]+)", re.I)
_CHANGE_TIME = re.compile(
    r"\b(?:change|move|switch|reschedule|shift|update|push)\b.*\b(?:time|reminder|prompt|schedule|message|it)\b"
    r"|\binstead\b|\b(?:different|new) time\b",
    re.I,
)
_NEW_HABIT = re.compile(r"\b(?:new habit|different habit|change (?:my|the) habit|switch (?:my |the )?habit)\b", re.I)


def classify_barrier(text: str) -> tuple[str, str]:
    """(barrier, tweak) for a "not this time" reply."""
    if _DONE_CANON.search(text):
        return "not specified", "make it even smaller — just 30 seconds right after your usual routine"
    lowered = text.lower()
    if "forg" in lowered:
        return "forgot", "leave a visible cue right where your routine happens, or set a phone reminder"
    if re.search(r"\b(?:time|busy|rushed|hectic|late)\b", lowered):
        return "not enough time", "shrink it to a 30-second version you can do anywhere"
    if re.search(r"\b(?:tired|exhausted|sleepy|sick|ill|energy)\b", lowered):
        return "too tired", "do the easiest possible version, even just 30 seconds"
    cause = _BARRIER_CAUSE.search(text)
    if cause and _substantive(cause["b"]):
        return _words(_clean(cause["b"]), 15), "make it even smaller so it fits on a busy day"
    cleaned = _clean(_NEGATIVE.sub("", text))
    if _substantive(cleaned):
        return _words(_clean(text), 15), "make it even smaller so it fits on a busy day"
    return "not specified", "make it even smaller — just 30 seconds right after your usual routine"


# ---------------------------------------------------------------------------------------------
# Reading the request
# ---------------------------------------------------------------------------------------------


@dataclass
class LoopCall:
    """A tool call made earlier in this loop, with its result (``None`` when not answered)."""

    name: str
    args: dict[str, Any]
    result: str | None

    @property
    def ok(self) -> bool:
        return self.result is not None and not self.result.startswith("ERROR:")

    @property
    def failed(self) -> bool:
        return self.result is not None and self.result.startswith("ERROR:")


@dataclass
class Turn:
    purpose: str
    user: str
    context_text: str = ""
    context: dict[str, str] = field(default_factory=dict)
    system_text: str = ""
    history: list[ChatMessage] = field(default_factory=list)
    calls: list[LoopCall] = field(default_factory=list)
    tools: set[str] = field(default_factory=set)
    call_count: int = 0  # tool calls already in the request (ids continue from here)
    # The flow controller's latest choice (intake), when the request carries one.
    steer_node: str = ""
    steer_mode: str = ""
    steer_fields: list[str] = field(default_factory=list)

    def called(self, name: str, **match: Any) -> list[LoopCall]:
        return [c for c in self.calls if c.name == name and all(c.args.get(k) == v for k, v in match.items())]

    @property
    def last_assistant(self) -> str:
        return next((m.content or "" for m in reversed(self.history) if m.role == "assistant"), "")

    @property
    def name(self) -> str:
        match = re.search(r"^Name:\s*(\S.*)$", self.context_text, re.M)
        return match[1].strip().split()[0] if match else ""


def read_turn(request: ChatRequest) -> Turn:
    messages = request.messages
    user_index = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    turn = Turn(
        purpose=request.purpose,
        user=(messages[user_index].content or "") if user_index >= 0 else "",
        tools={t.name for t in request.tools},
        call_count=sum(len(m.tool_calls) for m in messages),
    )
    systems = [m.content or "" for m in messages[: max(user_index, 0)] if m.role == "system"]
    turn.system_text = "\n".join(systems)
    for text in systems:
        if text.startswith((INTAKE_HEADER, FEEDBACK_HEADER)):
            turn.context_text = text
            for key, value in re.findall(r"^- ([A-Za-z_ ]+):\s*(.*)$", text, re.M):
                turn.context[key.strip()] = "" if value.strip() in _EMPTY_VALUES else value.strip()
    turn.history = [m for m in messages[: max(user_index, 0)] if m.role in ("user", "assistant")]
    steering = [
        m.content or "" for m in messages if m.role == "system" and (m.content or "").startswith(_STEER_HEADERS)
    ]
    if steering:
        _read_steering(turn, steering[-1])
    results = {m.tool_call_id: m.content or "" for m in messages[user_index + 1 :] if m.role == "tool"}
    for message in messages[user_index + 1 :]:
        for call in message.tool_calls:
            try:
                args = call.parsed_arguments()
            except ValueError:
                args = {}
            turn.calls.append(LoopCall(call.name, args, results.get(call.id)))
    return turn


_STEER_HEADERS = ("FLOW CONTROLLER:", "FLOW CONTROLLER UPDATE:")


def _read_steering(turn: Turn, text: str) -> None:
    """The controller's block: ``- pursue: <node> (<MODE>)`` and ``- fields: a, b``."""
    match = re.search(r"^- pursue: (\S+) \((\w+)\)", text, re.M)
    if match:
        turn.steer_node, turn.steer_mode = match[1], match[2]
    elif re.search(r"^- pursue: nothing:", text, re.M):
        turn.steer_mode = "PAUSED"
    fields = re.search(r"^- fields: (.+)$", text, re.M)
    turn.steer_fields = [f.strip() for f in fields[1].split(",")] if fields else []


def _result_json(result: str) -> Any:
    """The JSON payload a tool result carries after its first line, if any."""
    for index, char in enumerate(result):
        if char in "{[" and (index == 0 or result[index - 1] == "\n"):
            try:
                return json.loads(result[index:])
            except ValueError:
                return None
    return None


def _error_reason(result: str | None) -> str:
    text = (result or "").removeprefix("ERROR:").strip()
    return text.split(" (", 1)[0].strip() or "an unexpected error"


# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------

_Step = str | list[tuple[str, dict[str, Any]]]  # reply text, or tool calls to make


class OfflineCoach:
    """The rule-based ``LLM`` port implementation. ``explain=True`` fills ``reasoning`` with the
    rule that fired (shown only in debug output)."""

    def __init__(self, model_name: str = "offline-coach", *, explain: bool = False) -> None:
        self.model = f"{model_name} {LABEL}"
        self.explain = explain

    def complete(self, request: ChatRequest) -> ChatResponse:
        turn = read_turn(request)
        if request.purpose == "prompt_generator":
            user = next((m.content or "" for m in request.messages if m.role == "user"), "")
            step: _Step = build_habit_prompt(user, turn.system_text)
            why = "prompt generator: MAP template from the profile lines"
        elif request.purpose == "intake" or turn.context_text.startswith(INTAKE_HEADER):
            step, why = IntakeRules(turn).decide()
        elif request.purpose == "feedback" or turn.context_text.startswith(FEEDBACK_HEADER):
            step, why = FeedbackRules(turn).decide()
        else:
            step, why = "Thanks for your message! How is your habit going today?", "no rule for this purpose"
        return self._respond(request, turn, step, why)

    def _respond(self, request: ChatRequest, turn: Turn, step: _Step, why: str) -> ChatResponse:
        calls: list[ToolCall] = []
        content: str | None = None
        if isinstance(step, str):
            content = step
        else:
            for offset, (name, args) in enumerate(step, start=1):
                arguments = json.dumps(args, ensure_ascii=False, sort_keys=True)
                calls.append(ToolCall(id=f"offline_{turn.call_count + offset}", name=name, arguments=arguments))
        prompt_chars = sum(len(m.content or "") + sum(len(c.arguments) for c in m.tool_calls) for m in request.messages)
        completion_chars = len(content or "") + sum(len(c.name) + len(c.arguments) for c in calls)
        return ChatResponse(
            content=content,
            tool_calls=calls,
            model=self.model,
            usage=TokenUsage(prompt_tokens=prompt_chars // 4, completion_tokens=max(1, completion_chars // 4)),
            latency_ms=0.0,
            finish_reason="tool_calls" if calls else "stop",
            reasoning=why if self.explain else None,
        )


class IntakeRules:
    """Intake: save what the message says, then (profile complete) prompt → schedule → FEEDBACK."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.known = {name: turn.context.get(name, "") for name in INTAKE_ORDER}

    def profile(self) -> dict[str, str]:
        """The context block's values plus what this loop saved successfully."""
        profile = dict(self.known)
        for call in self.turn.called(SAVE):
            if call.ok:
                profile.update({k: v for k, v in call.args.items() if k in profile and isinstance(v, str) and v})
        return profile

    def expected(self) -> str | None:
        steered = self.steered(self.known)
        if steered is not None:
            return steered
        return next((name for name in INTAKE_ORDER if not self.known[name]), None)

    def steered(self, profile: dict[str, str]) -> str | None:
        """The field the flow controller says to pursue, when it names one still missing."""
        return next((f for f in self.turn.steer_fields if not self._has(f, profile)), None)

    def _has(self, name: str, profile: dict[str, str]) -> bool:
        if name in profile:
            return bool(profile[name])
        saved = any(c.ok and c.args.get(name) for c in self.turn.called(SAVE))
        return saved or bool(self.turn.context.get(name))

    def decide(self) -> tuple[_Step, str]:
        turn = self.turn
        failed = next((c for c in turn.calls if c.failed), None)
        if failed is not None:
            return self._error_reply(failed), f"intake: {failed.name} failed; telling the participant"
        if _is_hint(turn.user) and not turn.calls:
            return self._greeting(), "intake: greeting hint"
        if turn.steer_mode in ("HANDOFF", "PAUSED"):
            return HOLDING_REPLY, "intake: the flow controller is waiting for a person"
        if not turn.called(SAVE) and SAVE in turn.tools:
            learned = parse_intake_message(turn.user, self.known, self.expected())
            if learned:
                return [(SAVE, learned)], f"intake: learned {', '.join(learned)}"
        profile = self.profile()
        time = normalise_time(profile[TIME]) if profile[TIME] else None
        if profile[ANCHOR] and time and not self.steered(profile):
            return self._complete(time)
        return self._ask_next(profile), "intake: asking for the next missing field"

    def _greeting(self) -> str:
        hello = f"Hi {self.turn.name}!" if self.turn.name else "Hi there!"
        profile = self.profile()
        if profile[ANCHOR] and profile[TIME]:
            return f"{hello} Welcome back. Send me any message and I'll set up your first habit prompt."
        intro = "I'm your habit coach. Together we'll build one tiny daily habit that fits into your day."
        return f"{hello} {intro} {self._question(profile)}"

    def _complete(self, time: str) -> tuple[_Step, str]:
        turn = self.turn
        if not turn.called(GENERATE) and GENERATE in turn.tools:
            return [(GENERATE, {"delivery_mode": "immediate"})], "intake: profile complete; first prompt"
        if not turn.called(SCHEDULER, action="create") and SCHEDULER in turn.tools:
            args = {"action": "create", "type": "fixed", "fixed_time": time}
            return [(SCHEDULER, args)], "intake: daily schedule at the preferred time"
        if not turn.called(TRANSITION) and TRANSITION in turn.tools:
            args = {"target_state": "FEEDBACK", "reason": "intake complete: first prompt given, daily schedule set"}
            return [(TRANSITION, args)], "intake: done; moving to FEEDBACK"
        return self._summary(time), "intake: summarising the set-up"

    def _prompt_text(self) -> str:
        generated = next((c for c in self.turn.called(GENERATE) if c.ok), None)
        return (generated.result or "").split("\n", 1)[0].strip() if generated else ""

    def _schedule_sentence(self, time: str) -> str:
        created = next((c for c in self.turn.called(SCHEDULER, action="create") if c.ok), None)
        if created is None:
            return ""
        result = created.result or ""
        if "already exists" in result:
            return f"Your daily prompt is already set for around {friendly_time(time)}."
        when = re.search(r"arrives (today|tomorrow)", result)
        start = f" — the first one arrives {when[1]}" if when else ""
        return f"I'll send you a fresh prompt every day around {friendly_time(time)}{start}."

    def _summary(self, time: str) -> str:
        prompt = self._prompt_text()
        parts = [f"Here's your first one-minute habit to try: “{prompt}”" if prompt else "You're all set!"]
        schedule = self._schedule_sentence(time)
        if schedule:
            parts.append(schedule)
        parts.append("Reply anytime to tell me how it went!")
        return " ".join(parts)

    def _error_reply(self, failed: LoopCall) -> str:
        reason = _error_reason(failed.result)
        if failed.name == SAVE:
            return f"Sorry — I couldn't save that just now ({reason}). Could you send it again in a moment?"
        if failed.name == GENERATE:
            return (
                f"I have what I need, but I couldn't create your habit prompt just now ({reason}). "
                "Send me any message and I'll try again."
            )
        prompt = self._prompt_text()
        lead = f"Here's your first one-minute habit to try: “{prompt}” " if prompt else ""
        if failed.name == SCHEDULER:
            return (
                f"{lead}But I couldn't set up your daily prompt just now ({reason}). "
                "Send me any message and I'll try again."
            )
        return f"{lead}I couldn't finish setting things up on my side ({reason}), so I may check in again soon."

    def _ask_next(self, profile: dict[str, str]) -> str:
        saved = next((c for c in self.turn.called(SAVE) if c.ok), None)
        ack = self._acknowledge(saved.args if saved else {})
        said = _clean(self.turn.user).lower()
        if not ack and said in _GREETINGS:
            ack = "Hi!"
        elif not ack and any(said.startswith(n) for n in _NON_ANSWERS):
            ack = "No problem — small and simple is perfect."
        elif not ack and self.expected() == TIME and said:
            ack = "Sorry, I didn't catch a time there."
        return f"{ack} {self._question(profile)}".strip()

    @staticmethod
    def _acknowledge(saved: dict[str, Any]) -> str:
        parts: list[str] = []
        if saved.get(DOMAIN):
            parts.append(f"{str(saved[DOMAIN]).capitalize()} — great choice.")
        if saved.get(MOTIVATION):
            parts.append("That's a great reason.")
        if saved.get(TIME):
            parts.append(f"{friendly_time(str(saved[TIME]))} works.")
        if saved.get(ANCHOR):
            parts.append(f"Anchoring it {_clean(str(saved[ANCHOR]))} makes it easy to remember.")
        return " ".join(parts[:2])

    def _question(self, profile: dict[str, str]) -> str:
        missing = self.steered(profile) or next((name for name in INTAKE_ORDER if not profile[name]), None)
        if missing == DOMAIN:
            return (
                "What's one small habit you'd like to build — maybe moving more, sleeping better, "
                "drinking more water or reading?"
            )
        if missing == MOTIVATION:
            return f"Why does {profile[DOMAIN] or 'this habit'} matter to you? What would it give you?"
        if missing == TIME:
            return "What time of day would you like your daily prompt? For example 8am or 7:30pm."
        if missing == ANCHOR:
            return (
                "What's something you already do every day that we can attach it to — like your "
                "morning coffee or brushing your teeth?"
            )
        if missing:  # a field the flow definition added
            return f"One more thing before we start: could you tell me your {missing.replace('_', ' ')}?"
        return "Anything else you'd like me to know before we start?"


class FeedbackRules:
    """Feedback: record what helped or got in the way, encourage, adjust the schedule on request."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn

    def decide(self) -> tuple[_Step, str]:
        turn = self.turn
        text = turn.user
        failed = next((c for c in turn.calls if c.failed), None)
        if failed is not None:
            return self._error_reply(failed), f"feedback: {failed.name} failed; telling the participant"
        if "Profile status: missing" in turn.context_text and TRANSITION in turn.tools:
            return self._repair()
        if _NEW_HABIT.search(text) and TRANSITION in turn.tools:
            return self._new_habit()
        new_time = parse_clock_time(text) or parse_vague_time(text)
        # "I did it at 7pm instead" reports on the habit; it does not ask for a new time.
        if new_time and _CHANGE_TIME.search(text) and not _POSITIVE.search(text) and SCHEDULER in turn.tools:
            return self._change_time(new_time)
        if _is_hint(text):
            return "Welcome back! How did your habit go today?", "feedback: greeting hint"
        intensity = _INTENSITY_CANON.search(text)
        if intensity:
            return self._intensity_reply(intensity[1].lower()), "feedback: intensity answer"
        return self._outcome(text)

    # -- done / not done ------------------------------------------------------------------------
    def _outcome(self, text: str) -> tuple[_Step, str]:
        canonical = _DONE_CANON.search(text)
        if canonical:
            done = canonical[1].lower() == "done"
        elif ASK_BARRIER in self.turn.last_assistant and _substantive(text) and not _POSITIVE.search(text):
            return self._not_done(text, follow_up=True)
        elif ASK_HELPED in self.turn.last_assistant and _substantive(text) and not _NEGATIVE.search(text):
            helped = _HELPED.search(text)
            motivator = _clean((helped["m"] or helped["m2"] or "") if helped else "") or _clean(text)
            return self._save_then(
                {"last_motivator": _words(motivator, 15)},
                "Thanks — that's really useful. I'll keep it in mind for your next prompts.",
                "feedback: saving what helped",
            )
        elif _NEGATIVE.search(text):
            done = False
        elif _POSITIVE.search(text):
            done = True
        else:
            return self._generic(text), "feedback: no outcome recognised"
        return self._done(text) if done else self._not_done(text, follow_up=False)

    def _done(self, text: str) -> tuple[_Step, str]:
        args: dict[str, str] = {}
        last_prompt = self.turn.context.get("last habit prompt", "")
        if last_prompt:
            args["last_successful_prompt"] = last_prompt
        helped = _HELPED.search(text) if not _DONE_CANON.search(text) else None
        motivator = _clean((helped["m"] or helped["m2"] or "") if helped else "")
        if motivator:
            args["last_motivator"] = _words(motivator, 15)
        count = re.match(r"(\d+)", self.turn.context.get("prompts completed", ""))
        so_far = f" That's {count[1]} done so far." if count and int(count[1]) > 0 else ""
        follow = (
            f"Great to hear that {_second_person(motivator)} helped."
            if motivator
            else f"{ASK_HELPED} make it happen today?"
        )
        return self._save_then(args, f"Nice work — you did it!{so_far} {follow}", "feedback: done")

    def _not_done(self, text: str, *, follow_up: bool) -> tuple[_Step, str]:
        barrier, tweak = classify_barrier(text)
        if follow_up and barrier == "not specified":
            barrier = _words(_clean(text), 15)
        args = {"last_barrier": barrier, "last_tweak": tweak}
        if follow_up:
            reply = f"Thanks for telling me. Next time, try this: {tweak}. Does that sound doable?"
        else:
            lead = "No worries — missing a day is part of building any habit."
            ask = f" {ASK_BARRIER} today?" if barrier == "not specified" else " Does that sound doable?"
            reply = f"{lead} One small tweak for next time: {tweak}.{ask}"
        return self._save_then(args, reply, "feedback: not done; barrier and tweak")

    def _save_then(self, args: dict[str, str], reply: str, why: str) -> tuple[_Step, str]:
        if args and not self.turn.called(SAVE) and SAVE in self.turn.tools:
            return [(SAVE, args)], why
        return reply, why

    # -- other intents ----------------------------------------------------------------------------
    def _intensity_reply(self, answer: str) -> str:
        level = self.turn.context.get("intensity", "normal")
        if answer == "increase":
            return f"Got it — I'll make your prompts a little more challenging (intensity: {level})."
        if answer == "decrease":
            return f"Got it — I'll make your prompts a bit easier (intensity: {level})."
        if answer == "keep current":
            return "Great — we'll keep it just as it is."
        return f"Done — your intensity is now {level}."

    def _repair(self) -> tuple[_Step, str]:
        if not self.turn.called(TRANSITION):
            args = {"target_state": "INTAKE", "reason": "profile incomplete: needs repair"}
            return [(TRANSITION, args)], "feedback: profile incomplete; back to intake"
        missing = self.turn.context_text.split("Profile status: missing", 1)[1]
        if "prompt_anchor" in missing.split(".")[0]:
            question = (
                "What's something you already do every day that your habit can follow — like your morning coffee?"
            )
        else:
            question = "What time of day would you like your daily prompt? For example 8am or 7:30pm."
        return f"Before your next prompt I need one more detail. {question}", "feedback: asking for the repair"

    def _new_habit(self) -> tuple[_Step, str]:
        if not self.turn.called(TRANSITION):
            args = {"target_state": "INTAKE", "reason": "participant wants a different habit"}
            return [(TRANSITION, args)], "feedback: new habit requested; back to intake"
        return (
            "Sure, let's pick a new one! What small habit would you like to build instead?",
            "feedback: asking for the new habit",
        )

    def _change_time(self, new_time: str) -> tuple[_Step, str]:
        turn = self.turn
        listed = next((c for c in turn.called(SCHEDULER, action="list") if c.ok), None)
        if listed is None:
            return [(SCHEDULER, {"action": "list"})], "feedback: time change; listing schedules"
        if not turn.called(SCHEDULER, action="create"):
            steps: list[tuple[str, dict[str, Any]]] = [
                (SCHEDULER, {"action": "delete", "schedule_id": schedule_id})
                for schedule_id in self._schedule_ids(listed.result or "")
            ]
            steps.append((SCHEDULER, {"action": "create", "type": "fixed", "fixed_time": new_time}))
            if SAVE in turn.tools:
                steps.append((SAVE, {"preferred_time": new_time}))
            return steps, "feedback: replacing the schedule"
        created = next(c for c in turn.called(SCHEDULER, action="create"))
        when = re.search(r"arrives (today|tomorrow)", created.result or "")
        start = f" starting {when[1]}" if when else ""
        return (
            f"Done — your daily prompt will now come around {friendly_time(new_time)}{start}.",
            "feedback: time changed",
        )

    @staticmethod
    def _schedule_ids(result: str) -> list[str]:
        data = _result_json(result)
        if isinstance(data, dict) and isinstance(data.get("schedule_ids"), list):
            return [str(i) for i in data["schedule_ids"]]
        return re.findall(r"internal id: ([^\s)]+)\)", result)

    def _error_reply(self, failed: LoopCall) -> str:
        reason = _error_reason(failed.result)
        if failed.name == SCHEDULER:
            return f"Sorry — I couldn't update your daily schedule just now ({reason}). Could you try again later?"
        if failed.name == TRANSITION:
            return f"Sorry — something went wrong on my side ({reason}). Could you send that again?"
        return f"Thanks for letting me know! (I couldn't save that note just now: {reason}.)"

    def _generic(self, text: str) -> str:
        if re.match(r"(?:thanks|thank you|thx|ty|cheers|ok|okay|great|cool|sounds good|will do)\b", _clean(text), re.I):
            return "You're welcome! I'll check in after your next prompt."
        if text.rstrip().endswith("?"):
            return (
                "Good question! I'm a simple offline coach, so I'm best at helping with your daily habit. "
                "How did today's prompt go?"
            )
        return "Thanks for sharing! How did today's habit go — did you get a chance to try it?"
