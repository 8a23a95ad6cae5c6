"""The Volcano Job and Queue: their typed models, and every admission and CRD rule checked on them as plain data."""
