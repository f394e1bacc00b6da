"""TFLite files to ONNX, once, at fetch time, and the TFLite interpreter's outputs to check the result.

Some pretrained models ship only as TFLite. tf2onnx converts them offline, but it needs TensorFlow,
which the services never need and whose pins would fight theirs; so the converter gets a virtual
environment of its own under ``$FACESTREAM_HOME/converters``, made on first use (a few hundred MB,
cached by pip). The same environment runs the TFLite interpreter (LiteRT), whose outputs on real
images are what a converted file must reproduce before facestream uses it.
"""

import json
import subprocess
import sys
import tempfile
import venv
from pathlib import Path
from typing import Any

import numpy as np

from facestream import paths
from facestream.errors import ModelError

REQUIREMENTS = ("tensorflow-cpu==2.21.0", "tf2onnx==1.17.0", "ai-edge-litert==2.3.0")
OPSET = 17

# Run by the converter's Python: each input of the .npz through the interpreter, outputs to an .npz.
_REFERENCE = """
import sys, numpy as np
from ai_edge_litert.interpreter import Interpreter
model, given, answer = sys.argv[1:4]
interpreter = Interpreter(model_path=model)
inputs = np.load(given)
outputs = {}
for key in sorted(inputs.files):
    entry = interpreter.get_input_details()[0]["index"]
    interpreter.resize_tensor_input(entry, inputs[key].shape)
    interpreter.allocate_tensors()
    interpreter.set_tensor(entry, inputs[key])
    interpreter.invoke()
    outputs[key] = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
np.savez(answer, **outputs)
"""


def converter_python() -> Path:
    """The converter environment's interpreter, made (and its packages installed) the first time."""
    home = paths.home() / "converters" / "tflite"
    python = home / "bin" / "python"
    marker = home / "requirements.json"
    if python.exists() and marker.exists() and json.loads(marker.read_text()) == list(REQUIREMENTS):
        return python
    print(
        f"setting up the TFLite converter in {home} (once; TensorFlow is a download of a few hundred MB) ...",
        file=sys.stderr,
        flush=True,
    )
    venv.create(home, with_pip=True, clear=True)
    done = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", *REQUIREMENTS])
    if done.returncode != 0:
        raise ModelError(f"could not install the TFLite converter ({', '.join(REQUIREMENTS)}); see pip's output above")
    marker.write_text(json.dumps(list(REQUIREMENTS)))
    return python


def convert(tflite: Path, target: Path) -> None:
    """``tflite`` as an ONNX file at ``target`` (tf2onnx, opset ``OPSET``)."""
    cmd = [str(converter_python()), "-m", "tf2onnx.convert", "--tflite", str(tflite), "--output", str(target)]
    done = subprocess.run([*cmd, "--opset", str(OPSET)], capture_output=True, text=True)
    if done.returncode != 0 or not target.exists():
        raise ModelError(f"tf2onnx could not convert {tflite.name}:\n{done.stderr.strip()[-2000:]}")


def reference_outputs(tflite: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The TFLite interpreter's first output for each input (each run alone, at its own shape)."""
    with tempfile.TemporaryDirectory(prefix="facestream-tflite-") as tmp:
        given, answer = Path(tmp) / "inputs.npz", Path(tmp) / "outputs.npz"
        named: dict[str, Any] = {f"{i:04d}": x for i, x in enumerate(inputs)}
        np.savez(given, **named)
        cmd = [str(converter_python()), "-c", _REFERENCE, str(tflite), str(given), str(answer)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise ModelError(f"the TFLite interpreter could not run {tflite.name}:\n{done.stderr.strip()[-2000:]}")
        outputs = np.load(answer)
        return [outputs[f"{i:04d}"] for i in range(len(inputs))]
