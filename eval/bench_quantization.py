"""int8 benchmark: each saved model's fp32 export against the int8 copy ``faim export --quantize int8`` writes, on
its recipe's validation posts, in one run, and where the time goes.

    python -m faim.eval.bench_quantization MODEL [MODEL ...] [--repeats 3]

MODEL is a saved model (``faim train``'s ``<output_dir>/model``), e.g. ``runs/hate_text_frozen/model``. Both int8
exports ``faim export --quantize int8`` may write are measured: the plain one, which it keeps when no task's
macro-F1 falls by more than the default ``--max-drop``, and the one smoothed on 256 posts of the recipe's training
split, which it makes otherwise. Printed per model and int8 export: the smoothing strength chosen for each encoder
graph, each task's macro-F1 under fp32 and int8 and the posts/s of each, the median over ``--repeats`` passes of
``faim.eval.quantization.compare_exports`` (halves interleaved). Then the encoder graphs profiled by onnxruntime
while scoring the same posts: the share ``p`` of the fp32 time spent in the operators int8 replaces (the matrix
products with weights, and a transformer's ``Attention`` whole, attention itself included, which ``QAttention``
still computes in fp32), how much faster their int8 replacements run (``r``), and how much faster the graphs ran as
profiled (``1 / (1 - p + p / r)`` by Amdahl's law, the operators int8 leaves taking the time they took). The share
bounds what quantizing those operators can give: however fast their replacements ran, the graphs would run at most
``1 / (1 - p)`` times faster (Amdahl's law, the replaced operators taking no time). The CPU is named first, with
whether it has int8 dot-product instructions (VNNI), on which the int8 products' speed-up depends most.
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
from faim.detector import Detector
from faim.eval.benchmark import cpu_flags, cpu_model
from faim.eval.quantization import compare_exports
from faim.export.model import export_model
from faim.export.quantize import CALIBRATION_POSTS, MAX_DROP, calibration_sample, quantize_export
from faim.runtime.bundle import read_bundle
from faim.runtime.model import ExportedModel


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
    """Where the encoder graphs' time goes, from their profiles (microseconds by operator type) in fp32 and int8:
    ``quantized_share``, the share of fp32 time in the operators int8 replaced; ``quantized_ops_speedup``, how much
    faster their replacements ran; ``profiled_speedup``, how much faster the whole graphs ran; ``bound``, the most
    the graphs could run faster by replacing that share however fast its replacements ran, ``1 / (1 - share)``
    (Amdahl's law)."""
    replaced = sum(fp32.values()) - sum(spent for op, spent in int8.items() if op in fp32)  # what int8 left is alike
    replacements = sum(spent for op, spent in int8.items() if op not in fp32)
    share = replaced / sum(fp32.values())
    return {
        "quantized_share": share,
        "quantized_ops_speedup": replaced / replacements,
        "bound": 1 / (1 - share),
        "profiled_speedup": sum(fp32.values()) / sum(int8.values()),
    }


def measure(model: str, repeats: int) -> dict:
    """Both int8 exports ``faim export --quantize int8`` may write, plain and smoothed, against fp32 on the
    recipe's validation posts; ``kept``: the one the command keeps at the default ``--max-drop``."""
    detector = Detector.load(model)
    source = read_recipe(model).data_source()
    posts = source.posts("validation")
    variants = {}
    with tempfile.TemporaryDirectory(prefix="faim-bench-int8-") as tmp:
        fp32 = export_model(detector, Path(tmp) / "fp32")
        spent_fp32 = profile(fp32, posts, Path(tmp))
        sample = calibration_sample(source.posts("train"))
        for name, calibration in (("plain", []), ("smoothed", sample)):
            int8 = quantize_export(fp32, Path(tmp) / name, calibration)
            checks = [compare_exports(ExportedModel(fp32), ExportedModel(int8), posts) for _ in range(repeats)]
            rates = [statistics.median(check.posts_per_second[i] for check in checks) for i in (0, 1)]
            variants[name] = {
                "macro_f1": checks[0].macro_f1,
                "drop": checks[0].drop,
                "posts_per_second": rates,
                "speedups": [check.speedup for check in checks],
                "speedup": rates[1] / rates[0],
                "smoothing": read_bundle(int8)["smoothing"],
                **where_time_goes(spent_fp32, profile(int8, posts, Path(tmp))),
            }
    kept = "plain" if variants["plain"]["drop"] <= MAX_DROP else "smoothed"
    return {"model": model, "posts": checks[0].posts, "variants": variants, "kept": kept}


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
        print(f"{model}: {row['posts']} validation posts, {onnxruntime.get_device()} onnxruntime; faim export keeps "
              f"the {row['kept']} int8 export")  # fmt: skip
        for name, variant in row["variants"].items():
            chosen = ", ".join(f"{graph} {strength}" for graph, strength in variant["smoothing"].items())
            print(f"  {name}" if name == "plain" else f"  {name} (strength per graph, chosen on {CALIBRATION_POSTS} "
                  f"training posts: {chosen})")  # fmt: skip
            for task, (before, after) in variant["macro_f1"].items():
                print(f"    {task}: macro-F1 fp32 {before:.4f}, int8 {after:.4f} (drop {before - after:.4f}; "
                      f"target <= {MAX_DROP})")  # fmt: skip
            fp32_rate, int8_rate = variant["posts_per_second"]
            passes = ", ".join(f"{s:.2f}x" for s in variant["speedups"])
            print(f"    posts/s: fp32 {fp32_rate:.1f}, int8 {int8_rate:.1f}: {variant['speedup']:.2f}x (passes "
                  f"{passes}; target >= 1.5x)")  # fmt: skip
            print(
                f"    encoder graphs: {variant['quantized_share']:.0%} of fp32 time in the operators int8 replaces, "
                f"which run {variant['quantized_ops_speedup']:.2f}x faster in int8; the graphs ran "
                f"{variant['profiled_speedup']:.2f}x faster as profiled, and could run at most {variant['bound']:.2f}x "
                "faster however fast those operators ran (Amdahl)"
            )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
