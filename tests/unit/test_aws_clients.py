"""``adapters.aws`` and ``infra.aws_sdk``: the clients come from one botocore session with botocore's own
data loader; the Lambda assets narrow that data at build time to the services the code calls, and
the narrowed endpoint data resolves those services exactly as the full data does (cold start,
docs/benchmarks.md section 2)."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from pathlib import Path
from typing import Any

import botocore
import botocore.loaders
import botocore.session
import pytest
from botocore.exceptions import BotoCoreError

from infra.aws_sdk import SERVICES, narrow_aws_sdk, trim_endpoints
from promptpipe.adapters import aws
from promptpipe.settings import Settings

REPO = Path(__file__).resolve().parents[2]


def test_every_service_the_code_makes_a_client_for_is_one_the_assets_keep() -> None:
    named = set()
    package = Path(aws.__file__).resolve().parents[1]  # promptpipe/, wherever the tree keeps it (mutation runs)
    for path in [*package.rglob("*.py"), *(REPO / "functions").rglob("*.py")]:
        named |= set(re.findall(r"aws_client\(\s*\"([a-z0-9-]+)\"", path.read_text()))
    assert named, "no aws_client call found: the pattern is stale"
    assert named <= set(SERVICES)


def test_clients_are_made_by_one_session_with_botocores_own_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aws, "_sessions", [])
    client = aws.aws_client("sqs", Settings(aws_region="eu-west-1"))
    aws.aws_client("dynamodb", Settings(aws_region="eu-west-1"))
    assert client.meta.region_name == "eu-west-1"
    assert len(aws._sessions) == 1
    assert type(aws._sessions[0].get_component("data_loader")) is botocore.loaders.Loader
    assert "sts" in aws._sessions[0].get_available_services()  # role profiles need it (the CLI)


def test_our_services_resolve_to_the_same_endpoints_with_the_trimmed_data_in_every_region() -> None:
    from botocore.regions import EndpointResolver

    full = botocore.loaders.Loader().load_data("endpoints")
    trimmed = trim_endpoints(full)
    assert sum(len(p["services"]) for p in trimmed["partitions"]) < sum(len(p["services"]) for p in full["partitions"])
    before, after = EndpointResolver(full, uses_builtin_data=True), EndpointResolver(trimmed, uses_builtin_data=True)
    regions = [region for partition in full["partitions"] for region in partition["regions"]]
    assert len(regions) > 30
    for service in SERVICES:
        assert after.get_available_endpoints(service) == before.get_available_endpoints(service)
        for region in regions:
            for fips, dualstack in itertools.product((False, True), repeat=2):
                variant = {"use_fips_endpoint": fips, "use_dualstack_endpoint": dualstack}
                assert _outcome(after, service, region, variant) == _outcome(before, service, region, variant)
    assert after.get_available_partitions() == before.get_available_partitions()


def _outcome(resolver: Any, service: str, region: str, variant: dict[str, bool]) -> Any:
    try:
        return resolver.construct_endpoint(service, region, **variant)
    except BotoCoreError as exc:  # the same refusal either way (a variant a partition lacks)
        return type(exc), str(exc)


def test_a_narrowed_copy_of_the_installed_botocore_makes_our_clients_with_the_stock_loader(tmp_path: Path) -> None:
    """What the asset does in Lambda: botocore's stock loader over the narrowed data finds our
    services, refuses others, and lists only ours."""
    data = Path(botocore.__file__).parent / "data"
    copy = tmp_path / "botocore" / "data"
    copy.mkdir(parents=True)
    for path in data.iterdir():
        if path.is_file():
            (copy / path.name).write_bytes(path.read_bytes())
        elif path.name in SERVICES:
            (copy / path.name).symlink_to(path)
        elif path.name == "sts":  # one the functions do not call: dropped
            shutil.copytree(path, copy / path.name)
    narrow_aws_sdk(tmp_path)
    assert sorted(p.name for p in copy.iterdir() if p.is_dir()) == sorted(SERVICES)
    endpoints = json.loads((copy / "endpoints.json").read_text())
    assert endpoints == trim_endpoints(botocore.loaders.Loader().load_data("endpoints"))

    loader = botocore.loaders.Loader(extra_search_paths=[str(copy)], include_default_search_paths=False)
    session = botocore.session.get_session()
    session.register_component("data_loader", loader)
    assert sorted(session.get_available_services()) == sorted(SERVICES)
    client = session.create_client(
        "dynamodb", region_name="eu-west-1", aws_access_key_id="k", aws_secret_access_key="s"
    )
    assert client.meta.endpoint_url == "https://dynamodb.eu-west-1.amazonaws.com"
