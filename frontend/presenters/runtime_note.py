"""What a quota group's runtime means when it is below its min (seed 001, ``engine.fairshare.elastic``).

The runtime is what the group may use now. It is at least the group's min, but for two reasons, which the team page
says in words rather than calling the runtime "what you may use" as if it were all the guarantee holds:

* **it asks for less than its min**: a group that lends (``allow_lent``, the default) gets its request as its
  runtime when it asks for less than its (scaled) min, and the rest of its min is lent to the groups that need it;
  the runtime rises with what its pods ask, up to the min, as soon as they ask;
* **its min is scaled down**: when a parent's runtime (the cluster's total for a top group) is less than its
  children's mins add up to (nodes down, or mins promised beyond it), each min is scaled down in proportion
  (``enableMinQuotaScale``, the auto-scaled min); it grows back as capacity returns.
"""

from __future__ import annotations

from frontend.presenters import trees, units


def runtime_note(node: trees.TreeNode, resources: list[str]) -> list[str]:
    """One sentence per resource of ``resources`` whose runtime is below the group's min, saying why (empty when
    the runtime is at least the min everywhere, or for a queue)."""
    if node.kind != "quota":
        return []
    scaled = node.extra.get("auto_scaled_min") or {}
    asked = node.extra.get("limited_request") or {}
    lends = bool(node.extra.get("allow_lent", True))
    parent = "the cluster" if node.parent in (None, "root") else f"{node.parent}"
    out = []
    for r in resources:
        floor, runtime = node.floor.get(r), node.entitled.get(r)
        if floor is None or runtime is None or units.is_unlimited(floor) or runtime >= floor:
            continue
        floor_now = scaled.get(r, floor)
        why = []
        if floor_now < floor:
            why.append(
                f"the mins under {parent} add up to more than {parent} has now (nodes down, or mins promised beyond "
                f"it), so each is scaled down in proportion, yours to {units.human(floor_now, r)}; it grows back as "
                f"capacity returns"
            )
        request = asked.get(r, 0)
        if lends and request < floor_now and runtime <= request:
            why.append(
                f"your pods ask for only {units.human(request, r)}, so the rest of your min is lent to the groups "
                f"that need it; your runtime rises with what your pods ask, up to your min, as soon as they ask"
            )
        if not why:  # the engine's numbers say below, for a reason not named above: say so plainly
            why.append("what your quota group may use now is less than its guarantee")
        out.append(
            f"Runtime {units.human(runtime, r)} is below your guaranteed min of {units.human(floor, r)}: "
            + "; and ".join(why)
            + "."
        )
    return out
