"""Shared fixtures: users for the permission matrix, API clients with tokens."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from io import StringIO
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.support import migrated_sqlite, pg_template

T = TypeVar("T")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Modules with a ``slow`` test run first, the rest after them in collection order.

    Under ``make test`` (xdist, ``--dist loadscope --no-loadscope-reorder``) each module goes to one worker in this
    order, so the few long modules (schemathesis, the soak, the outages, ``make run``) start at once and the many
    short ones fill the other worker around them, instead of one long module running alone at the end.

    Before them, ``ONE_WORKER_FOLDERS``: each is one unit of a few minutes on one worker (the real API server's
    folder), which dealt out in the middle of the run was the last to finish, alone on a worker.
    """
    slow_modules = {item.module for item in items if item.get_closest_marker("slow") is not None}

    def group(item: pytest.Item) -> int:
        if item.nodeid.startswith(ONE_WORKER_FOLDERS):
            return 0
        return 1 if item.module in slow_modules else 2

    items.sort(key=group)  # stable: collection order within each group


# Folders whose modules share a costly process per test worker: under ``--dist loadscope`` they go to one worker as one
# unit, so it is started once (not once per worker that got one of their modules) and stopped when they are done.
ONE_WORKER_FOLDERS = ("tests/kube/real/",)  # a real etcd and kube-apiserver (the ``control_plane`` fixture)


@pytest.hookimpl(optionalhook=True)  # xdist's hook: a run without xdist (-p no:xdist) does not know it
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadscope`` as usual (one module to one worker), with each of ``ONE_WORKER_FOLDERS`` as one unit."""
    if config.getoption("dist", None) != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FoldersTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            folder = next((f for f in ONE_WORKER_FOLDERS if nodeid.startswith(f)), None)
            return folder or super()._split_scope(nodeid)

    return FoldersTogether(config, log)


def _session_root(factory: pytest.TempPathFactory) -> Path:
    """The base temporary folder of the whole run: the same for every xdist worker of it."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def migrated_sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated once for the run (``tests.support.migrated_sqlite``): copy it, never write to it. A
    pytest run in a subprocess that was handed one (``FAIRWAY_TEST_SQLITE_TEMPLATE``) uses that one."""
    handed = os.environ.get(migrated_sqlite.ENV)
    return Path(handed) if handed else migrated_sqlite.template(_session_root(tmp_path_factory))


@pytest.fixture(scope="session")
def demo_sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """That file with ``make run``'s demo loaded, once for the run: copy it, never write to it."""
    return migrated_sqlite.demo_template(_session_root(tmp_path_factory))


def _sqlite_template() -> Path | None:
    """The migrated template this run's test database is copied from, if any: ``FAIRWAY_TEST_SQLITE_TEMPLATE``
    set (a pytest run in a subprocess) and the database SQLite."""
    from django.conf import settings

    template = os.environ.get(migrated_sqlite.ENV)
    if template and settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
        return Path(template)
    return None


@pytest.fixture(scope="session")
def django_db_keepdb(request: pytest.FixtureRequest) -> bool:
    """``--reuse-db``, or a test database copied from a migrated template (below): kept, not made again."""
    return bool(request.config.getvalue("reuse_db")) or _sqlite_template() is not None


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix: None, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Under ``FAIRWAY_TEST_SQLITE_TEMPLATE`` (a pytest run in a subprocess, on SQLite) the test database is a copy
    of that migrated file instead of an empty one that every migration runs on."""
    from django.conf import settings

    template = _sqlite_template()
    if template is not None:
        copied = migrated_sqlite.copy_to(template, tmp_path_factory.mktemp("test-db") / "test.sqlite3")
        settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = str(copied)


@pytest.fixture(scope="session")
def django_db_setup(
    request: pytest.FixtureRequest,
    django_test_environment: None,
    django_db_blocker: Any,
    django_db_use_migrations: bool,
    django_db_keepdb: bool,
    django_db_createdb: bool,
    django_db_modify_db_settings: None,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[None]:
    """pytest-django's, except that an xdist worker on PostgreSQL copies the run's migrated template instead of
    migrating its own database when another worker made it first (``tests.support.pg_template``)."""
    from django.test.utils import setup_databases, teardown_databases
    from pytest_django.fixtures import _disable_migrations, _get_databases_for_setup

    if not django_db_use_migrations:
        _disable_migrations()
    keepdb = django_db_keepdb and not django_db_createdb
    aliases, serialized_aliases = _get_databases_for_setup(request.session.items)
    verbosity = request.config.option.verbose

    def migrate(keep: bool) -> Any:
        return setup_databases(
            verbosity=verbosity, interactive=False, aliases=aliases, serialized_aliases=serialized_aliases, keepdb=keep
        )

    with django_db_blocker.unblock():
        if pg_template.wanted(keepdb, django_db_use_migrations):
            db_cfg = pg_template.set_up(_session_root(tmp_path_factory), migrate)
        else:
            db_cfg = migrate(keepdb)
    yield
    if not django_db_keepdb:
        with django_db_blocker.unblock():
            try:
                teardown_databases(db_cfg, verbosity=verbosity)
            except Exception as exc:  # as pytest-django's: a warning, not an error
                request.node.warn(pytest.PytestWarning(f"Error when trying to teardown test databases: {exc!r}"))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The run's controller (not an xdist worker), once the workers are done, drops the PostgreSQL template they
    made, if they made one (``tests.support.pg_template``)."""
    factory = getattr(session.config, "_tmp_path_factory", None)
    if os.environ.get("PYTEST_XDIST_WORKER") or factory is None:
        return
    from pytest_django.plugin import blocking_manager_key

    if blocking_manager_key in session.config.stash:  # Django is set up (not a -p no:django run)
        with session.config.stash[blocking_manager_key].unblock():
            pg_template.drop(factory.getbasetemp())


@pytest.fixture(autouse=True, scope="session")
def _fast_password_hashing() -> Iterator[None]:
    """Passwords hashed with MD5 in the test process (and the live servers it runs in threads).

    The product's hasher, PBKDF2 at Django's 1,000,000 iterations, costs about a second of CPU per user made and
    per login: the suite makes and logs in users by the thousand. Servers the tests start as subprocesses keep the
    product's hashers, and hash the passwords of the users they make themselves."""
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture(autouse=True, scope="session")
def _no_login_lockout() -> Iterator[None]:
    """django-axes off in the test process (its docs' advice: ``Client.login`` calls ``authenticate`` without a
    request, which axes refuses), so that tests may log in and fail to as often as they like. The tests of the
    lockout turn it back on (``tests/api/test_throttling.py``); servers run as subprocesses keep it on."""
    from django.conf import settings

    if not settings.configured:  # pure engine tests run without Django (-p no:django)
        yield
        return
    from django.test import override_settings

    with override_settings(AXES_ENABLED=False):
        yield


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    """Each test starts with an empty Django cache: no token-failure counts (``security.throttle``) carried over."""
    from django.conf import settings

    if not settings.configured:
        yield
        return
    from django.core.cache import cache

    cache.clear()
    yield


def new_user(username: str, *, staff: bool = False, groups: tuple[str, ...] = ()) -> Any:
    """A user with the password ``pw-<username>``, in the Django groups named (made if missing)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    user = get_user_model().objects.create_user(username, password="pw-" + username, is_staff=staff)
    for g in groups:
        user.groups.add(Group.objects.get_or_create(name=g)[0])
    return user


def user_token(username: str, *, staff: bool = False, groups: tuple[str, ...] = ()) -> str:
    """``new_user``'s user and a token of it, for a module's shared data (``module_db``, then ``token_client``)."""
    from security.tokens import create_token

    return create_token(new_user(username, staff=staff, groups=groups), "test")[1]  # type: ignore[no-any-return]


@pytest.fixture
def make_user(db: Any) -> Callable[..., Any]:
    return new_user


@pytest.fixture
def api(db: Any) -> Callable[[Any], Any]:
    """``api(user)`` returns an APIClient authenticated with that user's token (``None``: anonymous)."""
    from rest_framework.test import APIClient

    from security.tokens import create_token

    def client_for(user: Any) -> APIClient:
        client = APIClient()
        if user is not None:
            client.credentials(HTTP_AUTHORIZATION=f"Token {create_token(user, 'test')[1]}")
        return client

    return client_for


@pytest.fixture
def admin_api(api: Callable[[Any], Any], make_user: Callable[..., Any]) -> Any:
    return api(make_user("admin", staff=True))


def error_attrs(response: Any) -> dict[str, str]:
    """The API's error envelope as {attr: detail}."""
    body = response.json()
    return {e["attr"]: e["detail"] for e in body["errors"]}


@pytest.fixture(autouse=True)
def _fresh_value_cache() -> Any:
    """Each test starts with no cached engine values (``planning.valuecache`` lives in the process)."""
    from django.conf import settings

    if not settings.configured:  # pure engine tests run without Django (-p no:django)
        yield
        return
    from planning import valuecache

    valuecache.clear()
    yield
    valuecache.clear()


@pytest.fixture(autouse=True)
def _migrated_rows(request: pytest.FixtureRequest) -> None:
    """A test on the ``db`` fixture starts from the migrated state whatever ran before it in this process.

    A transactional test (``transactional_db``, ``live_server``) ends with a flush that also takes the rows the data
    migrations created: the built-in tree nodes, the default cluster, the ``node-agents`` group. Which test follows one
    depends on how xdist deals the modules out, so a test that relies on them puts them back, inside its own
    transaction (rolled back with it; one query when they are there). Transactional tests set up their own rows.
    """
    from django.conf import settings

    if not settings.configured:  # pure engine tests run without Django (-p no:django)
        return
    marker = request.node.get_closest_marker("django_db")
    transactional = {"transactional_db", "live_server"} & set(request.fixturenames) or (
        marker is not None and marker.kwargs.get("transaction", False)
    )
    if transactional:
        from django.db import connection

        if connection.in_atomic_block:
            pytest.fail("a transactional test cannot run inside a module's shared data (module_db): move it elsewhere")
        return
    if marker is None and "db" not in request.fixturenames:
        return
    request.getfixturevalue("db")
    ensure_migrated_rows()


def ensure_migrated_rows() -> None:
    """The rows the data migrations create (built-in tree nodes, default cluster, ``node-agents`` group), put back if
    a transactional test's flush took them (one query when they are there)."""
    from django.contrib.auth.models import Group

    from quotas import services
    from quotas.models import Queue
    from scheduling.agent_access import NODE_AGENTS_GROUP
    from scheduling.models import Cluster

    if Queue.objects.filter(name="default").exists():
        return
    services.ensure_builtins()
    Cluster.objects.get_or_create(name="default", defaults={"description": "The cluster this control plane manages"})
    Group.objects.get_or_create(name=NODE_AGENTS_GROUP)


@pytest.fixture(scope="module")
def module_db(django_db_setup: Any, django_db_blocker: Any) -> Iterator[Callable[[Callable[[], T]], T]]:
    """Data built once for a whole module, for modules whose tests all run on the ``db`` fixture.

    ``module_db(build)`` runs ``build()`` inside a transaction opened for the module and returns what it returns.
    Each test still runs in its own transaction nested in it (a savepoint rolled back after the test: whatever a
    test writes, the next one sees the module's data as built), and the module's transaction is rolled back when the
    module ends, so that the next module on this worker starts from the migrated database as before. Django's
    ``TestCase.setUpTestData`` does the same per class. A module-scoped fixture that builds the data hands each
    test a fresh copy of its Python objects (``copy.deepcopy``, as ``setUpTestData`` does) where a test may change
    them. A transactional test (``transactional_db``, ``live_server``) cannot run in such a module (it fails saying
    so: it would commit and flush inside the module's transaction)."""
    from django.db import transaction

    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()

    def build(make: Callable[[], T]) -> T:
        with django_db_blocker.unblock():
            return make()

    try:
        yield build
    finally:
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def forget_cluster_state(cluster_id: int) -> None:
    """Drop what this process keeps about a cluster between sessions (its mirror, its recording chain, the statuses
    and quota samples its last session left): a test on a module's shared cluster starts as on a new one."""
    from scheduling import recording
    from scheduling.feed import mirror
    from scheduling.store import write

    mirror.forget(cluster_id)
    recording.forget(cluster_id)
    write.forget(cluster_id)


def token_client(token: str | None) -> Any:
    """An APIClient sending ``token`` (``None``: anonymous); tokens made once for a module serve every test."""
    from rest_framework.test import APIClient

    client = APIClient()
    if token is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def demo_tokens(usernames: tuple[str, ...], admin: str = "boss") -> dict[str, str]:
    """``load_demo`` on the migrated rows, an admin ``admin`` added, and a token for each of ``usernames`` and the
    admin: {username: token}. For a module's shared data (``module_db``)."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from security.tokens import create_token

    ensure_migrated_rows()
    call_command("load_demo", stdout=StringIO())
    users = get_user_model().objects
    made = {name: users.get(username=name) for name in usernames}
    made[admin] = users.create_user(admin, is_staff=True)
    return {name: create_token(user, "test")[1] for name, user in made.items()}
