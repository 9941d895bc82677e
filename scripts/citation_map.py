"""Where each section of the documents outside the repository went, in the repository's own docs:
the tables ``scripts/rewrite_refs.py`` rewrites citations with (keys are the cited section numbers,
values an id of ``docs/behaviour.md`` or a page and anchor under ``docs/``)."""

from __future__ import annotations

BEHAVIOUR = "docs/behaviour.md"
ARCHITECTURE = "docs/architecture.md"
PLATFORM = "docs/platform.md"

# --- where each cited section went -------------------------------------------------------------
# The behaviour facts, by section; a quoted sub-heading or a keyword of the cited text refines it.
REFERENCE_SECTIONS: dict[str, str] = {
    "1": "B-TOOL-1",
    "2": "profile",
    "3": "tone",
    "4": "scheduler",
    "5": "generator",
    "6": "transitions",
    "7": "feedback-timers",
    "8": "turn",
    "9": "api",
    "10": "B-TURN-3",
    "11": "cases",
    "12": "departures",
}
REF_SUBSECTIONS: dict[tuple[str, str], str] = {
    ("2", "loading"): "B-PROF-4",
    ("2", "bug"): "B-PROF-5",
    ("2", "merge"): "B-PROF-1",
    ("2", "results"): "B-PROF-3",
    ("2", "counters"): "B-DONE-1",
    ("4", "validation"): "B-SCHED-1",
    ("4", "create"): "B-SCHED-2",
    ("4", "list"): "B-SCHED-7",
    ("4", "delete"): "B-SCHED-8",
    ("4", "daily delivery"): "B-DELIV-1",
    ("4", "step"): "B-DELIV-1",
    ("4", "reminder"): "reminder",
    ("4", "auto-feedback"): "B-AUTO-1",
    ("4", "intensity poll"): "B-INT-3",
    ("4", "parsing"): "B-INT-3",
    ("4", "intensity"): "B-INT-3",
    ("4", "error"): "B-SCHED-1",
    ("5", "errors"): "B-GEN-2",
    ("8", "step"): "B-HIST-1",
    ("8", "tool loop"): "loop",
    ("8", "history"): "B-HIST-2",
    ("8", "debug"): "B-DEBUG-1",
}
# The original's behavioural description, by section.
CONTRACT_SECTIONS: dict[str, str] = {
    "1": "turn",
    "2": "turn",
    "2.2": "B-TURN-2",
    "2.3": "B-DELIV-1",
    "3": "state",
    "3.1": "B-TURN-1",
    "3.2": "B-STATE-1",
    "3.3": "B-HIST-1",
    "4": "loop",
    "4.1": "B-TURN-2",
    "4.2": "loop",
    "4.3": "loop",
    "4.4": "scheduler",
    "4.5": "generator",
    "4.6": "transitions",
    "4.7": "profile",
    "5": "timers",
    "5.1": "B-DELIV-1",
    "5.2": "reminder",
    "5.3": "B-AUTO-1",
    "5.4": "B-TRANS-2",
    "5.5": "B-FBT-1",
    "6": "tone",
    "6.1": "B-TONE-1",
    "6.2": "B-TONE-7",
    "6.4": "B-TONE-2",
    "6.5": "B-TONE-4",
    "6.6": "B-TONE-11",
    "7": "api",
    "7.1": "B-API-1",
    "7.2": "B-API-5",
    "8": "loop",
    "8.1": "loop",
    "8.2": "B-LOOP-2",
    "9": "scenarios",
    "10": "kept-exactly",
    "10.1": "kept-exactly",
    "10.2": "incidental",
    "10.3": "B-TURN-3",
}
# Refinements of a contract section by a suffix ("rule 5", "key 3") or a keyword of the line.
CONTRACT_REFINED: dict[tuple[str, str], str] = {
    ("8.1", "rule 5"): "B-LOOP-3",
    ("3.2", "key 3"): "B-API-5",
    ("7.2", "hint"): "B-GREET-2",
    ("7.2", "greeting"): "B-GREET-2",
    ("5.2", "text"): "B-REM-3",
    ("5.2", "cancel"): "B-REM-2",
}
# Numbered decisions: the rule that states each, refined by keywords of the citing line.
DECISIONS: dict[int, str] = {
    1: "B-API-2",
    2: "B-API-3",
    3: "B-SCHED-4",
    4: "B-LIFE-1",
    5: "B-DELIV-2",
    6: "B-DONE-2",
    7: "B-LOOP-3",
    8: "B-TRANS-3",
    9: "B-TONE-9",
    10: "B-FBT-1",
    11: "B-TURN-3",
    12: "B-DEBUG-1",
    13: "B-HIST-2",
    14: "B-DEBUG-2",
    15: "B-API-4",
    16: "B-GREET-1",
    17: "B-GREET-2",
}
DECISION_KEYWORDS: dict[int, tuple[tuple[str, str], ...]] = {
    2: (("schedul", "B-SCHED-3"), ("zone first", "B-SCHED-3")),
    3: (("random", "B-SCHED-6"), ("twice", "B-SCHED-5"), ("doubl", "B-SCHED-5")),
    4: (("delet", "B-LIFE-2"),),
    6: (
        ("channel", "B-INT-4"),
        ("generat", "B-GEN-4"),
        ("intensity", "B-INT-2"),
        ("poll", "B-INT-2"),
        ("today", "B-INT-2"),
    ),
    8: (
        ("round", "B-TRANS-4"),
        ("truncat", "B-TRANS-4"),
        ("precision", "B-TRANS-4"),
        ("auto-feedback", "B-AUTO-2"),
        ("sub-state", "B-AUTO-2"),
    ),
    9: (("order", "B-TONE-10"),),
    10: (("nudge", "B-FBT-2"),),
}
DESIGN_SECTIONS: dict[str, str] = {
    "2": f"{ARCHITECTURE}#layers",
    "3": f"{ARCHITECTURE}#state",
    "4": f"{ARCHITECTURE}#events",
    "5": f"{ARCHITECTURE}#llm",
    "6": f"{ARCHITECTURE}#fixed-answer-questions",
    "7": f"{ARCHITECTURE}#cold-start",
    "8": f"{ARCHITECTURE}#infrastructure",
    "9": f"{ARCHITECTURE}#local-runs",
    "10": BEHAVIOUR,
    "11": f"{ARCHITECTURE}#layers",
}
NOTES_SECTIONS: dict[str, str] = {
    "1": f"{PLATFORM}#moto",
    "2": f"{PLATFORM}#powertools-idempotency",
    "3": f"{PLATFORM}#cdk-bundling",
    "4": f"{PLATFORM}#scheduler-rules",
    "5": f"{PLATFORM}#webhook-signatures",
}
# The source specifications: the original's behaviour, its API, its design; the flow controller's and
# the turn pipeline's specifications went into their own pages (mapped only once those pages exist).
SEEDS: dict[str, str] = {
    "000": BEHAVIOUR,
    "001": f"{BEHAVIOUR}#B-API-1",
    "002": BEHAVIOUR,
    "003": "docs/controller.md",
    "004": "docs/pipeline.md",
}
