"""Trains the iris species classifier: the tabular example model, proving the ONNX model
component serves any model its manifest describes, chemistry or not.

Data: Fisher's iris measurements as scikit-learn ships them (sklearn.datasets.load_iris;
Fisher, Annals of Eugenics 1936, 7, 179-188). A stratified quarter is held out for validation;
heldout.tsv keeps it with onnxruntime's probabilities, which the served model must reproduce.

    python3 -m pip install -r models/requirements.txt
    python3 models/iris/train.py
"""

import pathlib
import sys

import numpy as np
import onnxruntime
from skl2onnx import to_onnx
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from common import stats, write_manifest  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
FEATURES = ["sepal_length_cm", "sepal_width_cm", "petal_length_cm", "petal_width_cm"]
SEED = 7


def main():
    iris = load_iris()
    X, y = iris.data.astype(np.float32), iris.target
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.25, stratify=y, random_state=SEED)
    forest = RandomForestClassifier(n_estimators=50, max_depth=4, random_state=SEED).fit(X_train, y_train)
    onx = to_onnx(forest, X_train[:1], options={id(forest): {"zipmap": False}},
                  target_opset={"": 17, "ai.onnx.ml": 3})
    (HERE / "model.onnx").write_bytes(onx.SerializeToString())
    session = onnxruntime.InferenceSession(str(HERE / "model.onnx"))
    labels, probabilities = session.run(None, {session.get_inputs()[0].name: X_test})
    accuracy = float(np.mean(labels == y_test))
    species = [str(s) for s in iris.target_names]
    # The held-out flowers with onnxruntime's probabilities: the served model must agree.
    with open(HERE / "heldout.tsv", "w") as f:
        f.write("\t".join(FEATURES + ["species"] + [f"onnxruntime_{s}" for s in species]) + "\n")
        for x, label, p in zip(X_test, y_test, probabilities):
            row = [f"{v:.1f}" for v in x] + [species[label]] + [f"{q:.6f}" for q in p]
            f.write("\t".join(row) + "\n")
    print(f"held-out accuracy {accuracy:.4f} on {len(y_test)} flowers")
    write_manifest(HERE / "model.toml", manifest(X_train, species, accuracy, len(y_train), len(y_test)),
                   "Manifest of the iris classifier, read by the ONNX model component.\n"
                   "Written by train.py: edit the text there, not here, and retrain.")


def manifest(X_train, species, accuracy, n_train, n_test):
    return {
        "info": {
            "name": "iris",
            "description": "Iris species (setosa, versicolor, virginica) from four flower "
                           "measurements: a small random forest, the tabular example model.",
            "license": "MIT",
            "citation": "Fisher RA. The use of multiple measurements in taxonomic problems. "
                        "Annals of Eugenics 1936, 7, 179-188.",
            "maintainer": "edge model runtime team",
        },
        "citation": {
            "paper_citation": "Fisher RA. The use of multiple measurements in taxonomic problems. "
                              "Annals of Eugenics 1936, 7, 179-188. "
                              "doi:10.1111/j.1469-1809.1936.tb02137.x",
            "software_bibtex": "@software{iris_onnx_model,\n  title = {iris: species classifier "
                               "served as an ONNX model},\n  year = {2026}\n}",
        },
        "capability": {
            "name": "iris_species",
            "description": "Classifies an iris flower from sepal and petal length and width (cm).",
        },
        "input": {"type": "tabular", "features": FEATURES},
        "output": {"kind": "classification", "property": "species", "unit": "", "labels": species},
        "acceptable_ranges": {
            "version": "1.0.0",
            "description": "Trained on 112 flowers of Fisher's three species.",
            "property_ranges": {
                name: {
                    "property_name": name.replace("_cm", "").replace("_", " ") + " (input)",
                    "unit": "cm",
                    "training_range": stats(X_train[:, i]),
                    "reliable_range": {**{k: v for k, v in stats(X_train[:, i]).items() if k != "mean"},
                                       "note": "the training range"},
                    "training_samples": n_train,
                    "validation_metrics": {
                        "R2": "not applicable (classifier)",
                        "typical_error": f"{1 - accuracy:.3f} misclassification rate",
                        "accuracy": round(accuracy, 4),
                        "test_samples": n_test,
                    },
                }
                for i, name in enumerate(FEATURES)
            },
            "chemical_scope": {
                "supported_features": ["not chemical: four flower measurements in cm"],
                "limitations": ["only Iris setosa, versicolor and virginica are known to the model"],
            },
            "usage_recommendations": [
                "Send data.features as an object of the four named measurements, or as an array "
                "in the order of /capabilities.",
            ],
        },
        "applicability_domain": {
            "feature_ranges": {name: stats(X_train[:, i]) for i, name in enumerate(FEATURES)},
        },
        "test_examples": {
            "notes": ["Measurements in cm, from Fisher's data."],
            "examples": [
                {"name": "setosa", "description": "a typical Iris setosa", "category": "setosa",
                 "features": dict(zip(FEATURES, [5.1, 3.5, 1.4, 0.2]))},
                {"name": "versicolor", "description": "a typical Iris versicolor",
                 "category": "versicolor", "features": dict(zip(FEATURES, [6.4, 3.2, 4.5, 1.5]))},
                {"name": "virginica", "description": "a typical Iris virginica",
                 "category": "virginica", "features": dict(zip(FEATURES, [6.3, 3.3, 6.0, 2.5]))},
            ],
        },
        # GET /evidence: the served model judged on heldout.tsv (the console's plots).
        "evidence": {
            "test_set": "heldout.tsv",
            "description": "the held-out rows of Fisher's iris data (stratified split, "
                           "never seen in training)",
            "measured": "species",
        },
    }


if __name__ == "__main__":
    main()
