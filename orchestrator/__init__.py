"""xcplab orchestrator: spec → plan → backend → run → archive."""

__version__ = "0.1.0"
