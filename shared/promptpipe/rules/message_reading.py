"""What kind of message a participant sent, read before anything in it is taken as an answer
(docs/offline-coach.md, "A reader before an answerer").

A reply is not always the answer to the coach's last question. It may be:

- ``greeting``: "heyy", "buenas tardes", "hi there 👋" and nothing more;
- ``question``: about the study or the coach ("who is this?", "is this a bot?", "how did u get my
  number", "¿quién eres?"), with its ``topic`` when it is one of the common ones (``TOPICS``);
- ``complaint``: "this is annoying. just pick one", "too many questions", "qué fastidio";
- ``yes`` / ``no``: "👌🏼", "sounds good lol", "va, me parece bien" / "nah", "no gracias";
- ``later``: not now, let me think ("not yet, let me think", "can I think about it?", "déjame pensarlo"),
  or a shrug alone (``topic`` ``shrug``: "not sure", "idk", "no sé, ni idea", "je sais pas");
- ``request``: a change of the plan, with its ``request`` (``pause`` with ``days`` when said,
  ``resume``, ``change_time``, ``stop``, ``new_habit``, ``limit``: when messages may come, "no more
  texts after 9pm", which moves nothing by itself);
- ``fact``: anything else, which the coach reads against its pending question (or as an outcome
  report in feedback, where ``rules/outcome.py`` reads it).

Only a ``fact`` may be saved as a fact. Opt-outs never get here as a request: the opt-out reader
(``rules/opt_out.py``) honours them at the webhook first; ``stop`` here is the narrower "stop the
daily reminders". A restriction ("no more texts after 9pm", "stop texting me at night") and a stop
that is about the day ("need to stop at the pharmacy first") are not stop requests.

English and Spanish, on the shared normal form (``rules/normalise.py``: case, width, accents folded).
Pure: ``re``, ``rules/normalise``, ``rules/change_of_when`` and ``rules/intent_patterns`` only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from promptpipe.rules.change_of_when import asks_to_change_when
from promptpipe.rules.intent_patterns import is_capability_question
from promptpipe.rules.lexicon import LAUGHS, SHRUGS, STILL_TO_DO_EN, THE_MESSAGES, TIME_CHANGE
from promptpipe.rules.normalise import fold_accents, normalise_text, squeeze_repeats

Kind = Literal["greeting", "question", "complaint", "yes", "no", "later", "request", "fact"]
Request = Literal["pause", "resume", "change_time", "stop", "new_habit", "limit"]
TOPICS = (
    "who",
    "bot",
    "number",
    "how_long",
    "what_sent",
    "change_time_later",
    "stop_later",
    "rephrase",
    "why_asked",
    "how_many",
    "other",
)

__all__ = ["TOPICS", "Kind", "MessageReading", "Request", "hands_over", "plain", "read_message"]


@dataclass(frozen=True)
class MessageReading:
    kind: Kind
    topic: str | None = None  # a question's topic (TOPICS)
    request: Request | None = None
    days: int | None = None  # a pause's length


def plain(text: str) -> str:
    """The shared normal form with accents folded and runs of spaces collapsed."""
    return re.sub(r"\s+", " ", fold_accents(normalise_text(text))).strip()


_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "couple of": 2, "couple": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "ten": 10, "un": 1, "una": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4,
    "cinco": 5, "seis": 6, "siete": 7, "diez": 10, "few": 3, "par de": 2,
}  # fmt: skip
_UNIT_DAYS = {"day": 1, "dia": 1, "week": 7, "semana": 7, "weekend": 2, "fin de semana": 2}
_AMOUNT = r"(?P<n>\d{1,2}|" + "|".join(sorted(map(re.escape, _NUMBERS), key=len, reverse=True)) + r")"
_PAUSE = re.compile(
    r"\b(?:pause|hold|break|stop|skip|off|paus\w*|deten\w*|descans\w*|sin mensajes|vacation|vacaciones|viaje|trip)\b"
)
_PAUSE_WORD = re.compile(r"\b(?:pause|paus\w*|unpause|hold off|take a break|a break from|descans\w* de)\b")
# "pendant ma pause déjeuner", "on my lunch break", "en mi pausa de la comida": a moment of the day.
_BREAK_OF_THE_DAY = re.compile(
    r"\b(?:my|our|the|ma|mi|la|sa|lunch|coffee|tea|cafe)\s+(?:\w+\s+)?(?:pause|pausa|break)\b"
    r"|\b(?:mi|el) descanso\b"  # "ahí tengo mi descanso": the break of the day, no pause asked
    r"|\b(?:pause|pausa|break)\s+(?:dejeuner|de midi|midi|cafe|de (?:la )?comida|del almuerzo|para comer)\b"
)
_MESSAGES = re.compile(rf"\b(?:{THE_MESSAGES}|mensajes|recordatorios|them|these)\b")
_AMOUNT_TOO = _AMOUNT.replace("?P<n>", "?P<m>")  # the same, in the other branch
_DURATION = re.compile(
    rf"\b(?:(?:for|por|durante|next|proxim[oa]s?)\s+(?:the |el |la |los |las )?(?:{_AMOUNT}\s+)?|{_AMOUNT_TOO}\s+)"
    r"(?P<unit>days?|dias?|weeks?|semanas?|weekend|fin de semana)\b"
)
_RESUME = re.compile(
    r"\b(?:resume|restart|unpause|start (?:the |my )?(?:texts|messages|reminders|prompts) again|"
    r"(?:texts|messages|reminders|prompts) again|start again|i'?m back|im back|back now|"
    r"turn (?:them|it) back on|reanuda\w*|vuelve a (?:mandar|enviar)|ya volvi|otra vez los mensajes)\b"
)
_NEW_HABIT = re.compile(
    r"\b(?:new habit|different habit|another habit|change (?:my |the )?habit|switch (?:my |the )?habit|"
    r"start over|otro habito|nuevo habito|cambiar (?:de |el |mi )?habito|"
    # "quiero un hábito nuevo", "add a second habit", "y si mejor cambio a leer?": another habit asked for
    r"habito (?:nuevo|diferente|distinto)|(?:add|start) (?:a |one )?(?:second|2nd|another|new|extra) (?:one|habit)|"
    r"(?:y )?si mejor (?:cambio|cambiamos|me cambio) a (?!las?\b|los\b|\d)\w+)\b"
)
# "stop the reminders", "don't send me the daily texts": the daily prompts, all of them.
_STOP_PROMPTS = re.compile(
    r"^(?:please |pls |can you |could you |)?(?:stop|cancel|end|quit|turn off|no more|don'?t send(?: me)?|"
    r"deja de (?:mandar|enviar)(?:me)?|para|cancela|ya no (?:me )?(?:mandes|envies))\s+"
    r"(?:sending |texting |mandar |enviar )?(?:me )?(?:the |my |these |those |your |all |los |las |mis )?"
    r"(?:daily )?(?:reminders?|prompts?|texts?|messages?|notifications?|recordatorios?|mensajes?)"
    r"(?: (?:please|pls|por favor|thanks|gracias))?(?:[\s.!]*$|\s*[,.;!]\s+\S.*$)"
)
_RESTRICTION = re.compile(
    r"\b(?:after|before|at|past|in the|during|until|on|weekends?|despues de las|antes de las|en la|por la)\b"
    r"\s*(?:\d|night|morning|evening|afternoon|work|noche|manana|tarde|weekend)"
)
# "no more texts after 9pm", "stop texting me at night", "don't message me before 8": when, not whether.
_LIMIT = re.compile(
    r"\b(?:no more|stop|don'?t|do not|never|no)\s+(?:\w+\s+){0,2}?(?:texts?|texting|messages?|messaging|"
    r"sending|reminders?|prompts?|mensajes|escribir|mandar)\b"
)
_CHANGE_TIME = re.compile(
    r"\b(?:change|move|switch|reschedule|shift|push|cambia\w*|mueve\w*|pasa\w*)\s+"
    r"(?:(?:my|the|your|our|it|that|this|daily|la|el|mi|del|lo)\s+){0,3}"
    r"(?:time|reminder|prompt|schedule|message|text|hora|recordatorio|mensaje|it|lo)?s?\s*"
    r"(?:to|a|para|for|back|forward|earlier|later|mas temprano|mas tarde)\b"
    r"|\b(?:different|new|another|later|earlier) time\b|\b(?:is|are|would be|works?) better\b"
    rf"|\b(?:{TIME_CHANGE})\b"
    r"|\bmejor (?:a las|en la|por la)\b|\b(?:don'?t|doesn'?t|do not) work for me\b|\bno me (?:da tiempo|funciona)\b"
)


def _runs_of(words: str, then: str = "") -> re.Pattern[str]:
    """A message that opens with one or more of ``words``, each a whole word with its commas and stops,
    then ``then``: ``_runs_of("hi|hey", "$")`` is ``^(?:(?:hi|hey)\\b[\\s,!.]*)+$``."""
    return re.compile(rf"^(?:(?:{words})\b[\s,!.]*)+{then}")


# The words of a message that only greets, a name at most after them ("hey there", "buenas tardes").
_GREETING_WORDS = (
    r"hi+|hey+|hello+|helo|hiya|howdy|yo|sup|heya|hola+|holi|buenas|buenos dias|buenas (?:tardes|noches|dias)|"
    r"good (?:morning|afternoon|evening|day)|hi there|hello there|hey there|bonjour|bonsoir|salut|coucou|ola|"
    r"que tal|what'?s up|whats up|wassup"
)
_GREETING = _runs_of(_GREETING_WORDS, r"(?:\w+)?[\s!.]*$")
# A yes as people type it, in a word or a phrase: agreement, thanks, or a laugh that goes along.
_YES_WORDS = (
    r"y|yes+|yeah?|yea|yep|yup|ya|ye|yas|ok(?:ay|ey)?|k+|kk|sure(?: thing)?|alright|all right|fine|"
    r"perfect|great|good|cool|nice|definitely|absolutely|of course|certainly|please|pls|plz|sounds good|"
    r"sounds great|sounds fine|that works|works for me|works|do it|go ahead|go for it|let'?s do it|let'?s go|"
    r"why not|deal|si+|vale|claro|dale|de acuerdo|perfecto|genial|bueno|porfa|por favor|venga|va|sale|orale|"
    r"de una|me parece bien|me parece|esta bien|listo|ok then|yes please|si porfa|si por favor|oui|d'accord|"
    rf"ca marche|ok ca marche|{LAUGHS}|then|thanks?|thank you|gracias|"
    r"pues|sip|simon|okey|oki|guay|vale vale|esta bien|me late|ca me va|ca va|c'est bon|parfait|entendu|"
    r"bien sur|volontiers|ca roule|allez|merci|oui oui|ouais|tres bien|super|d'acc|dac|go|yess+|nickel|top|"
    r"andale|bet|for sure|ofc|yessir|si claro|claro que si|sounds (?:perfect|lovely|nice|ok|okay)|"
    r"that'?s (?:fine|good|great|perfect|ok)|fine by me|va que va|c'est parfait|c'est bien|ca me convient|"
    r"okie(?: dokie)?|oki doki|joya|chevere|bacano|obvio|va pues|okis|ok dale|bueno dale|de ley|"
    r"sounds right|yeah sounds (?:good|right)|yup yup|all good|gotcha|got it|ok cool|cool cool|"
    r"that works for me|sounds like a plan|vamos|vamos a ello|me sirve|me funciona|me va bien|ca me va bien|"
    r"ca me convient|on y va|"
    # a yes hummed or spoken: "mhm", "uh huh", "go on then", "yes x" (a kiss), "arre", "sipi", "ta bien", "amén"
    r"m+h+m+|mm+[- ]?hm+|uh[- ]?huh|go on(?: then)?|x+|arre|sipi|sipo|ta bien|ta bueno|amen|okas|va bien|"
    r"right[- ]?o+|rightio|right you are|q(?:ue)? si+"
)
# What was offered taken as an instruction: "just do that", "go with that one", "mándalo así", "va pour ça".
_TAKES_THE_OFFER = (
    r"(?:just |ok |sure |yes |then )?(?:do|send|use|take|start|go with|set up|keep|book) (?:that|it|this|"
    r"that one|this one|them)|let'?s (?:go with|do|use|start) (?:that|it|this|that one)|"
    r"haz(?:lo)?(?: eso| asi)?|mand(?:a|alo|amelo)(?: asi)?|envia(?:lo|melo)?(?: asi)?|asi (?:esta bien|nomas|mismo)|"
    r"eso mismo|con eso|eso|fais(?:-le)?(?: ca)?|va pour ca|envoie(?:[- ]le)?|ca ira"
)
_YES = _runs_of(f"{_YES_WORDS}|{_TAKES_THE_OFFER}", "$")
_EMOJI_OTHER = re.compile(r"[👎❌😡😠🙄😒]")
_EMOJI_YES = re.compile(r"^(?:[\s👍👌✅🙌💪🙂😊👏✔☑🆗😀😃😄💯]|[\U0001f3fb-\U0001f3ff]|\ufe0f)+$")
_NO_WORDS = r"no+|nope|nah|not really|no thanks?|no gracias|rather not|mejor no|no quiero|non|non merci|pas vraiment"
_NO = _runs_of(_NO_WORDS, r"(?:thanks?|gracias)?[\s!.]*$")
_LATER = re.compile(
    rf"\b(?:(?:{STILL_TO_DO_EN}|i wanna|want to) (?:think|sleep on it|mull)|"
    r"think (?:on|it over|it through)|sleep on it|je vais (?:y )?(?:penser|voir)|laisse[sz]?[- ]moi voir|"
    r"lo (?:consulto|medito|checo)|dejame (?:verlo|ver)|"
    r"let me think|i'?ll think|think about it|need to think|not sure yet|not yet,? let me|"
    r"tell (?:you|u) (?:tomorrow|later)|get back to (?:you|u)|dejame pensar\w*|lo pienso|lo voy a pensar|"
    r"te digo (?:manana|luego|despues)|no se todavia|todavia no se|aun no se|"
    r"je vais y reflechir|je vais reflechir|laisse[sz]?[- ]moi (?:reflechir|y penser)|je ne sais pas encore|"
    r"pas encore sur|je te dis|je vous dis)\b"
)
# A message that is nothing but a shrug ("not sure", "idk", "no sé, ni idea", "je sais pas"): no answer yet.
_SHRUG = re.compile(
    rf"^(?:(?:{SHRUGS}|hmm+|mm+|um+|uh+|ni idea la verdad|bof)"
    r"(?: (?:yet|tbh|honestly|really|la verdad|todavia|aun|encore))?\b[\s,.!]*)+$"
)
_SHRUG_INSIDE = re.compile(rf"\b(?:{SHRUGS})\b")
_COMPLAINT = re.compile(
    r"\b(?:annoying|annoyed|so many questions|too many (?:questions|texts|messages)|stop asking|"
    r"just pick|you pick|you choose|pick (?:one|for me)|whatever you (?:think|want)|this is (?:stupid|pointless|dumb)|"
    r"confusing|waste of time|ugh+|omg stop|que fastidio|fastidi\w*|molest\w*|cuantas preguntas|"
    r"demasiadas preguntas|tu elige|elige tu|lo que sea|do i (?:\w+ )?(?:have|need) to (?:explain|answer|say|tell)|"
    r"(?:this|that) is (?:a lot|too much)|trop de questions|c'est (?:penible|chiant|long)|que pesad\w*|"
    r"otra pregunta|more questions|"
    # impatience: "this is taking forever", "hurry up", "ya, rápido", "on peut aller plus vite"
    r"taking (?:forever|so long|too long|ages)|hurry up|speed (?:this|it) up|get (?:this|it) over with|"
    r"(?:can|could) we (?:just )?(?:move on|get on with it|be quick)|(?:ya,? |mas )rapido|rapido,? (?:por favor|porfa)|"
    r"apurate|date prisa|ya acabemos|"
    r"se me hace eterno|plus vite|depeche|depechons|on peut accelerer|ca prend du temps)\b"
)
# "idk you choose", "whatever works", "up to you", "tú decide", "lo que sea", "peu importe": the choice is
# handed to the coach — an easier way on, not a fact (the words are never saved).
_HAND_OVER = re.compile(
    r"\b(?:(?:you|u) (?:pick|choose|decide)|(?:just )?pick (?:one|for me|something|anything|whatever)|"
    r"(?:choose|decide) for me|whatever(?: (?:works|you (?:think|want|like|say)|is (?:fine|best|easiest)))?|"
    r"up to (?:you|u)|your (?:call|choice)|dealer'?s choice|surprise me|(?:it )?doesn'?t matter\W*$|"
    r"i (?:don'?t|dont) (?:really )?care\W*$|idc|"
    r"any(?:thing| time|time)? (?:works|is fine)|(?:tu|usted) (?:decide|decides|elige|eliges|escoge|escoges)|"
    r"(?:decide|decidelo|elige|eligelo|escoge) (?:tu|usted)|lo que sea|lo que (?:tu )?quieras|como quieras|"
    r"me da igual|da igual|cualquier(?:a| cosa| hora)|lo que (?:te|le) parezca|peu importe|n'importe (?:quoi|quand)|"
    r"comme (?:vous voulez|tu veux)|(?:choisissez|choisis|decidez|decide)(?:-le)? (?:pour moi|vous-meme|toi)|"
    r"c'est (?:vous|toi) qui (?:voyez|vois|choisissez|choisis|decidez|decides)|je m'en fiche|ca m'est egal)\b"
)
# Small talk that goes with a greeting ("hope ur having a nice day", "¿qué tal?", "ça va ?"): no fact.
_SMALL_TALK = re.compile(
    r"^(?:(?:how are (?:you|u|ya|things)(?: doing| today)?|how r u|how'?s it going|how'?s your day|"
    r"(?:i )?hope (?:you|your|ur|u)\b(?:\s+[\w']+){0,5}?\s+(?:well|good|great|nice|fine|lovely|ok|okay|wonderful)"
    r"(?:\s+(?:day|morning|evening|week|afternoon|one|weekend))?|nice to (?:meet|hear from) (?:you|u)|"
    r"thanks for (?:reaching out|the message|texting)|"
    r"que tal(?: (?:estas|todo|tu dia))?|como (?:estas|esta|andas|vas|te va)|que onda|todo bien|mucho gusto|"
    r"(?:espero|ojala) que (?:estes|este|te vaya) bien|ca va|comment (?:ca va|allez-vous|vas-tu|tu vas)|"
    r"vous allez bien|tu vas bien|j'espere que (?:vous allez|tu vas) bien|enchante?e?|bonne journee)"
    r"\b[\s,!.?]*)+$"
)
# "is this free", "y esto es gratis", "c'est payant": what it costs is asked, even with no question mark.
_COST = re.compile(
    r"\b(?:is (?:this|it|the study|there (?:any|a))|does (?:this|it)|do i (?:have|need) to"
    r"|esto|eso|es|c'est|est-ce|ca|il faut)\b"
    r"[^.!?]{0,20}\b(?:free|cost|pay|charge|fees?|gratis|cuesta|cobran?|de pago|pagar|gratuit|payant|coute|payer)\b"
)
_HOW_MANY = re.compile(r"\bhow many\b|\bcuantas (?:preguntas|cosas)\b|\bcombien de questions\b")
_QUESTION_START = re.compile(
    r"^(?:who|what|how|why|when|where|which|is|are|do|does|can|could|will|would|should|may|"
    r"quien|que|como|cuando|donde|por que|porque|cual|cuanto|cuanta|cuantos|cuantas|eres|es|puedo|puedes|se puede|"
    r"y como|y quien|c'est (?:combien|quand|ou|comment|gratuit|payant)|ca (?:dure|coute) combien|"
    r"qui|quoi|comment|combien|pourquoi|quand|ou|est-ce|c'est qui|c'est quoi|peut-on|puis-je|vous etes)\b"
)
# What a question is about, by its words (TOPICS, in the order they are tried).
_TOPIC_WORDS = {
    "rephrase": (
        r"\bwhat do (?:you|u) mean\b|\bwhat does that mean\b|\bi don'?t (?:understand|get it)\b|"
        r"^(?:huh|what|wdym|que|como)\W*$|^huh\b|\bno entiendo\b|\bque quieres decir\b"
    ),
    "why_asked": (
        r"\bwhy (?:do|would|d) (?:you|u) (?:need|want|ask|care)|"
        r"\bwhy (?:are (?:you|u) asking|ask)\b|\bwhy does (?:it|that) matter\b|"
        r"\bpor que (?:me )?(?:lo )?(?:preguntas|necesitas|quieres saber)|"
        r"\bpara que (?:quieres|necesitas) saber|"
        r"\bpourquoi (?:vous )?(?:me )?(?:demandez|demandes)|"
        r"\bpourquoi (?:vous voulez|tu veux) savoir|\bpourquoi cette question\b"
    ),
    "who": (
        r"\bwho (?:is|are|r) (?:this|you|u)\b|\bwho'?s this\b|\bquien (?:eres|es|sos|habla)\b|"
        r"\b(?:is (?:this|it)|this is) (?:legit|legitimate|real|for real|a scam|spam)\b|^legit\b|"
        r"\bes (?:real|confiable|de verdad|una estafa)\b|\bc'est (?:serieux|une arnaque|fiable|vrai)\b|"
        r"\bde parte de quien\b|\bwhat is this\b|\bque es esto\b|\bqui (?:etes|es)[- ](?:vous|tu)\b|"
        r"\bc'est qui\b|\bqui est-ce\b|\bqui parle\b|\bc'est quoi (?:ce|ca)\b|"
        # "is this the research thing from the clinic", "es esto lo del estudio": the study asked of
        r"^(?:is (?:this|it)|es esto|esto es|c'est bien) (?:(?:the|that|part of the|from the|lo|el|la|"
        r"parte del?|du|de la|l')\s*)+(?:\w+ )?(?:study|research|program|programme|trial|clinic|"
        r"estudio|investigacion|programa|clinica|etude|recherche|programme)\b"
    ),
    "bot": (
        r"\b(?:are (?:you|u)|is (?:this|it)|r u|eres|es esto|es|c'est|est-ce|vous etes|tu es|etes-vous|es-tu) "
        r"(?:a |an |un |una |une )?(?:real|bot|human|person|robot|ai|ia|machine|computer|persona|automated|"
        r"automatic|chat ?bot|automatico|automatica|automatique|"
        r"humano|robot|maquina|humain|personne|vrai)\b"
    ),
    "number": (
        r"\b(?:get|got|gave|give|have|has|find|found|conseguiste|consiguieron|sacaste|sacaron|"
        r"dieron|dio|paso|tienes|tienen|eu|trouve|avez|as|donne)\b.*"
        r"\b(?:number|numero|cel|celular|telefono)\b"
    ),
    "how_many": (
        r"\bhow many (?:more )?(?:questions|things|steps)\b|\bcuantas (?:preguntas|cosas)\b|"
        r"\bcombien de questions\b|\b(?:is this|are we|almost) (?:done|finished|over)\b|"
        r"\b(?:ya )?(?:casi )?(?:terminamos|acabamos)\b|\bc'est (?:bientot )?fini\b"
    ),
    "how_long": (
        r"\bhow long\b|\bhow much time\b|\bcuanto tiempo\b|\bcuanto dura\b|"
        r"\bcombien de temps\b|\bca dure combien\b"
    ),
    "what_sent": (
        r"\bwhat (?:will|do|are) (?:you|u) (?:send|text)|\bwhat (?:kind of )?(?:texts|messages)\b|"
        r"\bque (?:me )?(?:vas a|van a) (?:mandar|enviar)\b|\bque mensajes\b|\bhow often\b|"
        r"\b(?:text|messag|send|remind|writ|escrib|mand|envi)\w*\b.*\b(?:every ?day|daily|"
        r"each day|todos los dias|cada dia|tous les jours|chaque jour)\b|\bcada cuanto\b|"
        r"\ba quelle frequence\b|\bwhat do i (?:have|need) to do\b|\bhow does (?:this|it) work\b|"
        r"\bque tengo que hacer\b|\bcomo funciona\b|\bcomment (?:ca|cela) (?:marche|fonctionne)\b|"
        r"\bqu'?est-ce que je dois faire\b"
    ),
    "change_time_later": (
        r"\b(?:change|move|switch)\b.*\btime\b|\bcambiar la hora\b|\b(?:es|esta) fij[oa]\b|\bis (?:it|the time) fixed\b"
    ),
    "stop_later": (
        r"\bhow (?:do|can) i (?:stop|quit|unsubscribe|opt out)\b|\bcomo (?:paro|dejo|me salgo)\b|"
        r"\b(?:can|could) i (?:stop|quit)\b|"
        r"\b(?:stop|quit|cancel)\b.*\b(?:messages|texts|reminders|prompts)\b"
    ),
}
_TOPICS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (topic, re.compile(words)) for topic, words in _TOPIC_WORDS.items()
)


# The greeting that opens a longer message ("hi who is this", "hola, quien eres?").
_GREETING_LEAD = _runs_of(
    r"hi+|hey+|hello+|hiya|yo|hola+|holi|buenas (?:tardes|noches|dias)|buenas|buenos dias|bonjour|bonsoir|"
    r"salut|coucou|good (?:morning|afternoon|evening)"
)


# Words a message may open with before what it asks ("wait who gave u my number", "ok but how long").
_LEAD_FILLER = _runs_of(
    r"wait|hang on|hold on|one sec|espera|un momento|attends|attendez|"
    r"ok(?:ay)?|oh|ah|um+|uh+|ugh+|hmm+|so|but|and|btw|also|sorry|lol|haha+|well|pero|oye|bueno|pues|y|"
    r"et|mais|euh|bon|dis|ah bon"
)
# A question by its form, with no question mark: an interrogative word and a verb or pronoun after it
# ("why do you need to know", "who gave u my number", "por qué preguntas"); "when i get home" is none.
_WH_FORM = re.compile(
    r"^(?:(?:who|what|why|how|where|which|when)(?:'?s| (?:do|does|did|is|are|was|were|will|would|can|could|"
    r"should|have|has|u|you|r|gave|got|get|sent|long|much|many|often|happens?|happened|if|kind|sort))\b|who\b|"
    r"(?:por que|para que|quien|como|cuanto|cuando|donde|que) (?:me |te |lo |se )?(?:eres|es|son|sos|"
    r"preguntas|necesitas|quieres|dura|cuesta|tarda|tienes|tienen|conseguiste|sacaste|van|vas|pasa|hago|puedo)\b|"
    r"(?:pourquoi|qui|comment|combien) (?:vous|tu|est|etes|es|avez|as|ca|c'est|dure)\b|est-ce que\b|"
    r"cuant[oa]s? (?:\w+ )?(?:dura|duran|cuesta|tarda|son|hay|es|va|van|me|te)\b)"
)


def _after_greeting(core: str) -> str:
    """The message past a greeting that opens it ("hi who is this" -> "who is this")."""
    return _GREETING_LEAD.sub("", core, count=1).strip()


# "suree", "okk", "valee": the last letter typed twice for tone.
_LAST_LETTER_DOUBLED = re.compile(r"([^\W\d_])\1+\b")
# A poll's answer in its canonical form ("Q: Did you do it? A: Done", flow/questions.py): the question is ours.
_POLL_ANSWER = re.compile(r"^q: .*?\? a: ")


# A yes/no question by its form: an auxiliary, then who it asks about ("do i have to reply every day", "can
# u see my messages", "will you text on weekends"); not "did it", "would love to".
_YES_NO_FORM = re.compile(r"^(?:do|does|can|could|will|should|must|are|r) (?:i|you|u|we|y'?all)\b")


def _asks_by_form(said: str) -> bool:
    """A question by its form: a question mark anywhere in their own words, or an interrogative opening
    past a filler."""
    own = _POLL_ANSWER.sub("", said)
    opened = _LEAD_FILLER.sub("", own).strip()
    return "?" in own or bool(_WH_FORM.match(opened) or _YES_NO_FORM.match(opened))


def without_breaks_of_the_day(said: str) -> str:
    """``said`` (plain) without the breaks of the day it names ("en mi descanso", "on my lunch break"): a
    moment, never a pause asked for."""
    return _BREAK_OF_THE_DAY.sub(" ", said)


def shrugs(text: str) -> bool:
    """The message says, somewhere, that they do not know ("honestly no idea, just seems good")."""
    return bool(_SHRUG_INSIDE.search(plain(text)))


def hands_over(text: str) -> bool:
    """The participant hands the choice to the coach ("idk you choose", "whatever works", "tú decide",
    "peu importe"), with no answer of their own (no number) beside it."""
    said = plain(text)
    return bool(_HAND_OVER.search(said)) and not re.search(r"\d", said)


def _days(said: str) -> int | None:
    match = _DURATION.search(said)
    if match is None:
        return None
    unit = match["unit"].rstrip("s")
    unit = "dia" if unit.startswith("dia") else "semana" if unit.startswith("semana") else unit
    per = _UNIT_DAYS.get(unit, 1)
    amount = match["n"] or match["m"]
    count = int(amount) if amount and amount.isdigit() else _NUMBERS.get(amount or "", 1)
    return max(1, min(count * per, 60))


def _request(said: str) -> MessageReading | None:
    if _RESUME.search(said) and not re.search(r"\b(?:pause|paus\w*)\b", said):
        return MessageReading("request", request="resume")
    if _NEW_HABIT.search(said):
        return MessageReading("request", request="new_habit")
    days = _days(said)
    proper = _PAUSE_WORD.search(said) and not _BREAK_OF_THE_DAY.search(said)
    timed = days is not None and _PAUSE.search(said) and _MESSAGES.search(said)
    if proper or timed:
        return MessageReading("request", request="pause", days=days)
    if _STOP_PROMPTS.search(said) and not _RESTRICTION.search(said):
        return MessageReading("request", request="stop")
    if _LIMIT.search(said) and _RESTRICTION.search(said):
        return MessageReading("request", request="limit")
    if _CHANGE_TIME.search(said):
        return MessageReading("request", request="change_time")
    return None


def read_message(text: str) -> MessageReading:
    """The kind of ``text`` (see the module docstring)."""
    said = plain(text)
    core = re.sub(r"^[\W_]+|[\W_]+$", "", said)
    if not core and said:
        return MessageReading("yes") if _EMOJI_YES.match(said) else MessageReading("fact")
    if not said:
        return MessageReading("fact")
    request = _request(said)
    if request is not None and request.request in ("change_time", "stop") and is_capability_question(said):
        # "can I change the time later?" asks what is possible, not for the change now
        return MessageReading("fact" if re.search(r"\d", said) else "question", topic=f"{request.request}_later")
    if request is not None:
        return request
    if _LATER.search(said):
        return MessageReading("later")
    if _SHRUG.match(core) or _SHRUG.match(squeeze_repeats(core)):
        return MessageReading("later", topic="shrug")  # no answer yet, and no wish to wait either
    asks_how_many = _HOW_MANY.search(said) and _asks_by_form(said)  # "¿cuántas preguntas son?" is answered
    if _COMPLAINT.search(said) and not re.search(r"\d", said) and not asks_how_many:
        return MessageReading("complaint")
    if _SMALL_TALK.match(re.sub(r"^[\W_]+", "", _after_greeting(core)) or "-"):
        return MessageReading("greeting")  # "good morning! hope ur having a nice day", "how are you?"
    if _GREETING.match(core) and len(core.split()) <= 4 and not _QUESTION_START.match(_after_greeting(core)):
        return MessageReading("greeting")
    core = _after_greeting(core) or core  # "hi who is this", "hola, quien eres?": the rest is read
    opened = _LEAD_FILLER.sub("", core).strip() or core  # "wait who gave u my number": past the filler
    by_form = _asks_by_form(said) or bool(_COST.search(opened) and len(opened.split()) <= 6)
    asks = said.rstrip(" !.").endswith("?") or bool(_QUESTION_START.match(opened)) or by_form
    for topic, pattern in _TOPICS:
        mine = topic == "number" and re.search(r"\b(?:my|mi|mon) (?:phone )?(?:number|numero)\b", core)
        # "antes de empezar después puedo cambiar la hora": a capability asked without its question mark
        later = topic.endswith("_later") and is_capability_question(core)
        # "is there a way to change when the msgs come?": another time asked for without the word "time"
        found = pattern.search(core) or (topic == "change_time_later" and asks_to_change_when(core))
        if found and (asks or topic == "rephrase" or mine or later):
            # "8pm for now. can you text me at another time later?" answers too: a fact with a question
            return MessageReading("fact" if re.search(r"\d", said) else "question", topic=topic)
    if _NO.match(core):
        return MessageReading("no")
    stretched = (core, squeeze_repeats(core), squeeze_repeats(core, 2), _LAST_LETTER_DOUBLED.sub(r"\1", core))
    if any(_YES.match(form) for form in stretched) and not (
        _EMOJI_OTHER.search(said)
    ):  # "yesss", "okkk", "daleee", "siii": the same yes
        return MessageReading("yes")
    if by_form and not re.search(r"\d", said):
        return MessageReading("question", topic="other")
    return MessageReading("fact")
