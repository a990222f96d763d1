"""Exported runtime benchmark: ``faim.runtime`` (onnxruntime, no torch) against the eager torch ``Detector``, and
``faim score --runtime onnx`` against ``faim score``'s default torch path, on the scoring benchmark's model and
multimodal dump, in one run.

    python -m faim.eval.bench_runtime [--posts 400] [--batch-size 16] [--starts 3]

Model: the scoring benchmark's (all-MiniLM-L6-v2 + EfficientNet-Lite0, real bundled weights, attention fusion,
untrained binary head), saved, then exported with ``faim export``. Both paths score the same posts ``batch_size``
at a time in this process, each in two halves interleaved (torch, runtime, torch, runtime) so that a drift in the
machine's speed weighs on both; printed: posts/s of each, their ratio, and the largest score difference. Cold
start: a fresh Python process from its start to the first post's score (imports, loading, one post), median of
``--starts`` runs of each, alternated. End to end: the ``faim score`` command run on the whole dump (all cores, its
default workers) with the saved model, then with ``--runtime onnx`` on the export, each as a new process timed from
its start to its exit, and on a dump of one post (the command's cold start); printed: rows/s, ratios, and the
largest difference between the two runs' scores.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import torch

import faim
import faim.runtime
from faim.data.sources import read_posts
from faim.eval.bench_dumps import multimodal_dump
from faim.eval.bench_scoring import RECIPE
from faim.export.model import export_model

COLD_START = """
import sys, time
start = float(sys.argv[3])
if sys.argv[1] == "runtime":
    import faim.runtime
    model = faim.runtime.load(sys.argv[2])
else:
    import faim
    model = faim.load(sys.argv[2])
from faim.data.sources import read_posts
model.score(list(read_posts(sys.argv[4]))[:1])
print(time.time() - start)
"""


def timed_scores(model: object, posts: list, batch_size: int) -> tuple[float, dict[str, float]]:
    """Seconds ``model.score`` takes over ``posts``, and the scores by id."""
    start = time.perf_counter()
    rows = model.score(posts, batch_size=batch_size)  # type: ignore[attr-defined]
    return time.perf_counter() - start, {row["id"]: row["harmful"] for row in rows}


def cold_start(path: str, directory: Path, dump: Path) -> float:
    """Seconds from a new process's start to its first score."""
    started = time.time()
    command = [sys.executable, "-c", COLD_START, path, str(directory), str(started), str(dump)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return float(result.stdout.strip().splitlines()[-1])


def command_seconds(model: Path, dump: Path, out: Path, runtime: str) -> float:
    """Wall seconds of ``faim score MODEL DUMP -o OUT --runtime RUNTIME`` in a new process, start to exit."""
    command = [sys.executable, "-m", "faim", "score", str(model), str(dump), "-o", str(out), "--runtime", runtime]
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, text=True, check=True)
    return time.perf_counter() - start


def scored(out: Path) -> dict[str, float]:
    table = pq.read_table(out, columns=["id", "harmful"]).to_pylist()
    return {row["id"]: row["harmful"] for row in table}


def end_to_end(root: Path, posts: int) -> dict[str, float]:
    """``faim score`` on the whole dump and on one post, torch then onnx; prints and returns the figures."""
    (root / "one.jsonl").write_text((root / "dump.jsonl").read_text(encoding="utf-8").splitlines()[0] + "\n")
    paths = {"torch": root / "model", "onnx": root / "export"}
    whole = {
        name: command_seconds(path, root / "dump.jsonl", root / f"out-{name}", name) for name, path in paths.items()
    }
    one = {name: command_seconds(path, root / "one.jsonl", root / f"one-{name}", name) for name, path in paths.items()}
    torch_scores, onnx_scores = scored(root / "out-torch"), scored(root / "out-onnx")
    gap = max(abs(torch_scores[key] - onnx_scores[key]) for key in torch_scores)
    print(f"\nfaim score end to end, {posts} posts, new process to exit, default workers:")
    print(f"  --runtime torch (default options):  {posts / whole['torch']:7.1f} rows/s  ({whole['torch']:.1f} s)")
    speedup = whole["torch"] / whole["onnx"]
    print(f"  --runtime onnx:                     {posts / whole['onnx']:7.1f} rows/s  = {speedup:.2f}x")
    print(f"  largest score difference: {gap:.2e} (the torch path's default speed-ups approximate)")
    print(f"faim score on one post (cold start): torch {one['torch']:.2f} s, onnx {one['onnx']:.2f} s "
          f"= {one['onnx'] / one['torch']:.2f} of it")  # fmt: skip
    return {"end_to_end_speedup": speedup, "command_cold_start_share": one["onnx"] / one["torch"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--posts", type=int, default=400, help="posts scored by each path")
    parser.add_argument("--batch-size", type=int, default=16, help="posts per batch on both paths")
    parser.add_argument("--starts", type=int, default=3, help="cold starts of each path (the median is printed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="faim-bench-") as tmp:
        root = Path(tmp)
        torch.manual_seed(0)
        faim.build(RECIPE).save(str(root / "model"))
        start = time.perf_counter()
        export_model(faim.load(root / "model"), root / "export")
        print(f"faim export: {time.perf_counter() - start:.1f} s")
        print("dump:", multimodal_dump(root / "dump.jsonl", args.posts))
        posts = list(read_posts(root / "dump.jsonl"))
        detector, runtime = faim.load(root / "model"), faim.runtime.load(root / "export")
        detector.score(posts[:2])  # warm-up, both
        runtime.score(posts[:2])
        half = len(posts) // 2
        seconds = {"torch": 0.0, "runtime": 0.0}
        scores: dict[str, dict[str, float]] = {"torch": {}, "runtime": {}}
        for part in (posts[:half], posts[half:]):
            for name, model in (("torch", detector), ("runtime", runtime)):
                spent, got = timed_scores(model, part, args.batch_size)
                seconds[name] += spent
                scores[name] |= got
        rate = {name: len(posts) / spent for name, spent in seconds.items()}
        gap = max(abs(scores["torch"][key] - scores["runtime"][key]) for key in scores["torch"])
        threads = torch.get_num_threads()
        print(f"\nscoring {len(posts)} posts, batches of {args.batch_size}, in this process ({threads} threads)")
        print(f"  Detector.score (torch, fp32, eager):  {rate['torch']:7.1f} posts/s")
        speedup = rate["runtime"] / rate["torch"]
        print(f"  faim.runtime score (onnxruntime fp32): {rate['runtime']:7.1f} posts/s  = {speedup:.2f}x")
        print(f"  largest score difference: {gap:.2e}")
        starts: dict[str, list[float]] = {"torch": [], "runtime": []}
        for _ in range(args.starts):
            starts["torch"].append(cold_start("torch", root / "model", root / "dump.jsonl"))
            starts["runtime"].append(cold_start("runtime", root / "export", root / "dump.jsonl"))
        median = {name: statistics.median(values) for name, values in starts.items()}
        print(f"\ncold start, process start to first score (median of {args.starts}):")
        print(f"  faim.load + score:          {median['torch']:6.2f} s")
        share = median["runtime"] / median["torch"]
        print(f"  faim.runtime.load + score:  {median['runtime']:6.2f} s  = {share:.2f} of it")
        figures = end_to_end(root, len(posts))
        print(json.dumps({"posts_per_s": rate, "cold_start_s": median, "max_score_difference": gap} | figures))


if __name__ == "__main__":
    main()
