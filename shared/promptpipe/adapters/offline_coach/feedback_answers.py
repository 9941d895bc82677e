"""A feedback reply read (done or not: ``rules/outcome.py``; the why, part of it, a pause, a day-part:
``rules/feedback_reading.py``), and the feedback replies said in the participant's language."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.text import ASK_BARRIER, ASK_HELPED, _clean, _substantive, _words
from promptpipe.rules.feedback_reading import Language, asks_for_another_time, reason_clause
from promptpipe.rules.intent_patterns import CHANGE_TIME, PREFER
from promptpipe.rules.outcome import read_outcome, without_outcome_words

_DONE_CANON = re.compile(r"\bq:\s*did you do it\?\s*a:\s*(done|next time)\b", re.I)
_INTENSITY_CANON = re.compile(
    r"\bq:\s*how's the intensity\?\s*a:\s*(decrease|keep current|increase|low|normal|high)", re.I
)
# A feedback reply that gives a time corrects the schedule when it asks for a change (the request's
# words, promptpipe.rules.intent_patterns) or words it as a correction ("make it 8", "actually 7", "not at 6").
_CORRECTION = re.compile(
    r"\bmake it\b|\bactually\b|\bnot (?:at )?\d|\bcambi\w*|\bmuev\w*|\bchanger\b|\bplut[oô]t\b", re.I
)
_KNOWN_BARRIERS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"forg|olvid|oubli|se me pas[oó]|slipped my mind", re.I), "forgot",
     "leave a visible cue right where your routine happens, or set a phone reminder"),
    (re.compile(r"\b(?:time|busy|rushed|hectic|late|tiempo|prisa|temps|press[eé]e?)\b", re.I), "not enough time",
     "shrink it to a 30-second version you can do anywhere"),
    (re.compile(r"\b(?:tired|exhausted|sleepy|sick|ill|energy|cansad[oa]|fatigu[eé]e?|malade|enferm[oa])\b", re.I),
     "too tired", "do the easiest possible version, even just 30 seconds"),
)  # fmt: skip
SMALLER = "make it even smaller so it fits on a busy day"
SMALLEST = "make it even smaller — just 30 seconds right after your usual routine"
ASKED_HELPED = (ASK_HELPED, "¿Qué te ayudó", "Qu'est-ce qui t'a aidé")
ASKED_BARRIER = (ASK_BARRIER, "¿Qué te lo impidió", "Qu'est-ce qui t'en a empêché")


def asks_for_a_new_time(text: str) -> bool:
    return bool(
        CHANGE_TIME.search(text) or PREFER.search(text) or _CORRECTION.search(text) or asks_for_another_time(text)
    )


def says_done(text: str) -> bool:
    """A reply that says it was done, whatever was asked ("Done", "did it", "c'est fait")."""
    return read_outcome(text, asked=False) == "done"


# "Yes! Having my mat out helped a lot": a yes that goes on to say how it went is a report, whatever was asked.
_YES_AND_HOW = re.compile(
    r"^\W*(?:yes|yep|yeah|yup|s[ií]|oui)\b.*\b(?:helped|went (?:well|great|fine)|was (?:easy|great|good|fine)|"
    r"me ayud[oó]|fue f[aá]cil|m'a aid[eé]|c'[ée]tait facile)\b",
    re.I,
)


_EASY = re.compile(
    r"\b(?:easy|easier|helped|helps|went (?:well|great|fine)|f[aá]cil|me ayud[oó]|facile|m'a aid[eé])\b", re.I
)


def what_made_it_easy(text: str) -> str:
    """ "honestly it was easy because the kettle takes forever" → "the kettle takes forever": why it went
    well, said without being asked; "" when the message says no such thing."""
    return motivator_in(text) if _EASY.search(text) else ""


def says_yes_and_how(text: str) -> bool:
    return bool(_YES_AND_HOW.search(text))


def says_not_done(text: str) -> bool:
    return read_outcome(text, asked=False) == "not_done"


def classify_barrier(text: str) -> tuple[str, str]:
    """(barrier, tweak) for a "not this time" reply: a known kind, the reason it gives ("because it
    rained"), or its own words when they say more than "no"."""
    if _DONE_CANON.search(text):
        return "not specified", SMALLEST
    for pattern, barrier, tweak in _KNOWN_BARRIERS:
        if pattern.search(text):
            return barrier, tweak
    cause = reason_clause(text)
    if cause and _substantive(cause):
        return _words(_clean(cause), 15), SMALLER
    if _substantive(_clean(without_outcome_words(text))):
        return _words(_clean(text), 15), SMALLER
    return "not specified", SMALLEST


def motivator_in(text: str) -> str:
    """What helped, when a report says it: the reason it gives ("bc my sister joined") or what it says
    helped ("having my mat out helped"); "" when it says neither."""
    helped = re.search(r"(?P<m>[^.;!?,]+?)\s+(?:really )?helped\b", text, re.I)
    return _clean(reason_clause(text) or (helped["m"] if helped else ""))


def what_helped(text: str) -> str:
    """The motivator in an answer to "what helped?": what it says helped, or its own words."""
    return motivator_in(text) or _clean(text)


# The replies a Spanish or French speaker gets (English is the code's own wording).
_SAID: dict[str, dict[Language, str]] = {
    "done": {
        "en": "Nice work — you did it!",
        "es": "¡Muy bien, lo hiciste!",
        "fr": "Bravo, c'est fait !",
    },
    "ask_helped": {
        "en": f"{ASK_HELPED} make it happen today?",
        "es": "¿Qué te ayudó a hacerlo hoy?",
        "fr": "Qu'est-ce qui t'a aidé(e) aujourd'hui ?",
    },
    "helped": {
        "en": "Thanks — that's really useful. I'll keep it in mind for your next prompts.",
        "es": "¡Gracias! Es muy útil; lo tendré en cuenta para tus próximos mensajes.",
        "fr": "Merci, c'est très utile ; je m'en souviendrai pour tes prochains messages.",
    },
    "miss": {
        "en": "No worries — missing a day is part of building any habit.",
        "es": "No pasa nada: saltarse un día es parte de crear un hábito.",
        "fr": "Pas de souci : manquer un jour fait partie de toute habitude.",
    },
    "ask_barrier": {
        "en": f"{ASK_BARRIER} today?",
        "es": "¿Qué te lo impidió hoy?",
        "fr": "Qu'est-ce qui t'en a empêché aujourd'hui ?",
    },
    "tweak": {
        "en": "One small tweak for next time: {tweak}. Does that sound doable?",
        "es": "Un pequeño ajuste para la próxima: hazlo aún más pequeño, de 30 segundos. ¿Te parece factible?",
        "fr": "Un petit ajustement pour la prochaine fois : le rendre encore plus court, 30 secondes. "
        "Ça te semble faisable ?",
    },
    "partial": {
        "en": "Part of it still counts as showing up!",
        "es": "¡Hacer una parte ya es empezar!",
        "fr": "En faire une partie, c'est déjà bien !",
    },
    "paused": {
        "en": "Done — your daily prompts are paused{back}; they start again by themselves. "
        "Want them back sooner? Just text “resume”.",
        "es": "Listo: tus mensajes diarios quedan en pausa{back}; vuelven solos. "
        "¿Los quieres antes? Escribe “reanudar”.",
        "fr": "C'est fait : tes messages quotidiens sont en pause{back} ; ils reprennent tout seuls. "
        "Plus tôt ? Écris « reprendre ».",
    },
    "resumed": {
        "en": "Welcome back! Your daily prompts are on again{at}. How are you feeling?",
        "es": "¡Bienvenido/a de nuevo! Tus mensajes diarios vuelven{at}. ¿Cómo estás?",
        "fr": "Re-bonjour ! Tes messages quotidiens reprennent{at}. Comment ça va ?",
    },
    "moved": {
        "en": "Done — your daily prompt will now come around {time}{start}.",
        "es": "Listo: ahora tu mensaje diario llega hacia las {time}{start}.",
        "fr": "C'est fait : ton message quotidien arrivera désormais vers {time}{start}.",
    },
    "agreed_tweak": {
        "en": "Great — let's try that next time. I'll check in after your next prompt.",
        "es": "¡Genial! Lo probamos la próxima vez. Te escribo después de tu próximo mensaje.",
        "fr": "Super, on essaie ça la prochaine fois. Je reviens vers toi après ton prochain message.",
    },
    "agreed": {
        "en": "Great! I'll check in after your next prompt.",
        "es": "¡Genial! Te escribo después de tu próximo mensaje.",
        "fr": "Super ! Je reviens vers toi après ton prochain message.",
    },
    # Not understood, the day's report already given: asked, never presumed (nothing saved or moved).
    "shared": {
        "en": "Thanks for telling me! Anything you'd like to change — the time, a pause, or a smaller prompt?",
        "es": "¡Gracias por contarme! ¿Quieres cambiar algo: la hora, una pausa o un mensaje más corto?",
        "fr": "Merci de me le dire ! Tu veux changer quelque chose : l'heure, une pause ou un message plus court ?",
    },
    "shared_ask": {
        # the latest prompt, not "today's": it may have come yesterday (the context says only "not yet")
        "en": "Thanks for sharing! How did your latest prompt go — did you get a chance to try it?",
        "es": "¡Gracias por contarme! ¿Cómo te fue con tu último mensaje? ¿Pudiste probarlo?",
        "fr": "Merci de me le dire ! Comment s'est passé ton dernier message ? As-tu pu l'essayer ?",
    },
    "offer_pause": {
        "en": "Want me to pause your daily prompts {length} while you're away?",
        "es": "¿Quieres que pause tus mensajes diarios {length} mientras no estás?",
        "fr": "Tu veux que je mette tes messages quotidiens en pause {length} pendant ton absence ?",
    },
    "days_limit": {
        "en": "For now I can only send your prompt every day{at}. On a day you'd rather skip, just text “pause "
        "for the weekend” or “pause for 2 days”. Would that work?",
        "es": "Por ahora solo puedo mandarte el mensaje cada día{at}. Si quieres saltarte unos días, escribe "
        "“pausa el fin de semana” o “pausa 2 días”. ¿Te parece?",
        "fr": "Pour l'instant je ne peux envoyer ton message que chaque jour{at}. Pour sauter quelques jours, "
        "écris « pause ce week-end » ou « pause 2 jours ». Ça te va ?",
    },
    "not_yet": {
        "en": "No rush — the day isn't over. Tell me how it went once you've tried it!",
        "es": "Sin prisa, el día no ha terminado. ¡Cuéntame cómo te fue cuando lo pruebes!",
        "fr": "Pas de souci, la journée n'est pas finie. Dis-moi comment ça s'est passé quand tu auras essayé !",
    },
    "welcome": {
        "en": "You're welcome! I'll check in after your next prompt.",
        "es": "¡De nada! Te escribo después de tu próximo mensaje.",
        "fr": "Avec plaisir ! Je reviens vers toi après ton prochain message.",
    },
    "start_today": {"en": "starting today", "es": "desde hoy", "fr": "dès aujourd'hui"},
    "start_tomorrow": {"en": "starting tomorrow", "es": "desde mañana", "fr": "dès demain"},
    "propose": {
        "en": "Sure. How about {time} — would that work?",
        "es": "Claro. ¿Qué tal a las {time}? ¿Te va bien?",
        "fr": "D'accord. Que dirais-tu de {time} ? Ça te va ?",
    },
    "ask_time": {
        "en": "Sure. What time would suit you better? For example 7pm.",
        "es": "Claro. ¿A qué hora te va mejor? Por ejemplo a las 7pm.",
        "fr": "D'accord. À quelle heure plutôt ? Par exemple 19h.",
    },
    # the plan and the schedule as the listed schedule says them ({when}: "every_day" and its kin)
    "every_day": {"en": "every day around {time}", "es": "cada día hacia las {time}", "fr": "chaque jour vers {time}"},
    "every_day_window": {
        "en": "every day at a random time between {start} and {end}",
        "es": "cada día a una hora al azar entre las {start} y las {end}",
        "fr": "chaque jour à une heure au hasard entre {start} et {end}",
    },
    "after_pause": {
        "en": "again after your pause (until {until})",
        "es": "de nuevo después de tu pausa (hasta el {until})",
        "fr": "de nouveau après ta pause (jusqu'au {until})",
    },
    "plan": {
        "en": "Great! Your daily prompt comes {when}; I'll check in after the first one arrives. "
        "Anything you'd like to change before then?",
        "es": "¡Genial! Tu mensaje diario llega {when}; te escribo después de que llegue el primero. "
        "¿Quieres cambiar algo antes?",
        "fr": "Super ! Ton message quotidien arrive {when} ; je reviens vers toi après le premier. "
        "Tu veux changer quelque chose d'ici là ?",
    },
    "plan_none": {
        "en": "Thanks! There's no daily prompt scheduled right now — what time should I set one up for?",
        "es": "¡Gracias! Ahora no hay ningún mensaje diario programado. ¿A qué hora te lo programo?",
        "fr": "Merci ! Aucun message quotidien n'est prévu pour l'instant. À quelle heure je le programme ?",
    },
    "when": {
        "en": "Your daily prompt comes {when}.",
        "es": "Tu mensaje diario llega {when}.",
        "fr": "Ton message quotidien arrive {when}.",
    },
    "when_none": {
        "en": "You have no daily prompt scheduled right now. Tell me a time and I'll set one up.",
        "es": "Ahora no tienes ningún mensaje diario programado. Dime una hora y lo programo.",
        "fr": "Tu n'as aucun message quotidien prévu pour l'instant. Dis-moi une heure et je le programme.",
    },
    "stopped": {
        "en": "Done — I've stopped your daily prompts. Text me whenever you'd like them back and we'll pick a time.",
        "es": "Listo: he detenido tus mensajes diarios. Escríbeme cuando los quieras de vuelta y elegimos una hora.",
        "fr": "C'est fait : j'ai arrêté tes messages quotidiens. Écris-moi quand tu les veux de nouveau et on "
        "choisira une heure.",
    },
    "not_paused": {
        "en": "Your daily prompts weren't paused, so nothing changes. How is your habit going?",
        "es": "Tus mensajes diarios no estaban en pausa, así que nada cambia. ¿Cómo va tu hábito?",
        "fr": "Tes messages quotidiens n'étaient pas en pause, donc rien ne change. Comment va ton habitude ?",
    },
    "limit_kept": {
        "en": "Got it — your daily prompt comes around {time}, so nothing changes. Tell me if you'd like another time.",
        "es": "Entendido: tu mensaje diario llega hacia las {time}, así que nada cambia. Dime si prefieres otra hora.",
        "fr": "Compris : ton message quotidien arrive vers {time}, donc rien ne change. Dis-moi si tu préfères une "
        "autre heure.",
    },
    "limit_ask": {
        "en": "Got it.{now} What time would suit you better? For example 5pm.",
        "es": "Entendido.{now} ¿A qué hora te va mejor? Por ejemplo a las 5pm.",
        "fr": "Compris.{now} À quelle heure plutôt ? Par exemple 17h.",
    },
    "limit_now": {
        "en": " Right now your daily prompt comes {when}.",
        "es": " Ahora tu mensaje diario llega {when}.",
        "fr": " Pour l'instant ton message quotidien arrive {when}.",
    },
    "pause_how_long": {
        "en": "Sure — for how many days should I pause your daily prompts? For example “pause for a week”.",
        "es": "Claro. ¿Por cuántos días pongo en pausa tus mensajes diarios? Por ejemplo “pausa una semana”.",
        "fr": "D'accord. Pendant combien de jours je mets tes messages quotidiens en pause ? Par exemple "
        "« pause une semaine ».",
    },
    "tweak_agreed_next": {
        "en": "Thanks for telling me. Next time, try this: {tweak}. Does that sound doable?",
        "es": "Gracias por contarme. La próxima vez, prueba esto: hazlo aún más pequeño, de 30 segundos. "
        "¿Te parece factible?",
        "fr": "Merci de me le dire. La prochaine fois, essaie ceci : le rendre encore plus court, 30 secondes. "
        "Ça te semble faisable ?",
    },
    "new_habit": {
        "en": "Sure, let's pick a new one! What small habit would you like to build instead?",
        "es": "¡Claro, elegimos otro! ¿Qué pequeño hábito te gustaría construir ahora?",
        "fr": "D'accord, on en choisit une autre ! Quelle petite habitude aimerais-tu prendre à la place ?",
    },
    "intensity_up": {
        "en": "Got it — I'll make your prompts a little more challenging (intensity: {level}).",
        "es": "Entendido: haré tus mensajes un poco más exigentes (intensidad: {level}).",
        "fr": "Compris : je rendrai tes messages un peu plus exigeants (intensité : {level}).",
    },
    "intensity_down": {
        "en": "Got it — I'll make your prompts a bit easier (intensity: {level}).",
        "es": "Entendido: haré tus mensajes un poco más fáciles (intensidad: {level}).",
        "fr": "Compris : je rendrai tes messages un peu plus faciles (intensité : {level}).",
    },
    "intensity_keep": {
        "en": "Great — we'll keep it just as it is.",
        "es": "¡Genial! Lo dejamos tal como está.",
        "fr": "Super, on garde tout comme ça.",
    },
    "sorry_options": {
        "en": "Sorry about that. I can make your prompt smaller, move it to another time, or pause it for a few "
        "days — which would help most?",
        "es": "Perdona. Puedo hacer tu mensaje más pequeño, cambiarlo de hora o pausarlo unos días. ¿Qué te "
        "ayudaría más?",
        "fr": "Désolé. Je peux rendre ton message plus court, le changer d'heure ou le mettre en pause quelques "
        "jours. Qu'est-ce qui t'aiderait le plus ?",
    },
    "no_rush_report": {
        "en": "No rush — tell me how it went whenever you're ready. Anything I can make easier?",
        "es": "Sin prisa: cuéntame cómo te fue cuando quieras. ¿Puedo hacerte algo más fácil?",
        "fr": "Rien ne presse : dis-moi comment ça s'est passé quand tu veux. Je peux te simplifier quelque chose ?",
    },
    "hi_not_yet": {
        "en": "Hi! Your first daily prompt hasn't come yet. Anything you'd like to change before it does?",
        "es": "¡Hola! Tu primer mensaje diario aún no ha llegado. ¿Quieres cambiar algo antes?",
        "fr": "Bonjour ! Ton premier message quotidien n'est pas encore arrivé. Tu veux changer quelque chose avant ?",
    },
    "hi_latest": {
        "en": "Hi! How did your latest habit prompt go?",
        "es": "¡Hola! ¿Cómo te fue con tu último mensaje?",
        "fr": "Bonjour ! Comment s'est passé ton dernier message ?",
    },
    "ask_latest": {
        "en": "How did your latest habit prompt go?",
        "es": "¿Cómo te fue con tu último mensaje?",
        "fr": "Comment s'est passé ton dernier message ?",
    },
    "ask_more": {
        "en": "Anything else you'd like to know?",
        "es": "¿Quieres saber algo más?",
        "fr": "Tu veux savoir autre chose ?",
    },
    "good_question": {
        "en": "Good question! I'm a simple offline coach, so I'm best at helping with your daily habit. "
        "How did today's prompt go?",
        "es": "¡Buena pregunta! Soy un coach sencillo sin conexión y lo que mejor hago es ayudarte con tu hábito "
        "diario. ¿Cómo te fue con el mensaje de hoy?",
        "fr": "Bonne question ! Je suis un coach simple hors ligne : je t'aide surtout avec ton habitude "
        "quotidienne. Comment s'est passé le message d'aujourd'hui ?",
    },
    "pause_until": {"en": " until {day}", "es": " hasta el {day}", "fr": " jusqu'au {day}"},
    "pause_for": {"en": " for {days} day(s)", "es": " por {days} día(s)", "fr": " pendant {days} jour(s)"},
    "intensity_set": {
        "en": "Done — your intensity is now {level}.",
        "es": "Listo: tu intensidad ahora es {level}.",
        "fr": "C'est fait : ton intensité est maintenant {level}.",
    },
}


def say(key: str, lang: Language, **values: str) -> str:
    """The reply ``key`` in ``lang`` (English when there is none), with ``values`` filled in."""
    return _SAID[key].get(lang, _SAID[key]["en"]).format(**values)


# The coach's own proposal of a time ("How about 7pm — would that work?", "¿Qué tal a las 7pm?") and
# its own question for one: a yes, or another time, answers them.
_PROPOSED = re.compile(r"(?:How about|Qué tal a las|Que dirais-tu de) (\d{1,2}(?::\d{2})?\s*[ap]m)\b")
_ASKED_TIME = re.compile(
    r"What time would suit you better|A qué hora te va mejor|À quelle heure plutôt|move it to another time|"
    r"text me the new time|dime la nueva hora|envoie-moi la nouvelle heure",
    re.I,
)


def proposed_time(last_reply: str) -> str:
    """The time the coach proposed in ``last_reply`` ("7pm"), or ""."""
    match = _PROPOSED.search(last_reply)
    return match[1] if match else ""


def asked_for_a_time(last_reply: str) -> bool:
    return bool(_ASKED_TIME.search(last_reply) or proposed_time(last_reply))


_ENGLISH_DAYS = (
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december"
)
_DAY_WORDS: dict[Language, dict[str, str]] = {
    "es": dict(
        zip(
            _ENGLISH_DAYS.split(),
            [
                "lunes",
                "martes",
                "miércoles",
                "jueves",
                "viernes",
                "sábado",
                "domingo",
                "enero",
                "febrero",
                "marzo",
                "abril",
                "mayo",
                "junio",
                "julio",
                "agosto",
                "septiembre",
                "octubre",
                "noviembre",
                "diciembre",
            ],
            strict=True,
        )
    ),
    "fr": dict(
        zip(
            _ENGLISH_DAYS.split(),
            [
                "lundi",
                "mardi",
                "mercredi",
                "jeudi",
                "vendredi",
                "samedi",
                "dimanche",
                "janvier",
                "février",
                "mars",
                "avril",
                "mai",
                "juin",
                "juillet",
                "août",
                "septembre",
                "octobre",
                "novembre",
                "décembre",
            ],
            strict=True,
        )
    ),
}


def local_day(day: str, lang: Language) -> str:
    """ "Monday 09 March" in ``lang``: "lunes 09 marzo", "lundi 09 mars" (the scheduler's own words)."""
    names = _DAY_WORDS.get(lang)
    if not names:
        return day
    return " ".join(names.get(word.lower(), word) for word in day.split())


# The coach's own offer of a pause while the participant is away: a yes to it is the pause it names.
OFFERED_PAUSE = ("while you're away", "mientras no estás", "pendant ton absence")
_WEEKDAY_NAMES: dict[Language, tuple[str, ...]] = {
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "es": ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"),
    "fr": ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"),
}


def pause_length(lang: Language, days: int | None, weekday: int | None) -> str:
    """ "for 3 days", "hasta el lunes", "jusqu'à lundi": the length of a pause as the offer says it (and
    as ``pause_request`` reads it back)."""
    if weekday is not None:
        day = _WEEKDAY_NAMES[lang][weekday]
        return {"en": f"until {day}", "es": f"hasta el {day}", "fr": f"jusqu'à {day}"}[lang]
    count = days or 1
    unit = {"en": ("day", "days"), "es": ("día", "días"), "fr": ("jour", "jours")}[lang][count != 1]
    return {"en": f"for {count} {unit}", "es": f"{count} {unit}", "fr": f"{count} {unit}"}[lang]
