"""``fairway export --format volcano|koordinator``: the trees as the peers' manifests (``GET /api/v1/export/``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from controlplane.cli.client import EXIT_OK, Client, UsageError

FORMATS = ("volcano", "koordinator")


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    export = sub.add_parser(
        "export",
        help="write the trees as Volcano Queues or Koordinator ElasticQuotas (admins)",
        parents=[common],
    )
    export.add_argument("--format", required=True, choices=FORMATS, help="volcano: queues; koordinator: quota groups")
    export.add_argument("-f", "--file", help="write to FILE instead of stdout")
    export.add_argument("--cluster", help="whose view of the trees (default: the default cluster)")


def run(args: argparse.Namespace, client: Client) -> int:
    params = {"format": args.format, "output": "json"}
    if args.cluster:
        params["cluster"] = args.cluster
    docs = client.call("GET", "export/", params=params, obj=f"export {args.format}") or []
    if args.output == "json":
        text = json.dumps(docs, indent=2) + "\n"
    else:  # table and yaml: manifests are YAML
        text = yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False) if docs else ""
    if args.file:
        try:
            Path(args.file).write_text(text)
        except OSError as exc:
            raise UsageError(f"--file: cannot write {args.file}: {exc.strerror}") from None
        sys.stderr.write(f"{len(docs)} manifests written to {args.file}\n")
    else:
        sys.stdout.write(text)
    return EXIT_OK
