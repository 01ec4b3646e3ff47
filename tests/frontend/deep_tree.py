"""A queue tree with a six-level branch (root and six levels below it) and long names beside the built-in
``default`` queue, for the tree pages' readability tests (figure and browser)."""

from __future__ import annotations

from typing import Any

from tests.frontend import builders as b

# root > research > natural-language-processing-… > … : six levels under root, the deepest name 63 characters.
BRANCH = (
    "research",
    "natural-language-processing",
    "large-language-models",
    "pretraining-and-continued-pretraining",
    "multilingual-long-context-experiments",
    "multilingual-long-context-experiments-with-a-very-long-name-x1",
)
LEAF = BRANCH[-1]


def six_level_branch(settings: Any) -> None:
    """16 cpu / 2 GPU nodes, queues ``research`` (capability 64 cores) down a six-level branch, a sibling
    ``platform`` (capability 32), jobs running deep in the branch. ``settings`` (pytest-django's) allows depth 6."""
    settings.FAIRWAY = {**settings.FAIRWAY, "MAX_QUEUE_DEPTH": 6}
    for i in range(4):
        b.node(f"n{i}", cpu="16", memory="64Gi")
    parent = "root"
    for depth, name in enumerate(BRANCH):
        cap = {"cpu": str(64 - 8 * depth)}
        b.queue(name, parent, weight=2, capability=cap, deserved={"cpu": str(32 - 4 * depth)})
        parent = name
    b.queue("sibling-at-level-six", BRANCH[-2], capability={"cpu": "8"})
    b.queue("platform", "root", capability={"cpu": "32"}, deserved={"cpu": "16"})
    b.queue("platform-batch", "platform", capability={"cpu": "16"}, deserved={"cpu": "8"})
    b.namespace("deep-ns", queue_name=LEAF)
    b.job("deep-ns", "deep-train", LEAF, 2, {"cpu": "4"}, running=2, on="n0")
