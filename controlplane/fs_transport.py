"""kombu's filesystem transport (the embedded broker of ``make run``) with atomic message files.

kombu writes a message by opening its final file name and then writing into it, so a consumer that lists the
folder in between moves away an empty file, fails to decode it and stops the worker ("Unrecoverable error:
JSONDecodeError"). Seen here with a session, the recycling and the simulated agent sent every second. This
transport writes each message under a temporary name the consumers ignore and renames it into place (atomic on one
filesystem), and a consumer skips (and logs) a file it still cannot decode instead of dying.

Selected by ``CELERY_BROKER_URL=filesystem://`` (``controlplane/celery.py`` registers it as that scheme's
transport); Redis in production is unaffected.
"""

from __future__ import annotations

import logging
import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

logger = logging.getLogger(__name__)


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + ".partial"  # not "<queue>.msg": consumers skip it until the rename
        try:
            with open(partial, "wb", buffering=0) as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc

    def _get(self, queue: str) -> Any:
        while True:
            try:
                return super()._get(queue)
            except ValueError as exc:  # a damaged message file: drop it rather than stop the worker
                logger.error("dropped an unreadable message of queue %s: %s", queue, exc)


class Transport(filesystem.Transport):
    Channel = Channel
