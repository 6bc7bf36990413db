"""Tasks: each module registers builders ``build(params, data_seed) -> TaskData``.

Floor: the top registry (a task may draw data with a probe's helper), below ``spec`` and the
engine; a task built from a finished run (``useful``) is ``genlab.derived``'s.
"""

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Registry

TASKS: Registry = Registry("task", package="genlab.tasks")

__all__ = ["TASKS", "Split", "TaskData", "TaskInfo"]
