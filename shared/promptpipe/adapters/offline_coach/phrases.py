"""The intake's own sentences in the participant's language (English, Spanish, French): the questions
it asks, its acknowledgements and its answers to a greeting or "let me think". ``reading.py``
recognises each question in every language, so the answer is read against it.
"""

from __future__ import annotations

from promptpipe.adapters.offline_coach.text import ASK_BARRIER, ASK_HELPED
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
    "offer_declined": {
        "en": "No problem — nothing is scheduled. Whenever you'd like a daily prompt, just say “yes” "
        "and I'll set it up.",
        "es": "Sin problema, no programo nada. Cuando quieras un mensaje diario, solo dime “sí” y lo preparo.",
        "fr": "Pas de problème, rien n'est prévu. Quand vous voudrez un message quotidien, dites simplement “oui” "
        "et je m'en occupe.",
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
    # a routine that fits the time of day, chosen when the participant hands the anchor over
    "default_anchor_midday": {"en": "“after lunch”", "es": "“después de comer”", "fr": "“après le déjeuner”"},
    "default_anchor_evening": {"en": "“after dinner”", "es": "“después de cenar”", "fr": "“après le dîner”"},
    "default_anchor_night": {"en": "“before bed”", "es": "“antes de dormir”", "fr": "“avant de dormir”"},
    # the one line that says what the coach chose when the choice was handed over ("you pick")
    "chosen": {"en": "I'll pick: {value}.", "es": "Elijo yo: {value}.", "fr": "Je choisis : {value}."},
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
    # the feedback week
    "done": {
        "en": "Nice work — you did it!",
        "es": "¡Muy bien, lo hiciste!",
        "fr": "Bravo, c'est fait !",
    },
    "hard_day": {
        "en": "Showing up on a hard day counts. If it stays hard, a smaller version is fine too.",
        "es": "Hacerlo en un día difícil cuenta. Si sigue costando, una versión más pequeña también vale.",
        "fr": "Le faire un jour difficile, ça compte. Si ça reste dur, une version plus petite suffit.",
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
    "ask_new_time": {
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
    "new_habit_named": {
        "en": "Sure, let's switch! Why does {habit} matter to you? What would it give you?",
        "es": "¡Claro, cambiamos! ¿Por qué es importante para ti ({habit})? ¿Qué te aportaría?",
        "fr": "D'accord, on change ! Pourquoi est-ce important pour vous ({habit}) ? "
        "Qu'est-ce que ça vous apporterait ?",
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
