"""``fairway export --format volcano|koordinator|kueue``: the trees as the peers' manifests (``GET /api/v1/export/``).

What the format cannot express (the ``Fairway-Export-Notes`` header) heads YAML output as comments and is printed on
stderr as ``warning:`` lines."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from controlplane.cli.client import EXIT_OK, ApiError, Client, UsageError, error_lines

FORMATS = ("volcano", "koordinator", "kueue")
NOTES_HEADER = "Fairway-Export-Notes"


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    export = sub.add_parser(
        "export",
        help="write the trees as Volcano Queues, Koordinator ElasticQuotas or Kueue ClusterQueues (admins)",
        parents=[common],
    )
    export.add_argument(
        "--format",
        required=True,
        choices=FORMATS,
        help="volcano: queues; koordinator: quota groups; kueue: queues as Cohorts, ClusterQueues, LocalQueues",
    )
    export.add_argument("-f", "--file", help="write to FILE instead of stdout")
    export.add_argument("--cluster", help="whose view of the trees (default: the default cluster)")


def _fetch(client: Client, params: dict[str, str], obj: str) -> tuple[list[Any], list[str]]:
    """The documents and the notes (what the format cannot express) of one export."""
    import requests

    url = f"{client.server}/api/v1/export/"
    try:
        resp = client.session.get(url, params=params, timeout=60)
    except requests.RequestException as exc:
        raise ApiError(0, [f"cannot reach {client.server}: {exc.__class__.__name__}: {exc}"]) from exc
    if resp.status_code >= 400:
        raise ApiError(resp.status_code, error_lines(resp, obj))
    notes = json.loads(resp.headers.get(NOTES_HEADER) or "[]")
    return resp.json() or [], [str(n) for n in notes]


def run(args: argparse.Namespace, client: Client) -> int:
    params = {"format": args.format, "output": "json"}
    if args.cluster:
        params["cluster"] = args.cluster
    docs, notes = _fetch(client, params, f"export {args.format}")
    if args.output == "json":
        text = json.dumps(docs, indent=2) + "\n"
    else:  # table and yaml: manifests are YAML, headed by what the format cannot express
        head = "".join(f"# {line}\n" for line in ([f"Not expressible as {args.format} manifests:"] if notes else []))
        head += "".join(f"# - {note}\n" for note in notes)
        text = head + (yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False) if docs else "")
    for note in notes:
        sys.stderr.write(f"warning: {note}\n")
    if args.file:
        try:
            Path(args.file).write_text(text)
        except OSError as exc:
            raise UsageError(f"--file: cannot write {args.file}: {exc.strerror}") from None
        sys.stderr.write(f"{len(docs)} manifests written to {args.file}\n")
    else:
        sys.stdout.write(text)
    return EXIT_OK
