"""Plain-language requests to stop every message, read by their structure (docs/compliance.md): the
part of the opt-out reader (``rules/opt_out.py``) that reads sentences rather than keywords, in English,
Spanish, French and Portuguese. Split from it by intent: the keyword lists and fixed texts there, the
sentence structures here.

Pure: ``re``, ``rules/normalise`` and ``rules/literal_prefilter`` only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from promptpipe.rules.literal_prefilter import Prefiltered
from promptpipe.rules.normalise import fold_accents, normalise_text

__all__ = ["FILLERS", "mend_word", "read_request", "strip_fillers"]

# Polite or filler words allowed around a keyword or a request ("stop please", "ok STOP now").
FILLERS = frozenset(
    [
        "please",
        "pls",
        "plz",
        "plss",
        "plez",
        "pleaseee",
        "thanks",
        "thank",
        "you",
        "thx",
        "ty",
        "ok",
        "okay",
        "now",
        "just",
        "already",
        "por",
        "favor",
        "porfa",
        "porfavor",
        "gracias",
        "svp",
        "stp",
        "merci",
        "s'il",
        "vous",
        "plait",
        "bonjour",
        "salut",
        "ya",
        "hola",
        "hi",
        "hey",
    ]
)


def strip_fillers(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """``tokens`` without the polite or filler words at either end."""
    start, end = 0, len(tokens)
    while start < end and tokens[start] in FILLERS:
        start += 1
    while end > start and tokens[end - 1] in FILLERS:
        end -= 1
    return tokens[start:end]


# --- plain-language requests, read by their structure ---------------------------------------------
# Read on the normal form with accents folded, one clause at a time, by the shape of a request rather
# than by its sentences. A clause asks to stop every message when it holds, in English, Spanish,
# French or Portuguese, one of:
#
# - a verb of stopping + a verb of sending + me or the messages: "stop texting me", "deja de
#   escribirme", "arrêtez de m'envoyer des messages", "pare de me mandar mensagem";
# - a negated imperative of sending to me: "don't text this number again", "no me manden más", "ne
#   m'écrivez plus", "não me mande mais mensagens";
# - not wanting + the messages or taking part: "I don't want these texts", "ya no quiero seguir en el
#   estudio", "je ne veux plus recevoir de messages", "não quero mais participar";
# - removing me from the list, the study or the program, or unsubscribing me: "take me off this
#   list", "bórrenme de la lista", "merci de me retirer de votre liste", "me tire da lista",
#   "quiero darme de baja", "wrong number" (the person is not the participant).
#
# A *floating* structure may stand anywhere in the clause — a greeting, a reason or a run-on may come
# first ("wrong number stop texting me", "hey so honestly i don't want these texts anymore") — unless
# what comes before takes it back: a negation just before it ("don't stop sending these", "no me
# dejen de escribir", "no quiero que dejen de escribirme"), a subject other than the person ("you don't
# text me enough"), or a frame that makes it no request ("can I stop the messages later?", "my sister
# said stop texting her"). The short anchored ones ("stop these", "no more texts") must open the clause
# (after greetings, polite words and "can you …"). Words after it that narrow it to a time, a duration
# or one kind of message make it unclear.

_EN_LEAD = (
    r"(?:(?:hi|hey|hello|ok|okay|so|please|pls|plz|just|seriously|honestly|i said|again|now|"
    r"(?:can|could|would|will) (?:you|u)(?: please| pls| just)?|i (?:want|need) you to|i'd like you to|"
    r"kindly|omg|ugh|guys)\s+)*"
)
_EN_MESSAGES = r"(?:messages?|texts?|text messages?|msgs?|sms|txts?|notifications?|emails?|whatsapps?)"
_EN_THESE = (
    r"(?:these|those|this|them|the|your|ur|all|all the|all of (?:these|the|your|them)|all your|any more|anymore|"
    r"more|any|ya)"
)
# A verb of sending in any form people type ("texting", "sendin", "msging").
_EN_SEND = r"(?:send|text|txt|messag|msg|contact|writ|email|call|bother|spam)\w*"
_EN_SEND_BASE = r"(?:text|txt|message|msg|contact|send|write|email|call|bother|spam)"
_EN_NARROW_LEAD = r"(?:at|in|on|so|during|before|after|until|till|for|every|each|this|today|tonight)"
_EN_STUDY = r"(?:(?:the|this|your|ur|that) )?(?:study|program|programme|list|mailing list|texting list|research)"
_EN_ANCHORED = (
    # "stop texting", "stop texting at night": the verb alone, a request only with nothing or a narrowing after it
    rf"(?:stop|quit|cease) {_EN_SEND}(?=$| {_EN_NARROW_LEAD}\b)",
    # "stop all messages", "stop the texts", "stop these"
    rf"(?:stop|end|cancel) (?:{_EN_THESE} )*{_EN_MESSAGES}|(?:stop|end|cancel) (?:these|them|all|everything)",
    rf"no more {_EN_MESSAGES}",
    # "this is the wrong number", "wrong number": the person who answers is not the participant
    r"(?:sorry )?(?:(?:this is|you have|you've got|u have|u got|you got) )?(?:the |a )?wrong (?:number|person|#)",
)
_EN_FLOATING = (
    # "stop sending me these", "plz stop sendin me these", "quit messaging this number"
    rf"(?:stop|quit|cease|halt) {_EN_SEND}(?: to)? (?:me|us|this number|my number|my phone)\b",
    # "stop sending these texts", "stop sending them"
    rf"(?:stop|quit|cease|halt) {_EN_SEND} (?:(?:{_EN_THESE} )*{_EN_MESSAGES}|these|them|those)\b",
    # "don't text me anymore", "please don't text this number again", "never contact me"
    rf"(?:don't|dont|do not|never|no longer) (?:ever )?{_EN_SEND_BASE} (?:me|us|this number|my number)\b",
    # "I don't want these texts anymore", "i no longer wish to receive messages"
    rf"i (?:really )?(?:don't|dont|do not|no longer|never) (?:want|wish|need)(?: to (?:get|receive|be sent|have))?"
    rf"(?: (?:{_EN_THESE} )*(?:{_EN_MESSAGES})| these| them)\b",
    # "I don't want to be in this study anymore", "I do not want to participate"
    rf"i (?:really )?(?:don't|dont|do not|no longer) (?:want|wish) to (?:participate|take part|continue|"
    rf"be (?:in|part of|on) {_EN_STUDY})\b",
    # "I want to stop receiving these", "i'd like to unsubscribe", "i want out of the study"
    rf"i(?: want| would like|'d like| wanna| need| wish) to (?:unsubscribe|opt out|withdraw|leave {_EN_STUDY}|"
    rf"quit {_EN_STUDY}|stop (?:receiving|getting)(?: (?:{_EN_THESE} ))*(?: ?{_EN_MESSAGES})?)\b",
    rf"\bi want out\b|count me out\b|\bleave me alone\b|\bi quit {_EN_STUDY}",
    # "unsubscribe me", "opt me out", "take me off ur mailing list", "remove me", "be removed from this list"
    r"unsubscribe (?:me|us)\b|opt (?:me|us) out\b|take (?:me|my number) off\b|"
    r"(?:remove|delete|drop|erase) (?:me|my (?:phone )?number|this number|my info)\b|"
    r"be (?:removed|taken off|unsubscribed)\b",
)

_ES_LEAD = (
    r"(?:(?:hola|oye|oiga|ok|ya|por favor|porfa|porfavor|solo|buenas|"
    r"(?:puedes|podrias|pueden|podrian|puede|podria)(?: por favor)?)\s+)*"
)
_ES_MESSAGES = (
    r"(?:(?:mas|los|las|sus|estos|esos|tus|mis|ningun|ninguno|ningunos) )*"
    r"(?:mensajes?|textos?|sms|msjs?|notificaciones|whatsapps?|nada)"
)
# "enviarme", "mandarnos", "escribir", "contactarme", "molestarme": an infinitive of sending, a pronoun on it.
_ES_SEND_INF = r"(?:enviar|mandar|escribir|contactar|textear|molestar|llamar)(?:me|nos)?"
# the negated imperative (a subjunctive): "no me mande(s/n)", "no me escribáis"
_ES_SEND_NEG = (
    r"(?:mand(?:e|es|en|eis)|envi(?:e|es|en|eis)|escrib(?:a|as|an|ais)|contact(?:e|es|en|eis)|molest(?:e|es|en|eis)|"
    r"textee?s?n?|llam(?:e|es|en))"
)
_ES_STUDY = r"(?:(?:el|este|su|la|esta|de la|del) )?(?:estudio|programa|lista)"
_ES_ANCHORED = (
    # "ya no me mandas mensajes": the present tense as people also say it
    rf"(?:ya )?no (?:me |nos )?(?:mandas|mandan|envias|envian)(?: mas)?(?: {_ES_MESSAGES})?(?: mas)?",
    rf"no mas {_ES_MESSAGES}",
    r"(?:numero )?equivocado|se equivocaron de numero|numero incorrecto",
)
_ES_FLOATING = (
    # "dejen de escribirme", "dejad de enviarme mensajes", "para de mandarme", "deje de molestarme"
    r"(?:deja|dejen|dejes|deje|dejad|dejar|para|paren|pare|parad|parar|deten|detengan|detenga|basta) "
    rf"de {_ES_SEND_INF}",
    # "no me manden más", "mijo ya no me mande mensaje", "no me escribáis más"
    rf"no (?:me|nos) (?:{_ES_SEND_NEG}\b|(?:vuelva|vuelvas|vuelvan|volvais) a {_ES_SEND_INF})",
    # "no quiero recibir más mensajes", "ya no quiero que me escriban", "ya no deseo participar"
    rf"no (?:quiero|kiero|deseo|quisiera)(?: mas)? (?:recibir|que me (?:mand|envi|escrib|contact)\w*|{_ES_MESSAGES}|"
    rf"participar|ser parte|seguir (?:participando|recibiendo|en {_ES_STUDY})|seguir$|continuar|estar en {_ES_STUDY})",
    # "quiero darme de baja", "me quiero dar de baja", "denme de baja"
    r"(?:dar(?:me|nos)?|denme|dame|me doy|me das|me dan|me den) de baja|me (?:quiero|quisiera) (?:dar de baja|salir)",
    # "bórrenme de la lista", "me borran de la lista", "quítenme de la lista", "eliminen mi número"
    rf"(?:borr|quit|sac|elimin|saqu)\w*(?:me|nos) de {_ES_STUDY}|me (?:borr|quit|sac|elimin)\w* de {_ES_STUDY}|"
    r"(?:borr|elimin|quit)\w* mi (?:numero|telefono|celular)",
    rf"(?:salirme|salir|me salgo) (?:de {_ES_STUDY}|del (?:estudio|programa))|cancela\w* (?:mi |la )?suscripcion",
    r"dejame en paz|dejenme en paz",
)

_FR_LEAD = (
    r"(?:(?:bonjour|salut|ok|svp|stp|s'il vous plait|s'il te plait|merci de|je vous prie de|"
    r"(?:pouvez-vous|pourriez-vous|vous pouvez|tu peux|peux-tu|pourrais-tu)(?: svp)?)\s+)*"
)
_FR_MESSAGES = r"(?:(?:de |des |les |vos |ces |tes |d'autres )*(?:messages?|textos?|sms|notifications?|rappels?))"
_FR_SEND = r"(?:m'|me |nous )?(?:envoy|ecri|contact|text|harcel|embet|spam)\w*"
_FR_STUDY = r"(?:(?:la|votre|vos|cette|ta|l'|cet) ?)?(?:liste|etude|programme)"
_FR_ANCHORED = (
    rf"(?:arret\w*|cesse\w*) (?:{_FR_MESSAGES}|tout)",
    rf"plus de {_FR_MESSAGES}",
    r"(?:c'est un )?(?:mauvais|faux) numero|erreur de numero",
)
_FR_FLOATING = (
    # "arrêtez de m'écrire", "arrête de m'envoyer des messages stp"
    rf"(?:arret\w*|cess\w*) de {_FR_SEND}",
    # "ne m'écrivez plus", "merci de ne plus m'envoyer de messages"
    rf"ne {_FR_SEND} plus|ne plus {_FR_SEND}",
    # "je ne veux plus recevoir de messages", "je veux plus de vos messages", "je ne souhaite plus participer"
    r"je (?:ne )?(?:veux|souhaite|desire|voudrais) plus (?:rien )?"
    rf"(?:recevoir|participer|etre contact\w*|{_FR_MESSAGES})",
    # "désabonnez-moi", "je veux me désinscrire", "merci de me retirer de votre liste", "supprimez mon numéro"
    rf"me (?:desabonner|desinscrire|retirer|enlever|supprimer|radier)|(?:desabonn|desinscri)\w*-moi|"
    rf"(?:retir|enlev|supprim|effac|radi)\w*-moi (?:de|du|des) {_FR_STUDY}|(?:supprim|effac|retir)\w* mon numero|"
    r"laissez-moi tranquille|fichez-moi la paix|foutez-moi la paix",
)

_PT_LEAD = r"(?:(?:oi|ola|ok|por favor|pfv|pf|bom dia|boa tarde|boa noite|so)\s+)*"
_PT_MESSAGES = (
    r"(?:(?:mais|as|essas|estas|suas|nenhuma) )*(?:mensage(?:m|ns)|sms|textos?|notificaco(?:es)?|nada|whatsapp)"
)
_PT_SEND = r"(?:mand|envi|escrev|contat|contact|text|incomod|lig)\w*"
_PT_STUDY = r"(?:(?:a|o|essa|esta|esse|este|sua|seu) )?(?:lista|estudo|programa|pesquisa)"
_PT_ANCHORED = (
    rf"(?:chega de|sem mais) {_PT_MESSAGES}",
    r"numero errado|engano|foi engano",
)
_PT_FLOATING = (
    # "pare de me mandar mensagem", "parem de me enviar mensagens", "deixe de me escrever"
    rf"(?:pare|parem|para|parar|deixe|deixem|deixa|chega) de (?:me )?{_PT_SEND}",
    # "não me mande mais mensagens", "nunca mais me escrevam"
    r"(?:nao|nunca mais) (?:me )?(?:mande|mandem|envie|enviem|escreva|escrevam|contate|contatem|incomode|incomodem|"
    r"ligue|liguem)\b",
    # "não quero mais receber mensagens", "nao quero mais participar", "não quero mais mensagens"
    rf"(?:nao|n) (?:quero|desejo)(?: mais)? (?:receber|participar|continuar|fazer parte|{_PT_MESSAGES})",
    # "me tire da lista", "me tirem dessa lista", "quero sair do estudo", "quero cancelar minha inscrição"
    rf"(?:me )?(?:tir|remov|exclu|apag|retir)\w*(?:-me)? d(?:a|o|e|essa|esta|esse|este)s? {_PT_STUDY}|"
    r"(?:apag|remov|exclu)\w* (?:o )?meu numero|"
    rf"sair d(?:a|o|essa|esta|esse|este) {_PT_STUDY}|cancelar (?:a |minha )?inscricao|descadastr\w*|"
    r"me deix(?:e|em|a) em paz",
)


# Per language, literal strings one of which every match of its anchored cores (and of its floating
# cores) contains: proved over the regex parser's tree by tests/unit/test_literal_prefilter.py, which
# names any alternative they miss. A clause holding none of them holds no request structure of that
# language, and the language's patterns are not compiled for it. Chosen by
# ``python -m tests.support.regex_literals`` (rare in the built opt-out corpus's other messages and the
# safety corpus's hard negatives).
_EN_ANCHORED_TRIGGERS = (
    " bother", " call", " contact", " messag", " send", " spam", " writ", "cancel all", "cancel everything",
    "cancel them", "cancel these", "email", "end all", "end everything", "end them", "end these", "message", "msg",
    "no more", "notificati", "sms", "stop all", "stop everything", "stop them", "stop these", "text", "txt",
    "whatsapp", "wrong #", "wrong number", "wrong person",
)  # fmt: skip
_EN_FLOATING_TRIGGERS = (
    " bother", " call", " contact", " email", " messag", " msg", " send", " spam", " text", " txt", " writ",
    "be taken off", "bother ", "call ", "contact ", "count me o", "delete", "do not want t", "do not wish t",
    "don't want t", "don't wish t", "dont want t", "dont wish t", "drop", "email ", "erase", "i do not", "i don't",
    "i dont", "i never", "i no longer", "i really do not", "i really don't", "i really dont", "i really never",
    "i really no longer", "i want out", "leave", "message ", "msg ", "no longer want t", "no longer wish t",
    "opt me out", "opt out", "opt us out", "quit", "remove", "send ", "spam ", "stop getting", "stop receiving",
    "take me of", "take my number of", "text ", "txt ", "unsubscrib", "withdraw", "write ",
)  # fmt: skip
_ES_ANCHORED_TRIGGERS = (
    "equivocado", "no envian", "no envias", "no mandan", "no mandas", "no mas", "no me envian", "no me envias",
    "no me mandan", "no me mandas", "no nos envian", "no nos envias", "no nos mandan", "no nos mandas",
    "numero incorrecto", "se equivocaron de numero",
)  # fmt: skip
_ES_FLOATING_TRIGGERS = (
    " de contactar", " de enviar", " de escribir", " de llamar", " de mandar", " de molestar", " de textear",
    " mi celular", " mi numero", " mi telefono", " suscripcio", "dar de baj", "dejame en paz", "dejenme en paz",
    "me borr", "me dan de baj", "me das de baj", "me de ", "me den de baj", "me doy de baj", "me elimin",
    "me quiero salir", "me quisiera salir", "me quit", "me sac", "me salgo de", "no deseo", "no kiero", "no me",
    "no nos", "no quiero", "no quisiera", "nos de ", "salir de", "salirme de",
)  # fmt: skip
_FR_ANCHORED_TRIGGERS = (
    "arret", "cesse", "erreur de numero", "faux numero", "mauvais numero", "plus de",
)  # fmt: skip
_FR_FLOATING_TRIGGERS = (
    " mon numero", "-moi de", "-moi du", "contact", "desabonn", "desinscri", "e desire plu", "e souhaite plu",
    "e veux plu", "e voudrais plu", "ecri", "embet", "envoy", "fichez-moi", "foutez-moi", "harcel", "laissez-mo",
    "me enlever", "me radier", "me retirer", "me supprimer", "plus", "spam", "text",
)  # fmt: skip
_PT_ANCHORED_TRIGGERS = (
    "chega de", "engano", "numero errado", "sem mais",
)  # fmt: skip
_PT_FLOATING_TRIGGERS = (
    " meu numero", "cancelar a i", "cancelar i", "cancelar minha i", "chega de", "deixa de", "deixe de", "deixem de",
    "descadastr", "estudo", "lista", "me deixa e", "me deixe e", "me deixem e", "n desejo", "n quero", "nao",
    "nunca mais", "para de", "parar de", "pare de", "parem de", "pesquisa", "programa", "sair da", "sair dessa",
    "sair desse", "sair desta", "sair deste", "sair do",
)  # fmt: skip


def _alternation(cores: Sequence[str]) -> str:
    """The cores joined bare (``a|b``, inside the group each pattern puts around it): alternation is
    associative, so it reads as ``(?:a)|(?:b)`` would, and ``re`` compiles it cheaper (no core holds a
    group number or a global flag; tests/unit/test_opt_out_reader.py compares the two)."""
    return "|".join(cores)


@functools.cache
def _requests() -> tuple[tuple[str, Prefiltered, Prefiltered], ...]:
    """Per language the anchored and the floating request patterns, each compiled at the first clause
    that holds one of its triggers (``rules/literal_prefilter.py``), never at import: an ordinary
    message compiles none of them (docs/benchmarks.md, section 2)."""
    return tuple(
        (
            language,
            Prefiltered(
                rf"^{lead}(?:{_alternation((*anchored, *floating))})\b",
                (*anchored_triggers, *floating_triggers),
            ),
            Prefiltered(rf"(?<![\w'-])(?:{_alternation(floating)})(?![\w'])", floating_triggers),
        )
        for language, lead, anchored, floating, anchored_triggers, floating_triggers in (
            ("en", _EN_LEAD, _EN_ANCHORED, _EN_FLOATING, _EN_ANCHORED_TRIGGERS, _EN_FLOATING_TRIGGERS),
            ("es", _ES_LEAD, _ES_ANCHORED, _ES_FLOATING, _ES_ANCHORED_TRIGGERS, _ES_FLOATING_TRIGGERS),
            ("fr", _FR_LEAD, _FR_ANCHORED, _FR_FLOATING, _FR_ANCHORED_TRIGGERS, _FR_FLOATING_TRIGGERS),
            ("pt", _PT_LEAD, _PT_ANCHORED, _PT_FLOATING, _PT_ANCHORED_TRIGGERS, _PT_FLOATING_TRIGGERS),
        )
    )


# What, just before a structure, takes it back: a negation ("don't stop sending these", "no me dejen
# de escribir", "no quiero que dejen de …", "não pare de …"), or a subject other than the person ("you
# don't text me enough", "they stopped texting me").
_TAKEN_BACK = (
    r"(?:\b(?:don't|dont|do not|does not|doesn't|didn't|did not|never|not|can't|cant|cannot|couldn't|won't|wont|"
    r"wouldn't|no|nunca|ni|jamas|ne|n'|nao|jamais|nem)(?: (?:me|nos|te|le|se|lo|m'))?"
    r"|\b(?:don't|dont|do not|never) (?:want|wish|need) (?:you|u|them|anyone|anybody) to|\bdon'?t (?:you|u) dare"
    r"|\bno (?:quiero|deseo|quisiera) que|\bje ne veux pas que|\bnao quero que"
    r"|\b(?:you|u|they|he|she|we|it|ellos|ellas|ella|usted|ustedes|ele|ela|eles|elas|voce|voces|il|elle|ils|elles|on))"
    r"\s*$"
)
# A frame before it that makes it no request of the person's own: a condition, a question of what is
# possible, somebody else's words ("if i want to stop …", "can I stop the messages later?", "my sister
# said stop texting her"). "I told you to stop texting me" is a request all the same.
_FRAME = (
    r"\b(?:if|whether|how|why|when|said|says|say|told|tell|tells|asked|asks|wonder|can i|could i|may i|should i|"
    r"do i|cuando|como|por que|dijo|dice|quand|comment|pourquoi|quando|disse|diz|si je|se eu)\b"
)
_OWN_REPEAT = r"\bi (?:already |have |'ve )?(?:said|told (?:you|u|ya)|asked (?:you|u|ya))(?: to| (?:to )?please)?\s*$"

# A word that narrows a stop request to a time, a duration or one kind of message.
_NARROWING = (
    r"\b(?:morning|mornings|night|nights|nightly|evening|evenings|afternoon|afternoons|tonight|today|tomorrow|"
    r"weekends?|weekdays?|week|weeks|days?|hours?|months?|early|late|until|till|til|before|after|during|"
    r"while|for now|for a while|for a bit|so often|so many|twice|reminders?|prompts?|"
    r"manana|mananas|noche|noches|tarde|tardes|temprano|hoy|fin de semana|semana|semanas|dias?|mes|horas?|"
    r"hasta|antes|despues|durante|mientras|por ahora|un tiempo|recordatorios?|"
    r"matin|matins|soir|soirs|nuit|nuits|aujourd'hui|demain|semaines?|jours?|mois|heures?|jusqu'a|avant|apres|"
    r"pendant|pour l'instant|quelque temps|rappels?|week-end|"
    r"manha|noite|amanha|hoje|fim de semana|ate|depois|enquanto|lembretes?|\d+)\b"
)
_CLAUSE = re.compile(r"[.!?;,\n]+|\s+-\s+|\s+(?:but|pero)\s+")  # not "mais", "mas": "more" in Portuguese and Spanish


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """The patterns above, compiled when a clause first holds a request structure (what reads around
    it), not at import: an ordinary message never reaches them (docs/benchmarks.md, section 2)."""
    return re.compile(pattern)


def _request_in(clause: str) -> tuple[str, int] | None:
    """The language of the request structure in ``clause`` and where it ends, if there is one."""
    for language, anchored, floating in _requests():
        match = anchored.match(clause)
        if match is not None:
            return language, match.end()
        for found in floating.finditer(clause):
            before = clause[: found.start()]
            if _compiled(_OWN_REPEAT).search(before) or not (
                _compiled(_TAKEN_BACK).search(before) or _compiled(_FRAME).search(before)
            ):
                return language, found.end()
    return None


def read_request(text: str) -> tuple[bool, str] | None:
    """A plain-language request to stop all messages in ``text``: ``(True, language)`` when it is clear,
    ``(False, "")`` when narrowed to a time, a duration or one kind of message (unclear), ``None``."""
    clauses = [clause.strip(" '\"") for clause in _CLAUSE.split(_mend(fold_accents(normalise_text(text))))]
    clauses = [re.sub(r"\s+", " ", clause) for clause in clauses if clause]
    found: str | None = None
    unclear = False
    for clause in clauses:
        request = _request_in(clause)
        if request is None:
            continue
        language, end = request
        rest = strip_fillers(tuple(re.findall(r"[^\W_]+(?:'[^\W_]+)*", clause[end:])))
        if rest and _compiled(_NARROWING).search(" ".join(rest)):
            unclear = True
        else:
            found = found or language
    if found and not unclear and not any(_compiled(_NARROWING).search(clause) for clause in clauses):
        return True, found
    if found or unclear:
        return False, ""
    return None


# The long opt-out word, read through a slip of the keyboard ("unsubcribe", "unsubscibe me"): a word at
# most two edits away is the word. Not the French and Portuguese ones, whose conjugations are as close.
_LONG_WORDS = ("unsubscribe",)
_WORD_RE = re.compile(r"[^\W\d_]{9,}")


def _edits(a: str, b: str) -> int:
    """The optimal string alignment distance (insertions, deletions, substitutions, swaps)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, char_b in enumerate(b, start=1):
            cost = char_a != char_b
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and char_a == b[j - 2] and a[i - 2] == char_b:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


def mend_word(word: str) -> str:
    for long_word in _LONG_WORDS:
        # not a word ending in "d": "unsubscribed" says what was done
        close = word != long_word and abs(len(word) - len(long_word)) <= 2 and word[:3] == long_word[:3]
        if close and _edits(word, long_word) <= 2 and not word.endswith("d"):
            return long_word
    return word


def _mend(text: str) -> str:
    """``text`` with the long opt-out words mended (``_LONG_WORDS``)."""
    return _WORD_RE.sub(lambda match: mend_word(match[0]), text)
