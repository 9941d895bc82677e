"""Cold-start hygiene: the tracer does not load the X-Ray SDK while tracing is off, and the
benchmark's verdict follows its targets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.bench_cold_start import BASELINE, MODULES, MUST_NOT_IMPORT_OPENAI, TARGETS, Result, requirements_met

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
from promptpipe.observability import tracer

@tracer.capture_lambda_handler
def handler(event, context):
    with tracer.provider.in_subsegment("work") as subsegment:
        subsegment.put_annotation("k", "v")
    return {"ok": event}

print(json.dumps({"result": handler(1, None), "xray": "aws_xray_sdk" in sys.modules, "enabled": tracer.enabled}))
"""


def _probe(**environment: str) -> str:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    env.update(PYTHONPATH=os.pathsep.join((str(REPO / "shared"), str(REPO))), AWS_DEFAULT_REGION="us-east-1")
    env.update(environment)
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True, cwd=REPO)
    return done.stdout.strip().splitlines()[-1]


def test_tracing_off_never_imports_the_xray_sdk() -> None:
    assert _probe() == '{"result": {"ok": 1}, "xray": false, "enabled": false}'
    # In Lambda, but switched off with Powertools' own variable
    assert _probe(LAMBDA_TASK_ROOT="/var/task", POWERTOOLS_TRACE_DISABLED="true") == (
        '{"result": {"ok": 1}, "xray": false, "enabled": false}'
    )


def test_tracing_on_builds_powertools_tracer_at_first_use() -> None:
    pytest.importorskip("aws_xray_sdk")
    # In Lambda with tracing on: the real tracer runs the handler (no segment outside Lambda: the
    # X-Ray SDK logs and carries on, as Powertools documents)
    out = _probe(LAMBDA_TASK_ROOT="/var/task", AWS_XRAY_CONTEXT_MISSING="IGNORE_ERROR")
    assert out == '{"result": {"ok": 1}, "xray": true, "enabled": true}'


def _result(target: str, import_cpu: float, init_cpu: float, *, openai: bool = False) -> Result:
    result = Result(target)
    for _ in range(5):
        result.samples["import_cpu"].append(import_cpu)
        result.samples["init_cpu"].append(init_cpu)
        result.samples["import_wall"].append(import_cpu)
        result.samples["init_wall"].append(init_cpu)
    result.openai_after_import.add(openai)
    result.openai_after_init.add(openai)
    return result


def _results(webhook_ms: float, worker_ms: float, *, openai: bool = False) -> dict[str, Result]:
    results = {BASELINE: _result(BASELINE, 100, 0)}
    for module in MODULES:
        total = webhook_ms if TARGETS[module] == 1.5 else worker_ms
        results[module] = _result(module, total * 0.6, total * 0.4, openai=openai and module in MUST_NOT_IMPORT_OPENAI)
    return results


def test_benchmark_verdict_follows_the_targets() -> None:
    assert requirements_met(_results(webhook_ms=150, worker_ms=250))
    assert not requirements_met(_results(webhook_ms=151, worker_ms=250))  # front door over 1.5x
    assert not requirements_met(_results(webhook_ms=150, worker_ms=251))  # event function over 2.5x
    assert not requirements_met(_results(webhook_ms=100, worker_ms=100, openai=True))


SNAPSHOT_PROBE = """
import json, socket, sys, types

def refuse(self, address, *args):
    raise OSError("network during priming")

socket.socket.connect = refuse
hooks = []
sys.modules["snapshot_restore_py"] = types.SimpleNamespace(register_before_snapshot=hooks.append)
import functions.inbound.webhook  # any function: wiring registers the hook at import
before = {name: name in sys.modules for name in ("openai", "promptpipe.adapters.eventbridge_timers")}
for hook in hooks:
    hook()  # what the runtime does before the snapshot
from promptpipe.wiring import get_app
after = {name: name in sys.modules for name in ("openai", "promptpipe.adapters.eventbridge_timers")}
deps = get_app().deps
built = all(port._instance is not None for port in (deps.timers, deps.prompts, deps.flows))
engine = "promptpipe.flow.conversation" in sys.modules
print(json.dumps({"hooks": len(hooks), "before": before, "after": after, "ports_built": built, "engine": engine}))
"""


def test_snapstart_priming_builds_clients_and_imports_the_model_client_without_network() -> None:
    pytest.importorskip("openai")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    env.update(
        PYTHONPATH=os.pathsep.join((str(REPO / "shared"), str(REPO))),
        AWS_DEFAULT_REGION="us-east-1",
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_EC2_METADATA_DISABLED="true",
        TIMERS_FUNCTION_ARN="arn:aws:lambda:us-east-1:000000000000:function:timers",
        SCHEDULED_PROMPT_FUNCTION_ARN="arn:aws:lambda:us-east-1:000000000000:function:prompt",
        SCHEDULER_ROLE_ARN="arn:aws:iam::000000000000:role/scheduler",
    )
    done = subprocess.run(
        [sys.executable, "-c", SNAPSHOT_PROBE], env=env, capture_output=True, text=True, check=True, cwd=REPO
    )
    assert done.stdout.strip().splitlines()[-1] == (
        '{"hooks": 1, "before": {"openai": false, "promptpipe.adapters.eventbridge_timers": false}, '
        '"after": {"openai": true, "promptpipe.adapters.eventbridge_timers": true}, '
        '"ports_built": true, "engine": true}'
    )


@pytest.mark.parametrize(
    ("function", "built"),
    [
        ("timers", {"timers"}),
        ("scheduled_prompt", {"timers", "prompts"}),
        ("worker", {"timers", "prompts", "flows", "conversation"}),
    ],
)
def test_each_event_function_warms_only_what_its_first_event_needs(function: str, built: set[str]) -> None:
    from promptpipe.settings import Settings
    from promptpipe.usecases import events
    from promptpipe.wiring import build_app, warm_for_events

    settings = Settings(
        aws_region="us-east-1",
        timers_function_arn="arn:aws:lambda:us-east-1:000000000000:function:timers",
        scheduled_prompt_function_arn="arn:aws:lambda:us-east-1:000000000000:function:prompt",
        scheduler_role_arn="arn:aws:iam::000000000000:role/scheduler",
        openai_api_key=None,
        offline_coach=True,
    )
    app = build_app(settings)  # clients only: nothing here touches the network
    warm_for_events(app, function=function)
    deps = app.deps
    ports = {name: getattr(deps, name)._instance is not None for name in ("timers", "prompts", "flows")}
    ports["conversation"] = app in events._engines  # the engines built, one per application context
    assert {name for name, done in ports.items() if done} == built
