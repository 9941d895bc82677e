"""``adapters.aws`` and ``adapters.botocore_data``: the clients come from one botocore session whose
loader is told which services the application uses (cold start, docs/benchmarks.md section 2)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import botocore
import botocore.loaders
import botocore.session
import pytest
from botocore.exceptions import BotoCoreError, UnknownServiceError

from promptpipe.adapters import aws, botocore_data
from promptpipe.settings import Settings

REPO = Path(__file__).resolve().parents[2]


def test_every_service_the_code_makes_a_client_for_is_one_the_loader_knows() -> None:
    named = set()
    package = Path(aws.__file__).resolve().parents[1]  # promptpipe/, wherever the tree keeps it (mutation runs)
    for path in [*package.rglob("*.py"), *(REPO / "functions").rglob("*.py")]:
        named |= set(re.findall(r"aws_client\(\s*\"([a-z0-9-]+)\"", path.read_text()))
    assert named, "no aws_client call found: the pattern is stale"
    assert named <= set(botocore_data.SERVICES)


@pytest.mark.parametrize("service", botocore_data.SERVICES)
@pytest.mark.parametrize("kind", ["service-2", "endpoint-rule-set-1", "paginators-1"])
def test_the_loader_loads_each_model_exactly_as_botocore_does(service: str, kind: str) -> None:
    ours, botocores = botocore_data.ServicesLoader(botocore_data.SERVICES), botocore.loaders.Loader()
    if service not in botocores.list_available_services(kind):  # e.g. a service without paginators
        assert service not in ours.list_available_services(kind)
        return
    assert ours.load_service_model(service, kind) == botocores.load_service_model(service, kind)


def test_the_loader_lists_only_the_named_services_and_refuses_others_as_botocore_does() -> None:
    loader = botocore_data.ServicesLoader(("dynamodb", "no-such-service"))
    assert loader.list_available_services("service-2") == ["dynamodb"]
    with pytest.raises(UnknownServiceError):
        loader.load_service_model("s3", "service-2")


def test_clients_are_made_by_the_session_with_that_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aws, "_sessions", [])
    client = aws.aws_client("sqs", Settings(aws_region="eu-west-1"))
    assert client.meta.region_name == "eu-west-1"
    assert isinstance(aws._sessions[0].get_component("data_loader"), botocore_data.ServicesLoader)


def test_aws_data_path_is_still_searched_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AWS_DATA_PATH", str(tmp_path))
    loader = botocore_data.botocore_session().get_component("data_loader")
    assert loader.search_paths[0] == str(tmp_path)
    assert loader.search_paths[1:] == botocore.loaders.Loader().search_paths


def test_the_trimmed_endpoint_data_is_that_of_the_installed_botocore() -> None:
    """Fails after a botocore upgrade that changed the data: run ``python -m scripts.trim_aws_endpoints``."""
    from scripts.trim_aws_endpoints import trimmed_endpoints_text

    assert botocore_data.ENDPOINTS_FILE.read_text(encoding="utf-8") == trimmed_endpoints_text()


def test_our_services_resolve_to_the_same_endpoints_with_the_trimmed_data_in_every_region() -> None:
    from botocore.regions import EndpointResolver

    full = botocore.loaders.Loader().load_data("endpoints")
    ours = botocore_data.ServicesLoader(botocore_data.SERVICES)
    trimmed, path = ours.load_data_with_path("endpoints")
    assert path == str(Path(botocore.loaders.Loader.BUILTIN_DATA_PATH) / "endpoints")  # read as botocore's own
    before, after = EndpointResolver(full, uses_builtin_data=True), EndpointResolver(trimmed, uses_builtin_data=True)
    regions = [region for partition in full["partitions"] for region in partition["regions"]]
    assert len(regions) > 30
    for service in botocore_data.SERVICES:
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


def test_another_botocore_version_reads_its_own_endpoint_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(botocore, "__version__", "0.0.1")
    data, _ = botocore_data.ServicesLoader(botocore_data.SERVICES).load_data_with_path("endpoints")
    assert data == botocore.loaders.Loader().load_data("endpoints")
    assert len(data["partitions"][0]["services"]) > 100


def test_endpoint_data_on_a_search_path_before_botocores_is_read_as_botocore_reads_it(tmp_path: Path) -> None:
    (tmp_path / "endpoints.json").write_text('{"partitions": [], "version": 3}')
    loader = botocore_data.ServicesLoader(botocore_data.SERVICES, extra_search_paths=[str(tmp_path)])
    assert loader.load_data_with_path("endpoints") == ({"partitions": [], "version": 3}, str(tmp_path / "endpoints"))
