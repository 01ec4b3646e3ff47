"""The embedded broker's messages are written atomically, and a damaged message never stops a consumer."""

from __future__ import annotations

from pathlib import Path

from kombu import Connection


def _connection(folder: Path) -> Connection:
    import controlplane.celery  # noqa: F401 - registers the atomic filesystem transport

    for sub in ("in", "processed", "control"):
        (folder / sub).mkdir(exist_ok=True)
    options = {
        "data_folder_in": str(folder / "in"),
        "data_folder_out": str(folder / "in"),
        "processed_folder": str(folder / "processed"),
        "control_folder": str(folder / "control"),  # kombu's default is a relative folder in the cwd
        "store_processed": False,
    }
    return Connection("filesystem://", transport_options=options)


def test_messages_are_renamed_into_place_and_damaged_ones_are_skipped(tmp_path: Path) -> None:
    with _connection(tmp_path) as conn:
        assert type(conn.transport).__module__ == "controlplane.fs_transport"
        queue = conn.SimpleQueue("jobs")
        # a message file another writer left empty (the race the transport closes): skipped, not fatal
        (tmp_path / "in" / "0_broken.jobs.msg").write_bytes(b"")
        queue.put({"n": 1})
        assert not list((tmp_path / "in").glob("*.partial"))
        message = queue.get(timeout=2)
        assert message.payload == {"n": 1}
        message.ack()
        queue.close()
