"""Per-turn audit metadata stored with the transcript (what ran, what it cost), and masking."""

from __future__ import annotations

import re
from typing import Any

from promptpipe.flow.modules import ModuleResult

_LONG_DIGITS = re.compile(r"\+?\d[\d\s().-]{5,}\d")


def mask_digits(text: str) -> str:
    """Mask phone-number-like digit runs, keeping at most the last 4 digits."""

    def mask(match: re.Match[str]) -> str:
        digits = re.sub(r"\D", "", match.group(0))
        return "*" * (len(digits) - 4) + digits[-4:]

    return _LONG_DIGITS.sub(mask, text)


def _mask_value(value: Any) -> Any:
    if isinstance(value, str):
        return mask_digits(value)
    if isinstance(value, list):
        return [_mask_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _mask_value(v) for k, v in value.items()}
    return value


def module_audit(result: ModuleResult, *, duration_ms: float) -> dict[str, Any]:
    return {
        "module": result.module,
        "tool_calls": [
            {
                "name": run.name,
                "arguments": _mask_value(run.arguments),
                "outcome": "ok" if run.ok else "error",
                "duration_ms": run.duration_ms,
            }
            for run in result.tool_runs
        ],
        "llm_calls": [call.to_audit() for call in result.llm_calls],
        "used_fallback": result.used_fallback,
        "duration_ms": round(duration_ms, 2),
        "stages_ms": dict(result.stages),
        "intent": result.intent.to_audit() if result.intent is not None else None,
        "prompt_version": result.prompt_version,
        "pipeline": {
            "inbound_clipped": result.clipped,
            "refused_tool_calls": result.refused_tool_calls,
            "retries_exhausted": result.retries_exhausted,
            "round_cap_hit": result.round_cap_hit,
            "synthesised": result.synthesised,
        },
        **({"controller": result.controller} if result.controller is not None else {}),
    }
