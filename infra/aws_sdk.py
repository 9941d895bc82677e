"""The AWS SDK in a Lambda asset, narrowed at build time to what the functions call.

At the first client of a process, botocore lists every service directory it ships (to check that the
service exists) and parses the endpoint data of every service (1.25 MB of JSON): ≈35 ms CPU of each
cold start spent on services no function calls. The bundler (``infra/bundling.py``) therefore keeps
of the bundled botocore's data only the services below, and cuts its ``endpoints.json`` down to
theirs, from the very botocore it packages (no data is committed, nothing to refresh after an
upgrade). At run time the functions use botocore's stock loader: it finds only what is there.

No CDK import here: the bundler, the benchmarks and the tests share this module.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

# Every service the functions make a client for: through ``aws_client`` (a test holds the code to
# it), and through the libraries: Secrets Manager and SSM (Powertools' parameters), X-Ray (the X-Ray
# SDK's sampling client, where tracing is on).
SERVICES = ("dynamodb", "scheduler", "secretsmanager", "sns", "sqs", "ssm", "xray")
# boto3's data is its resource models (``boto3.resource``), which no function uses.
UNUSED_SDK_DATA = ("boto3/data",)


def trim_endpoints(endpoints: dict[str, Any], services: tuple[str, ...] = SERVICES) -> dict[str, Any]:
    """botocore's endpoint data with each partition's services narrowed to ``services`` (partitions,
    regions and defaults unchanged: what resolving those services' endpoints reads)."""
    return {
        **endpoints,
        "partitions": [
            {**partition, "services": {k: v for k, v in partition["services"].items() if k in services}}
            for partition in endpoints["partitions"]
        ],
    }


def narrow_aws_sdk(out: Path, services: tuple[str, ...] = SERVICES) -> None:
    """In the asset ``out``: keep of the bundled botocore's data only ``services`` (and the files at
    its root), cut its endpoint data to theirs, and drop boto3's resource models."""
    data = out / "botocore" / "data"
    endpoints = data / "endpoints.json"
    if not endpoints.is_file():
        raise RuntimeError(f"bundling the Lambda asset failed: {endpoints.relative_to(out)} is missing")
    for path in data.iterdir():
        if path.is_dir() and path.name not in services:
            shutil.rmtree(path)
    trimmed = trim_endpoints(json.loads(endpoints.read_text(encoding="utf-8")), services)
    endpoints.write_text(json.dumps(trimmed, separators=(",", ":")), encoding="utf-8")
    for relative in UNUSED_SDK_DATA:
        shutil.rmtree(out / relative, ignore_errors=True)
