"""Which language a participant writes in: English, Spanish or French, read from their own words.

The offline coach answers in the participant's language (docs/offline-coach.md, "Languages"). A
message tells its language by the small words people cannot write without ("quiero", "para", "les",
"je", "the", "my") and by its letters ("ñ", "¿", "ç", "è"); a message with no such sign ("yoga",
"ok", "👍", "7:30") tells nothing, and the conversation's earlier messages decide.

Pure: ``re`` and ``rules/normalise`` only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from promptpipe.rules.normalise import normalise_text, words

__all__ = ["DEFAULT_LANGUAGE", "LANGUAGES", "conversation_language", "detect_language", "tells_no_language"]

LANGUAGES = ("en", "es", "fr")
DEFAULT_LANGUAGE = "en"


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words of one language only (accents folded, as ``words`` gives them); a word shared by two ("de",
# "la", "me", "va", "no", "en") is no sign.
_MARKERS: dict[str, frozenset[str]] = {
    "en": _word_set(
        "i i'm i'd want to the my and after before when with at around yes yeah yep yup is it this that you "
        "for of in on every day morning night because so just get be more do what how who why lunch dinner "
        "breakfast bed work sure sounds good like ish pm am would could please thanks hi hey hello think walk "
        "read water drink sleep after brushing coffee kids home"
    ),
    "es": _word_set(
        "quiero que el los las para por porque con mi mas despues antes cuando hola gracias si vale dale sale "
        "orale buenas tardes noche manana comer cena desayuno comida hora y media cuarto tomar agua caminar "
        "leer se todavia quien eres cuanto tiempo estar tener hacer llego salir del al una un muy bien parece "
        "claro listo perfecto hijos tengo dolor cabeza espalda ando siempre mejor dormir ducho oficina "
        "trabajo aunque pero hoy ayer hice fui estoy estaba esta semana dia nada algo mucho poco tambien"
    ),
    "fr": _word_set(
        "je veux le les des du pour avec apres avant quand bonjour merci oui d'accord ca marche vers et demie "
        "quart soir matin midi diner dejeuner cafe boire eau lire marcher mon ma mes c'est j'ai est pas plus "
        "moins parfait combien temps jour etre au bureau arrivant pendant qui vous tu salut bonsoir mal tete "
        "dos aimerais voudrais fais faire mieux vais suis aime envie peu beaucoup sante manger dormir sais rien "
        "vaisselle travail ecole maison reveil coucher"
    ),
}
# In a short message, the form of a verb tells too: a Spanish infinitive ("estirar", "meditar", "leer":
# -ar, -er, -ir, five letters or more, not an English word) or a French one with its accent ("méditer",
# "étirer"), one sign each. English words of that form are left out.
_INFINITIVE = {
    "es": re.compile(r"^[a-zñ]{3,}(?:ar|ir)$|^(?:leer|correr|comer|beber|hacer|tejer|coser|aprender)$"),
    "fr": re.compile(r"^[a-zàâçéèêëîïôûù]*[éèê][a-zàâçéèêëîïôûù]*(?:er|ir|re)$"),
}
_NOT_INFINITIVES = _word_set(
    "similar regular popular familiar calendar particular circular singular solar polar sugar cellar pillar "
    "guitar radar seminar vinegar collar dollar nectar altar scholar grammar lunar stellar muscular clear "
    "year hear fear near appear gear spear dear rear tear wear swear chair hair pair fair stair affair repair "
    "despair their choir"
)
_SHARED = frozenset(w for lang in _MARKERS for w in _MARKERS[lang] if sum(w in m for m in _MARKERS.values()) > 1)
# Letters one language writes and the other does not; "é" in a verb's "-er"/"-ez" ending ("méditer",
# "étirer", "préparez") is French, as Spanish writes "é" mostly on a last syllable ("café", "después").
# French never writes "á", "í", "ó" or "ú" ("llovía", "está", "terminó", "tú"): Spanish.
_LETTERS = {"es": re.compile(r"[ñ¿¡áíóú]"), "fr": re.compile(r"[çèêëàâîïôûùœ]|\w*é\w*(?:er|ez)\b")}


def _reading(text: str) -> tuple[str, int]:
    """The language ``text`` reads as ("" when none) and by how many signs it leads the next one."""
    said = words(text)
    normal = normalise_text(text)
    scores = {
        lang: sum(1 for w in said if w in markers and w not in _SHARED)
        + (2 if lang in _LETTERS and _LETTERS[lang].search(normal) else 0)
        for lang, markers in _MARKERS.items()
    }
    if len(said) <= 3:
        accented = normal.split()
        for lang, form in _INFINITIVE.items():
            pool = accented if lang == "fr" else said
            scores[lang] += sum(
                1 for w in pool if form.match(w) and w not in _NOT_INFINITIVES and w not in _MARKERS["en"]
            )
    ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)
    (best, top), (_, second) = ranked[0], ranked[1]
    return (best, top - second) if top > second else ("", 0)


def detect_language(text: str) -> str:
    """``en``, ``es`` or ``fr`` when the message says which, else ``""``: "quiero caminar más" -> es,
    "vers 7h30 après le café" -> fr, "right before bed" -> en, "yoga" / "ok" / "👍" -> ""."""
    return _reading(text)[0]


def conversation_language(messages: Sequence[str], default: str = DEFAULT_LANGUAGE) -> str:
    """The language of a conversation (``messages`` in order, oldest first): that of its latest message
    that tells one clearly (two signs more than any other language), else of its latest that tells one
    at all, else ``default``. One word of another language's ("tomo cafe": "cafe" is French too) does
    not turn a Spanish conversation French."""
    readings = [_reading(text) for text in reversed(messages)]
    clear = next((found for found, lead in readings if lead >= 2), "")
    weak = next((found for found, _ in readings if found), "")
    return clear or weak or default


def tells_no_language(text: str) -> bool:
    """A short message (three words at most) that tells its language by fewer than two signs: "ya", "k",
    "np", "ok", "si", "dale", "sure", "👍". It does not change the language the conversation has set: a
    "ya" in an English conversation is answered in English, an "ok" in a Spanish one in Spanish."""
    return len(words(text)) <= 3 and _reading(text)[1] < 2
