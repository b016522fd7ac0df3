//! The ONNX-ML operators (`ai.onnx.ml`) scikit-learn's converters emit for the estimators and
//! transformers people train, run by tract beside its own operators: a default skl2onnx export
//! of a pipeline (scalers, imputers, encoders, linear models, SVMs) deploys unchanged.
//! Semantics follow the ONNX-ML operator specification (https://github.com/onnx/onnx/blob/main/docs/Operators-ml.md) and are
//! checked against onnxruntime's answers (tests/python/sklearn_corpus.py, and each module's
//! unit tests).
//!
//! Each operator is a module holding its maths as an [`op::MlOp`]; [`register`] hands them to
//! tract's ONNX parser, replacing tract's own where it has one.

mod array_feature_extractor;
mod binarizer;
mod dict_vectorizer;
mod feature_vectorizer;
mod imputer;
mod label_encoder;
pub(crate) mod labels;
mod linear;
mod normalizer;
mod one_hot_encoder;
pub(crate) mod op;
pub(crate) mod post_transform;
mod scaler;
mod sigmoid;
mod svm;
#[cfg(test)]
pub(crate) mod testing;
mod values;

use tract_onnx::model::OnnxOpRegister;

pub fn register(ops: &mut OnnxOpRegister) {
    ops.insert("Scaler", scaler::parse);
    ops.insert("Imputer", imputer::parse);
    ops.insert("Binarizer", binarizer::parse);
    ops.insert("Normalizer", normalizer::parse);
    ops.insert("OneHotEncoder", one_hot_encoder::parse);
    ops.insert("LabelEncoder", label_encoder::parse);
    ops.insert("FeatureVectorizer", feature_vectorizer::parse);
    ops.insert("ArrayFeatureExtractor", array_feature_extractor::parse);
    ops.insert("DictVectorizer", dict_vectorizer::parse);
    ops.insert("LinearClassifier", linear::classifier::parse);
    ops.insert("LinearRegressor", linear::regressor::parse);
    ops.insert("SVMClassifier", svm::classifier::parse);
    ops.insert("SVMRegressor", svm::regressor::parse);
    ops.insert("Sigmoid", sigmoid::parse);
}
