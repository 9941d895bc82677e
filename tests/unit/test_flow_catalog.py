"""The flow catalog: seeding, versions, validation before storage, the TTL cache (manual clock)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from promptpipe.adapters.memory_flows import InMemoryFlowDefinitionStore
from promptpipe.clock import ManualClock
from promptpipe.controller.catalog import FlowCatalog
from promptpipe.controller.definition import DefinitionInvalid
from promptpipe.controller.ports import FlowVersionConflict, StoredFlow
from promptpipe.errors import FlowNotFound, FlowPushConflict
from promptpipe.flow.flow_files import load_flow_files

FLOWS_DIR = Path(__file__).parents[2] / "prompts" / "flows"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))


def catalog(clock: ManualClock, store: InMemoryFlowDefinitionStore | None = None) -> FlowCatalog:
    return FlowCatalog(
        store or InMemoryFlowDefinitionStore(), clock, bundled=load_flow_files(FLOWS_DIR), ttl_seconds=60
    )


def intake_raw() -> dict:
    return json.loads((FLOWS_DIR / "intake.json").read_text())


def test_reading_an_unstored_bundled_flow_answers_version_1_and_writes_nothing(clock: ManualClock) -> None:
    # The worker reads flows and has no right to write them: its read must not store anything
    store = InMemoryFlowDefinitionStore()
    assert catalog(clock, store).latest("intake").version == 1
    assert catalog(clock, store).get("intake", 1).version == 1
    assert store.versions("intake") == []


def test_bundled_flow_is_seeded_once_as_version_1(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    flows = catalog(clock, store)
    assert flows.seed("intake").definition.version == 1
    assert [v.version for v in store.versions("intake")] == [1]
    assert store.versions("intake")[0].created_by == "seed"
    assert catalog(clock, store).seed("intake").definition.version == 1  # a second process does not re-seed
    assert [v.version for v in store.versions("intake")] == [1]


def test_unknown_flow_raises(clock: ManualClock) -> None:
    with pytest.raises(FlowNotFound):
        catalog(clock).latest("nope")
    with pytest.raises(FlowNotFound):
        catalog(clock).versions("nope")


def test_push_assigns_the_next_version_and_pins_old_versions(clock: ManualClock) -> None:
    flows = catalog(clock)
    flows.latest("intake")
    raw = intake_raw()
    raw["version"] = 77  # ignored: versions are assigned
    raw["nodes"][0]["objective"] = "Ask what they want to get better at."
    stored = flows.push(raw, created_by="arn:aws:iam::1:user/coordinator")
    assert stored.version == 2
    assert flows.latest("intake").nodes[0].objective == "Ask what they want to get better at."
    assert flows.get("intake", 1).nodes[0].objective != stored.nodes[0].objective
    assert [v.created_by for v in flows.versions("intake")] == ["seed", "arn:aws:iam::1:user/coordinator"]


def test_invalid_push_stores_nothing(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    flows = catalog(clock, store)
    raw = intake_raw()
    raw["id"] = "custom"
    raw["primaryGoal"] = {"type": "GATE", "gate": "MISSING"}
    with pytest.raises(DefinitionInvalid) as caught:
        flows.push(raw)
    assert "$.primaryGoal.gate" in {p.path for p in caught.value.problems}
    assert store.versions("custom") == []


def test_latest_is_cached_for_the_ttl_and_a_push_here_invalidates_it(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    flows = catalog(clock, store)
    flows.latest("intake")
    reads = store.reads
    for _ in range(5):
        flows.latest("intake")
    assert store.reads == reads  # served from the cache

    # Another process pushes version 2: this one sees it only after the TTL.
    other = catalog(clock, store)
    raw = intake_raw()
    raw["description"] = "v2"
    other.push(raw)
    assert flows.latest("intake").version == 1
    clock.advance(timedelta(seconds=61))
    assert flows.latest("intake").version == 2

    raw["description"] = "v3"
    flows.push(raw)
    assert flows.latest("intake").version == 3  # own push: at once


def test_pinned_versions_are_cached(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    flows = catalog(clock, store)
    flows.latest("intake")
    flows.get("intake", 1)
    reads = store.reads
    clock.advance(timedelta(hours=5))
    flows.get("intake", 1)
    assert store.reads == reads


def test_store_refuses_a_version_that_is_not_next(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    definition = catalog(clock, store).seed("intake").definition
    with pytest.raises(FlowVersionConflict):
        store.put(StoredFlow(definition=definition, created_at=clock.now()))


def test_concurrent_misses_read_the_store_once(clock: ManualClock) -> None:
    import threading

    store = InMemoryFlowDefinitionStore()
    catalog(clock, store).latest("intake")  # seeded by another process
    flows = catalog(clock, store)
    reads = store.reads
    barrier = threading.Barrier(8)

    def read() -> None:
        barrier.wait()
        flows.latest("intake")

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.reads == reads + 1


class RacingStore(InMemoryFlowDefinitionStore):
    """The in-memory store, where ``before_put`` runs just before the next put (another process)."""

    def __init__(self) -> None:
        super().__init__()
        self.before_put: list = []

    def put(self, stored: StoredFlow) -> None:
        if self.before_put:
            self.before_put.pop(0)()
        super().put(stored)

    def write_next(self, flow_id: str, created_by: str) -> None:
        """Another process storing the next version (without running the hooks)."""
        latest = self.latest(flow_id)
        assert latest is not None
        definition = latest.definition.model_copy(update={"version": latest.definition.version + 1})
        super().put(StoredFlow(definition=definition, created_at=latest.created_at, created_by=created_by))


def test_the_versions_of_an_unseeded_flow_seed_it_and_a_pinned_read_does_not(clock: ManualClock) -> None:
    # Given a fresh store: nothing seeded yet
    store = InMemoryFlowDefinitionStore()
    # When version 1 is asked for by number / Then the bundled flow is returned, nothing stored
    assert catalog(clock, store).get("intake", 1).version == 1
    assert store.versions("intake") == []
    # And listing the versions of an unseeded flow (the flows API) seeds it
    other = InMemoryFlowDefinitionStore()
    assert [(v.version, v.created_by) for v in catalog(clock, other).versions("intake")] == [(1, "seed")]
    # But a version above 1 is not made up
    with pytest.raises(FlowNotFound, match=r"^intake version 2$"):
        catalog(clock, InMemoryFlowDefinitionStore()).get("intake", 2)


def test_a_push_racing_another_push_is_stored_as_the_next_version(clock: ManualClock) -> None:
    # Given a second process that pushes just before this one writes
    store = RacingStore()
    flows, other = catalog(clock, store), catalog(clock, store)
    flows.latest("intake")
    raw = intake_raw()
    store.before_put.append(lambda: other.push({**raw, "description": "theirs"}, created_by="other"))
    # When this process pushes / Then its write conflicts once and lands as the version after theirs
    mine = flows.push({**raw, "description": "mine"}, created_by="me")
    assert mine.version == 3
    assert [(v.version, v.created_by) for v in store.versions("intake")] == [(1, "seed"), (2, "other"), (3, "me")]
    assert flows.latest("intake").description == "mine"


def test_a_push_that_keeps_losing_gives_up_with_the_conflict(clock: ManualClock) -> None:
    # Given another process storing a version just before each of this one's three writes
    store = RacingStore()
    flows = catalog(clock, store)
    flows.seed("intake")
    store.before_put.extend(lambda: store.write_next("intake", "other") for _ in range(3))
    # When this one pushes / Then it gives up after three tries, naming the version that won, storing nothing
    with pytest.raises(FlowPushConflict, match=r"^flow 'intake' changed while pushing: version 4 is the latest$"):
        flows.push(intake_raw(), created_by="me")
    assert [v.created_by for v in store.versions("intake")] == ["seed", "other", "other", "other"]
    assert flows.latest("intake").version == 4  # the stale cached version 1 was dropped


def test_seeding_that_loses_to_another_process_uses_its_seed(clock: ManualClock) -> None:
    # Given two processes seeding the same flow at once, the other one first
    store = RacingStore()
    other = catalog(clock, store)
    store.before_put.append(lambda: other.seed("intake"))
    # When this one seeds / Then it takes the stored version 1 rather than failing
    assert catalog(clock, store).seed("intake").definition.version == 1
    assert len(store.versions("intake")) == 1


def test_only_the_64_most_recent_pinned_versions_are_kept(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    flows = catalog(clock, store)
    raw = intake_raw()
    for _ in range(70):
        flows.push(raw)
    reads = store.reads
    flows.get("intake", 70)  # recent: from memory
    assert store.reads == reads
    flows.get("intake", 2)  # evicted: read again
    assert store.reads == reads + 1
