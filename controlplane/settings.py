"""Fairway settings, read from the environment (see .env.example).

Embedded default: a SQLite file and kombu's filesystem broker under ``var/``, so ``make run`` needs no server.
Production: ``DATABASE_URL=postgres://...`` and ``CELERY_BROKER_URL=redis://...``.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from controlplane.ranges import check_ranges
from engine.limits import Limits

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(environ.Env().str("FAIRWAY_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

env = environ.Env(
    DEBUG=(bool, False),
    ALLOWED_HOSTS=(list, ["localhost", "127.0.0.1", "[::1]"]),
)
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env("DEBUG")
SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG and env.bool("FAIRWAY_REQUIRE_SECRET_KEY", default=False):
        raise ImproperlyConfigured("SECRET_KEY must be set in production (FAIRWAY_REQUIRE_SECRET_KEY=true)")
    # A per-installation key kept under var/ so sessions survive restarts of the embedded default.
    key_file = VAR_DIR / "secret_key"
    if not key_file.exists():
        from django.core.management.utils import get_random_secret_key

        key_file.write_text(get_random_secret_key())
        key_file.chmod(0o600)
    SECRET_KEY = key_file.read_text().strip()

ALLOWED_HOSTS = env("ALLOWED_HOSTS")
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# Served over HTTPS (directly or behind a TLS-terminating proxy): cookies only over TLS, and HSTS. Django's
# SecurityMiddleware sends HSTS on secure requests only; behind a proxy that terminates TLS, let Django trust the
# proxy's X-Forwarded-Proto (FAIRWAY_TRUST_X_FORWARDED_PROTO=true) -- only when that proxy always sets or strips it,
# or a client could claim https itself.
FAIRWAY_HTTPS = env.bool("FAIRWAY_HTTPS", default=False)
if FAIRWAY_HTTPS:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("FAIRWAY_HSTS_SECONDS", default=31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("FAIRWAY_HSTS_INCLUDE_SUBDOMAINS", default=False)
    SECURE_HSTS_PRELOAD = env.bool("FAIRWAY_HSTS_PRELOAD", default=False)
if env.bool("FAIRWAY_TRUST_X_FORWARDED_PROTO", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "drf_standardized_errors",
    "django_celery_beat",
    "simple_history",
    "axes",
    "django_prometheus",
    "core",
    "quotas",
    "scheduling",
    "planning",
    "frontend",
    "security",
    "changerequests",
    "identity",
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",  # request counts and latencies for /metrics
    "controlplane.health.HealthHostMiddleware",  # /healthz and /readyz for probes, whatever their Host header
    "django.middleware.security.SecurityMiddleware",
    "controlplane.middleware.RequestLimitsMiddleware",  # 413 before anything reads an oversized body
    "controlplane.middleware.CollectorPausedMiddleware",  # no cyclic garbage collection inside a request
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "security.records.SecurityEventsMiddleware",  # stores the request's security events after its transaction
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "controlplane.middleware.DatabaseUnavailableMiddleware",  # 503 + Retry-After, not 500, without a database
    "django_prometheus.middleware.PrometheusAfterMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a locked-out login into the lockout answer (429)
]

ROOT_URLCONF = "controlplane.urls"
WSGI_APPLICATION = "controlplane.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "builtins": ["frontend.templatetags.fairway"],  # the |plural filter on every page
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "frontend.context.cluster_switch",
                "identity.context.oidc_sign_in",  # the login page's "Sign in with <provider>" (docs/security.md)
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'fairway.sqlite3'}")}
DATABASES["default"]["ATOMIC_REQUESTS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL: readers (web pages, beat's schedule reads) never block the worker's writes and the other way round;
    # IMMEDIATE takes the write lock at BEGIN, so a transaction never fails upgrading a read lock; the busy timeout
    # covers a scheduling session's write on a loaded laptop.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 60,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
    # ... but a page's transaction (ATOMIC_REQUESTS) only reads: it begins DEFERRED and waits for no writer
    MIDDLEWARE.insert(
        MIDDLEWARE.index("controlplane.middleware.CollectorPausedMiddleware") + 1,
        "controlplane.middleware.SQLiteReadsMiddleware",
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# django-axes first: it refuses a login while its username + address is locked out (docs/security.md)
# OpenID Connect sign-in's backend answers only its own callback (identity/backends.py), and only when it is on.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
    "identity.backends.OidcBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# The image collects the static files at build time into a folder of its own (STATIC_ROOT=/app/static), so that
# the container can run with a read-only root file system and an empty var/.
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(VAR_DIR / "static")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": env.str("STATICFILES_STORAGE", default="whitenoise.storage.CompressedManifestStaticFilesStorage")
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # the security log (docs/security.md): logins, failures, lockouts, tokens, admin changes; INFO whatever LOG_LEVEL
    "loggers": {"fairway.security": {"level": "INFO"}},
}
_SECURITY_LOG_FILE = env.str("FAIRWAY_SECURITY_LOG_FILE", default="")
if _SECURITY_LOG_FILE:
    LOGGING["handlers"]["security_file"] = {
        "class": "logging.handlers.WatchedFileHandler",
        "filename": _SECURITY_LOG_FILE,
        "formatter": "plain",
    }
    LOGGING["loggers"]["fairway.security"]["handlers"] = ["security_file"]

# The cache: the token-failure counters (security/throttle.py). Local memory counts per process; a Redis URL
# (redis://host:6379/2) shares the counts between every web process.
CACHES = {"default": env.cache("FAIRWAY_CACHE_URL", default="locmemcache://")}

# --- Secrets, API tokens, login throttling (docs/security.md) ----------------------------------------------
# Fernet keys for the secrets kept encrypted at rest (the kubeconfigs): the first encrypts, any decrypts. Without
# the variable a key is generated once into var/secret_keys (FAIRWAY_REQUIRE_SECRET_KEY=true refuses that).
FAIRWAY_SECRET_KEYS = env.list("FAIRWAY_SECRET_KEYS", default=[])
if not FAIRWAY_SECRET_KEYS:
    if not DEBUG and env.bool("FAIRWAY_REQUIRE_SECRET_KEY", default=False):
        raise ImproperlyConfigured("FAIRWAY_SECRET_KEYS must be set in production (FAIRWAY_REQUIRE_SECRET_KEY=true)")
    _keys_file = VAR_DIR / "secret_keys"
    if not _keys_file.exists():
        from cryptography.fernet import Fernet

        _keys_file.write_text(Fernet.generate_key().decode("ascii") + "\n")
        _keys_file.chmod(0o600)
    FAIRWAY_SECRET_KEYS = _keys_file.read_text().split()
try:
    from security.crypto import validate_keys

    validate_keys(FAIRWAY_SECRET_KEYS)
except ValueError as exc:
    raise ImproperlyConfigured(str(exc)) from None

# django-axes: a username + client address locked out after this many failed logins, for the cool-off; a success
# clears the count. The database handler shares the counts between processes; the admin lists them (Axes).
AXES_FAILURE_LIMIT = env.int("FAIRWAY_LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = dt.timedelta(seconds=env.int("FAIRWAY_LOGIN_COOLOFF_SECONDS", default=900))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "frontend/locked_out.html"  # the sentence and the cool-off, with a 429
AXES_VERBOSE = False  # the security log has the events (security/events.py)
AXES_COOLOFF_MESSAGE = (
    f"Too many failed logins for this username from your address: try again in "
    f"{max(1, int(AXES_COOLOFF_TIME.total_seconds()) // 60)} minutes."
)

# --- Sign-in with OpenID Connect (docs/security.md#sign-in-with-openid-connect) ------------------------------
# Off unless FAIRWAY_OIDC_CLIENT_ID is set. The endpoints come from the issuer's discovery document unless given;
# FAIRWAY_OIDC_GROUP_MAP maps the provider's groups (the GROUPS_CLAIM claim) to admin and to Fairway's teams
# (identity/mapping.py); identity.apps checks all of it at start.
FAIRWAY_OIDC = {
    "CLIENT_ID": env.str("FAIRWAY_OIDC_CLIENT_ID", default=""),
    "CLIENT_SECRET": env.str("FAIRWAY_OIDC_CLIENT_SECRET", default=""),
    "ISSUER": env.str("FAIRWAY_OIDC_ISSUER", default=""),
    "DISCOVERY_URL": env.str("FAIRWAY_OIDC_DISCOVERY_URL", default=""),
    "AUTHORIZATION_ENDPOINT": env.str("FAIRWAY_OIDC_AUTHORIZATION_ENDPOINT", default=""),
    "TOKEN_ENDPOINT": env.str("FAIRWAY_OIDC_TOKEN_ENDPOINT", default=""),
    "USERINFO_ENDPOINT": env.str("FAIRWAY_OIDC_USERINFO_ENDPOINT", default=""),
    "JWKS_URI": env.str("FAIRWAY_OIDC_JWKS_URI", default=""),
    "SCOPES": env.str("FAIRWAY_OIDC_SCOPES", default="openid email profile"),
    "GROUPS_CLAIM": env.str("FAIRWAY_OIDC_GROUPS_CLAIM", default="groups"),
    "USERNAME_CLAIM": env.str("FAIRWAY_OIDC_USERNAME_CLAIM", default="preferred_username"),
    "GROUP_MAP": env.str("FAIRWAY_OIDC_GROUP_MAP", default=""),
    "PROVIDER_NAME": env.str("FAIRWAY_OIDC_PROVIDER_NAME", default="single sign-on"),
    "SIGN_ALGO": env.str("FAIRWAY_OIDC_SIGN_ALGO", default="RS256"),
    "USE_PKCE": env.bool("FAIRWAY_OIDC_USE_PKCE", default=True),
    "TIMEOUT_SECONDS": env.int("FAIRWAY_OIDC_TIMEOUT_SECONDS", default=10),
    "DISCOVERY_CACHE_SECONDS": env.int("FAIRWAY_OIDC_DISCOVERY_CACHE_SECONDS", default=3600),
}

# --- REST API -----------------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "security.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
        "rest_framework.filters.SearchFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "core.api.OrderedLimitOffsetPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_PARSER_CLASSES": ["core.parsers.JSONParser"],  # DRF's, behind the nesting limit
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_VERSIONING_CLASS": "rest_framework.versioning.URLPathVersioning",
    "ALLOWED_VERSIONS": ["v1"],
    "DEFAULT_VERSION": "v1",
    "DEFAULT_SCHEMA_CLASS": "drf_standardized_errors.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "drf_standardized_errors.handler.exception_handler",
    "COERCE_DECIMAL_TO_STRING": False,
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
DRF_STANDARDIZED_ERRORS = {
    "ENABLE_IN_DEBUG_FOR_UNHANDLED_EXCEPTIONS": True,
    "EXCEPTION_HANDLER_CLASS": "core.errors.ExceptionHandler",  # 503 / 413 / 422 for what is no bug
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Fairway control plane API",
    "DESCRIPTION": "Queues, elastic quota trees, namespaces and the cluster of a shared batch control plane.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No request leaves the server: Swagger UI's default validator badge loads from validator.swagger.io, and
    # ReDoc's fonts are the system's (controlplane.docs.RedocView).
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "REDOC_UI_SETTINGS": {
        "theme": {
            "typography": {"fontFamily": "system-ui, sans-serif", "headings": {"fontFamily": "system-ui, sans-serif"}}
        }
    },
    "ENUM_NAME_OVERRIDES": {
        "ValidationErrorEnum": "drf_standardized_errors.openapi_serializers.ValidationErrorEnum.choices",
        "ClientErrorEnum": "drf_standardized_errors.openapi_serializers.ClientErrorEnum.choices",
        "ServerErrorEnum": "drf_standardized_errors.openapi_serializers.ServerErrorEnum.choices",
        "ParseErrorCodeEnum": "drf_standardized_errors.openapi_serializers.ParseErrorCodeEnum.choices",
        "ErrorCode401Enum": "drf_standardized_errors.openapi_serializers.ErrorCode401Enum.choices",
        "ErrorCode403Enum": "drf_standardized_errors.openapi_serializers.ErrorCode403Enum.choices",
        "ErrorCode404Enum": "drf_standardized_errors.openapi_serializers.ErrorCode404Enum.choices",
        "ErrorCode405Enum": "drf_standardized_errors.openapi_serializers.ErrorCode405Enum.choices",
        "ErrorCode406Enum": "drf_standardized_errors.openapi_serializers.ErrorCode406Enum.choices",
        "ErrorCode415Enum": "drf_standardized_errors.openapi_serializers.ErrorCode415Enum.choices",
        "ErrorCode429Enum": "drf_standardized_errors.openapi_serializers.ErrorCode429Enum.choices",
        "ErrorCode500Enum": "drf_standardized_errors.openapi_serializers.ErrorCode500Enum.choices",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_standardized_errors.openapi_hooks.postprocess_schema_enums",
        "controlplane.docs.write_warnings_are_optional",
    ],
}

# --- Fairway ------------------------------------------------------------------------------------------------
FAIRWAY = {
    "DEFAULT_CLUSTER": env.str("FAIRWAY_DEFAULT_CLUSTER", default="default"),
    # seconds a worker process that ran a cluster's last session keeps receiving its sessions (scheduling.feed.affinity)
    "AFFINITY_WINDOW_SECONDS": env.float("FAIRWAY_AFFINITY_WINDOW_SECONDS", default=3.0),
    # a worker process keeps a copy of each cluster whose sessions it sends on, to take it over (scheduling.feed.standby)
    "WARM_STANDBY": env.bool("FAIRWAY_WARM_STANDBY", default=True),
    # a session message that finds the cluster's previous session still running waits this long for its lock, then
    # records a skipped session (scheduling.tasks.run_session); the SQLite lease is polled every POLL seconds meanwhile
    "SESSION_LOCK_WAIT_SECONDS": env.float("FAIRWAY_SESSION_LOCK_WAIT_SECONDS", default=1.0),
    "SESSION_LOCK_POLL_SECONDS": env.float("FAIRWAY_SESSION_LOCK_POLL_SECONDS", default=0.05),
    # the node heartbeat check (every 5 s by default) that finds its previous run older than this could not run in
    # between (broker, database or workers down): it forgives missed heartbeats for one more timeout (scheduling.agent)
    "NODE_CHECK_GAP_SECONDS": env.float("FAIRWAY_NODE_CHECK_GAP_SECONDS", default=15.0),
    # a Kueue Job the Kubernetes adapter resumed has this long for its controller to make its pods before the requeue
    # rule counts its sessions without a pod placed (scheduling.store.read.with_pod_group_waits)
    "POD_CREATION_SECONDS": env.float("FAIRWAY_POD_CREATION_SECONDS", default=60.0),
    # The OpenAPI schema and the Swagger / Redoc pages are for signed-in users unless this is true.
    "PUBLIC_API_DOCS": env.bool("FAIRWAY_PUBLIC_API_DOCS", default=False),
    # /metrics answers a request bearing this token (a Prometheus scrape config's bearer token) besides admins.
    "METRICS_TOKEN": env.str("FAIRWAY_METRICS_TOKEN", default=""),
    # /metrics counts a cluster's nodes by state; at most this many nodes per cluster that need attention (NotReady,
    # set aside, silent) get series of their own, and the rest are counted as left out (planning/metrics.py).
    "METRICS_NODE_SERIES_LIMIT": env.int("FAIRWAY_METRICS_NODE_SERIES_LIMIT", default=100),
    # /metrics' waits to start: of the jobs submitted in the last window, rebuilt at most this often
    "METRICS_WAIT_WINDOW_SECONDS": env.int("FAIRWAY_METRICS_WAIT_WINDOW_SECONDS", default=3600),
    "METRICS_WAITS_EVERY_SECONDS": env.float("FAIRWAY_METRICS_WAITS_EVERY_SECONDS", default=30.0),
    # What one team's namespaces may hold waiting (Pending or Pipelined pods; Pending or Inqueue podgroups) before
    # the API refuses a team member more (429): one team's flood cannot slow every session. Admins are not limited.
    "MAX_PENDING_PODS_PER_TEAM": env.int("FAIRWAY_MAX_PENDING_PODS_PER_TEAM", default=20_000),
    "MAX_PENDING_PODGROUPS_PER_TEAM": env.int("FAIRWAY_MAX_PENDING_PODGROUPS_PER_TEAM", default=2_000),
    # API tokens: the lifetime a new one gets unless its creator says otherwise, the longest it may ask, and how
    # often its "last used" is written (security/tokens.py)
    "TOKEN_LIFETIME_DAYS": env.int("FAIRWAY_TOKEN_LIFETIME_DAYS", default=90),
    "TOKEN_MAX_LIFETIME_DAYS": env.int("FAIRWAY_TOKEN_MAX_LIFETIME_DAYS", default=365),
    "TOKEN_LAST_USED_SECONDS": env.int("FAIRWAY_TOKEN_LAST_USED_SECONDS", default=60),
    # failed token authentications per client address before it gets 429 for the rest of the window
    "TOKEN_FAILURE_LIMIT": env.int("FAIRWAY_TOKEN_FAILURE_LIMIT", default=20),
    "TOKEN_FAILURE_WINDOW_SECONDS": env.int("FAIRWAY_TOKEN_FAILURE_WINDOW_SECONDS", default=300),
    # the security log's rows (security.records) older than this are deleted by the periodic compaction
    "SECURITY_EVENT_RETENTION_DAYS": env.int("FAIRWAY_SECURITY_EVENT_RETENTION_DAYS", default=90),
    # days the evictions of a removed job (and the record of its removal) are kept after the removal; an eviction
    # whose pod is gone without its job being recorded, that long after it happened (scheduling/evictions.py)
    "EVICTION_RETENTION_DAYS": env.int("FAIRWAY_EVICTION_RETENTION_DAYS", default=7),
    # days a finished or removed job's history row (scheduling.history.JobRecord: what `fairway trace export`
    # writes) is kept after it was submitted, whatever the garbage collection of podgroups removed meanwhile
    "JOB_HISTORY_DAYS": env.int("FAIRWAY_JOB_HISTORY_DAYS", default=30),
    # days the tree nodes' usage samples (the history charts; one an hour past the first day) are kept
    "SAMPLE_RETENTION_DAYS": env.int("FAIRWAY_SAMPLE_RETENTION_DAYS", default=400),
    # a tree node's sample is written when its values changed, and at least this often otherwise (0: every session)
    "SAMPLE_EVERY_SECONDS": env.float("FAIRWAY_SAMPLE_EVERY_SECONDS", default=60.0),
    # Change requests (changerequests/notify.py): a JSON POST per event to this URL (empty: none), waiting at most
    # this long; and where the dashboard is, for the links in the mails (empty: the links are paths)
    "CHANGE_REQUEST_WEBHOOK_URL": env.str("FAIRWAY_CHANGE_REQUEST_WEBHOOK_URL", default=""),
    "CHANGE_REQUEST_WEBHOOK_TIMEOUT_SECONDS": env.float("FAIRWAY_CHANGE_REQUEST_WEBHOOK_TIMEOUT_SECONDS", default=5.0),
    "PUBLIC_URL": env.str("FAIRWAY_PUBLIC_URL", default=""),
    # Loans (changerequests/loans.py): the longest a loan may last, and how often the loans past their end are
    # returned (the periodic entry's interval when it is created; the admin may change it afterwards)
    "LOAN_MAX_DAYS": env.int("FAIRWAY_LOAN_MAX_DAYS", default=90),
    "LOAN_CHECK_SECONDS": env.int("FAIRWAY_LOAN_CHECK_SECONDS", default=60),
    # Kueue's Configuration: the ConfigMap its manager reads (key controller_manager_config.yaml) and its namespace,
    # which the Kubernetes adapter watches and keeps as the cluster's kueue_configuration (scheduling/kube)
    "KUEUE_CONFIGMAP": env.str("FAIRWAY_KUEUE_CONFIGMAP", default="kueue-manager-config"),
    "KUEUE_NAMESPACE": env.str("FAIRWAY_KUEUE_NAMESPACE", default="kueue-system"),
}

# Mail (change request notifications): Django's backends through one URL (django-environ), the console by default
# (make run prints the mails); e.g. smtp+tls://user:password@mail.example.org:587
vars().update(env.email_url("EMAIL_URL", default="consolemail://"))
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="fairway@localhost")

# Replays of the last days from the dashboard and /api/v1/replays/ (planning/replay.py, docs/replay.md): the longest
# window, how often a running replay writes its progress (and sees a cancel), its time limit, how long results are kept.
FAIRWAY["REPLAY_MAX_WINDOW_DAYS"] = env.int("FAIRWAY_REPLAY_MAX_WINDOW_DAYS", default=7)
FAIRWAY["REPLAY_PROGRESS_SECONDS"] = env.float("FAIRWAY_REPLAY_PROGRESS_SECONDS", default=2.0)
FAIRWAY["REPLAY_TIME_LIMIT_SECONDS"] = env.float("FAIRWAY_REPLAY_TIME_LIMIT_SECONDS", default=1800.0)
FAIRWAY["REPLAY_RETENTION_DAYS"] = env.int("FAIRWAY_REPLAY_RETENTION_DAYS", default=30)
# The baseline and the proposal side by side (controlplane/side_by_side.py): 2 runs the proposal in a second process, so
# an admin waits for one replay rather than two; 1 runs them one after the other (a worker with a single core).
FAIRWAY["REPLAY_PROCESSES"] = env.int("FAIRWAY_REPLAY_PROCESSES", default=2 if (os.cpu_count() or 1) > 1 else 1)
if FAIRWAY["REPLAY_PROCESSES"] not in (1, 2):
    raise ImproperlyConfigured(f"FAIRWAY_REPLAY_PROCESSES={FAIRWAY['REPLAY_PROCESSES']}: expected 1 or 2")

# Replaying one recorded session (scheduling/recording.py, docs/replay.md): the hours a session's inputs are kept (0:
# nothing recorded), a keyframe (the whole snapshot) at least every KEYFRAME_SESSIONS sessions and once the deltas
# since the last one hold KEYFRAME_DELTA_RATIO times its bytes.
FAIRWAY["SESSION_RECORD_RETENTION_HOURS"] = env.float("FAIRWAY_SESSION_RECORD_RETENTION_HOURS", default=24.0)
FAIRWAY["SESSION_RECORD_KEYFRAME_SESSIONS"] = env.int("FAIRWAY_SESSION_RECORD_KEYFRAME_SESSIONS", default=3600)
FAIRWAY["SESSION_RECORD_KEYFRAME_DELTA_RATIO"] = env.float("FAIRWAY_SESSION_RECORD_KEYFRAME_DELTA_RATIO", default=8.0)

# "When will my job start?" (planning/estimates.py, docs/replay.md): a forward replay from the cluster's state with
# runtimes drawn from each queue's recorded ones, DRAWS times, for the first JOBS_PER_QUEUE waiting jobs of each
# queue, HORIZON_HOURS ahead at most, the jobs of the last ARRIVALS_HOURS submitted again in each such span ahead,
# sessions on a grid of PERIOD_SECONDS (or the live period if longer),
# within BUDGET_SECONDS of CPU a round (the estimates worker), or
# PAGE_BUDGET_SECONDS when a page or the API finds none computed yet; a round is kept TTL_SECONDS before a reader asks
# the worker for a new one.
for _name, _default in (("DRAWS", 10), ("JOBS_PER_QUEUE", 5)):
    FAIRWAY[f"START_ESTIMATE_{_name}"] = env.int(f"FAIRWAY_START_ESTIMATE_{_name}", default=_default)
for _name, _default in (
    ("HORIZON_HOURS", 24.0),
    ("ARRIVALS_HOURS", 1.0),
    ("PERIOD_SECONDS", 60.0),
    ("BUDGET_SECONDS", 20.0),
    ("PAGE_BUDGET_SECONDS", 2.0),
    ("TTL_SECONDS", 120.0),
):
    FAIRWAY[f"START_ESTIMATE_{_name}"] = env.float(f"FAIRWAY_START_ESTIMATE_{_name}", default=_default)

# How long a reader that found no round waits for the estimates worker's before it computes one itself (0: at once).
FAIRWAY["START_ESTIMATE_WORKER_WAIT_SECONDS"] = env.float("FAIRWAY_START_ESTIMATE_WORKER_WAIT_SECONDS", default=30.0)

# An eviction (reclaim, preempt, recycle, gang release) of a pod that started less than this long before, or had not
# started, counts as thrash in /metrics (scheduling/counters.py); the recommended policy's minRuntime is 60 s.
FAIRWAY["THRASH_WINDOW_SECONDS"] = env.float("FAIRWAY_THRASH_WINDOW_SECONDS", default=60.0)

# Every FAIRWAY number within its range, or the start stops naming the variable and what it takes
try:
    check_ranges(FAIRWAY)
except ValueError as exc:
    raise ImproperlyConfigured(str(exc)) from None

# What one request may ask (engine/limits.py; the table of docs/limits.md): nesting depth, body size, replicas, pods,
# podgroups, sessions, wall-clock budget. Django's own body limit is the largest route's; RequestLimitsMiddleware
# keeps every other route to FAIRWAY_MAX_BODY_BYTES.
try:
    FAIRWAY_LIMITS = Limits.from_env()
except ValueError as exc:
    raise ImproperlyConfigured(str(exc)) from None
DATA_UPLOAD_MAX_MEMORY_SIZE = max(FAIRWAY_LIMITS.max_body_bytes, FAIRWAY_LIMITS.simulate_max_body_bytes)
# The trees' depth limits, read once with the other limits (fairway simulate reads the same variables)
FAIRWAY["MAX_QUEUE_DEPTH"] = FAIRWAY_LIMITS.max_queue_depth
FAIRWAY["MAX_QUOTA_GROUP_DEPTH"] = FAIRWAY_LIMITS.max_quota_group_depth

# --- Celery -------------------------------------------------------------------------------------------------
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default="") or None
if CELERY_BROKER_URL.startswith("filesystem://"):
    _CELERY_FS = Path(env.str("CELERY_FS_DIR", default=str(VAR_DIR / "celery")))
    for _sub in ("queue", "processed", "control"):
        (_CELERY_FS / _sub).mkdir(parents=True, exist_ok=True)  # kombu does not create them
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_CELERY_FS / "queue"),
        "data_folder_out": str(_CELERY_FS / "queue"),
        "processed_folder": str(_CELERY_FS / "processed"),
        "store_processed": False,
        "control_folder": str(_CELERY_FS / "control"),  # kombu's default is relative to the cwd
        # how long an idle worker sleeps before it looks for messages again: at 0.2 s a session sent while the
        # worker was idle waited up to a fifth of its one-second period; a directory listing 20 times a second is
        # nothing beside that
        "polling_interval": 0.05,
    }
elif CELERY_BROKER_URL.startswith("redis"):
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600, "global_keyprefix": "fairway:"}

# Where simulate and what-if count their slots (FAIRWAY_MAX_CONCURRENT_SIMULATIONS in the whole deployment;
# planning/slots.py): a redis:// URL, "database" (PostgreSQL advisory locks) or "process" (this process only).
# Default: the broker when it is Redis, else the database on PostgreSQL, else the process (embedded SQLite).
FAIRWAY_SIMULATION_SLOTS = env.str("FAIRWAY_SIMULATION_SLOTS", default="") or (
    CELERY_BROKER_URL
    if CELERY_BROKER_URL.startswith(("redis://", "rediss://"))
    else "database"
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
    else "process"
)
if not FAIRWAY_SIMULATION_SLOTS.startswith(("redis://", "rediss://", "unix://")) and FAIRWAY_SIMULATION_SLOTS not in (
    "database",
    "process",
):
    raise ImproperlyConfigured(
        f"FAIRWAY_SIMULATION_SLOTS={FAIRWAY_SIMULATION_SLOTS!r}: expected a redis:// URL, 'database' or 'process'"
    )
if FAIRWAY_SIMULATION_SLOTS == "database" and DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured("FAIRWAY_SIMULATION_SLOTS=database needs PostgreSQL (advisory locks)")
if FAIRWAY_LIMITS.simulation_lease_seconds <= FAIRWAY_LIMITS.request_budget_seconds:
    raise ImproperlyConfigured(
        f"FAIRWAY_SIMULATION_LEASE_SECONDS={FAIRWAY_LIMITS.simulation_lease_seconds:g} must be longer than "
        f"FAIRWAY_REQUEST_BUDGET_SECONDS={FAIRWAY_LIMITS.request_budget_seconds:g}: a slot must outlive the "
        "computation it counts"
    )
CELERY_TASK_SERIALIZER = CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 300
CELERY_TASK_SOFT_TIME_LIMIT = 240
# A replay (planning.tasks.run_replay: minutes of CPU) goes to a queue of its own that only the replay worker consumes
# (celery worker -Q replay); the session workers consume the default queue alone.
CELERY_TASK_ROUTES = {
    "planning.tasks.run_replay": {"queue": "replay"},
    # the start estimates (planning.tasks.estimate_starts: seconds of CPU a round) have a queue of their own too
    "planning.tasks.estimate_starts": {"queue": "estimates"},
}
# On Redis an unacknowledged message goes to another worker after the visibility timeout: a replay (acks_late) must
# end, by its hard time limit, before that, or a second worker would start it again while the first still runs it.
if CELERY_BROKER_URL.startswith("redis") and FAIRWAY["REPLAY_TIME_LIMIT_SECONDS"] + 30 >= float(
    CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
):
    raise ImproperlyConfigured(
        f"FAIRWAY_REPLAY_TIME_LIMIT_SECONDS={FAIRWAY['REPLAY_TIME_LIMIT_SECONDS']:g}: at most "
        f"{CELERY_BROKER_TRANSPORT_OPTIONS['visibility_timeout'] - 31} s, under the Redis broker's visibility timeout"
    )
CELERY_BEAT_SCHEDULER = "controlplane.beat:Scheduler"  # django-celery-beat's, stopped between ticks
CELERY_TIMEZONE = TIME_ZONE

# The Celery application, created with the settings so that every process that starts Django has it (before
# prometheus-client is imported: see controlplane/worker_metrics.py); controlplane/__init__.py says why not there.
from controlplane import celery as _celery  # noqa: E402, F401
