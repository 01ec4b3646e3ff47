"""The cyclic collector's pause and the session's own collection (``engine.collector``)."""

from __future__ import annotations

import gc

from engine import collector


def _in_generation(obj: object, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation))


def test_collect_young_moves_both_young_generations_to_the_oldest_in_one_pass() -> None:
    """What a session allocated (the youngest generation) and what survived an earlier young collection (the
    middle one) go to the oldest generation together: the middle generation's next collection does not walk the
    session's survivors again (at 20,000 nodes, a 200,000-entry mapping of the pods each session)."""
    with collector.paused():
        older = [[]]  # survived a collection of the youngest generation: now in the middle one
        gc.collect(0)
        assert _in_generation(older, 1)
        younger = [[]]  # allocated since: in the youngest generation
        assert _in_generation(younger, 0)
        collector.collect_young()
        assert gc.get_count()[:2] == (0, 0)
        for obj in (older, younger):
            assert not _in_generation(obj, 0) and not _in_generation(obj, 1)
            assert _in_generation(obj, 2)


def test_paused_nests_and_gives_the_collector_back_as_it_found_it() -> None:
    was = gc.isenabled()
    try:
        gc.enable()
        with collector.paused():
            assert not gc.isenabled()
            with collector.paused():
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert gc.isenabled()
        gc.disable()
        with collector.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
