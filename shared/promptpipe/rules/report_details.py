"""What a feedback reply carries beside done or not done (docs/offline-coach.md, "Outcomes read for
everything they carry"), read by structure in English, Spanish and French:

- ``says_it_helps``: the habit judged to be working ("thanks, it's helping", "me está ayudando", "ça
  m'aide"): in answer to the daily prompt, a done with no "done" word;
- ``company``: who they did it with ("did it w my roommate", "caminé con mi perro", "avec ma sœur"),
  what helped;
- ``planned_tweak``: the change they will try, said as a plan in the first person ("maybe I'll do it
  before lunch tomorrow", "gonna set an alarm on my phone for it", "voy a dejar los tenis junto a la
  cama", "je vais mettre un réveil"), never a report and never a request to move the prompt; ``tweak_in``:
  the same in any clause of a longer reply;
- ``cause_words``: what got in the way, the message's words without the clauses that only say it was
  not done ("no pude, llovió todo el día" → "llovió todo el día");
- ``proposes_a_time``: a time proposed for the prompt ("can we try 12:30?"), a request to move it;
- ``carries_a_why``: whether a clause beside a done can be what helped (not a filler such as "finally",
  not a miss or a plan: "pero mañana no puedo").

Pure: ``re`` and the rules it names only.
"""

from __future__ import annotations

import re

from promptpipe.rules.lexicon import LAUGHS, THANKS
from promptpipe.rules.message_reading import plain
from promptpipe.rules.outcome import read_outcome, without_outcome_words

__all__ = [
    "carries_a_why",
    "cause_words",
    "company",
    "hard_going",
    "planned_tweak",
    "proposes_a_time",
    "said_as_plan",
    "says_it_helps",
    "tweak_in",
]

# --- the habit judged to be working ---------------------------------------------------------------
_HELPS_EN = (
    r"(?:it'?s|its|it is|this is|that'?s|it has been|it'?s been)\s+(?:\w+\s+){0,2}(?:helping|working|"
    r"paying off|making a difference)|(?:it|this|that) (?:really |actually |def(?:initely)? |honestly )?helps|"
    # "def helping", "really helping me stay consistent": the judgement with its subject left out
    r"(?:really|def|definitely|truly|actually|honestly|so|deff) helping|"
    # "this has been so helpful", "super helpful!", "very useful"
    r"(?:(?:it|this|that|these|they)(?:'?s| is| has been|'?ve been| have been| are| was)\s+)?"
    r"(?:so|really|super|very|actually|honestly|rly|soo+)\s+(?:helpful|useful)|"
    # the messages themselves judged: "these msgs r helping", "the texts have been good for me"
    r"(?:these|the|your|ur) (?:msgs|messages|texts|reminders|prompts) (?:are|r|have been|has been) (?:\w+ )?"
    r"(?:helping|working|good for me)|(?:it|this)(?:'?s| is| has) been (?:\w+ )?good for me|"
    r"(?:loving|love) (?:it|this)|"
    # "the reminders help", "ty, helping so far", "helps a lot"
    r"(?:these|the|your|ur) (?:msgs|messages|texts|reminders|prompts) (?:really |actually |def |honestly )?"
    r"help(?:s|ing)?|"
    r"help(?:s|ing) (?:so far|a lot|a ton|loads|heaps|already|tbh|honestly)|"
    # "helps me a lot", "it helped, thanks", "you're helping", "keeps me on track", "keeping me motivated"
    r"help(?:s|ing) me (?:a lot|so much|loads|heaps|tons|out|a ton|stay|keep|get|remember)|"
    r"(?:it|this|that|they|these) (?:really |actually |def |honestly )?helped|"
    r"(?:you'?re|ur|you are|u r) (?:really |so )?helping|"
    r"(?:keeps|keeping|kept) me (?:on track|going|motivated|accountable|consistent)"
)
_HELPS_ES = (
    r"(?:me )?esta (?:ayudando|funcionando|sirviendo)|me (?:ayuda|sirve) (?:mucho|bastante)|me encanta|"
    # "me está viniendo genial", "me está haciendo bien", "se nota mucho": it does them good
    r"me (?:esta )?(?:viniendo|cayendo) (?:genial|muy bien|bien|super bien)|me (?:esta haciendo|hace) (?:muy )?bien|"
    r"(?:si|ya) se nota|se nota (?:mucho|un monton|bastante)|(?:si|de verdad) me ayuda|"
    r"(?:muy|super|bastante|re) (?:util|utiles|sirve)|"
    r"me (?:esta|estan) (?:viniendo|sirviendo) (?:genial|muy bien|bien)|"
    r"(?:los|tus|estos) (?:mensajes|recordatorios) me (?:ayudan|sirven|estan ayudando)"
)
_HELPS_FR = r"ca m'aide|ca marche bien|ca fonctionne|ca me fait du bien|j'adore"
_HELPS = re.compile(rf"\b(?:{_HELPS_EN}|{_HELPS_ES}|{_HELPS_FR})\b")
_NOT_HELPING = re.compile(r"\b(?:not|isn'?t|no|n'|pas|ne|never|hardly)\b")


def says_it_helps(text: str) -> bool:
    """ "thanks, it's helping", "honestly it helps", "me está ayudando mucho", "ça m'aide": the habit judged
    to be working (not "it's not helping", not a question)."""
    said = plain(text)
    match = _HELPS.search(said)
    if match is None or "?" in said:
        return False
    clause_start = max(said.rfind(mark, 0, match.start()) for mark in ",.;!") + 1
    return _NOT_HELPING.search(said[clause_start : match.end()]) is None


# --- who they did it with -------------------------------------------------------------------------
# People and pets in three languages: a companion is named by one of these after "with my …".
_COMPANIONS = (
    r"roommate|roomie|flatmate|housemate|partner|wife|husband|hubby|bf|gf|boyfriend|girlfriend|fiance|fiancee|"
    r"sister|brother|sis|bro|mom|mum|mother|dad|father|parents?|kids?|son|daughter|children|family|friends?|"
    r"bestie|neighbou?r|coworkers?|colleagues?|dog|doggo|pup|puppy|cat|grandma|grandpa|baby|team|kiddos?|"
    r"little ones?|"
    # Spanish nouns with their diminutives ("mi perrita", "mi hijito", "mis abuelitos")
    r"rommie|esposo|esposa|marido|mujer|pareja|novio|novia|mama|papa|madre|padre|ninos|familia|"
    r"(?:herman|hij|amig|vecin|companer|perr|gat|abuel|sobrin|prim)(?:it)?[oa]+s?|"  # "perritaa": typed long
    r"s(?:oe|œ)ur|frere|mere|pere|femme|mari|copain|copine|coloc|enfants?|fille|fils|voisin[e]?|chien|amie?s?|collegues?"
)
_WITH = re.compile(
    rf"\b(?:with|w/|w|con|avec)\s+(?P<who>(?:my|mi|mis|our|nuestr[oa]s?|ma|mon|mes|notre|nos|a|an|un|una|une)\s+"
    rf"(?:(?:\w+)\s+)?(?:{_COMPANIONS}))\b"
)


def company(text: str) -> str:
    """ "did it w my roommate" → "my roommate"; "caminé con mi perro" → "mi perro"; "avec ma sœur" → "ma
    sœur" (in their own words); "" when no companion is named."""
    said = plain(text)
    match = _WITH.search(said)
    if match is None:
        return ""
    return _as_said(text, said, *match.span("who"))


# --- the change they will try ---------------------------------------------------------------------
_PLAN = re.compile(
    r"^(?:(?:ok(?:ay)?|yeah|yes|yep|si|oui|so|then|and|hmm+|honestly|tbh|maybe|perhaps|i think|next time|"
    r"tomorrow|quizas|tal vez|igual|bueno|pues|manana|la proxima|peut-etre|demain|la prochaine fois)[\s,]+)*"
    r"(?:i'?ll|i will|ill|i'?m gonna|im gonna|gonna|i'?m going to|im going to|going to|i could|i can|i might|"
    r"i should|i'?ll try to|i will try to|will try to|let me|maybe just|just|only|"
    r"voy a|vamos a|lo voy a|puedo|podria|intentare|mejor|"
    r"je vais|je peux|je pourrais|j'essaierai de|je vais essayer de)\s+(?P<what>.+)$"
)
_ONLY_AGREEING = re.compile(
    r"^(?:try(?: it| that| this)?|do (?:it|that|this)|give it a (?:try|go|shot)|intentar(?:lo)?|probar(?:lo)?|"
    r"hacerlo|essayer|le faire|see|think about it|pensarlo|y reflechir|"
    r"(?:lo |le |je )?(?:intento|pruebo|hago|essaie|reessaie))"
    r"(?:\s+(?:out|again|tomorrow|later|next time|then|too|for sure|anyway|tho|though|manana|luego|demain|encore|"
    r"de nuevo|otra vez))*$"
)


def planned_tweak(text: str) -> str:
    """The change a participant says they will try, as said ("maybe I'll do it before lunch tomorrow" →
    "do it before lunch tomorrow", "voy a dejar los tenis junto a la cama" → "dejar los tenis junto a la
    cama"); "" for a plain agreement ("ok I'll try that"), a question, or a report of the day."""
    said = plain(text)
    match = _PLAN.match(said.rstrip(" .!")) or _LATER_TRY.match(said.rstrip(" .!"))
    if match is None or "?" in said or read_outcome(text, asked=False) == "done":
        return ""
    what = match["what"].strip(" .!,")
    tried = re.match(r"(?:try to|intentar|essayer de)\s+", what)
    start = match.start("what") + (tried.end() if tried else 0)
    what = what[tried.end() :] if tried else what
    if len(what.split()) < 2 or _ONLY_AGREEING.match(what) or _PAST.match(what):
        return ""  # "just had energy today": what happened, not a plan
    if re.match(r"(?:do it|hacerlo|lo hago|le faire) (?:later|tonight|mas tarde|al rato|ce soir)\b", what):
        return ""  # "I'll do it tonight": a plan for today, no change
    return _as_said(text, said, start, start + len(what))


def _as_said(text: str, said: str, start: int, end: int) -> str:
    """``said[start:end]`` in the participant's own letters (accents kept) when the two line up."""
    original = re.sub(r"\s+", " ", text).strip()
    return original[start:end] if len(original) == len(said) else said[start:end]


def said_as_plan(text: str) -> bool:
    """A clause of ``text`` is a plan in the first person, with or without a change in it ("ill give it a go
    tomorrow tho", "😕 mañana lo intento de nuevo"): words about later, not about what got in the way."""
    parts = _AFTER_AN_EMOJI.split(text.strip())
    clauses = (re.sub(r"^[\W_]+", "", plain(c)).rstrip(" .!") for p in parts for c in _CLAUSE.split(p) if c)
    return any(_PLAN.match(clause) or _LATER_TRY.match(clause) for clause in clauses)


_AFTER_AN_EMOJI = re.compile(r"(?<=[^\w\s.,!?;:'’\"()¿¡-])\s+(?=\w)")
# "mañana lo intento", "mañana le pongo una alarma", "demain je réessaie": tomorrow, and a verb in the present
# A verb in the past tense: what happened ("just had energy today", "just felt like it"), never a plan.
_PAST = re.compile(r"(?:had|was|were|did|felt|got|went|made|took|woke|came|ran|saw|kept|\w{3,}ed)\b")
_LATER_TRY = re.compile(
    r"^(?:manana|la proxima(?: vez)?|demain|la prochaine fois)\s+"
    r"(?P<what>(?:(?:le|lo|la|les|los|me|je|j')\s*)?\w{3,}(?:o|e)\b.*)$"
)


def tweak_in(text: str) -> str:
    """The change they will try, said in any clause of a longer reply ("forgot, gonna set an alarm")."""
    return next((tweak for clause in _CLAUSE.split(text.strip()) if (tweak := planned_tweak(clause))), "")


# --- what got in the way --------------------------------------------------------------------------
_CLAUSE = re.compile(r"(?<=[.!?;…])\s+|,\s+|\n+")
# The answer that opens a miss ("nah", "didn't get to it", "no pude", "pas pu") and closes one ("… so no").
_MISS_ANSWER = (
    r"(?:nah|nope|nop|nel|no(?=\W*$)|didn'?t(?: (?:get to it|do it|make it|manage))?|did not|skipped(?: it)?|"
    r"missed(?: it)?|not today|not this time|no pude|no lo hice|hoy no|todavia no|pas pu|pas fait|pas aujourd'?hui|"
    r"non|❌)"
)
_LEADING_MISS = re.compile(rf"^(?:{_MISS_ANSWER}[\s,.!]*)+", re.I)
_TRAILING_MISS = re.compile(rf"(?:[\s,]+(?:so|and|but|pero|y|mais|donc|et))?[\s,]+{_MISS_ANSWER}[\s.!]*$", re.I)
_EMPTY_LEFT = re.compile(r"^(?:it|that|i|so|and|but|pero|mais|y|et|today|hoy|aujourd'?hui|lol|again|sorry|sry)?$")


def cause_words(text: str) -> str:
    """What got in the way, in the message's words, without the words that only say it was not done:
    "no pude, llovió todo el día" → "llovió todo el día", "skipped it, meetings all day" → "meetings all
    day", "work was nuts so no, didn't get to it" → "work was nuts"; "" when nothing is left."""
    kept = []
    for clause in _CLAUSE.split(text.strip()):
        said = _TRAILING_MISS.sub("", _LEADING_MISS.sub("", clause.strip(" ,.!…"))).strip(" ,.!…")
        left = without_outcome_words(said).strip(" ,.!…")
        missed_only = read_outcome(said, asked=False) == "not_done" and len(left.split()) <= 1
        planned = planned_tweak(said) or said_as_plan(said)  # "ill give it a go tomorrow"
        if _EMPTY_LEFT.match(left) or missed_only or planned:  # only the miss, or the plan
            continue
        kept.append(said)
    return ", ".join(kept)


# --- a clause that can say what helped ----------------------------------------------------------------
_FILLER = re.compile(
    rf"^(?:finally|at last|again|today|{LAUGHS}|yay|woo+|yes+|por fin|otra vez|enfin|encore|mdr|"
    rf"{THANKS}|gracias|merci|ok|okay|cool|nice|great|perfect|genial|super)$"
)


def carries_a_why(clause: str) -> bool:
    """A clause beside a done that can be what helped: two words or more, not a filler ("finally", "lol"),
    not a miss or a limit ("pero mañana no puedo"), not a plan or a question."""
    said = plain(clause).strip(" ,.!…")
    if len(said.split()) < 2 or _FILLER.match(said) or "?" in said:
        return False
    return read_outcome(clause, asked=False) == "no_report" and not planned_tweak(clause)


# --- a time proposed for the prompt ----------------------------------------------------------------
_PROPOSES = re.compile(
    r"^[¿¡]?(?:(?:so|ok|and|but|then|maybe)\s+)?"
    r"(?:(?:can|could|should) (?:we|you|u|i) (?:try|do|go with|make it|switch to)|"
    r"let'?s (?:try|do|go with|make it)|how about|what about|"
    r"(?:can|could|would) (?:it|they|that|the \w+) be|(?:podria|puede|podrian|pueden) ser|(?:ca|ce) pourrait etre|"
    r"(?:podemos|podriamos|puedes|podrias) (?:probar|intentar|hacerlo|ponerlo|dejarlo)|"
    r"que tal|y si (?:probamos|lo ponemos)|"
    r"on (?:peut|pourrait) (?:essayer|tenter|mettre|faire)|et si on (?:essayait|mettait))\b[^?]*\d"
)


def proposes_a_time(text: str) -> bool:
    """ "can we try 12:30?", "let's do 6 instead", "¿podemos probar a las 9?", "on peut essayer 21h ?": a
    time proposed for the daily prompt, which is a request to move it (a clock time must be said)."""
    return _PROPOSES.search(plain(text)) is not None


# --- a done that was hard -------------------------------------------------------------------------------
# The day judged hard ("it was hard", "struggled", "me costó", "fue difícil", "c'était dur"), and "not easy"
# said with a negation; "it wasn't hard" is no such judgement.
_NOT_EASY = re.compile(
    r"\b(?:not|wasn'?t|isn'?t|no (?:fue|estuvo|es)|pas|n'etait pas)\s+(?:\w+\s+)?(?:easy|facil|facile)\b"
)
_HARD = re.compile(
    r"\b(?:hard|harder|tough|rough|difficult|struggled?|struggling|a struggle|a slog|brutal|painful|"
    r"(?:me )?cost(?:o|aba|ó)|dificil|pesad[oa]|duro|dura|dur|difficile|galere|penible|"
    # "done but barely", "complicated", "a duras penas", "complicado", "compliqué"
    r"barely|just barely|complicated|tricky|challenging|a duras penas|complicad[oa]|complique|"
    r"(?:pesad|dur|dificil|complicad)isim[oa])\b"
)
_NEGATED = re.compile(r"\b(?:not|wasn'?t|isn'?t|no|ni|pas|n'etait|never)\s+(?:\w+\s+)?$")
_BUT = re.compile(r"\s+(?:but|though|tho|pero|aunque|mais)\s+|(?<=[.!?;…])\s+|,\s+|\n+")
_JUDGING = re.compile(
    r"\b(?:it|that|this|was|is|so|super|really|very|pretty|kinda|a bit|man|ugh|today|tonight|hoy|fue|estuvo|"
    r"muy|bien|bastante|un poco|me|c'etait|c'est|vraiment|tres|un peu|aujourd'hui|lol|ngl|tbh|honestly)\b"
)


def _judged_hard(clause: str) -> bool:
    """The clause judges the day hard ("it was tough", "no fue fácil"); a question never does ("¿cuánto dura?")."""
    said = plain(clause)
    if "?" in said or "¿" in clause:
        return False
    return bool(_NOT_EASY.search(said)) or any(not _NEGATED.search(said[: m.start()]) for m in _HARD.finditer(said))


def hard_going(text: str) -> str:
    """What made a day hard, when a report says it was ("did it but it was hard today, my knees were sore" →
    "my knees were sore"; "sí pero me costó" → "me costó"): the clauses beside the judgement that say why,
    else the judgement itself; "" when the message does not say the day was hard ("it wasn't hard")."""
    clauses = [c.strip(" ,.!…") for c in _BUT.split(text.strip()) if c and c.strip(" ,.!…")]
    if not any(_judged_hard(clause) for clause in clauses):
        return ""
    judgement, causes = "", []
    for clause in clauses:
        plain_clause = plain(clause)
        hard = _judged_hard(clause)
        if hard and len(_JUDGING.sub(" ", _NOT_EASY.sub(" ", _HARD.sub(" ", plain_clause))).split()) <= 1:
            judgement = judgement or clause  # only the judgement ("it was hard today")
        elif not hard and read_outcome(clause, asked=True) == "done":
            continue  # the report itself ("did it", "hoy sí")
        elif len(plain_clause.split()) >= 2 and not _FILLER.match(plain_clause) and "?" not in clause:
            causes.append(clause)
    return ", ".join(causes) or judgement
