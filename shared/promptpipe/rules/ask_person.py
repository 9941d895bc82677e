"""A message that asks to talk to a person of the study team ("can I talk to a person", "I want a
real human", "hablar con una persona"), read as the opt-out words are (``rules/opt_out.py``): in the
one normal form of ``rules/normalise.py``, accents folded, per language.

It is a hint that holds the conversation for a person (``HoldReason.ASKED``, docs/safety.md), never
the only way: the coach has its own tool for a request in other words (``tool_table.ASK_PERSON``).
A clause of the message must *ask* (a verb of talking or contacting, then a person: "talk to a
person / human / someone", "speak with somebody on the team", "connect me with a staff member",
"can someone call me"), or be the bare request ("human please", "a real person"); a sentence that
only mentions people ("I talked to my sister", "I'm a morning person", "talk to you tomorrow") is
nothing.

Pure: ``re`` and the normal form only.
"""

from __future__ import annotations

import re

from promptpipe.rules.literal_prefilter import Prefiltered
from promptpipe.rules.normalise import fold_accents, normalise_text

__all__ = ["asks_for_person"]

_EN_PERSON = (
    r"(?:an? |some |the )?(?:real |actual |live |human )?"
    r"(?:person|human(?: being)?|someone|somebody|some one|staff(?: member)?|member of (?:the |your )?(?:study )?team"
    r"|(?:study )?team member|coordinator|researcher|people)"
)
_EN_TALK = r"(?:talk|tlk|speak|spk|chat|text|be connected)"
_EN = (
    # "can I talk to a person", "let me speak with someone", "talk to a human"
    rf"\b{_EN_TALK} (?:to|with|w) {_EN_PERSON}\b",
    # "connect me with a staff member", "put me through to a person", "get me a human"
    rf"\b(?:connect|put) me (?:with|to|through to) {_EN_PERSON}\b",
    r"\bget me (?:an? )?(?:real |actual )?(?:person|human|someone|somebody)\b",
    # "can someone call me", "could a person contact me"
    r"\b(?:someone|somebody|a person|a human|a real person) (?:call|contact|phone|ring) me\b",
    # "I want a real person", "I need a human"
    r"\bi (?:want|need|would like|'d like) (?:an? )?(?:real |actual |live )?(?:person|human)\b",
    # the bare request: "human please", "a real person", "person pls"
    r"^(?:an? )?(?:real |actual |live )?(?:person|human)(?: please| pls| plz)?$",
)
_ES_PERSON = (
    r"(?:una persona|alguien|un humano|una humana|un ser humano|una persona real|personal|"
    r"(?:un|una) (?:miembro|integrante|persona) del equipo|el equipo|(?:el|la) coordinador[a]?)"
)
_ES = (
    # "hablar con una persona", "puedo hablar con alguien del equipo"
    rf"\b(?:hablar|habla|hablo|conversar|platicar|comunicarme) con {_ES_PERSON}\b",
    # "me puede llamar alguien", "que alguien me llame"
    r"\bme (?:puede|podria|pueden|podrian) (?:llamar|contactar|escribir) (?:alguien|una persona)\b",
    r"\balguien (?:me )?(?:puede|podria) (?:llamar|contactar)me\b|\bque alguien me (?:llame|contacte)\b",
    r"\b(?:quiero|necesito) (?:una persona|un humano|alguien real)\b",
)
# Every match names a person in one of these words (proved over the regex parser's tree by
# tests/unit/test_literal_prefilter.py): a message with none of them is not read by the patterns, which
# compile at the first message that holds one, not at the worker's import (docs/benchmarks.md, section 2).
_TRIGGERS = (
    "person", "human", "someone", "somebody", "some one", "staff", "member", "coordinator", "researcher", "people",
    "alguien", "miembro", "integrante", "equipo", "coordinador",
)  # fmt: skip
# One alternation of the patterns, joined bare: none holds a group number or a global flag, and a clause
# asks when any of them matches it.
_PATTERN = Prefiltered("|".join((*_EN, *_ES)), _TRIGGERS)
_CLAUSE = re.compile(r"[.!?;,\n]+|\s+-\s+")
_NOISE = re.compile(r"[^\w' ]+")


def asks_for_person(text: str) -> bool:
    """Whether a clause of ``text`` asks to talk to a person (English or Spanish)."""
    normal = fold_accents(normalise_text(text))
    for clause in _CLAUSE.split(normal):
        plain = " ".join(_NOISE.sub(" ", clause).split())
        if plain and _PATTERN.search(plain):
            return True
    return False
