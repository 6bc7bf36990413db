"""Tasks: each module registers builders ``build(params, data_seed) -> TaskData``."""

from genlab.registry import Registry
from genlab.tasks.base import Split, TaskData, TaskInfo

TASKS: Registry = Registry("task", package="genlab.tasks")

__all__ = ["TASKS", "Split", "TaskData", "TaskInfo"]
