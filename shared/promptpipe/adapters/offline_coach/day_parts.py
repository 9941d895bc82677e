"""The words that say a part of the day, read by the offline coach's clock (``times.py``): those that put a
time in the afternoon or evening ("7 after dinner", "a las 7 de la tarde", "le soir") or in the morning ("7
when I wake", "temprano", "au réveil"), "tarde" said as the afternoon rather than "late", and the very start
of the day ("first thing", "nada más levantarme", "dès que je me lève"). Pure: ``re`` and ``rules/word_patterns``."""

from __future__ import annotations

from promptpipe.rules.word_patterns import any_word

# "tarde" said as the part of the day, not as "late": leading its clause or its hour ("tarde, tipo 5", "de tarde
# como a las 4", "tardecita a las 6"), never "más tarde", "muy tarde" (a way, a verdict).
TARDE = (
    r"(?<!m[aá]s )(?<!muy )(?<!tan )(?<!bien )tardes?(?=\s*[,;.:!]|\s+(?:tipo|como|a eso de|sobre|hacia|las|a las|at|"
    r"around|\d))|de tarde|tardecitas?|nochecitas?"
)
# Words that put a time in the afternoon or evening ("7 after dinner") or in the morning ("7 when I wake").
PM_HINT = any_word(
    "evenings?",
    "nights?",
    "tonight",
    "lights? out",
    "afternoons?",
    "after work",
    "dinner",
    "supper",
    "pm",  # English
    "de la (?:tarde|noche)",
    "cen(?:a|as|ar|amos|o|an|ando|ado)",  # "ya que cenamos"
    "noche",
    "noches",
    "(?:en|por|a|para) la tarde",
    "acost\\w+|acuest\\w+",  # "cuando me acuesto"
    "las tardes",
    TARDE,
    "comer",
    "comida",  # Spanish
    "du soir",
    "le soir",
    "soir",
    "(?:la )?nuit",
    "couch[ée]e?s?|(?:me|se) couche\\w*",
    "d[îi]ner",
    "de l'apr[èe]s-midi",
    "apr[èe]s-midi",  # French
    "(?<!out of )(?<!of )(?:bed|bedtime|sleep|sleeping|asleep|dormir|cama|dormidos)",  # "out of bed" is the morning
    # the end of the working day: "when I get off work", "when I get home", "cuando llego a casa", "en rentrant"
    "(?:get(?:ting)?|got) off work",
    "off work",
    "(?:get(?:ting)?|got) home",
    "leave work",
    "after (?:my |the )?shift",
    "despu[ée]s del trabajo",
    "(?:salgo|salir|saliendo) del trabajo",
    "(?:llego|llegar|llegando|vuelvo|volver|regreso|regresar) a casa",
    "(?:come|coming|came) home",
    "apr[èe]s le travail",
    "en rentrant",
    "je rentre",
)
AM_HINT = any_word(
    "mornings?",
    "breakfast",
    "first coffee",
    "(?<!i )am",  # not "i am"
    "wakes?",
    "waking",
    "woke",
    "get(?:ting)? up",
    "early",
    "alarm",  # "when my alarm goes"
    "before (?:work|school|class|the office|my shift)",  # English
    "antes del? (?:trabajo|oficina|escuela|colegio)",
    "antes de (?:irme|ir|salir) (?:al|a la|a|del?) \\w+",
    "(?:en|por) la ma[ñn]ana",
    "las ma[ñn]anas",
    "(?<!m[aá]s )(?<!tan )temprano",  # "más temprano" is earlier than what was said, not the morning
    "de la ma[ñn]ana",
    "primera hora",
    "desayun\\w*",
    "despert\\w*|me despierto|me levanto|levantarme",  # Spanish
    "du matin",
    "le matin",
    "matin",
    "petit[- ]d[ée]jeuner",
    "r[ée]veil\\w*",
    "avant (?:le travail|le bureau|l'[ée]cole|d'aller au (?:travail|bureau))",  # French
)

# The very start of the day, however it is said: "first thing", "right when i wake up", "the moment im up",
# "nada más levantarme", "en cuanto me despierto", "recién levantada", "dès que je me lève", "dès le réveil".
START_OF_DAY = (
    r"\bfirst thing\b|"
    r"\b(?:(?:right|just|straight)(?:\s+(?:when|after|as|once))?|as soon as|soon as|the (?:moment|minute|second))\s+"
    r"(?:i|im|i'm|i am)\s+(?:wake|woke|get up|get out of bed|am up|'m up|up|awake|open my eyes|roll out of bed)\b|"
    r"\b(?:nada m[aá]s|en cuanto|apenas|ni bien|al rato de|reci[eé]n|luego de|justo al)\s+"
    r"(?:me\s+)?(?:levant\w*|despiert\w*|despert\w*)|\bal (?:despertar(?:me)?|levantarme)\b|\ba primera hora\b|"
    r"\b(?:d[eè]s (?:que je me (?:l[eè]ve|r[ée]veille)|le (?:r[ée]veil|lever))|au (?:r[ée]veil|lever))\b|"
    r"\bpremi[eè]re heure\b"
)
