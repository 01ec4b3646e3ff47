"""Create (or extend) a node agent's credential: a user in the ``node-agents`` group, bound to one node or to a named
pool of nodes of a cluster, and its API token, printed on stdout.

    manage.py create_node_agent agent-gpu-01 --node gpu-01
    manage.py create_node_agent agent-gpu --pool gpu --cluster default

Run it again with another ``--node``/``--pool`` to bind the same user to more nodes: its token stays valid, and is
not printed again (only its hash is kept); ``--new-token`` makes another one (revoke the old one on the Tokens page
or in the admin). The user gets no password (it logs in with the token only). The token expires after
``--days`` (default ``FAIRWAY_TOKEN_LIFETIME_DAYS``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from engine import rules
from scheduling.agent_access import NODE_AGENTS_GROUP
from scheduling.models import Cluster, Node, NodeAgentBinding
from security.models import ApiToken
from security.tokens import create_token


class Command(BaseCommand):
    help = "Create a node agent user bound to one node (--node) or a pool of nodes (--pool), and print its token."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--node", help="the node the agent acts for (by name; it may register it)")
        target.add_argument("--pool", help="the pool of nodes the agent acts for (Node.pool)")
        parser.add_argument("--cluster", default=None, help="the cluster (default: the default cluster)")
        parser.add_argument("--new-token", action="store_true", help="make a new token even if the agent has one")
        parser.add_argument("--days", type=int, default=None, help="the token's lifetime in days")

    def handle(self, *args: Any, **options: Any) -> None:
        cluster_name = options["cluster"] or settings.FAIRWAY["DEFAULT_CLUSTER"]
        node, pool = options["node"] or "", options["pool"] or ""
        errors = (
            rules.validate_dns_subdomain(node, what="node name")
            if node
            else rules.validate_dns_label(pool, what="pool")
        )
        if errors:
            raise CommandError(errors[0].message)
        errors = rules.validate_dns_subdomain(options["username"], what="username")
        if errors:
            raise CommandError(errors[0].message)
        try:
            cluster = Cluster.objects.get(name=cluster_name)
        except Cluster.DoesNotExist:
            raise CommandError(f"cluster {cluster_name} does not exist") from None
        User = get_user_model()
        with transaction.atomic():
            user, created = User.objects.get_or_create(username=options["username"])
            if created:
                user.set_unusable_password()
                user.save()
            elif user.is_staff:
                raise CommandError(f"user {user.username} is staff (it acts for every node); pick another name")
            user.groups.add(Group.objects.get_or_create(name=NODE_AGENTS_GROUP)[0])
            NodeAgentBinding.objects.get_or_create(user=user, cluster=cluster, node=node, pool=pool)
            key = None
            if options["new_token"] or not ApiToken.objects.live().filter(user=user).exists():
                try:
                    _, key = create_token(user, "node agent", days=options["days"])
                except DjangoValidationError as exc:
                    raise CommandError(f"--days: {exc.message_dict['expires_in_days'][0]}") from None
        what = f"node {node}" if node else f"pool {pool}"
        if pool and not Node.objects.filter(cluster=cluster, pool=pool).exists():
            self.stderr.write(f"note: no node of cluster {cluster.name} is in pool {pool} yet")
        self.stderr.write(
            f"{'created' if created else 'updated'} node agent {user.username} for {what} (cluster {cluster.name})"
        )
        if key is None:
            self.stderr.write(
                "its token is unchanged and not shown again (only its hash is kept); --new-token makes another"
            )
        else:
            self.stdout.write(key)
