"""Tree validation rules for queues, elastic quota groups and podgroups, with their messages (one module per object:
``queues``, ``quota_groups``, ``podgroups``; ``tree`` holds what both trees share, ``common`` the error type and codes).

Every writer (the REST API, the Django admin, the YAML importer, ``fairway simulate`` and the what-if
endpoint) calls these functions *before* it writes anything, so one change gets one answer everywhere.
The module is pure: it reads the current tree (a mapping of name -> spec, *without* the change), the
proposed spec and, for updates, the old spec, plus a few counted facts (podgroups, pods, namespaces)
passed in by the caller. It never mutates its inputs.

Every validator returns ``list[FieldError]``; an empty list means "accept". ``check(errors)`` raises
``RuleViolation`` for callers that prefer an exception. A ``FieldError`` carries

* ``field``: the API field path (``"parent"``, ``"deserved.cpu"``, ``"min.memory"``, ``"state"``, ...;
  ``"non_field_errors"`` for whole-object problems),
* ``message``: one sentence naming the object, the field and the numbers, amounts printed in the units people
  read, the same way on both sides (cores ``2.5``, memory ``1.5Gi``, ``unlimited``;
  ``"queue team-a: deserved cpu 2 must be <= capability cpu 1"``),
* ``code``: a stable machine code (see ``CODES``).

Queues (Volcano semantics, ``pkg/webhooks/admission/queues/validate`` and ``pkg/controllers/queue``)
-----------------------------------------------------------------------------------------------------
* Depth counts edges from ``root``: a child of root has depth 1 and a queue is accepted while its depth is
  ``<= max_depth`` (Volcano's ``validateQueueDepth``: with ``--max-queue-depth=5`` root plus five levels).
  Unlike Volcano, a re-parented queue's whole subtree must fit, not only the queue itself.
* ``root`` is unlimited where it sets nothing: Volcano skips every sum check below root because the
  scheduler rewrites root's limits from the cluster total. Here a dimension that root's field defines is
  checked like any parent's; a dimension it leaves unset is unlimited. Below any other parent a missing
  dimension counts as 0 (Volcano's ``LessPartly`` on ``api.Resource``), so a child cannot deserve or
  guarantee a resource its parent leaves unset.
* A capability key that is *present* limits, even at 0 (``ResourceList`` keeps explicit zeros). Volcano
  treats a 0 capability as "not set" because its ``api.Resource`` cannot tell them apart.
* The whole-tree checks (``validate_queue_tree``, ``validate_quota_tree``, and ``queue_tree_errors`` /
  ``quota_tree_errors`` node by node) are linear in the nodes: each parent chain is walked once (``_TreeView.place``
  remembers every node's depth or why it never reaches the root), the capability bounds above and below a node are
  memoised, and only the first node past the depth on a branch is reported (the ones below it are not checked), so a
  20,000-level chain is refused in milliseconds. A ``checkpoint`` callable (a request's deadline) is called as they go.
* Structural checks (self-parent, cycle, missing parent, depth, parent with podgroups) run on create, on
  rename and when the parent changes; the resource-hierarchy checks run on create, rename, parent change or
  a change of capability/deserved/guarantee (Volcano's ``needsValidateHierarchicalQueue``). A moved
  queue's descendants are checked against their new ancestors' capabilities too (Volcano only checks the
  moved queue). ``validate_queue_tree`` re-checks everything for a whole snapshot.
* A queue can become a parent only while it has no podgroups and no allocated pods, and this is checked
  only when it has no children yet (a parent's counts are its children's aggregate, as in Volcano).

Queue state (volcano.md §7.1): ``plan_queue_action`` closes a queue (Closed, or Closing while podgroups
remain) and every descendant not already Closed/Closing, marking those closed-by-parent; opening a queue
reopens the descendants it closed. A child cannot open under a Closed/Closing parent and ``root`` cannot
close. Deliberate difference: an explicit close clears the queue's own closed-by-parent mark (Volcano
keeps the annotation), so reopening the parent does not reopen a queue an admin closed on purpose.

Quota groups (Koordinator ``pkg/webhook/elasticquota``, seed 001 "Configuration Limit")
-----------------------------------------------------------------------------------
* ``root`` and ``system`` cannot be modified and no built-in can be deleted or renamed (Koordinator's
  ``IsForbiddenModify``). ``default`` may change its min, max, shared weight, lending and min-scale flags,
  but not its parent, ``is_parent`` or ``tree_id``. Creating a built-in is allowed (bootstrap) in its fixed
  shape: ``root`` without a parent, ``system`` and ``default`` as leaves directly under ``root``.
* A group with ``parent=None`` other than ``root`` is the root of a separate tree and must carry a
  ``tree_id``; the min-sum checks skip tree roots (Koordinator rule 8).
* Max keys must be a subset of the parent's max keys: Koordinator's relaxed key rule (feature gate
  ``ElasticQuotaEnableUpdateResourceKey``), chosen so a resource can be added to a tree top-down.
* Re-parenting gets an explicit ancestry (cycle) check, which Koordinator lacks, and a depth bound
  (``max_depth``, ``FAIRWAY_MAX_QUOTA_GROUP_DEPTH``, 10 by default), which Koordinator lacks too: a group created,
  moved or renamed sits, with its subtree, at most that many levels below its tree's root.
* Not reproduced: ``max-strict-check-resource-keys`` (max >= used), ``allow-force-update`` and the
  ``ElasticQuotaGuaranteeUsage`` guaranteed-min walk.

PodGroups (Volcano ``podgroups/validate`` and ``jobs/validate``, seed 003 admission webhook): the queue
must exist, be Open, not be root and be a leaf; the namespace's podgroups' ``minResources`` together must
stay within the namespace's ResourceQuota on every resource that quota defines.
"""

from __future__ import annotations

from engine.objects import QUEUE_STATES
from engine.rules.common import (
    CODES,
    MAX_PRIORITY,
    MAX_WEIGHT,
    FieldError,
    GroupFacts,
    QueueFacts,
    RuleViolation,
    check,
    name_whitespace_error,
    validate_dns_label,
    validate_dns_subdomain,
    validate_labels,
)
from engine.rules.podgroups import validate_podgroup
from engine.rules.priority_range import PriorityRange, hold_to_range, priority_range, validate_priority_range
from engine.rules.queues import (
    plan_queue_action,
    plan_queue_delete,
    queue_field_errors,
    queue_tree_errors,
    settle_queue_state,
    validate_queue,
    validate_queue_action,
    validate_queue_delete,
    validate_queue_tree,
)
from engine.rules.quota_groups import (
    fill_quota_group_defaults,
    group_field_errors,
    quota_tree_errors,
    validate_pod_quota_group,
    validate_quota_group,
    validate_quota_group_delete,
    validate_quota_tree,
)
from engine.rules.warnings import queue_warnings, quota_group_warnings

__all__ = [
    "CODES",
    "MAX_PRIORITY",
    "MAX_WEIGHT",
    "QUEUE_STATES",
    "FieldError",
    "GroupFacts",
    "PriorityRange",
    "QueueFacts",
    "RuleViolation",
    "check",
    "fill_quota_group_defaults",
    "group_field_errors",
    "hold_to_range",
    "name_whitespace_error",
    "plan_queue_action",
    "plan_queue_delete",
    "priority_range",
    "queue_field_errors",
    "queue_tree_errors",
    "queue_warnings",
    "quota_group_warnings",
    "quota_tree_errors",
    "settle_queue_state",
    "validate_dns_label",
    "validate_dns_subdomain",
    "validate_labels",
    "validate_pod_quota_group",
    "validate_podgroup",
    "validate_priority_range",
    "validate_queue",
    "validate_queue_action",
    "validate_queue_delete",
    "validate_queue_tree",
    "validate_quota_group",
    "validate_quota_group_delete",
    "validate_quota_tree",
]
