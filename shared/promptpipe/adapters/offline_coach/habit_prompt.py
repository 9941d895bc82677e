"""The prompt generator's answer: a habit prompt built from the profile lines of the request."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.text import _EMPTY_VALUES, _clean, _words
from promptpipe.models.study import FRAMING_LABEL
from promptpipe.rules.language import detect_language

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
    declined = value.startswith("(") and value.endswith(")")  # "(rather not say)": a reason kept to themselves
    return "" if value in _EMPTY_VALUES or declined else value


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
    # a moment said with its own preposition ("on your coffee break", "at lunchtime") takes no "after"
    if not re.match(
        r"(?:right |just )?(?:after|before|when|once|while|with|during|as soon as|on|at|in|first thing)\b", phrase, re.I
    ):
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
    language = detect_language(" ".join((domain, motivation, _field(user_text, "Anchor routine"))))
    if language in _OWN_WORDS:
        limit_said = re.search(r"at most (\d+) characters", user_text)
        at_most = int(limit_said[1]) if limit_said else None
        return _in_language(language, domain, motivation, anchor, intensity=intensity, limit=at_most)
    done = re.search(r"completed (\d+) habit prompt", system_text)
    action, default_benefit = _action(domain, intensity, int(done[1]) if done else 0)
    # Long phrases are replaced or cut at a natural joint rather than mid-sentence.
    lead = _words(_anchor_phrase(re.split(r"\s+(?:and|then)\s+", anchor)[0]), 8)
    short_motivation = motivation if 0 < len(motivation.split()) <= 8 else ""
    limit = re.search(r"at most (\d+) characters", user_text)
    framed = _framed(system_text, lead, action, _benefit(short_motivation, default_benefit))
    if framed is not None and (limit is None or len(framed) <= int(limit[1])):
        return framed
    if limit is not None:
        return _within(int(limit[1]), lead, action, _benefit(short_motivation, default_benefit))
    for benefit in (_benefit(short_motivation, default_benefit), f"it helps you {default_benefit}"):
        text = f"{lead}, try {action} — {benefit}. Would that feel doable?"
        if len(text.split()) < 30:
            return text
    return f"{lead}, try {action}. Would that feel doable?"


def _framed(system_text: str, lead: str, action: str, benefit: str) -> str | None:
    """A study arm's framing (docs/studies.md), honoured as far as rules can: a framing about the
    benefit or the reason leads with it; one about a small or next step offers just that step.
    ``None``: no framing, or one these rules cannot read (the default form is used)."""
    line = next((ln for ln in system_text.splitlines() if ln.startswith(FRAMING_LABEL)), "")
    framing = line.removeprefix(FRAMING_LABEL).strip().casefold()
    if not framing:
        return None
    if re.search(r"benefit|reason|why|motivat", framing):
        return f"Remember: {benefit}. {lead}, try {action}."
    if re.search(r"step|small|tiny|concrete", framing):
        return f"One tiny step today: {lead[0].lower() + lead[1:]}, try just {action}."
    return None


def _within(limit: int, lead: str, action: str, benefit: str) -> str:
    """The longest of the MAP forms that fits ``limit`` characters (an SMS prompt, GSM-7 only): the
    benefit and the closing question go first; the shortest form may still be longer (the caller
    then asks again or falls back)."""
    forms = (
        f"{lead}, try {action} - {benefit}. Would that feel doable?",
        f"{lead}, try {action} - {benefit}.",
        f"{lead}, try {action}. Doable?",
        f"{lead}, try {action}.",
        f"{_words(lead, 4)}, try {action}.",
        f"Today, try {action}.",
    )
    return next((form for form in forms if len(form) <= limit), forms[-1])


# The prompt in the participant's own language, when the profile is said in Spanish or French (the
# request carries no language: a model writes in the profile's): their habit, anchor and reason as said.
_OWN_WORDS: dict[str, dict[str, str]] = {
    "es": {
        "after": "Después de", "keep": r"(?:despu[eé]s|antes|cuando|al|mientras|en|con|durante|por la|a primera)\b",
        "try": "prueba", "of": "de", "reason": "Recuerda por qué: {motivation}.", "ask": "¿Te parece factible?",
        "low": "30 segundos", "normal": "1 minuto", "high": "3 minutos", "something": "algo pequeño para ti",
    },
    "fr": {
        "after": "Après", "keep": r"(?:apr[eè]s|avant|quand|en|pendant|d[eè]s que|avec)\b",
        "try": "essayez", "of": "de", "reason": "Votre raison : {motivation}.", "ask": "Est-ce faisable pour vous ?",
        "low": "30 secondes", "normal": "1 minute", "high": "3 minutes", "something": "quelque chose de simple",
    },
}  # fmt: skip
LOCAL_QUESTIONS = tuple(words["ask"] for words in _OWN_WORDS.values())


def _in_language(language: str, domain: str, motivation: str, anchor: str, *, intensity: str, limit: int | None) -> str:
    """ "Después de desayunar, prueba 1 minuto de caminar. Recuerda por qué: tener más energía. ¿Te parece
    factible?": the MAP shape in ``language``, under 30 words (and ``limit`` characters when given)."""
    said = _OWN_WORDS[language]
    place = _clean(re.split(r"\s+(?:y|et|luego|puis)\s+", anchor)[0]) if anchor else ""
    if not place or anchor == "your usual morning routine":
        place = "tu rutina de la mañana" if language == "es" else "votre routine du matin"
    lead = place if re.match(said["keep"], place, re.I) else f"{said['after']} {place[0].lower()}{place[1:]}"
    lead = _words(lead[0].upper() + lead[1:], 8)
    action = f"{said[intensity if intensity in said else 'normal']} {said['of']} {_words(domain.lower(), 5)}"
    if not domain:
        action = said["something"]
    reason = said["reason"].format(motivation=_words(_clean(motivation), 8)) if motivation else ""
    forms = [
        f"{lead}, {said['try']} {action}. {reason} {said['ask']}".replace("  ", " "),
        f"{lead}, {said['try']} {action}. {said['ask']}",
        f"{lead}, {said['try']} {action}.",
    ]
    fits = [form for form in forms if len(form.split()) < 30 and (limit is None or len(form) <= limit)]
    return fits[0] if fits else forms[-1]
