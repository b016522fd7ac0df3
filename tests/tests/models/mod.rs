//! Interface B and the models behind it: each model component (molprop, the ONNX, picture and
//! sound models, the embedding and text generation models), what every model shares (batches,
//! its OpenAPI document, the Open Inference Protocol, the language-model API), and
//! `runtime-host model`'s deployment lifecycle against the registry.

mod batches;
mod embeddings;
mod lifecycle;
mod llm_api;
mod media;
mod molprop;
mod oip;
mod oip_clients;
mod onnx;
mod openapi;
mod textgen;
