"""Hesitation said on its own: the person has no answer yet (docs/offline-coach.md, "Requests during the
intake, and hesitation").

"gimme a sec im thinking 🤔", "hold on, still deciding", "haven't decided yet", "dame un segundo",
"un momento, lo estoy pensando", "no estoy segura aún", "une seconde, je réfléchis": a message made only of
the words that ask for time (a moment, a second, "hold on", "wait") or that say the answer is not there
yet (thinking it over, not sure, not decided), with nothing else of substance beside them. Such a message
is no answer: nothing of it is saved, the question stays open and the next message answers it.

Read on the words of the message (``normalise.words``: case and accents folded, punctuation and emoji
gone), by what is left once these phrases and small words are taken out: a habit, a time or a reason
said beside them ("hold on, 7pm", "not sure yet but maybe yoga") leaves words, and the message is an
answer after all. Pure: ``re`` only.

Hesitation is also said by its structure, whatever stands beside it: a verb of thinking it over said as
something still to do ("lo tengo que pensar", "i need to think about that one", "je dois y réfléchir",
"let me check my calendar"). ``hesitation`` reads both.
"""

from __future__ import annotations

import re

from promptpipe.rules.lexicon import STILL_TO_DO_EN
from promptpipe.rules.message_reading import plain
from promptpipe.rules.normalise import words

__all__ = ["hesitation", "only_hesitation"]

# The phrases that ask for time or say the answer is not there yet, in English, Spanish and French.
_HESITATION = re.compile(
    r"\b(?:"
    # asking for a moment
    r"(?:give|gimme|gimmie|give me|let me have) (?:a |one )?(?:sec|second|min|minute|moment|bit)s?|"
    r"(?:one|a|just a|1) (?:sec|second|min|minute|moment)s?|hold on|hang on|wait a (?:sec|second|min|minute|bit)|"
    r"brb|dame (?:un|una) (?:segundo|segundito|momento|momentito|minuto|minutito|rato|ratito|chance)|"
    r"(?:un|una) (?:segundo|momentito|momento|minuto)|"
    r"esperame|esperate|espera(?: tantito)?|tantito|ahorita te digo|"
    r"(?:une|1) (?:seconde|minute)|un (?:instant|moment)|attend(?:s|ez)?|"
    # thinking it over, not decided, not sure
    r"(?:i'?m |im |i am |still |sigo |estoy |lo estoy |je )?(?:thinking|deciding|pensando|decidiendo|"
    r"reflechis|reflechi|reflechir)(?: (?:about|on) (?:it|that|this))?|"
    r"(?:let me |lemme |to )think|lo pienso|dejame pensar(?:lo)?|"
    r"(?:haven'?t|havent|have not|not) (?:decided|made up my mind|sure|certain)|undecided|dunno|idk|"
    r"(?:no|aun no|todavia no) (?:he decidido|lo he decidido|lo se|se|estoy segur[oa]|toy segur[oa])|"
    r"(?:je (?:ne )?)?(?:sais pas|suis pas (?:sure?|certaine?)|n'ai pas (?:encore )?decide)"
    r")\b"
)
# The small words that may stand beside them: fillers, "yet", "still", "about it", laughter.
_SMALL = frozenset(
    words(
        "i im i'm me my it that this about on yet still just a bit the so ok okay um umm hmm mmm uh oh ah "
        "well lol haha tbh rn now real quick sorry and y pues bueno este eh lo eso la verdad todavia aun un poco "
        "ya ahorita ahora si oui euh bon alors encore je pas moment le"
    )
)


def only_hesitation(text: str) -> bool:
    """True when ``text`` asks for time or says the answer is not there yet, and says nothing else
    (no digit, and no word beyond the hesitation's phrases and the small words beside them)."""
    said = " ".join(words(text))
    if not said or re.search(r"\d", said) or _HESITATION.search(said) is None:
        return False
    left = _HESITATION.sub(" ", said).split()
    return all(word in _SMALL for word in left)


# Something still to do ("tengo que", "let me", "je dois") and, within three words, a verb of thinking it
# over or looking into it ("pensar", "think", "check", "réfléchir"): read on the plain form of the text.
_STILL_TO_DO_ES_FR = r"tengo que|hay que|necesito|voy a|dejame|je dois|il faut que je|je vais|laisse[sz]?-moi"
_STILL_TO_DO = rf"{_STILL_TO_DO_ES_FR}|{STILL_TO_DO_EN}"
_THINK_IT_OVER = r"pensar\w*|think|reflechir|penser|check|look at|see|ver(?:lo)?|checar|revisar|consultar|voir|regarder"
_THINKS_IT_OVER = re.compile(rf"\b(?:{_STILL_TO_DO})\b(?:\s+\w+){{0,3}}?\s+(?:{_THINK_IT_OVER})\b")


def hesitation(text: str) -> bool:
    """True when ``text`` puts the answer off: thinking it over said as still to do ("lo tengo que
    pensar", "let me check my calendar"), or hesitation said on its own (``only_hesitation``)."""
    return bool(_THINKS_IT_OVER.search(plain(text))) or only_hesitation(text)
