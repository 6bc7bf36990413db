"""Control: imitation learning in small gymnasium environments (MOVE, #4)."""
