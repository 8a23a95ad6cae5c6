"""The Volcano Job: its typed model, and every admission and CRD rule checked on it as plain data."""
