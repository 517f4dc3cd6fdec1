"""The generated data files' layout: an `about` list of lines, then one row per line, so a regenerated file diffs
row by row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_json(path: Path, about: list[str], body: dict[str, Any]) -> None:
    parts = [f'{{\n  "about": {json.dumps(about, indent=None)}']
    for key, value in body.items():
        if isinstance(value, list):
            rows = ",\n    ".join(json.dumps(r, separators=(", ", ": ")) for r in value)
            parts.append(f'  "{key}": [\n    {rows}\n  ]')
        else:
            parts.append(f'  "{key}": {json.dumps(value)}')
    path.write_text(",\n".join(parts) + "\n}\n", encoding="utf-8")


__all__ = ["write_json"]
