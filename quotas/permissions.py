"""API permissions: admins change everything; team members read their subtree (and submit jobs there)."""

from __future__ import annotations

from typing import Any

from rest_framework import permissions
from rest_framework.request import Request

from quotas.access import is_admin, is_team_member


class AdminWritesTeamsRead(permissions.BasePermission):
    """Reads for admins and team members (the view narrows the queryset); writes for admins only."""

    message = "Only admins may change this; team members may read their own subtree."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if is_admin(user):
            return True
        if request.method in permissions.SAFE_METHODS:
            if not is_team_member(user):
                self.message = "You are not a member of any team linked to a queue or quota group."
                return False
            return True
        self.message = "Only admins may change this; team members may read their own subtree."
        return False


class AdminOrTeamSubmits(permissions.BasePermission):
    """Jobs: admins everything; team members read and submit within their subtree (the view checks where)."""

    message = "You are not a member of any team linked to a queue or quota group."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        return is_admin(user) or is_team_member(user)
