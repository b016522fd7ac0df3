"""Makes this fixture: a classifier exported with skl2onnx's default options, so its graph
ends in ZipMap (tests/tests/models/onnx/zipmap.rs). model.toml is docs/own-model.md's
flowers manifest; expected.json holds scikit-learn's own probabilities for one flower.

    target/test-python/bin/python tests/data/zipmap-flowers/make.py   (from the repository root)
"""

import json
import pathlib

import numpy as np
from skl2onnx import to_onnx
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

HERE = pathlib.Path(__file__).resolve().parent
iris = load_iris()
X, y = iris.data.astype(np.float32), iris.target_names[iris.target]
clf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
(HERE / "model.onnx").write_bytes(to_onnx(clf, X[:1]).SerializeToString())
row = X[100]
expected = {
    "features": dict(zip(["sepal_length_cm", "sepal_width_cm", "petal_length_cm", "petal_width_cm"],
                         [float(v) for v in row])),
    "probabilities": dict(zip([str(c) for c in clf.classes_],
                              [float(p) for p in clf.predict_proba(row[None, :])[0]])),
}
(HERE / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
