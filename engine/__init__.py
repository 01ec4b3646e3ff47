"""Fairway's engine: plain Python, no Django anywhere inside.

Fed by snapshots (``engine.objects``), it returns decisions: the fair-share math (``engine.fairshare``), the
only computation of every quota value (``engine.values``), the scheduling session with its framework, actions
and plugins (``engine.session``), the validation rules, the what-if change language, the manifest readers and
``fairway simulate``.
"""
