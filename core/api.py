"""Shared REST plumbing: ordered pagination, ETag / If-Match, rule errors -> DRF validation errors."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from rest_framework import exceptions, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response


class OrderedLimitOffsetPagination(LimitOffsetPagination):
    """Limit/offset pagination that refuses unordered querysets (their pages would be unstable)."""

    max_limit = 1000

    def paginate_queryset(self, queryset: Any, request: Request, view: Any = None) -> Any:
        if isinstance(queryset, QuerySet) and not queryset.ordered:
            raise RuntimeError(f"{view.__class__.__name__}: paginated querysets must be ordered")
        return super().paginate_queryset(queryset, request, view)


class PreconditionFailed(exceptions.APIException):
    status_code = status.HTTP_412_PRECONDITION_FAILED
    default_detail = "The object changed since you read it (If-Match does not match its ETag); reload and retry."
    default_code = "precondition_failed"


def etag_of(obj: Any) -> str:
    return f'"{obj.pk}-{obj.version}"'


class ETagMixin:
    """Tree-node edits carry an ETag (the row's version) and honour ``If-Match`` (412 on a stale write).

    Every write (update, delete, and the views' own actions through ``locked_object``) runs in one transaction
    that first takes the resource's write lock (``write_lock``; the trees': ``quotas.services.lock_tree_writes``), then reads the row and compares
    its version with ``If-Match``, then writes: the comparison and the write see the same version, so of several
    writers sending the same ``If-Match`` exactly one succeeds and the others get 412. The save itself is a
    compare-and-swap on that version (``core.models.VersionedModel``).

    The check runs before validation, so a stale write is refused as stale even when it is also invalid.
    """

    # Serialises the resource's writers until the transaction ends; each viewset names its lock.
    write_lock: Callable[[], None]

    def check_if_match(self, request: Request, obj: Any) -> None:
        header = request.headers.get("If-Match")
        if not header:
            return
        tags = {t.strip().removeprefix("W/") for t in header.split(",")}
        if "*" not in tags and etag_of(obj) not in tags:
            raise PreconditionFailed()

    def locked_object(self, request: Request) -> Any:
        """Take the write lock, then read the addressed row and check ``If-Match`` against it. Call inside
        the write's ``transaction.atomic()``."""
        self.write_lock()
        obj = self.get_object()  # type: ignore[attr-defined]
        self.check_if_match(request, obj)
        return obj

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """The body and the ETag come from the same read of the row (a second read could see a newer version
        than the body shows, and a write based on that body would then pass If-Match and undo that change)."""
        instance = self.get_object()  # type: ignore[attr-defined]
        response = Response(self.get_serializer(instance).data)  # type: ignore[attr-defined]
        response["ETag"] = etag_of(instance)
        return response

    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        with transaction.atomic():
            obj = self.locked_object(request)
            response: Response = super().update(request, *args, **kwargs)  # type: ignore[misc]
            obj.refresh_from_db()  # by primary key: a rename changes the URL's name
        response["ETag"] = etag_of(obj)
        return response

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        with transaction.atomic():
            self.locked_object(request)
            return super().destroy(request, *args, **kwargs)  # type: ignore[misc, no-any-return]


def bool_param(request: Request, name: str) -> bool:
    """A true/false query parameter (``?force=true``; absent: false); anything else is a 400 naming it."""
    value = request.query_params.get(name, "false").lower()
    if value not in ("true", "false", "1", "0", "yes", "no"):
        raise exceptions.ValidationError({name: [f"{name} must be true or false, got {value!r}"]})
    return value in ("true", "1", "yes")


def rule_errors_to_validation_error(errors: Iterable[Any]) -> exceptions.ValidationError:
    """Turn ``engine.rules.FieldError`` items into one DRF ValidationError keyed by field path."""
    detail: dict[str, list[exceptions.ErrorDetail]] = {}
    for err in errors:
        detail.setdefault(err.field, []).append(exceptions.ErrorDetail(err.message, code=err.code))
    return exceptions.ValidationError(detail)
