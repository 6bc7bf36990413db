"""Reports: tables and plots computed from what the store holds."""
