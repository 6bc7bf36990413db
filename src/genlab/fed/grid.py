"""An in-process Flower ``Grid``: the server's messages go straight to ``ClientApp`` calls.

Flower's own simulation engine runs ClientApps on Ray actors behind a SuperLink; on a shared
2-core machine that costs more than the clients' training. ``LocalGrid`` implements Flower's
``Grid`` interface (what a ``ServerApp``'s strategy talks to) by calling the ClientApp in this
process, one node after another, with a ``Context`` whose ``node_config["partition-id"]`` names
the client's data, as a Flower SuperNode would. Strategies and ClientApps are unchanged, so the
same app runs under ``flwr run`` on a deployment.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from flwr.app import Context, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.common.constant import SUPERLINK_NODE_ID
from flwr.serverapp.grid import Grid
from flwr.supercore.run import Run
from flwr.supercore.task_identity import TaskIdentity

RUN_ID = 1


class LocalGrid(Grid):
    """Delivers messages to ``app`` for nodes ``1..n`` (partition ids ``partitions``)."""

    def __init__(self, app: ClientApp, partitions: list[int]) -> None:
        self.app = app
        self.nodes = {i + 1: pid for i, pid in enumerate(partitions)}
        self._states = {node: RecordDict() for node in self.nodes}
        self._replies: dict[str, Message] = {}
        self._run = Run.create_empty(RUN_ID)
        TaskIdentity.task_id, TaskIdentity.run_id = 1, RUN_ID
        TaskIdentity.node_id = SUPERLINK_NODE_ID

    def set_run(self, run: Run) -> None:
        self._run = run

    @property
    def run(self) -> Run:
        return self._run  # type: ignore[return-value]

    def create_message(
        self,
        content: RecordDict,
        message_type: str,
        dst_node_id: int,
        group_id: str,
        ttl: float | None = None,
    ) -> Message:
        return Message(content, dst_node_id, message_type, ttl=ttl, group_id=group_id)

    def get_node_ids(self) -> Iterable[int]:
        return list(self.nodes)

    def push_messages(self, messages: Iterable[Message]) -> Iterable[str]:
        ids = []
        for msg in messages:
            msg.metadata.__dict__["_message_id"] = mid = str(uuid.uuid4())
            node = msg.metadata.dst_node_id
            ctx = Context(
                RUN_ID,
                node,
                {"partition-id": self.nodes[node], "num-partitions": len(self.nodes)},
                self._states[node],
                {},
            )
            self._replies[mid] = self.app(msg, ctx)
            ids.append(mid)
        return ids

    def pull_messages(self, message_ids: Iterable[str]) -> Iterable[Message]:
        return [self._replies.pop(m) for m in message_ids if m in self._replies]

    def send_and_receive(
        self, messages: Iterable[Message], *, timeout: float | None = None
    ) -> Iterable[Message]:
        return self.pull_messages(self.push_messages(messages))
