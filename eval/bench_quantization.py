"""int8 benchmark: each saved model's fp32 export against the int8 copy ``faim export --quantize int8`` writes, on
its recipe's validation posts, in one run, and where the time goes.

    python -m faim.eval.bench_quantization MODEL [MODEL ...] [--repeats 3]

MODEL is a saved model (``faim train``'s ``<output_dir>/model``), e.g. ``runs/hate_text_frozen/model``. Printed per
model: each task's macro-F1 under fp32 and int8 and the posts/s of each, the median over ``--repeats`` passes of
``faim.eval.quantization.compare_exports`` (halves interleaved). Then the encoder graphs profiled by onnxruntime
while scoring the same posts: the share of the fp32 time spent in the operators int8 replaces (the matrix products
with weights, and a transformer's ``Attention`` whole, attention itself included, which ``QAttention`` still
computes in fp32) and how much faster their int8 replacements run. Those two figures bound what this quantization can
give (Amdahl's law): with a share ``p`` sped up ``r`` times, the whole runs at most ``1 / (1 - p + p / r)`` times
faster, and never more than ``r`` even were every operator quantized. The CPU is named first, with whether it has
int8 dot-product instructions (VNNI), on which the int8 products' speed-up depends most.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections import Counter
from pathlib import Path

import onnxruntime

from faim.artifact import read_recipe
from faim.assembly import build_source
from faim.detector import Detector
from faim.eval.benchmark import cpu_flags, cpu_model
from faim.eval.quantization import compare_exports
from faim.export.model import export_model
from faim.export.quantize import quantize_export
from faim.runtime import ExportedModel
from faim.runtime.bundle import read_bundle


class ProfiledGraphs:
    """Opens each graph as an onnxruntime session that profiles its operators, and sums their time by operator
    type over every graph opened."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.sessions: list[tuple[Path, onnxruntime.InferenceSession]] = []

    def __call__(self, path: Path) -> onnxruntime.InferenceSession:
        options = onnxruntime.SessionOptions()
        options.enable_profiling = True
        options.profile_file_prefix = str(self.directory / f"graph{len(self.sessions)}")
        session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.sessions.append((path, session))
        return session

    def microseconds(self, graphs: set[Path]) -> Counter:
        """Operator type → microseconds spent in it, over the sessions of ``graphs``."""
        spent: Counter = Counter()
        for path, session in self.sessions:
            trace = Path(session.end_profiling())
            if path not in graphs:
                continue
            for event in json.loads(trace.read_text()):
                if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
                    spent[event["args"]["op_name"]] += event["dur"]
        return spent


def profile(export: Path, posts: list, scratch: Path) -> Counter:
    """Microseconds by operator type in ``export``'s encoder graphs while it scores the readable ``posts``."""
    graphs = ProfiledGraphs(scratch)
    model = ExportedModel(export, open_graph=graphs)
    model.predict(model.readable(posts)[0], 16)
    encoders = read_bundle(export)["encoders"].values()
    return graphs.microseconds({export / part["graph"] for entry in encoders for part in entry["parts"]})


def where_time_goes(fp32: Counter, int8: Counter) -> dict[str, float]:
    """The share of fp32 encoder time in the operators int8 replaced, the speed-up of their replacements, and the
    speed-ups the whole graph can reach by Amdahl's law at that rate, measured alongside the whole's own."""
    replaced = sum(fp32.values()) - sum(spent for op, spent in int8.items() if op in fp32)  # what int8 left is alike
    replacements = sum(spent for op, spent in int8.items() if op not in fp32)
    share, rate = replaced / sum(fp32.values()), replaced / replacements
    return {
        "quantized_share": share,
        "quantized_ops_speedup": rate,
        "bound": 1 / (1 - share + share / rate),
        "profiled_speedup": sum(fp32.values()) / sum(int8.values()),
    }


def measure(model: str, repeats: int) -> dict:
    detector = Detector.load(model)
    posts = build_source(read_recipe(model).data_section).posts("validation")
    with tempfile.TemporaryDirectory(prefix="faim-bench-int8-") as tmp:
        fp32 = export_model(detector, Path(tmp) / "fp32")
        int8 = quantize_export(fp32, Path(tmp) / "int8")
        checks = [compare_exports(ExportedModel(fp32), ExportedModel(int8), posts) for _ in range(repeats)]
        spent = [profile(export, posts, Path(tmp)) for export in (fp32, int8)]
    rates = [statistics.median(check.posts_per_second[i] for check in checks) for i in (0, 1)]
    return {
        "model": model,
        "posts": checks[0].posts,
        "macro_f1": checks[0].macro_f1,
        "posts_per_second": rates,
        "speedups": [check.speedup for check in checks],
        "speedup": rates[1] / rates[0],
        **where_time_goes(*spent),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", metavar="MODEL", help="saved models (faim train's <output_dir>/model)")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes over the posts (default: %(default)s)")
    args = parser.parse_args()
    flags = cpu_flags()
    vnni = sorted(flag for flag in flags if "vnni" in flag) or (["none"] if flags else ["unknown"])
    print(f"CPU: {cpu_model()}, int8 dot-product instructions: {', '.join(vnni)}")
    rows = []
    for model in args.models:
        row = measure(model, args.repeats)
        rows.append(row)
        print(f"{model}: {row['posts']} validation posts, {onnxruntime.get_device()} onnxruntime")
        for task, (before, after) in row["macro_f1"].items():
            print(f"  {task}: macro-F1 fp32 {before:.4f}, int8 {after:.4f} (drop {before - after:.4f}; target <= 0.01)")
        fp32_rate, int8_rate = row["posts_per_second"]
        passes = ", ".join(f"{s:.2f}x" for s in row["speedups"])
        print(f"  posts/s: fp32 {fp32_rate:.1f}, int8 {int8_rate:.1f}: {row['speedup']:.2f}x (passes {passes}; "
              "target >= 1.5x)")  # fmt: skip
        print(
            f"  encoder graphs: {row['quantized_share']:.0%} of fp32 time in the operators int8 replaces, which run "
            f"{row['quantized_ops_speedup']:.2f}x faster in int8; so at most {row['bound']:.2f}x for the graphs "
            f"(profiled: {row['profiled_speedup']:.2f}x)"
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
