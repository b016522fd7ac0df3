"""Shared by the training scripts: our own featurizer, regression metrics, the manifest writer.

Features come from the Rust `featurize` CLI (crates/chem), the same code the ONNX model
component runs when serving, so training and serving never disagree on a feature.
"""

import math
import pathlib
import subprocess

import numpy as np
import tomli_w

REPO = pathlib.Path(__file__).resolve().parent.parent


def featurizer_binary():
    """Builds and returns the `featurize` CLI (release profile, shared with everything else)."""
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "chem", "--bin", "featurize"],
        cwd=REPO,
        check=True,
    )
    return REPO / "target" / "release" / "featurize"


def featurize(smiles, radius, bits, descriptors):
    """Returns (X, fingerprints, descriptor matrix) for a list of SMILES; fails on any error."""
    out = subprocess.run(
        [str(featurizer_binary()), "--radius", str(radius), "--bits", str(bits),
         "--descriptors", ",".join(descriptors)],
        input="\n".join(smiles) + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert len(out) == len(smiles), "featurize answered a different number of lines"
    fps = np.zeros((len(smiles), bits), dtype=np.uint8)
    desc = np.zeros((len(smiles), len(descriptors)), dtype=np.float64)
    for i, (line, smi) in enumerate(zip(out, smiles)):
        fields = line.split("\t")
        if fields[0] != "ok":
            raise SystemExit(f"featurize could not read {smi!r}: {fields[1]}")
        if fields[1]:
            fps[i, [int(b) for b in fields[1].split(",")]] = 1
        desc[i] = [float(x) for x in fields[2:]]
    X = np.hstack([fps.astype(np.float32), desc.astype(np.float32)])
    return X, fps, desc


def regression_metrics(y_true, y_pred):
    y_true, y_pred = np.asarray(y_true, float), np.asarray(y_pred, float)
    err = y_pred - y_true
    rmse = math.sqrt(float(np.mean(err**2)))
    mae = float(np.mean(np.abs(err)))
    r2 = 1.0 - float(np.sum(err**2)) / float(np.sum((y_true - y_true.mean()) ** 2))
    return {"rmse": round(rmse, 4), "mae": round(mae, 4), "r2": round(r2, 4)}


def stats(values):
    v = np.asarray(values, float)
    return {"min": round(float(v.min()), 4), "max": round(float(v.max()), 4),
            "mean": round(float(v.mean()), 4)}


def write_manifest(path, manifest, header):
    text = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    path.write_text(text + "\n" + tomli_w.dumps(manifest, multiline_strings=True))


def media_features(input_table, paths):
    """The graph's input rows for image or audio files, computed by the Rust `media-features`
    CLI (crates/media) from the manifest's `[input]` table: the very code the ONNX model
    component runs when serving, so a model never learns features serving would not compute.
    Returns float32 rows, one per path in order; fails naming the first file it could not read.
    """
    import tempfile  # only the media models need it

    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "media", "--bin", "media-features"],
        cwd=REPO,
        check=True,
    )
    paths = [str(p) for p in paths]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "input.toml").write_text(tomli_w.dumps({"input": input_table}))
        (tmp / "files.txt").write_text("".join(p + "\n" for p in paths))
        run = subprocess.run(
            [str(REPO / "target" / "release" / "media-features"),
             "--input", str(tmp / "input.toml"), "--out", str(tmp / "rows.f32"),
             "--list", str(tmp / "files.txt")],
            capture_output=True,
            text=True,
        )
        lines = run.stdout.splitlines()
        for line in lines:
            status, path, detail = (line.split("\t", 2) + ["", ""])[:3]
            if status != "ok":
                raise SystemExit(f"media-features could not read {path}: {detail}")
        if run.returncode != 0 or len(lines) != len(paths):
            raise SystemExit(f"media-features failed ({run.returncode}): {run.stderr.strip()}")
        values = np.fromfile(tmp / "rows.f32", dtype="<f4")
    assert values.size % len(paths) == 0, "media-features wrote a partial row"
    return values.reshape(len(paths), -1)


def digit_classifier_manifest(about, table, f, examples):
    """The manifest of a classifier that answers one of the digits 0-9 from a picture or a
    sound (the digits and spoken-digits example models). Both models' manifests share their
    sections, numbers and most of their wording; only the prose in `about` differs, so each
    model's *_manifest.py states what is its own and this builds the rest once.

    `about` holds: name, description, citation, bibtex, capability (its table), training (the
    training set's description), property_name, error_on (what the misclassification rate was
    measured on), test_set (the validation metrics' entries that name the test set), thing
    (what a training row came from, singular), space (the distance's units),
    supported_features, limitations, usage and notes (lists). `f` holds accuracy, n_train,
    n_test and max_distance; each example carries the input under the table's type.
    """
    accuracy = round(f["accuracy"], 4)
    thing = about["thing"]
    return {
        "info": {
            "name": about["name"],
            "description": about["description"],
            "license": "MIT",
            "citation": about["citation"],
            "maintainer": "edge model runtime team",
        },
        "citation": {"paper_citation": about["citation"], "software_bibtex": about["bibtex"]},
        "capability": about["capability"],
        "input": table,
        "output": {"kind": "classification", "property": "digit", "unit": "",
                   "labels": [str(d) for d in range(10)]},
        "acceptable_ranges": {
            "version": "1.0.0",
            "description": about["training"],
            "property_ranges": {
                "digit": {
                    "property_name": about["property_name"],
                    "unit": "",
                    "training_range": {"min": 0.0, "max": 9.0, "mean": 4.5},
                    "reliable_range": {"min": 0.0, "max": 9.0,
                                       "note": "the ten classes; every answer is one of them"},
                    "training_samples": f["n_train"],
                    "validation_metrics": {
                        "R2": "not applicable (classifier)",
                        "typical_error": f"{1 - accuracy:.3f} misclassification rate on "
                                         + about["error_on"],
                        "accuracy": accuracy,
                        "test_samples": f["n_test"],
                        **about["test_set"],
                        "max_distance": f["max_distance"],
                        "domain_rule": f"outside the domain when the nearest training {thing} "
                                       f"is farther than {f['max_distance']} (Euclidean, "
                                       f"{about['space']}): the 99th percentile of the "
                                       f"held-out {thing}s' nearest distance",
                    },
                },
            },
            "chemical_scope": {
                "supported_features": about["supported_features"],
                "limitations": about["limitations"],
            },
            "usage_recommendations": about["usage"],
        },
        "applicability_domain": {
            "training_features": "training_features.f32",
            "max_distance": f["max_distance"],
        },
        "test_examples": {
            "notes": about["notes"],
            "examples": [
                {k: e[k] for k in ("name", "description", "category", table["type"])}
                for e in examples
            ],
        },
    }
