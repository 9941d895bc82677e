"""botocore's data, as much as our clients need: the services the functions call and their endpoints.

At the first client of a process, botocore lists every service it ships to check that one exists, and
parses the endpoint data of all of them: ≈35 ms CPU of every cold start, a sixth of the floor a
function is measured against (docs/benchmarks.md, section 2). ``ServicesLoader`` reads what our
clients need; the Lambda assets carry botocore's data for these services only (infra/bundling.py).
Apart from ``adapters.aws`` so that the bundler and the cold-start benchmark use it without the
settings and pydantic.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import botocore
import botocore.session
from botocore.exceptions import DataNotFoundError
from botocore.loaders import Loader, instance_cache

# Every service the functions make a client for: through ``aws_client`` (a test holds the code to
# it), and through the libraries: Secrets Manager and SSM (Powertools' parameters), X-Ray (the X-Ray
# SDK's sampling client, where tracing is on). The Lambda assets carry botocore's data for these
# only (infra/bundling.py).
SERVICES = ("dynamodb", "scheduler", "secretsmanager", "sns", "sqs", "ssm", "xray")
# botocore's endpoint data (``endpoints.json``) for ``SERVICES`` only, 46 KB instead of 1.25 MB to
# parse at every cold start, with the botocore version it was cut from: used only under that version
# (the locked one, which the Lambda assets bundle: docs/platform.md#cdk-bundling). Made by
# ``trim_endpoints`` (``python -m scripts.trim_aws_endpoints``); a test fails when it no longer matches.
ENDPOINTS_FILE = Path(__file__).with_name("aws_endpoints.json")


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


class ServicesLoader(Loader):
    """botocore's data loader, told which services the application uses (docs/benchmarks.md, section 2).

    Two things botocore reads at the first client of a process depend on every service it ships,
    though a client needs one: to check that a service exists, it lists every service's directory
    (about 450, and a ``stat`` in each), and it parses the endpoint data of every service (1.25 MB
    of JSON). Together ≈35 ms CPU of each cold start, a sixth of the floor. This loader answers the
    first from ``SERVICES`` (those whose data exists) and the second from ``ENDPOINTS_FILE`` when it
    was cut from the running botocore; it loads everything else as botocore does. A service not in
    the list is refused with botocore's own ``UnknownServiceError``; endpoint data placed on a search
    path before botocore's (``AWS_DATA_PATH``, ``~/.aws/models``), or a botocore of another version,
    is read as botocore reads it.
    """

    def __init__(self, services: tuple[str, ...], extra_search_paths: list[str] | None = None) -> None:
        super().__init__(extra_search_paths=extra_search_paths)
        self._services = services

    @instance_cache
    def list_available_services(self, type_name: str) -> list[str]:
        available = []
        for service in self._services:
            try:
                self.list_api_versions(service, type_name)
            except DataNotFoundError:  # e.g. a service without paginators, for "paginators-1"
                continue
            available.append(service)
        return available

    @instance_cache
    def load_data_with_path(self, name: str) -> tuple[Any, str]:
        builtin = os.path.join(self.BUILTIN_DATA_PATH, name)
        if name == "endpoints" and self._services == SERVICES:
            customised = [p for p in self._potential_locations(name) if p != builtin and self.file_loader.exists(p)]
            trimmed = json.loads(ENDPOINTS_FILE.read_text(encoding="utf-8"))
            if not customised and trimmed["botocore"] == botocore.__version__:
                return trimmed["endpoints"], builtin
        return super().load_data_with_path(name)


def botocore_session() -> botocore.session.Session:
    """A botocore session whose data loader is the ``ServicesLoader`` (``AWS_DATA_PATH`` still honoured)."""
    session = botocore.session.get_session()
    data_path = session.get_config_variable("data_path")
    paths = [os.path.expanduser(os.path.expandvars(p)) for p in data_path.split(os.pathsep)] if data_path else None
    session.register_component("data_loader", ServicesLoader(SERVICES, extra_search_paths=paths))
    return session
