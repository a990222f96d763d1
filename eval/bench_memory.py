"""Peak resident memory of a whole ``faim score`` process tree (main process and workers together)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil


def tree_rss(process: psutil.Process) -> int:
    """Resident bytes of a process and all its descendants right now."""
    total = 0
    for member in [process, *process.children(recursive=True)]:
        try:
            total += member.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return total


def peak_memory(model_dir: Path, dump: Path, out: Path, engine: str = "embedded", interval: float = 0.05) -> int:
    """Run ``faim score --engine ENGINE`` on ``dump`` in a subprocess, sampling the tree's RSS (Ray's local
    services included, as they are the driver's children); returns the peak in bytes."""
    command = [sys.executable, "-m", "faim", "score", str(model_dir), str(dump), "-o", str(out), "--overwrite"]
    command += ["--engine", engine]
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    process, peak = psutil.Process(child.pid), 0
    while child.poll() is None:
        try:
            peak = max(peak, tree_rss(process))
        except psutil.NoSuchProcess:
            break
        time.sleep(interval)
    if child.returncode:
        raise RuntimeError(f"faim score failed on {dump} (exit {child.returncode})")
    return peak
