"""The scikit-learn corpus: estimators and pipelines people train, exported with skl2onnx's
default options (`to_onnx(model, X[:1])`), each with its training data, held-out rows and
onnxruntime's answers for them. `tests/tests/models/onnx/corpus.rs` deploys every model and
compares. Run: python sklearn_corpus.py OUT_DIR [NAME...]

Each OUT_DIR/<name>/ holds model.onnx, train.csv (the training rows, target last),
heldout.csv (the held-out rows, same columns) and expected.json: per held-out row, the
label onnxruntime predicts and its probabilities (classifiers) or its value (regressors).
"""

import json
import pathlib
import sys
import warnings

import lightgbm as lgb
import numpy as np
import onnxmltools
import onnxruntime as ort
import xgboost as xgb
from onnxmltools.convert.common.data_types import FloatTensorType
import pandas as pd
from skl2onnx import to_onnx
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine
from sklearn.decomposition import PCA
from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor,
                              GradientBoostingClassifier, GradientBoostingRegressor,
                              HistGradientBoostingClassifier, HistGradientBoostingRegressor,
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import (ElasticNet, Lasso, LinearRegression, LogisticRegression,
                                  Ridge, RidgeClassifier, SGDClassifier)
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (Binarizer, MaxAbsScaler, MinMaxScaler, Normalizer,
                                   OneHotEncoder, OrdinalEncoder, PolynomialFeatures,
                                   RobustScaler, StandardScaler)
from sklearn.svm import SVC, SVR, LinearSVC, LinearSVR
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

warnings.filterwarnings("ignore")
SEED = 0
HELD_OUT = 25


def frame(data, target, names):
    """Features as float32 columns with names the manifest can use, and the target."""
    cols = [n.replace(" ", "_").replace("(", "").replace(")", "").replace("/", "_") for n in names]
    return pd.DataFrame(np.asarray(data, dtype=np.float32), columns=cols), pd.Series(target)


def diabetes():
    d = load_diabetes()
    return frame(d.data, d.target, d.feature_names)


def micromolar():
    """A regression on a small quantity (mol/L): rounding would throw its answers away."""
    X, y = diabetes()
    return X, y * 2.0e-6


def cancer():
    d = load_breast_cancer()
    return frame(d.data, d.target, d.feature_names)


def cancer_named():
    d = load_breast_cancer()
    return frame(d.data, d.target_names[d.target], d.feature_names)


def iris():
    d = load_iris()
    return frame(d.data, d.target_names[d.target], d.feature_names)


def wine():
    d = load_wine()
    return frame(d.data, d.target, d.feature_names)


def with_gaps(load):
    """The same data with one value in twelve missing (NaN), for the imputers."""
    def gappy():
        X, y = load()
        mask = np.random.default_rng(SEED).random(X.shape) < 1 / 12
        return X.mask(mask), y
    return gappy


def mixed(load, counts=False):
    """Numeric columns plus two string columns (a colour and a grade), for ColumnTransformer;
    with `counts`, an integer column too (an int64 input of the graph)."""
    def loaded():
        X, y = load()
        X = X.iloc[:, :6].copy()
        rng = np.random.default_rng(SEED)
        X["colour"] = rng.choice(["red", "green", "blue"], len(X))
        first = X.columns[0]
        X["grade"] = np.where(X[first] > X[first].median(), "high", "low")
        if counts:
            X["visits"] = rng.integers(0, 20, len(X)).astype(np.int64)
        return X, y
    return loaded


def doubles(load):
    """The same data with its numeric columns as float64, as pandas reads a CSV: skl2onnx then
    exports the numeric inputs as doubles."""
    def loaded():
        X, y = load()
        numeric = [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c])]
        return X.astype({c: np.float64 for c in numeric}), y
    return loaded


NUMERIC = lambda X: [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c])]
TEXT = lambda X: [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]


def column_transformer(final, numeric=None, text=None):
    def build(X):
        return make_pipeline(
            ColumnTransformer([
                ("num", numeric or make_pipeline(SimpleImputer(), StandardScaler()), NUMERIC(X)),
                ("txt", text or OneHotEncoder(handle_unknown="ignore"), TEXT(X)),
            ]),
            final,
        )
    return build


def plain(estimator):
    return lambda X: estimator


# name: (data, estimator builder)
CASES = {
    # regressors
    "linear_regression": (diabetes, plain(LinearRegression())),
    "ridge": (diabetes, plain(Ridge())),
    "lasso": (diabetes, plain(Lasso(alpha=0.1))),
    "elastic_net": (diabetes, plain(ElasticNet(alpha=0.01))),
    "svr_rbf": (diabetes, plain(make_pipeline(StandardScaler(), SVR(kernel="rbf", C=50)))),
    "svr_linear": (diabetes, plain(SVR(kernel="linear", C=100))),
    "svr_poly": (diabetes, plain(make_pipeline(StandardScaler(), SVR(kernel="poly", C=50)))),
    "svr_sigmoid": (diabetes, plain(make_pipeline(StandardScaler(), SVR(kernel="sigmoid", C=10)))),
    "linear_svr": (diabetes, plain(make_pipeline(StandardScaler(), LinearSVR(random_state=SEED)))),
    "knn_regressor": (diabetes, plain(KNeighborsRegressor())),
    "decision_tree_regressor": (diabetes, plain(DecisionTreeRegressor(max_depth=6, random_state=SEED))),
    "random_forest_regressor": (diabetes, plain(RandomForestRegressor(n_estimators=30, random_state=SEED))),
    "extra_trees_regressor": (diabetes, plain(ExtraTreesRegressor(n_estimators=30, random_state=SEED))),
    "gradient_boosting_regressor": (diabetes, plain(GradientBoostingRegressor(random_state=SEED))),
    "hist_gradient_boosting_regressor": (diabetes, plain(HistGradientBoostingRegressor(random_state=SEED))),
    "mlp_regressor": (diabetes, plain(make_pipeline(StandardScaler(), MLPRegressor(hidden_layer_sizes=(32,), max_iter=2000, random_state=SEED)))),
    "pca_linear_regression": (diabetes, plain(make_pipeline(PCA(n_components=5), LinearRegression()))),
    "polynomial_ridge": (diabetes, plain(make_pipeline(PolynomialFeatures(2), Ridge()))),
    "imputer_minmax_svr": (with_gaps(diabetes), plain(make_pipeline(SimpleImputer(), MinMaxScaler(), SVR(C=50)))),
    "micromolar_ridge": (micromolar, plain(make_pipeline(StandardScaler(), Ridge()))),
    "micromolar_forest": (micromolar, plain(RandomForestRegressor(n_estimators=20, random_state=SEED))),
    "mixed_ridge": (mixed(with_gaps(diabetes)), column_transformer(Ridge())),
    "mixed_ordinal_forest": (mixed(diabetes), column_transformer(RandomForestRegressor(n_estimators=20, random_state=SEED), text=OrdinalEncoder())),
    # binary classifiers
    "scaler_logistic": (cancer, plain(make_pipeline(StandardScaler(), LogisticRegression()))),
    "logistic": (cancer, plain(LogisticRegression(max_iter=5000))),
    "svc_rbf": (cancer, plain(make_pipeline(StandardScaler(), SVC(probability=True, random_state=SEED)))),
    "svc_linear": (cancer_named, plain(make_pipeline(StandardScaler(), SVC(kernel="linear", probability=True, random_state=SEED)))),
    "knn_classifier": (cancer, plain(make_pipeline(StandardScaler(), KNeighborsClassifier()))),
    "gaussian_nb": (cancer, plain(GaussianNB())),
    "binarizer_bernoulli_nb": (cancer, plain(make_pipeline(StandardScaler(), Binarizer(), BernoulliNB()))),
    "decision_tree_classifier": (cancer_named, plain(DecisionTreeClassifier(max_depth=5, random_state=SEED))),
    "random_forest_classifier": (cancer, plain(RandomForestClassifier(n_estimators=30, random_state=SEED))),
    "gradient_boosting_classifier": (cancer, plain(GradientBoostingClassifier(random_state=SEED))),
    "hist_gradient_boosting_classifier": (cancer_named, plain(HistGradientBoostingClassifier(random_state=SEED))),
    "mlp_classifier": (cancer, plain(make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(16,), max_iter=2000, random_state=SEED)))),
    "robust_sgd_log": (cancer, plain(make_pipeline(RobustScaler(), SGDClassifier(loss="log_loss", random_state=SEED)))),
    "mixed_logistic": (mixed(cancer_named), column_transformer(LogisticRegression(max_iter=5000))),
    # multi-class classifiers
    "iris_logistic": (iris, plain(make_pipeline(StandardScaler(), LogisticRegression()))),
    "iris_svc_poly": (iris, plain(SVC(kernel="poly", probability=True, random_state=SEED))),
    "wine_svc_sigmoid": (wine, plain(make_pipeline(StandardScaler(), SVC(kernel="sigmoid", probability=True, random_state=SEED)))),
    "wine_random_forest": (wine, plain(RandomForestClassifier(n_estimators=30, random_state=SEED))),
    "iris_extra_trees": (iris, plain(ExtraTreesClassifier(n_estimators=30, random_state=SEED))),
    "wine_knn": (wine, plain(make_pipeline(MinMaxScaler(), KNeighborsClassifier()))),
    "iris_multinomial_nb": (iris, plain(MultinomialNB())),
    "iris_gradient_boosting": (iris, plain(GradientBoostingClassifier(random_state=SEED))),
    "wine_mlp": (wine, plain(make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(16,), max_iter=2000, random_state=SEED)))),
    "wine_hist_gradient_boosting": (wine, plain(HistGradientBoostingClassifier(random_state=SEED))),
    "iris_normalizer_logistic": (iris, plain(make_pipeline(Normalizer(), LogisticRegression()))),
    "wine_maxabs_decision_tree": (wine, plain(make_pipeline(MaxAbsScaler(), DecisionTreeClassifier(random_state=SEED)))),
    "iris_imputer_gaussian_nb": (with_gaps(iris), plain(make_pipeline(SimpleImputer(strategy="median"), GaussianNB()))),
    "mixed_wine_forest": (mixed(wine), column_transformer(RandomForestClassifier(n_estimators=20, random_state=SEED))),
    # a DataFrame of float64 columns (as pandas reads them): double inputs, computed in double
    "mixed_double_ridge": (doubles(mixed(diabetes)), column_transformer(Ridge(), numeric=StandardScaler())),
    # scikit-learn's defaults: an encoder that refuses unknown categories, integer columns
    "mixed_strict_logistic": (mixed(cancer_named, counts=True), column_transformer(LogisticRegression(max_iter=5000), text=OneHotEncoder())),
    # classifiers answering decision scores, not probabilities (their defaults)
    "svc_default": (cancer, plain(make_pipeline(StandardScaler(), SVC()))),
    "iris_svc_default": (iris, plain(make_pipeline(StandardScaler(), SVC()))),
    "ridge_classifier": (wine, plain(make_pipeline(StandardScaler(), RidgeClassifier()))),
    "ridge_binary": (cancer, plain(make_pipeline(StandardScaler(), RidgeClassifier()))),
    # (skl2onnx 1.20 refuses LinearSVC inside a pipeline with default options: alone here)
    "linear_svc": (cancer, plain(LinearSVC(random_state=SEED))),
    # probabilities calibrated from those scores (scikit-learn 1.9's advice in place of
    # SVC(probability=True)): probabilities again
    "calibrated_linear_svc": (cancer, plain(make_pipeline(StandardScaler(), CalibratedClassifierCV(LinearSVC(random_state=SEED))))),
    "iris_calibrated_svc": (iris, plain(make_pipeline(StandardScaler(), CalibratedClassifierCV(SVC(random_state=SEED))))),
    # LightGBM, exported by onnxmltools with its default options
    "lightgbm_regressor": (diabetes, plain(lgb.LGBMRegressor(n_estimators=30, verbose=-1, random_state=SEED))),
    "lightgbm_classifier": (wine, plain(lgb.LGBMClassifier(n_estimators=30, verbose=-1, random_state=SEED))),
    # XGBoost (the CPU-only wheel), exported by onnxmltools with its default options
    "xgboost_regressor": (diabetes, plain(xgb.XGBRegressor(n_estimators=30, random_state=SEED))),
    "xgboost_classifier": (wine, plain(xgb.XGBClassifier(n_estimators=30, random_state=SEED))),
}


def export(model, X):
    """skl2onnx's default export (`to_onnx(model, X[:1])`: one float matrix input, or one input
    per column of a DataFrame with text columns); onnxmltools' for LightGBM and XGBoost."""
    types = [("input", FloatTensorType([None, X.shape[1]]))]
    if isinstance(model, (lgb.LGBMRegressor, lgb.LGBMClassifier)):
        return onnxmltools.convert_lightgbm(model, initial_types=types)
    if isinstance(model, (xgb.XGBRegressor, xgb.XGBClassifier)):
        return onnxmltools.convert_xgboost(model, initial_types=types)
    sample = X[:1] if TEXT(X) else X.to_numpy(dtype=np.float32)[:1]
    return to_onnx(model, sample)


# Made only when named: exports `model init` cannot describe unedited (tested apart).
EXTRA_CASES = {
    # decision scores computed with plain operators: `model init` cannot tell them from
    # probabilities; `model check` says what to write
    "sgd_hinge": (cancer, plain(make_pipeline(StandardScaler(), SGDClassifier(random_state=SEED)))),
}


def onnx_inputs(X, sess):
    """The held-out rows as onnxruntime's feeds: one matrix, or one column per input."""
    names = [i.name for i in sess.get_inputs()]
    if len(names) == 1:
        return {names[0]: X.to_numpy(dtype=np.float32)}
    feeds = {}
    for i in sess.get_inputs():
        col = X[i.name]
        if i.type == "tensor(string)":
            feeds[i.name] = col.to_numpy(dtype=object).reshape(-1, 1)
        elif i.type == "tensor(int64)":
            feeds[i.name] = col.to_numpy(dtype=np.int64).reshape(-1, 1)
        elif i.type == "tensor(double)":
            feeds[i.name] = col.to_numpy(dtype=np.float64).reshape(-1, 1)
        else:
            feeds[i.name] = col.to_numpy(dtype=np.float32).reshape(-1, 1)
    return feeds


def plain_value(v):
    return v.item() if hasattr(v, "item") else v


def build(name, out):
    load, builder = CASES.get(name) or EXTRA_CASES[name]
    X, y = load()
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=HELD_OUT, random_state=SEED)
    model = builder(X_train)
    # onnxmltools reads XGBoost's features by position (f0, f1, ...): it is trained on the array.
    is_xgb = isinstance(model, (xgb.XGBRegressor, xgb.XGBClassifier))
    model.fit(X_train.to_numpy(dtype=np.float32) if is_xgb else X_train, y_train)
    onx = export(model, X_train)
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "model.onnx").write_bytes(onx.SerializeToString())
    target = "target"
    pd.concat([X_train, y_train.rename(target)], axis=1).to_csv(d / "train.csv", index=False)
    pd.concat([X_test, y_test.rename(target)], axis=1).to_csv(d / "heldout.csv", index=False)
    sess = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    # onnxruntime reads the CSV's values as the component will: float32 text round-tripped.
    X_read = pd.read_csv(d / "heldout.csv").drop(columns=[target])
    outputs = sess.run(None, onnx_inputs(X_read, sess))
    rows = []
    for i in range(len(X_read)):
        if len(outputs) == 1:
            rows.append({"value": float(np.asarray(outputs[0])[i].ravel()[0])})
            continue
        label, probs = outputs[0][i], outputs[1][i]
        if isinstance(probs, dict):
            probs = {str(k): float(v) for k, v in probs.items()}
        else:
            probs = np.asarray(probs).ravel()
            if len(probs) == 1 and len(model.classes_) == 2:
                # A binary classifier's one decision score (scikit-learn's decision_function,
                # above 0 for the second class): the component answers it as [-s, s].
                probs = [-probs[0], probs[0]]
            probs = {str(c): float(p) for c, p in zip(model.classes_, probs)}
        rows.append({"label": str(plain_value(label)), "probabilities": probs})
    ops = sorted({f"{n.domain or 'ai.onnx'}:{n.op_type}" for n in onx.graph.node})
    # Whether the model answers decision scores (no predict_proba), as the component must say.
    scores = not hasattr(model, "predict_proba") and hasattr(model, "classes_")
    (d / "expected.json").write_text(
        json.dumps({"rows": rows, "operators": ops, "decision_scores": scores}, indent=1))
    return ops


def main():
    out = pathlib.Path(sys.argv[1])
    names = sys.argv[2:] or list(CASES)
    for name in names:
        try:
            ops = build(name, out)
        except Exception as e:  # noqa: BLE001 - an export skl2onnx cannot make is reported
            print(f"{name}: NOT EXPORTED: {str(e).splitlines()[0][:200]}")
            continue
        print(f"{name}: {' '.join(ops)}")


if __name__ == "__main__":
    main()
