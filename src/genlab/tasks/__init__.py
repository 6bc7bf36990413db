"""Tasks: each module registers builders ``build(params, data_seed) -> TaskData``."""

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Registry

TASKS: Registry = Registry("task", package="genlab.tasks")

__all__ = ["TASKS", "Split", "TaskData", "TaskInfo"]
