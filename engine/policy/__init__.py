"""The scheduler policy (``policy``: Volcano's scheduler configuration, read and typed) and the arguments of the
actions (``enqueue``, ``minruntime``) and of fairness over time (``fairness``); each plugin's own arguments are read
in its folder (``engine/session/plugins/<name>/arguments.py``). Below the session: the objects, the values and the
session all read the policy, and nothing here imports them."""
