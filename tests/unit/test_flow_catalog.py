"""The flow catalog: seeding, versions, validation before storage, the TTL cache (manual clock)."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from promptpipe.adapters.memory_flows import InMemoryFlowDefinitionStore
from promptpipe.controller.catalog import DEFAULT_TTL_SECONDS, MAX_PINNED, FlowCatalog
from promptpipe.controller.definition import FlowDefinition, parse_definition
from promptpipe.controller.ports import FlowVersionConflict, StoredFlow
from promptpipe.controller.problems import DefinitionInvalid
from promptpipe.errors import FlowNotFound, FlowPushConflict
from promptpipe.flow.flow_files import load_flow_files
from promptpipe.rules.clock import ManualClock

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


# --- ------------------------------------------------------------------------------------------
# The flow catalog at its edges: TTL boundaries, the pinned-version bound and its LRU order, seeding
# races, push retries, what is stored with each version and the errors (manual clock, in-memory store).


T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def raw_flow(flow_id: str = "tiny", description: str = "") -> dict[str, Any]:
    return {
        "id": flow_id,
        "description": description,
        "primaryGoal": {"type": "STATE", "state": "DONE"},
        "nodes": [{"id": "only", "producesStates": ["DONE"]}],
    }


def tiny(version: int = 1, description: str = "bundled") -> FlowDefinition:
    return parse_definition({**raw_flow(description=description), "version": version})


class CountingStore(InMemoryFlowDefinitionStore):
    """The in-memory store, counting puts and able to refuse the next ``conflicts`` of them."""

    def __init__(self, conflicts: int = 0) -> None:
        super().__init__()
        self.conflicts = conflicts
        self.puts = 0

    def put(self, stored: StoredFlow) -> None:
        self.puts += 1
        if self.conflicts:
            self.conflicts -= 1
            raise FlowVersionConflict("another writer")
        super().put(stored)


# -- the TTL of the latest version ------------------------------------------------------------------


def test_default_ttl_is_sixty_seconds_and_expires_exactly_at_it(clock: ManualClock) -> None:
    assert DEFAULT_TTL_SECONDS == 60.0
    store = InMemoryFlowDefinitionStore()
    flows = FlowCatalog(store, clock, bundled={"tiny": tiny()})  # the default TTL
    FlowCatalog(store, clock, bundled={"tiny": tiny()}).seed("tiny")  # another process seeded it
    flows.latest("tiny")
    reads = store.reads
    clock.advance(timedelta(seconds=59, microseconds=999_999))
    flows.latest("tiny")
    assert store.reads == reads  # still fresh a microsecond before the TTL
    clock.advance(timedelta(microseconds=1))
    flows.latest("tiny")
    assert store.reads == reads + 1  # at the TTL the entry is stale: one read
    flows.latest("tiny")
    assert store.reads == reads + 1  # and the fresh entry is cached again for a TTL from now


def test_a_custom_ttl_is_honoured(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    flows = FlowCatalog(store, clock, bundled={"tiny": tiny()}, ttl_seconds=5)
    flows.latest("tiny")
    reads = store.reads
    clock.advance(timedelta(seconds=4))
    flows.latest("tiny")
    assert store.reads == reads
    clock.advance(timedelta(seconds=1))
    flows.latest("tiny")
    assert store.reads == reads + 1


def test_a_cached_latest_is_per_flow(clock: ManualClock) -> None:
    other = parse_definition(raw_flow("other"))
    flows = FlowCatalog(InMemoryFlowDefinitionStore(), clock, bundled={"tiny": tiny(), "other": other})
    assert flows.latest("tiny").id == "tiny"
    assert flows.latest("other").id == "other"
    assert flows.latest("tiny").id == "tiny"


def test_a_stale_entry_is_reloaded_once_under_the_loading_lock(clock: ManualClock) -> None:
    """The second check under the loading lock: an entry refreshed meanwhile is served as is."""
    store = InMemoryFlowDefinitionStore()
    flows = FlowCatalog(store, clock, bundled={"tiny": tiny()}, ttl_seconds=10)
    flows.latest("tiny")
    clock.advance(timedelta(seconds=10))
    reads = store.reads
    assert flows.latest("tiny").version == 1
    assert store.reads == reads + 1


def test_a_zero_ttl_reads_the_store_every_time(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    flows = FlowCatalog(store, clock, bundled={"tiny": tiny()}, ttl_seconds=0)
    flows.latest("tiny")
    reads = store.reads
    flows.latest("tiny")
    flows.latest("tiny")
    assert store.reads == reads + 2  # the clock did not move: an entry is stale at its own instant


def test_latest_of_a_stored_flow_that_is_not_bundled(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    FlowCatalog(store, clock).push(raw_flow(description="pushed"))
    flows = FlowCatalog(store, clock)
    assert flows.latest("tiny").description == "pushed"
    assert [v.version for v in store.versions("tiny")] == [1]


class BlockingStore(InMemoryFlowDefinitionStore):
    """``latest`` of flow ``slow`` waits until the test releases it (and says when it started)."""

    def __init__(self) -> None:
        super().__init__()
        self.loading = threading.Event()
        self.release = threading.Event()

    def latest(self, flow_id: str) -> StoredFlow | None:
        if flow_id == "slow":
            self.loading.set()
            assert self.release.wait(timeout=60), "the test never released the slow load"
        return super().latest(flow_id)


def test_a_cache_hit_does_not_wait_for_another_flow_loading(clock: ManualClock) -> None:
    store = BlockingStore()
    slow = parse_definition(raw_flow("slow"))
    flows = FlowCatalog(store, clock, bundled={"tiny": tiny(), "slow": slow})
    flows.latest("tiny")
    loader = threading.Thread(target=flows.latest, args=("slow",))
    loader.start()
    try:
        assert store.loading.wait(timeout=60)
        hit = threading.Thread(target=flows.latest, args=("tiny",))
        hit.start()
        hit.join(timeout=30)  # a hit takes microseconds; waiting for the load would take for ever
        assert not hit.is_alive(), "a cached read waited for the load of another flow"
    finally:
        store.release.set()
        loader.join()


class AnnouncedLock:
    """Wraps the catalog's loading lock: tells when a thread other than the first starts waiting."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.second_waiting = threading.Event()
        self._first: threading.Thread | None = None

    def __enter__(self) -> None:
        if self._first is None:
            self._first = threading.current_thread()
        elif threading.current_thread() is not self._first:
            self.second_waiting.set()
        self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def test_a_miss_that_waited_for_a_load_is_served_by_it(clock: ManualClock) -> None:
    """Two concurrent misses: the second waits for the first's load and then reads the cache (one
    store read in all), made deterministic by releasing the load only once the second waits."""
    announced = AnnouncedLock()

    class WaitsForTheSecondMiss(InMemoryFlowDefinitionStore):
        def latest(self, flow_id: str) -> StoredFlow | None:
            if threading.current_thread() is not threading.main_thread():
                assert announced.second_waiting.wait(timeout=60), "the second miss never came"
            return super().latest(flow_id)

    store = WaitsForTheSecondMiss()
    FlowCatalog(store, clock, bundled={"tiny": tiny()}).seed("tiny")  # seeded by another process
    flows = FlowCatalog(store, clock)
    flows._loading = announced  # type: ignore[assignment]  # observe the waiting; behaviour unchanged
    reads = store.reads
    results: list[FlowDefinition] = []
    first = threading.Thread(target=lambda: results.append(flows.latest("tiny")))
    first.start()
    second = threading.Thread(target=lambda: results.append(flows.latest("tiny")))
    second.start()
    first.join()
    second.join()
    assert [d.version for d in results] == [1, 1]
    assert store.reads == reads + 1


def test_a_zero_ttl_miss_that_waited_reloads(clock: ManualClock) -> None:
    """The same race with a zero TTL: the entry the first miss stored is already stale."""
    announced = AnnouncedLock()

    class WaitsForTheSecondMiss(InMemoryFlowDefinitionStore):
        def latest(self, flow_id: str) -> StoredFlow | None:
            if threading.current_thread() is not threading.main_thread() and not announced.second_waiting.is_set():
                assert announced.second_waiting.wait(timeout=60), "the second miss never came"
            return super().latest(flow_id)

    store = WaitsForTheSecondMiss()
    FlowCatalog(store, clock, bundled={"tiny": tiny()}).seed("tiny")
    flows = FlowCatalog(store, clock, ttl_seconds=0)
    flows._loading = announced  # type: ignore[assignment]
    reads = store.reads
    threads = [threading.Thread(target=flows.latest, args=("tiny",)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.reads == reads + 2


# -- pinned versions: cached for good, bounded, least recently used out first -----------------------


def _catalog_with_versions(clock: ManualClock, count: int) -> tuple[FlowCatalog, InMemoryFlowDefinitionStore]:
    store = InMemoryFlowDefinitionStore()
    writer = FlowCatalog(store, clock, bundled={"tiny": tiny()})
    writer.latest("tiny")
    for n in range(2, count + 1):
        writer.push(raw_flow(description=f"v{n}"))
    return FlowCatalog(store, clock, bundled={"tiny": tiny()}), store


def test_the_pinned_cache_holds_max_pinned_versions_and_evicts_the_oldest(clock: ManualClock) -> None:
    assert MAX_PINNED == 64
    flows, store = _catalog_with_versions(clock, MAX_PINNED + 1)
    for version in range(1, MAX_PINNED + 1):
        assert flows.get("tiny", version).description == ("bundled" if version == 1 else f"v{version}")
    reads = store.reads
    for version in range(1, MAX_PINNED + 1):
        flows.get("tiny", version)
    assert store.reads == reads  # exactly MAX_PINNED versions fit
    flows.get("tiny", MAX_PINNED + 1)  # one more: the least recently used (version 1) goes
    reads = store.reads
    flows.get("tiny", 2)
    assert store.reads == reads  # version 2 stayed
    flows.get("tiny", 1)
    assert store.reads == reads + 1  # version 1 was evicted


def test_reading_a_pinned_version_makes_it_the_most_recently_used(clock: ManualClock) -> None:
    flows, store = _catalog_with_versions(clock, MAX_PINNED + 1)
    for version in range(1, MAX_PINNED + 1):
        flows.get("tiny", version)
    flows.get("tiny", 1)  # touched: now version 2 is the least recently used
    flows.get("tiny", MAX_PINNED + 1)
    reads = store.reads
    flows.get("tiny", 1)
    assert store.reads == reads
    flows.get("tiny", 2)
    assert store.reads == reads + 1


def test_remembering_a_known_version_again_refreshes_its_place(clock: ManualClock) -> None:
    """``latest`` re-remembers the version it loads: it must move to the recent end, not keep its place."""
    flows, store = _catalog_with_versions(clock, MAX_PINNED)
    flows.get("tiny", MAX_PINNED)  # the newest version is pinned first: the least recently used
    for version in range(1, MAX_PINNED):
        flows.get("tiny", version)
    assert flows.latest("tiny").version == MAX_PINNED  # loaded from the store and remembered again
    flows.push(raw_flow(description="new"))  # remembers version MAX_PINNED + 1: evicts version 1
    reads = store.reads
    flows.get("tiny", MAX_PINNED)
    assert store.reads == reads
    flows.get("tiny", 1)
    assert store.reads == reads + 1


def test_latest_and_push_pin_what_they_return(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    flows = FlowCatalog(store, clock, bundled={"tiny": tiny()})
    flows.latest("tiny")
    pushed = flows.push(raw_flow(description="two"))
    reads = store.reads
    assert flows.get("tiny", 1).description == "bundled"
    assert flows.get("tiny", 2) == pushed
    assert store.reads == reads


def test_get_reads_a_stored_version_once_and_then_serves_it_from_memory(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    FlowCatalog(store, clock, bundled={"tiny": tiny()}).push(raw_flow(description="pushed"))
    flows = FlowCatalog(store, clock)
    reads = store.reads
    assert flows.get("tiny", 2).description == "pushed"  # version 1 is the bundled one, seeded first
    assert store.reads == reads + 1
    assert flows.get("tiny", 2).description == "pushed"
    assert store.reads == reads + 1


# -- seeding ----------------------------------------------------------------------------------------


def test_seeding_stores_the_bundled_definition_as_version_1_by_seed_at_now(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    flows = FlowCatalog(store, clock, bundled={"tiny": tiny(version=7)})
    clock.advance(timedelta(minutes=3))
    seeded = flows.seed("tiny").definition
    assert seeded.version == 1 and seeded.description == "bundled"
    stored = store.latest("tiny")
    assert stored is not None
    assert (stored.definition, stored.created_by, stored.created_at) == (seeded, "seed", T0 + timedelta(minutes=3))


def test_get_version_1_of_an_unstored_bundled_flow_answers_it_without_storing(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    flows = FlowCatalog(store, clock, bundled={"tiny": tiny()})
    assert flows.get("tiny", 1).version == 1
    assert store.versions("tiny") == []


def test_get_another_version_of_an_unseeded_bundled_flow_seeds_nothing(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    flows = FlowCatalog(store, clock, bundled={"tiny": tiny()})
    with pytest.raises(FlowNotFound, match=r"^tiny version 2$"):
        flows.get("tiny", 2)
    assert store.versions("tiny") == []


def test_get_a_missing_version_of_a_stored_flow_raises(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    flows = FlowCatalog(store, clock, bundled={"tiny": tiny()})
    flows.latest("tiny")
    with pytest.raises(FlowNotFound, match=r"^tiny version 3$"):
        flows.get("tiny", 3)


def test_get_version_1_of_an_unknown_flow_raises_without_storing(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    flows = FlowCatalog(store, clock, bundled={"tiny": tiny()})
    with pytest.raises(FlowNotFound, match=r"^nope version 1$"):
        flows.get("nope", 1)
    assert store.versions("nope") == [] and store.versions("tiny") == []


class LosesVersion1(InMemoryFlowDefinitionStore):
    """A store whose version 1 has gone (expired, deleted) while later versions remain."""

    def get(self, flow_id: str, version: int) -> StoredFlow | None:
        return None if version == 1 else super().get(flow_id, version)


def test_get_version_1_does_not_reseed_a_flow_that_has_versions(clock: ManualClock) -> None:
    store = LosesVersion1()
    FlowCatalog(store, clock, bundled={"tiny": tiny()}).seed("tiny")
    flows = FlowCatalog(store, clock, bundled={"tiny": tiny()})
    with pytest.raises(FlowNotFound, match=r"^tiny version 1$"):
        flows.get("tiny", 1)
    assert [v.version for v in store.versions("tiny")] == [1]


def test_versions_of_a_bundled_flow_seed_it(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    infos = FlowCatalog(store, clock, bundled={"tiny": tiny()}).versions("tiny")
    assert [(v.version, v.created_by, v.created_at) for v in infos] == [(1, "seed", T0)]


def test_versions_of_a_stored_flow_are_listed_without_the_bundle(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    FlowCatalog(store, clock).push(raw_flow(), created_by="ops")  # a catalog without the bundle
    infos = FlowCatalog(store, clock).versions("tiny")
    assert [(v.version, v.created_by) for v in infos] == [(1, "ops")]


def test_versions_of_a_stored_bundled_flow_read_nothing_else(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    FlowCatalog(store, clock, bundled={"tiny": tiny()}).seed("tiny")
    flows = FlowCatalog(store, clock, bundled={"tiny": tiny()})
    reads = store.reads
    assert [v.version for v in flows.versions("tiny")] == [1]
    assert store.reads == reads  # no read of the latest version on the way


def test_versions_of_an_unknown_flow_raise(clock: ManualClock) -> None:
    flows = FlowCatalog(InMemoryFlowDefinitionStore(), clock, bundled={"tiny": tiny()})
    with pytest.raises(FlowNotFound, match=r"^nope$"):
        flows.versions("nope")


def test_latest_of_an_unknown_flow_raises_with_its_id(clock: ManualClock) -> None:
    flows = FlowCatalog(InMemoryFlowDefinitionStore(), clock)
    with pytest.raises(FlowNotFound, match=r"^tiny$"):
        flows.latest("tiny")


class SeededMeanwhile(InMemoryFlowDefinitionStore):
    """Another process seeds the flow between this one's miss and its put."""

    def __init__(self, clock: ManualClock, *, really: bool = True) -> None:
        super().__init__()
        self._clock = clock
        self._really = really
        self.raced = False

    def put(self, stored: StoredFlow) -> None:
        if not self.raced and stored.created_by == "seed":
            self.raced = True
            if self._really:
                other = tiny(description="seeded by the other process")
                super().put(StoredFlow(definition=other, created_at=self._clock.now(), created_by="seed"))
            else:
                raise FlowVersionConflict("refused, yet nothing is stored")
        super().put(stored)


def test_a_seed_that_loses_the_race_returns_the_winner(clock: ManualClock) -> None:
    store = SeededMeanwhile(clock)
    flows = FlowCatalog(store, clock, bundled={"tiny": tiny()})
    assert flows.seed("tiny").definition.description == "seeded by the other process"
    assert [v.version for v in store.versions("tiny")] == [1]


def test_a_seed_conflict_with_nothing_stored_is_raised(clock: ManualClock) -> None:
    flows = FlowCatalog(SeededMeanwhile(clock, really=False), clock, bundled={"tiny": tiny()})
    with pytest.raises(FlowVersionConflict, match="refused, yet nothing is stored"):
        flows.seed("tiny")


# -- validation against the path ---------------------------------------------------------------------


def test_validate_takes_the_id_from_the_path_when_the_body_has_none() -> None:
    body = raw_flow()
    del body["id"]
    definition, problems = FlowCatalog.validate(body, flow_id="tiny")
    assert problems == [] and definition is not None and definition.id == "tiny"
    assert "id" not in body  # the caller's body is not modified


def test_validate_refuses_a_body_id_other_than_the_path() -> None:
    definition, problems = FlowCatalog.validate(raw_flow("other"), flow_id="tiny")
    assert definition is None
    assert [(p.path, p.message) for p in problems] == [("$.id", "'other' does not match the flow in the path ('tiny')")]


def test_validate_accepts_a_body_id_equal_to_the_path() -> None:
    definition, problems = FlowCatalog.validate(raw_flow("tiny"), flow_id="tiny")
    assert problems == [] and definition is not None and definition.id == "tiny"


def test_validate_without_a_path_needs_the_body_id() -> None:
    body = raw_flow()
    del body["id"]
    definition, problems = FlowCatalog.validate(body)
    assert definition is None and [p.path for p in problems] == ["$.id"]


def test_validate_a_body_that_is_not_an_object_reports_it() -> None:
    definition, problems = FlowCatalog.validate(["not", "an", "object"], flow_id="tiny")
    assert definition is None and [p.path for p in problems] == ["$"]


# -- push -------------------------------------------------------------------------------------------


def test_push_stores_who_and_when_and_returns_the_stored_version(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    flows = FlowCatalog(store, clock)
    clock.advance(timedelta(hours=1))
    pushed = flows.push(raw_flow(description="first"), created_by="coordinator")
    stored = store.latest("tiny")
    assert stored is not None
    assert pushed.version == 1 and stored.definition == pushed
    assert (stored.created_by, stored.created_at) == ("coordinator", T0 + timedelta(hours=1))
    assert flows.push(raw_flow(description="second")).version == 2
    assert store.versions("tiny")[1].created_by == ""


def test_push_with_a_path_id_fills_the_body_id(clock: ManualClock) -> None:
    body = raw_flow()
    del body["id"]
    assert FlowCatalog(InMemoryFlowDefinitionStore(), clock).push(body, flow_id="tiny").id == "tiny"


def test_push_of_a_body_for_another_flow_is_refused(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    with pytest.raises(DefinitionInvalid, match=r"^\$\.id: 'other' does not match the flow in the path \('tiny'\)$"):
        FlowCatalog(store, clock).push(raw_flow("other"), flow_id="tiny")
    assert store.versions("tiny") == [] and store.versions("other") == []


def test_push_retries_after_another_writer_took_the_version(clock: ManualClock) -> None:
    store = CountingStore(conflicts=2)
    pushed = FlowCatalog(store, clock).push(raw_flow())
    assert store.puts == 3 and pushed.version == 1
    assert [v.version for v in store.versions("tiny")] == [1]


def test_push_rereads_the_latest_version_on_each_attempt(clock: ManualClock) -> None:
    class Racing(InMemoryFlowDefinitionStore):
        def __init__(self) -> None:
            super().__init__()
            self.raced = False

        def put(self, stored: StoredFlow) -> None:
            if not self.raced:  # someone else stores version 1 just before us
                self.raced = True
                super().put(StoredFlow(definition=tiny(description="theirs"), created_at=T0))
            super().put(stored)

    store = Racing()
    pushed = FlowCatalog(store, clock).push(raw_flow(description="ours"))
    assert pushed.version == 2 and pushed.description == "ours"
    assert [v.version for v in store.versions("tiny")] == [1, 2]


def test_push_gives_up_after_three_conflicts(clock: ManualClock) -> None:
    store = CountingStore(conflicts=3)
    with pytest.raises(FlowPushConflict) as raised:
        FlowCatalog(store, clock).push(raw_flow())
    assert store.puts == 3 and store.versions("tiny") == []
    assert (raised.value.flow_id, raised.value.latest_version) == ("tiny", 0)  # nothing stored: no winner


def test_push_that_loses_every_attempt_names_the_version_that_won(clock: ManualClock) -> None:
    class OtherPushersFirst(InMemoryFlowDefinitionStore):
        """Another coordinator stores a version just before each of this push's attempts."""

        def put(self, stored: StoredFlow) -> None:
            if stored.created_by == "me":
                other = stored.definition.model_copy(update={"description": "theirs"})
                super().put(StoredFlow(definition=other, created_at=clock.now(), created_by="them"))
            super().put(stored)

    store = OtherPushersFirst()
    with pytest.raises(FlowPushConflict) as raised:
        FlowCatalog(store, clock).push(raw_flow(), created_by="me")
    assert raised.value.latest_version == 3
    assert [(v.version, v.created_by) for v in store.versions("tiny")] == [(1, "them"), (2, "them"), (3, "them")]


def test_push_invalidates_only_its_own_flow_in_the_cache(clock: ManualClock) -> None:
    store = InMemoryFlowDefinitionStore()
    other = parse_definition(raw_flow("other"))
    flows = FlowCatalog(store, clock, bundled={"tiny": tiny(), "other": other})
    flows.latest("tiny")
    flows.latest("other")
    reads = store.reads
    flows.push(raw_flow(description="two"))
    reads_by_push = store.reads - reads  # the push reads the latest version once
    assert flows.latest("tiny").description == "two"
    assert flows.latest("other").id == "other"
    assert store.reads == reads + reads_by_push + 1  # tiny reloaded, other still cached
