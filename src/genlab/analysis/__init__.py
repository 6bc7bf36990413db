"""Analysis: pure functions from the store's DataFrames to DataFrames (selection, aggregation, tests).

Floor: the bottom (pure analysis): imports only ``errors`` and its own modules.
"""
