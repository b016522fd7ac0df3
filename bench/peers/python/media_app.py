"""The Python peer of the picture and sound benchmark (section `media`): the committed
models/digits and models/spoken-digits served the way a Python deployment usually serves an
ONNX classifier: FastAPI on uvicorn (one worker), Pillow for pictures, scipy and numpy for
sounds (media_features.py), onnxruntime for the graph.

Like the component, every answer carries the label, the class probabilities and the distance
to the nearest training example (numpy over the model's training_features.f32).

`input_type` picks the model: "image" is digits, "audio" is spoken-digits. A model is loaded on
its first request, so a process that only ever sees pictures holds only the picture model (the
bench starts one process per model and measures each one's memory).
Run: uvicorn media_app:app --port PORT --workers 1
"""

import base64
import binascii
import pathlib
import time

import numpy as np
import onnxruntime
from fastapi import FastAPI
from media_features import input_spec, picture, sound
from peer import PredictionRequest, error

MODELS = pathlib.Path(__file__).resolve().parents[3] / "models"
KINDS = {"image": ("digits", picture), "audio": ("spoken-digits", sound)}


class Served:
    """One model directory: its graph, its [input] settings and its training rows."""

    def __init__(self, name, features):
        directory = MODELS / name
        self.name, self.features = name, features
        self.spec = input_spec(directory)[next(k for k in KINDS if KINDS[k][0] == name)]
        self.session = onnxruntime.InferenceSession(
            str(directory / "model.onnx"), providers=["CPUExecutionProvider"])
        self.input = self.session.get_inputs()[0].name
        width = self.session.get_inputs()[0].shape[1]
        self.training = np.fromfile(directory / "training_features.f32", dtype="<f4")
        self.training = self.training.reshape(-1, width).astype(np.float64)

    def answer(self, data):
        started = time.perf_counter()
        values, facts = self.features(data, self.spec)
        labels, probabilities = self.session.run(None, {self.input: values[None, :]})
        nearest = float(np.sqrt(((self.training - values) ** 2).sum(axis=1).min()))
        return {
            "success": True,
            "model_name": self.name,
            "results": {
                "prediction": str(labels[0]),
                "probabilities": {k: float(v) for k, v in probabilities[0].items()},
                "applicability_domain": {"nearest_training_distance": nearest},
                "input": {"source": "inline", **facts},
            },
            "computation_time_ms": (time.perf_counter() - started) * 1000.0,
            "error_message": None,
        }


loaded = {}
app = FastAPI()


@app.get("/health")
async def health():
    return {"status": "ok", "models": sorted(loaded), "version": "1.2.0"}


@app.post("/predict")
async def predict(req: PredictionRequest):
    if req.input_type not in KINDS:
        message = f"input_type `{req.input_type}` is not supported (image or audio)"
        return error(400, message, "unsupported_input_type")
    field = req.input_type
    text = req.data.get(field)
    if not isinstance(text, str) or not text:
        return error(400, f"missing field `data.{field}`", "missing_field")
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return error(400, f"`data.{field}` is not base64", "invalid_base64")
    if field not in loaded:
        loaded[field] = Served(*KINDS[field])
    try:
        return loaded[field].answer(data)
    except Exception as e:  # Pillow and scipy raise many kinds for a bad file
        return error(400, f"cannot read the {field}: {e}", f"undecodable_{field}")
