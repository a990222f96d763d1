"""What starting a faim process costs: wall seconds of a few imports, each timed in fresh interpreters (median of
``--repeats``), against ``import torch`` (which every one of them pays), and which heavy libraries each leaves
loaded. Every scoring worker and Ray actor pays ``import faim.detector`` when it starts.

``python -m faim.eval.bench_startup [--repeats 3]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

STATEMENTS = ("import torch", "import faim.detector", "import faim.api")
"""The imports timed; the first is the baseline the others are compared with."""

LIBRARIES = ("transformers", "timm", "torchvision", "sklearn", "matplotlib", "captum")
"""The heavy libraries only some components need, reported where an import leaves them loaded."""


def timed_import(statement: str) -> tuple[float, list[str]]:
    """Seconds ``statement`` takes in a fresh interpreter, and which of ``LIBRARIES`` it leaves in ``sys.modules``."""
    code = (
        "import json, sys, time\nstart = time.perf_counter()\n"
        f"{statement}\nseconds = time.perf_counter() - start\n"
        f"print(json.dumps([seconds, [m for m in {list(LIBRARIES)!r} if m in sys.modules]]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    seconds, loaded = json.loads(out.splitlines()[-1])
    return seconds, loaded


def measure(statement: str, repeats: int) -> tuple[float, list[str]]:
    """The median seconds of ``repeats`` fresh runs of ``statement`` and the libraries its last run left loaded."""
    runs = [timed_import(statement) for _ in range(repeats)]
    return statistics.median(seconds for seconds, _ in runs), runs[-1][1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="fresh interpreters per import (median taken)")
    args = parser.parse_args(argv)
    baseline = None
    print(f"{'import':<24} {'seconds':>8} {'x torch':>8}  heavy libraries loaded")
    for statement in STATEMENTS:
        seconds, loaded = measure(statement, args.repeats)
        baseline = baseline or seconds
        print(f"{statement:<24} {seconds:8.2f} {seconds / baseline:8.2f}  {', '.join(loaded) or '-'}")


if __name__ == "__main__":
    main()
