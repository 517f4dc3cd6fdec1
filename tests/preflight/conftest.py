"""Preflight tests import their helpers (planting, upstream) from this folder."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
