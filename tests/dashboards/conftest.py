"""The dashboard server's tests reuse the service suite's helpers (a real `xcplab
serve` subprocess, the browser fixtures of the web interface's tests)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
