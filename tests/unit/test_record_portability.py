"""A session record reads the same whichever Python 3.11 release wrote it (``engine.vocabulary.Word``,
``engine.objects.NamespaceInfo``): Python 3.11.0 to 3.11.4 pickle an enum member by name through ``builtins.getattr``,
which the records' loader refuses, and replace a slotted frozen dataclass's own ``__setstate__``. Both were seen
on Debian 12's 3.11.2 (the recorded sessions could not be read back)."""

from __future__ import annotations

import io
import pickle
import pickletools

import pytest

from engine.objects import NamespaceInfo, NodeSelectorRequirement
from engine.replay.recorded import RecordError, _Loader
from engine.session.reasons import Reason
from engine.treefields import FieldKind
from engine.vocabulary import BlockerKind, PodGroupPhase, QueueState, TaskStatus, Word


def _globals(data: bytes) -> set[str]:
    """The names a pickle asks its loader for (``STACK_GLOBAL`` after two strings, or ``GLOBAL``)."""
    names, strings = set(), []
    for op, arg, _ in pickletools.genops(data):
        if op.name in {"SHORT_BINUNICODE", "BINUNICODE", "UNICODE"}:
            strings.append(arg)
        elif op.name == "STACK_GLOBAL":
            names.add(".".join(strings[-2:]))
        elif op.name == "GLOBAL":
            names.add(arg.replace(" ", "."))
    return names


@pytest.mark.parametrize("kind", [TaskStatus, QueueState, PodGroupPhase, BlockerKind, Reason, FieldKind])
def test_every_word_pickles_by_value_and_loads_through_the_records_loader(kind: type[Word]) -> None:
    assert issubclass(kind, Word)
    for member in kind:
        data = pickle.dumps(member, protocol=pickle.HIGHEST_PROTOCOL)
        assert "builtins.getattr" not in _globals(data), kind
        back = _Loader(io.BytesIO(data)).load()
        assert back is member


def test_the_loader_still_refuses_getattr() -> None:
    by_name = pickle.dumps((getattr, (TaskStatus, "RUNNING")))
    with pytest.raises(RecordError, match=r"builtins\.getattr"):
        _Loader(io.BytesIO(by_name)).load()


def test_a_namespace_keeps_its_own_setstate_and_round_trips() -> None:
    assert NamespaceInfo.__setstate__.__name__ == "_setstate_with_defaults"
    assert NodeSelectorRequirement.__setstate__.__name__ == "_setstate_with_defaults"
    now = NamespaceInfo(name="nlp", weight=2, labels=(("team", "nlp"),))
    assert _Loader(io.BytesIO(pickle.dumps(now, protocol=pickle.HIGHEST_PROTOCOL))).load() == now
