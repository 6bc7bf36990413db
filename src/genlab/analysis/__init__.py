"""Analysis: pure functions from the store's DataFrames to DataFrames (selection, aggregation, tests)."""
