"""The day's outcome in a typed reply, read as people write it (docs/pipeline.md, "The day's outcome").

Three readings: ``done`` (it says they did the habit, in any words), ``not_done`` (it says they did
not, or not yet), ``no_report`` (agreeing to try, a plan, a question, anything else). They are told
apart in this order, so that the stronger signal wins:

1. a question, or a plan for later without anything done ("will do tomorrow", "mañana lo hago",
   "ok I'll try"): no report;
2. a negation of doing it, or a miss ("didn't get to it", "nah", "missed it again", "no lo hice",
   "se me olvidó", "maybe later"): not done;
3. a completion in the past ("finished my stretches", "did it before breakfast", "sí, lo hice",
   "done and done", a check mark): done;
4. a bare yes ("yes", "yep", "sí", 👍) counts as done only when the coach asked whether they did it
   (``asked``); after "Would that feel doable?" it is agreement, not a report;
5. anything else: no report.

Pure: ``re`` and the shared normal form (``rules/normalise.py``) only. ``correct_count`` keeps the
coach's words on the record: a reply that states another number of habits done than the stored count
is corrected before sending.
"""

from __future__ import annotations

import re
from typing import Literal

from promptpipe.rules.lexicon import LAUGHS, THANKS
from promptpipe.rules.normalise import fold_accents, normalise_text

Outcome = Literal["done", "not_done", "no_report"]

__all__ = ["Outcome", "correct_count", "read_outcome", "without_outcome_words"]

# The reader's patterns are compiled at its first reading (``re``'s own cache), not at import: the
# worker imports this module for ``correct_count`` and never reads an outcome (the offline coach does).
_QUESTION = r"\?\s*$|^(?:what|how|when|why|can|could|should|do i|does|qu[eé]|c[oó]mo|cu[aá]ndo|est-ce|comment)\b"
# A plan or an agreement, with nothing done yet.
_LATER = (
    r"\b(?:i'?ll|i will|will do|gonna|going to|about to|let me|give it a (?:shot|try|go)|i can do|can do|"
    r"sounds (?:good|doable|great|fine)|i'?ll try|will try|try (?:it )?(?:tomorrow|later|tonight)|tomorrow|"
    r"voy a|lo intento|lo intentar[eé]|ma[nñ]ana|luego|m[aá]s tarde|me parece bien|lo har[eé]|"
    r"je vais|demain|plus tard|je le ferai|j'essaie|je vais essayer)\b"
)
_NOT_DONE = (
    r"\b(?:hoy no (?:pude|lo hice|me dio tiempo)|ran out of time|no me (?:dio|alcanzo|alcanz[oó]) (?:el )?tiempo|"
    r"se me pas[oó]|nel|nop|nones|"
    r"no|nah|nope|nay|not (?:yet|today|tonight|really|this time|this (?:morning|evening))|"
    r"didn'?t|did not|haven'?t|have not|hasn'?t|"
    r"couldn'?t|could not|can'?t|wasn'?t able|won'?t|missed|skipped|skip(?:ped)? it|forgot|"
    r"no time|not done|maybe later|next time|todav[ií]a no|a[uú]n no|no pude|no lo hice|no tuve|"
    r"se me olvid[oó]|olvid[eé]|hoy no|nada|caved|gave in|blew it|slipped up|fell off|cheated|"
    r"ca[ií] en la tentaci[oó]n|reca[ií]|(?<!no )fall[eé]|i failed|failed (?:it )?today|"
    # Spain's perfect: "no he podido", "se me ha olvidado", "no me ha dado tiempo", "qué va"
    r"no (?:lo |la )?he (?:podido|hecho|tenido|\w+ado|\w+ido)|se me ha (?:olvidado|pasado|ido)|"
    r"no me ha (?:dado|llegado)|no ha podido ser|ni de (?:cona|broma)|qu[eé] va)\b|❌|✖"
    # French, and the typos of "forgot" ("forgto", "forgt")
    r"|\b(?:pas (?:aujourd'?hui|ce (?:soir|matin)|cette fois|fait|encore|eu le temps|pu|reussi)|"
    r"non|j'ai oubli[eé]|oubli[eé]|rat[eé]|"
    r"forg[a-z]*)\b"
)
_DONE = (
    # "did", not "it did" ("yes it did": an answer to "did that help?", not a report)
    r"\b(?:done|(?<!\bit )(?<!\bthat )did|finished|completed?|managed|nailed|got (?:it|that|mine) done|"
    r"just did|accomplished|hecho|hecha|listo|lista|lo hice|hice|termin[eé]|complet[eé]|cumpl[ií]|ya est[aá]|"
    r"ya qued[oó]|qued[oó] list[oa]|logr[eé])\b"
    # Spain's perfect, done: "ya lo he hecho", "he caminado 20 min", "hoy sí he podido"
    r"|(?<!no )(?<!no lo )(?<!no la )\b(?:lo |la )?he (?!(?:estado|tenido|sido|ido|llegado|salido)\b)"
    r"(?:hecho|podido|\w+ado|\w+ido|escrito|le[ií]do|puesto|vuelto)\b"
    # Spanish preterite of a habit's verbs ("ya caminé", "leí 5 páginas", "medité"), with or without accents
    r"|\b(?:(?:camin|estir|medit|respir|practiqu|tom|nad|anot)[eé]|(?:escrib|corr|beb|le)[ií])\b"
    # French passé composé of a habit's verbs ("j'ai marché", "j'ai médité", "j'ai lu")
    r"|\bj'ai (?:bien )?(?:march[eé]|m[eé]dit[eé]|[eé]tir[eé]|couru|lu|bu|[eé]crit|respir[eé]|nag[eé])\b"
    r"|✅|✔|☑|💪"
    # fitted into the day: "got my 10 min in", "squeezed it in", "snuck a walk in today" (not "got in late")
    r"|(?<!'ll )(?<!will )(?<!to )(?<!gonna )(?<!can )(?<!could )(?<!might )(?<!should )"
    r"(?<!can i )(?<!could i )(?<!\bill )(?<!need )"
    r"\b(?:got|squeezed|fit|fitted|snuck|sneaked|worked)\s+(?:it|that|mine|(?:my|a|the|one|\d+)(?:\s+\w+){0,3}?)"
    r"\s+in\b(?!\s+(?:the|a|an|my|your|his|her|their|traffic|trouble|bed|line)\b)"
    # Spanish outings said as done: "di una vuelta", "salí a caminar", "fui a correr"
    r"|\b(?:di (?:una|mi|la) (?:vuelta|caminata|paseo)|(?:sal[ií]|fui) a (?:caminar|correr|pasear|andar|nadar|"
    r"dar una vuelta|estirar|meditar))\b"
    # French: "c'est fait", "fait !", "j'ai fait", "je l'ai fait", "fini", "terminé", "réussi"
    r"|\b(?:c'est fait|fait|j'ai fait|je l'ai fait|fini|termin[eé]|r[eé]ussi)\b"
)
# English past tense of an activity ("walked around the block", "stretched"), not of a plan.
_PAST = (
    r"(?<!will )(?<!'ll )(?<!to )(?<!gonna )(?<!can )\b(?:i |we )?"
    r"(?:walked|stretched|meditated|ran(?! out| late)|went(?! out| to bed)|read|wrote|breathed|drank|ate|slept)\b"
)
# "sí pero tarde", "yes but late", "yeah, just 5 min", "oui mais tard": a yes with a qualifier, when the
# question was whether they did it (a miss, part of it, a plan or a question is read before this).
_YES_BUT = (
    r"^\W*(?:(?:yes+|yep|yup|yeah|yea|s[ií]|oui|ouais)\b[\s,!.]*(?:but|pero|mais|tho|though|just|only|solo|"
    r"nomas|nada mas|juste|a bit|un poco|un peu|finally|at last|por fin|enfin|again|otra vez|encore|today|hoy|"
    r"aujourd'hui|for sure|claro|of course)\b|(?:yes+|yep|yup|yeah|s[ií]|oui)\W+$)"
    # a day said before the yes: "today yes", "hoy sí pero me costó", "ce soir oui"
    r"|^\W*(?:today|tonight|this time|hoy|esta vez|esta noche|aujourd'hui|ce soir|cette fois)[\s,]+"
    r"(?:yes+|yep|yeah|s[ií]|oui)\b"
)
# A yes that goes on with what was done, in the past: "yep had my glass", "sí, me tomé el vaso"; not when
# the rest names what got in the way ("yeah, worked late again"): a yes that only acknowledges the question.
_YES_AND_PAST = (
    r"^\W*(?:yes+|yep|yup|yeah|yea|s[ií]|oui|ouais)\b[\s,!.]+(?:(?:i|we|ya|me|lo|la|j'ai)\s+){0,2}"
    r"(?:had|got|took|kept|made|went|\w{3,}ed|(?!(?:aqu|ah|all|as|porqu|caf|beb)[ií]\b)\w+[éí])\b"
)
# What they did, told in the past with no "yes" before it, in answer to the day's prompt: "I pulled a few
# weeds by the front step", "walked to the park n back", "ya estudié", "ya me lo puse", "ya, 20 min en la
# bici". Not a plan or an attempt ("I tried", "wanted to"), nor what got in the way ("worked late").
_TOLD_IN_THE_PAST = (
    r"^\W*(?:(?:i|we|just|finally|already|so|ok|okay|well|today|tonight|this morning|have|'ve|i'?ve)\s+){0,3}"
    r"(?!(?:tried|wanted|planned|needed|meant|started|decided|hoped|wished|intended|used|liked|loved|worked|"
    r"called|texted|stayed|overslept|crashed|got|missed|skipped|forgot|cancell?ed|postponed|delayed|injured|"
    r"rained|snowed|travell?ed|moved|ended|failed)\b)"
    # (not "went", "slept", "ate": "went out with friends", "slept badly" tell the day, not the habit)
    r"(?:[a-z]{3,}ed|made|took|swam|sang|rode|wrote|drew|did|done|put|played|cleaned|pulled|ran|read|"
    r"drank|kept|climbed|written|taken|drunk|sat|swam|biked|lifted)\b"
    r"|^\W*(?:hoy|today|tonight|this morning|esta noche) (?:tambi[eé]n|too|also|again|as well|otra vez)\b"
    r"|^\W*(?:hoy\s+)?ya\b(?!\s+(?:no|voy|vamos|casi|mero|merito|mismo|merito|se|sabes|veremos|veo)\b)"
    r"(?:[\s,.!]+(?:(?:me|lo|la|los|las|le|les|se|te)\s+){0,2}"
    r"(?:\w+(?:[eé]|[ií])|hice|puse|fui|tuve|estuve|pude|\w+(?:ado|ido|ada|ida)s?)\b|\s*[,.!]+\s*\S)"
)
# In answer to the day's prompt: the habit's own emoji, with thanks or alone ("📖 thanks", "🏋️ cheers"),
# more of it ("12 more today", "otra vez, 10 páginas"), or a participle alone ("leído", "hecho").
_ANOTHER_DONE = (
    # (not a sad or doubtful one, nor a please: "¿se puede cambiar la hora? 🙏")
    # (nor a heart or a smile, said of the message: "❤️", "🥰")
    r"^(?![^👎❌😞😔😢😭😩😫😴🤒🤕😡😠🙄😒✖🙏🤔🤷😅😬🙃❓❤♥💕💖💗💓😍🥰😘😊☺🙂🤗]*"
    r"[👎❌😞😔😢😭😩😫😴🤒🤕😡😠🙄😒✖🙏🤔🤷😅😬🙃❓❤♥💕💖💗💓😍🥰😘😊☺🙂🤗])"
    r"(?=.*[\U0001F300-\U0001FAFF\u2600-\u27BF])[^\w\s]+(?:\s*[^\w\s]+)*"
    r"(?:\s*(?:thanks?|thank (?:you+|u+)|ty|thx|cheers|gracias|merci|ta)\b\W*)?$"
    r"|^\W*(?:\d+ more|another \d+|again(?: today)?|same again|otra vez|de nuevo|una vez m[aá]s|"
    r"otro d[ií]a m[aá]s)\b"
    r"|^\W*(?!olvid|pasad|perdid|cansad|ocupad|agotad|enferm)[^\W\d_]+(?:ado|[ií]do|ada|[ií]da)\W*$"
)
# What they did as an amount, in answer to the day's prompt: "30 sentadillas 🔥", "2 glasses so far", "15
# min around the block", "ya llevo 2 botellas"; not a time ("7pm", "a las 8", "20h"), a length of days
# ("3 days", a pause) or a count of prompts ("2 of 3" is part of it: read before this).
_AMOUNT_DONE = (
    r"^\W*(?:(?:ya|already|just|about|like|around|over|only|solo|nom[aá]s|llevo|llevamos|van|did|got|hice|"
    r"i|i've|i have|have)\s+){0,3}"
    r"(?:\d+(?:[.,]\d+)?|half an?|a couple(?: of)?|a few|un par de|media|medio)\s*"
    r"(?!(?:am|pm|a\.m|p\.m|h|hrs?|hours? (?:later|earlier)|o'?clock|de la|del|y media|y cuarto|days?|d[ií]as?|"
    r"weeks?|semanas?|months?|meses|jours?|semaines?|more (?:days?|weeks?)|times? (?:a|per)|"
    r"of|out of|de|sur|to|a|or|o|ou|more|less|fewer|m[aá]s|menos|plus|moins|"
    # (nor a number said of a time: "6 is too soon", "7 works", "8 it is", "9 en punto")
    r"is|was|it|its|it's|works?|would|will|sounds?|ok|okay|and|too|in|at|on|for|by|then|es|est|y|en|"
    r"para|por|me|te|la|el|las|los|que|q|pls|please|ish|sharp|en punto|pile)\b)(?![:.,]\d)"
    r"[^\W\d_]{2,}"
)
_IN_THE_WAY = (
    r"\b(?:late|overtime|all day|tired|exhausted|busy|sick|ill|rain\w*|overslept|slept in|crashed|"
    r"tarde|cansad\w*|llovi\w*|enferm\w*|ocupad\w*|fatigu\w*|malade|pluie)\b"
)
_BARE_YES = (
    r"^(?:y|ya|yes+|yep|yup|yeah|yea|si|s[ií]+|claro|of course|absolutely|oui|ouais|👍|👌|🙌|😀|😊|"
    r"sip|sim[oó]n|obvio|obvi|ofc|yess+ir|bien s[uû]r|claro que s[ií]|yup yup)$"
)

_THANKS_AFTER = rf"(?:[\s,!.…]+(?:{THANKS}|tysm|cheers|gracias|merci)\b[^\w]*)+$"


# The words of a report as typed in a hurry: a letter doubled at the end ("donee", "didd", "hechoo") or two
# letters swapped ("forogt", "fogrot", "fnished") read as the word; only these words, so nothing else moves.
_REPORT_WORDS = frozenset((
    "done", "did", "yes", "yep", "yup", "yeah", "hecho", "hecha", "listo", "lista", "hice", "pude", "quedo", "fait",
    "fini", "forgot", "finished", "skipped", "completed", "missed", "olvide", "termine", "camine", "medite", "estire",
))  # fmt: skip
_BY_LETTERS = {(w[0], "".join(sorted(w))): w for w in _REPORT_WORDS if len(w) >= 5}


def _as_meant(typed: str) -> str:
    word = fold_accents(typed)
    if word in _REPORT_WORDS or len(word) < 3:
        return typed
    if len(word) >= 4 and word[-1] == word[-2] and word[:-1] in _REPORT_WORDS:  # "donee", "hechoo", "quedóó"
        return word[:-1]
    return _BY_LETTERS.get((word[0], "".join(sorted(word))), typed)  # "forogt": the same letters


def _typed_in_a_hurry(said: str) -> str:
    return re.sub(r"[^\W\d_]+", lambda match: _as_meant(match[0]), said)


# Not knowing is no miss, though said with a "no": "no idea lol", "no sé, solo lo hice", "nada en especial"
# (not "no se pudo", where the "no" is the miss).
_SHRUG_NOT_A_MISS = (
    r"\b(?:no (?:idea|clue|tengo (?:ni )?idea)|nada (?:en )?especial|"
    rf"no (?:lo )?s[eé](?=\s*(?:[,.!]|$|{LAUGHS}|la verdad)))\b"
)


def read_outcome(text: str, *, asked: bool) -> Outcome:
    """The outcome ``text`` reports. ``asked``: the coach's open question is whether they did it (the
    poll, the daily prompt or its reminder), not whether a plan feels doable."""
    said = _typed_in_a_hurry(normalise_text(text))
    core = re.sub(r"^[\W_]+|[\W_]+$", "", said)
    done = bool(re.search(_DONE, said) or re.search(_PAST, said))
    if re.search(_QUESTION, said) and not done:
        return "no_report"
    # "no" in "done, no problem" is not a miss; a miss outweighs a "did" unless the reply opens with it.
    missed = re.search(_NOT_DONE, re.sub(_SHRUG_NOT_A_MISS, " ", said)) and not re.search(
        r"\bno (?:problem|worries)\b", said
    )
    if missed and not (done and re.match(r"^(?:done|did it|hecho|listo|c'est fait)\b", core)):
        return "not_done"
    if re.search(_LATER, said) and not done:
        return "no_report"
    if done:
        return "done"
    # "👍 ty", "yep thank you 🙏", "ya gracias": the thanks that closes a yes changes nothing
    said = re.sub(_THANKS_AFTER, "", said).strip() or said
    core = re.sub(r"^[\W_]+|[\W_]+$", "", said)
    past = re.match(_YES_AND_PAST, said) and not re.search(_IN_THE_WAY, said)
    told = bool(re.match(_TOLD_IN_THE_PAST, said) or re.match(_ANOTHER_DONE, said) or re.match(_AMOUNT_DONE, said))
    told = told and not re.search(_IN_THE_WAY, said)
    if asked and (re.match(_BARE_YES, core or said) or re.match(_YES_BUT, said) or past or told):
        return "done"
    return "no_report"  # "sure", "ok", "vale": agreement, never a report


def without_outcome_words(text: str) -> str:
    """``text`` (in normal form) without the words that only say it was not done ("no", "didn't",
    "hoy no", "pas aujourd'hui"): what is left says what it was about, if anything."""
    return re.sub(r"\s+", " ", re.sub(_NOT_DONE, " ", normalise_text(text))).strip()


# "That's 7 done so far", "7 of 10", "3 out of 5 days", "llevas 4"
_COUNT = re.compile(
    r"(?P<n>\b\d+\b)(?=\s+(?:done|completed|so far|times so far|habits? done|hechos?|completad[oa]s?|"
    r"(?:of|out of|de) \d+ (?:prompts?|days?|delivered|so far|d[ií]as))\b)"
    r"|(?<=\bllevas )(?P<m>\d+)\b",
    re.I,
)


def correct_count(reply: str, stored: int) -> str:
    """``reply`` with every stated count of habits done replaced by ``stored`` (the record's)."""
    return _COUNT.sub(str(stored), reply)
