"""The ``faim`` entry point: the listing of commands and each command's help."""

from __future__ import annotations

import json
import subprocess
import sys

from faim.cli.main import COMMANDS

HEAVY = ("torch", "transformers", "pytorch_lightning", "lightning", "sklearn", "matplotlib", "scipy", "timm")
"""What the training stack brings, which takes seconds to import: no help needs it."""

SCORING = ("numpy", "PIL", "onnxruntime", "tokenizers", "pyarrow")
"""What scoring brings (a third of a second): no help needs it either."""

HELP = f"""
import contextlib, io, json, sys
from faim.cli.main import main

found = {{}}
for command in [[]] + [[name] for name in {list(COMMANDS)!r}]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main([*command, "--help"])
        except SystemExit as exit:
            code = exit.code
    heavy = sorted({{m.split(".")[0] for m in sys.modules}} & {set(HEAVY + SCORING)!r})
    found[" ".join(command) or "(none)"] = [code, out.getvalue().splitlines()[0], heavy]
print(json.dumps(found))
"""


def test_help_of_faim_and_of_every_command_imports_none_of_the_training_stack_nor_of_scoring() -> None:
    """Each command's help, read in the same process one after the other (a module an earlier one imported stays,
    so the first command whose help imports one is the one named)."""
    result = subprocess.run([sys.executable, "-c", HELP], capture_output=True, text=True, check=True, timeout=600)
    found = json.loads(result.stdout.splitlines()[-1])
    assert found["(none)"][:2] == [0, "usage: faim [-h] [--version] COMMAND ..."]
    for command in COMMANDS:
        code, usage, heavy = found[command]
        assert code == 0 and usage.startswith(f"usage: faim {command} "), (command, usage)
    assert {command: heavy for command, (_, _, heavy) in found.items() if heavy} == {}
