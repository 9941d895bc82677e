"""The intake's own sentences in the participant's language (English, Spanish, French): the questions
it asks, its acknowledgements and its answers to a greeting or "let me think". ``reading.py``
recognises each question in every language, so the answer is read against it.
"""

from __future__ import annotations

from promptpipe.adapters.offline_coach.times import friendly_time
from promptpipe.rules.language import DEFAULT_LANGUAGE

_PHRASES: dict[str, dict[str, str]] = {
    "ask_domain": {
        "en": "What's one small habit you'd like to build — maybe moving more, sleeping better, drinking more "
        "water or reading?",
        "es": "¿Qué pequeño hábito te gustaría construir? Por ejemplo moverte más, dormir mejor, beber más agua "
        "o leer.",
        "fr": "Quelle petite habitude aimeriez-vous prendre ? Par exemple bouger plus, mieux dormir, boire plus "
        "d'eau ou lire.",
    },
    "ask_motivation": {
        "en": "Why does {habit} matter to you? What would it give you?",
        "es": "¿Por qué es importante para ti ({habit})? ¿Qué te aportaría?",
        "fr": "Pourquoi est-ce important pour vous ({habit}) ? Qu'est-ce que ça vous apporterait ?",
    },
    "ask_time": {
        "en": "What time of day would you like your daily prompt? For example 8am or 7:30pm.",
        "es": "¿A qué hora del día quieres tu mensaje diario? Por ejemplo 8:00 o 19:30.",
        "fr": "À quelle heure de la journée voulez-vous votre message quotidien ? Par exemple 8h ou 19h30.",
    },
    "ask_anchor": {
        "en": "What's something you already do every day that we can attach it to — like your morning coffee "
        "or brushing your teeth?",
        "es": "¿Qué haces ya cada día a lo que podamos unirlo, como el café de la mañana o lavarte los dientes?",
        "fr": "Qu'est-ce que vous faites déjà chaque jour auquel on peut l'accrocher, comme le café du matin ou "
        "le brossage des dents ?",
    },
    "this_habit": {"en": "this habit", "es": "este hábito", "fr": "cette habitude"},
    "hello": {"en": "Hi!", "es": "¡Hola!", "fr": "Bonjour !"},
    "no_rush": {
        "en": "No rush — take your time. Whenever you're ready:",
        "es": "Sin prisa, tómate tu tiempo. Cuando quieras:",
        "fr": "Rien ne presse, prenez votre temps. Quand vous voulez :",
    },
    "sorry_simple": {
        "en": "Sorry — let's keep it simple.",
        "es": "Perdona, lo hacemos más sencillo.",
        "fr": "Désolé, faisons plus simple.",
    },
    "ack_domain": {"en": "{habit} — great choice.", "es": "{habit}: ¡buena elección!", "fr": "{habit} : bon choix !"},
    "ack_motivation": {
        "en": "That's a great reason.",
        "es": "Es una muy buena razón.",
        "fr": "C'est une très bonne raison.",
    },
    "ack_time": {"en": "{time} works.", "es": "A las {time}, perfecto.", "fr": "{time}, parfait."},
    "ack_anchor": {
        "en": "Anchoring it {anchor} makes it easy to remember.",
        "es": "Unirlo a «{anchor}» lo hace fácil de recordar.",
        "fr": "L'accrocher à « {anchor} » le rend facile à retenir.",
    },
    "no_time_caught": {
        "en": "Sorry, I didn't catch a time there.",
        "es": "Perdona, no entendí la hora.",
        "fr": "Désolé, je n'ai pas compris l'heure.",
    },
    "offer": {
        "en": "Shall I send you one like it every day around {time}?",
        "es": "¿Te envío uno así cada día a las {time}?",
        "fr": "Je vous en envoie un comme ça chaque jour à {time} ?",
    },
    "first_try": {
        "en": "Here's your first one-minute habit to try: “{prompt}”",
        "es": "Tu primer hábito de un minuto para probar: “{prompt}”",
        "fr": "Votre première habitude d'une minute à essayer : “{prompt}”",
    },
    "all_set": {"en": "You're all set!", "es": "¡Todo listo!", "fr": "Tout est prêt !"},
    "daily_from": {
        "en": "I'll send you a fresh prompt every day around {time}{start}.",
        "es": "Te enviaré un mensaje nuevo cada día a las {time}{start}.",
        "fr": "Je vous enverrai un nouveau message chaque jour à {time}{start}.",
    },
    "first_arrives": {
        "en": " — the first one arrives {when}",
        "es": " — el primero llega {when}",
        "fr": " — le premier arrive {when}",
    },
    "already_set": {
        "en": "Your daily prompt is already set for around {time}.",
        "es": "Tu mensaje diario ya está programado para las {time}.",
        "fr": "Votre message quotidien est déjà prévu à {time}.",
    },
    "reply_anytime": {
        "en": "Reply anytime to tell me how it went!",
        "es": "¡Respóndeme cuando quieras para contarme cómo te fue!",
        "fr": "Répondez quand vous voulez pour me dire comment ça s'est passé !",
    },
    "done_first": {
        "en": "Done! Your first prompt comes {when} around {time}, then every day at that time.",
        "es": "¡Listo! Tu primer mensaje llega {when} a las {time}, y luego cada día a esa hora.",
        "fr": "C'est fait ! Votre premier message arrive {when} à {time}, puis chaque jour à cette heure-là.",
    },
    "done_set": {
        "en": "Done! Your daily prompt is set for around {time}, then every day at that time.",
        "es": "¡Listo! Tu mensaje diario queda a las {time}, cada día a esa hora.",
        "fr": "C'est fait ! Votre message quotidien est prévu à {time}, chaque jour à cette heure-là.",
    },
    "today": {"en": "today", "es": "hoy", "fr": "aujourd'hui"},
    "tomorrow": {"en": "tomorrow", "es": "mañana", "fr": "demain"},
    # suggestions to take with one word (reading.py reads each back as the suggestion)
    "suggest_time": {
        "en": "How about {time} — would that work?",
        "es": "¿Qué tal a las {time}? ¿Te va bien?",
        "fr": "Que diriez-vous de {time} ? Ça vous va ?",
    },
    "suggest_default": {
        "en": "How about {value}? Just reply yes, or tell me yours.",
        "es": "¿Qué tal {value}? Responde sí, o dime el tuyo.",
        "fr": "Que diriez-vous de {value} ? Répondez oui, ou dites-moi le vôtre.",
    },
    "ack_lead": {"en": "Great.", "es": "Genial.", "fr": "Très bien."},
    "suggest_no_problem": {
        "en": "No problem. How about {value}?",
        "es": "Sin problema. ¿Qué tal {value}?",
        "fr": "Pas de problème. Que diriez-vous de {value} ?",
    },
    "default_domain": {"en": "“a 2-minute walk”", "es": "“caminar 2 minutos”", "fr": "“marcher 2 minutes”"},
    "default_motivation": {
        "en": "“to feel a bit better every day”",
        "es": "“sentirme un poco mejor cada día”",
        "fr": "“me sentir un peu mieux chaque jour”",
    },
    "default_anchor": {
        "en": "“after my morning coffee”",
        "es": "“después de mi café de la mañana”",
        "fr": "“après mon café du matin”",
    },
    "stop_which": {
        "en": "Do you want me to stop all messages, or only change when they come?",
        "es": "¿Quieres que deje de enviarte todos los mensajes, o solo cambiar cuándo llegan?",
        "fr": "Voulez-vous que j'arrête tous les messages, ou seulement changer quand ils arrivent ?",
    },
    "easy_yes_daily": {
        "en": "Just reply yes and I'll send it every day around {time}, or no to skip it.",
        "es": "Responde sí y te lo envío cada día a las {time}, o no para saltarlo.",
        "fr": "Répondez oui et je vous l'envoie chaque jour à {time}, ou non pour passer.",
    },
}


def say(key: str, language: str = DEFAULT_LANGUAGE, **values: str) -> str:
    """The sentence ``key`` in ``language`` (English when it has none), with ``values`` filled in."""
    by_language = _PHRASES[key]
    return by_language.get(language, by_language[DEFAULT_LANGUAGE]).format(**values)


def in_every_language(key: str) -> tuple[str, ...]:
    """The sentence ``key`` in each language it has (to recognise it in the coach's own last reply)."""
    return tuple(_PHRASES[key].values())


def clock(hhmm: str, language: str = DEFAULT_LANGUAGE) -> str:
    """A time as people of the language write it: "7:30pm", "19:30", "19h30"."""
    if language == "en":
        return friendly_time(hhmm)
    hour, minute = hhmm.split(":")
    if language == "fr":
        return f"{int(hour)}h{minute}" if minute != "00" else f"{int(hour)}h"
    return f"{int(hour)}:{minute}"
