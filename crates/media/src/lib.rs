//! Pictures and sounds made into the tensor a model's graph takes, as `model.toml`'s
//! `[input.image]` and `[input.audio]` say ([`model_manifest::ImageSpec`],
//! [`model_manifest::AudioSpec`]).
//!
//! The ONNX model component calls [`image::to_tensor`] and [`audio::Featurizer::to_tensor`] on what a
//! request sends; the training scripts call the same functions through `media-features` (the
//! binary of this crate), so a model is trained on exactly the numbers it is served.
//!
//! Everything a file declares is checked before it is decoded (bytes, pixels, duration), so a
//! small file that would decompress into a huge picture or a long sound is refused without
//! taking the memory.

pub mod audio;
mod error;
pub mod image;

pub use error::MediaError;
