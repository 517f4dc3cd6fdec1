"""Peak resident memory of one `gpuinfra preview` in a fresh process: `python -m bench.rss fleet 40`."""

from __future__ import annotations

import json
import resource
import sys
import tempfile
from pathlib import Path

from bench.stages import preview
from bench.synthetic import inference_stack, training_stack


def main() -> None:
    kind, size = sys.argv[1], int(sys.argv[2])
    folder = Path(tempfile.mkdtemp(prefix="gpuinfra-bench-"))
    path = inference_stack(size, folder) if kind == "fleet" else training_stack(size, folder, onprem=kind == "onprem")
    preview(path)()
    print(
        json.dumps(
            {"kind": kind, "size": size, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
        )
    )


if __name__ == "__main__":
    main()
