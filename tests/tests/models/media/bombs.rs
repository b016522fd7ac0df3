//! Pictures within every declared limit that still tried to run an instance out of memory
//! (found by review): a picture 16,000,000 pixels wide and one high, or the other way round,
//! in each way of fitting it; a 16-bit picture of 16 megapixels; a PNG whose colour profile inflates to
//! 300 MB. Each is answered (or refused with 400), never a 500, within the default 128 MiB.

use super::{b64, predict};
use e2e_tests::{Client, Reply, copy_model, model_dir, temp_dir};
use e2e_tests::{HostBuilder, component};
use image::{ImageBuffer, Luma, Rgba};
use serde_json::json;
use std::io::Write;

/// A PNG compressed as tightly as the encoder can (an even picture: a few kB).
fn png(picture: impl Into<image::DynamicImage>) -> Vec<u8> {
    use image::codecs::png::{CompressionType, FilterType, PngEncoder};
    let mut out = Vec::new();
    let encoder =
        PngEncoder::new_with_quality(&mut out, CompressionType::Best, FilterType::NoFilter);
    picture.into().write_with_encoder(encoder).unwrap();
    out
}

/// A 1 x 1 grey PNG with an iCCP chunk whose profile inflates to `inflated` zero bytes.
fn png_with_profile(inflated: usize) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..inflated >> 20 {
        z.write_all(&zeros).unwrap();
    }
    let mut iccp = b"icc\0\0".to_vec();
    iccp.extend(z.finish().unwrap());
    let plain = png(ImageBuffer::<Luma<u8>, _>::from_pixel(1, 1, Luma([200])));
    // The chunk right after IHDR (8-byte signature, then IHDR: 4 + 4 + 13 + 4 bytes).
    let mut chunk = (iccp.len() as u32).to_be_bytes().to_vec();
    let mut crc = flate2::Crc::new();
    crc.update(b"iCCP");
    crc.update(&iccp);
    chunk.extend(b"iCCP");
    chunk.extend(&iccp);
    chunk.extend(crc.sum().to_be_bytes());
    let mut file = plain[..33].to_vec();
    file.extend(chunk);
    file.extend(&plain[33..]);
    file
}

/// The digits model with `fit` as given.
fn digits_fitted(dir: &std::path::Path, fit: &str) -> e2e_tests::Host {
    let model = dir.join("digits");
    copy_model(&model_dir("digits"), &model);
    let toml = std::fs::read_to_string(model.join("model.toml")).unwrap();
    let fitted = toml.replacen("fit = \"pad\"", &format!("fit = \"{fit}\""), 1);
    std::fs::write(model.join("model.toml"), fitted).unwrap();
    HostBuilder::new(component("onnx-model"), dir)
        .shared_compile_cache()
        .mount(&model, "/model")
        .start()
}

fn answered_or_refused(r: &Reply, what: &str) {
    assert!(
        r.status == 200 || (r.status == 400 && r.value()["error_code"] == "media_too_large"),
        "{what}: {} {}",
        r.status,
        r.text()
    );
}

#[tokio::test]
async fn pictures_that_would_blow_up_inside_the_limits_never_fault_the_instance() {
    let c = Client::new();
    let wide = png(ImageBuffer::<Luma<u8>, _>::from_pixel(
        16_000_000,
        1,
        Luma([0]),
    ));
    let tall = png(ImageBuffer::<Luma<u8>, _>::from_pixel(
        1,
        16_000_000,
        Luma([0]),
    ));
    let deep = png(ImageBuffer::<Rgba<u16>, _>::from_pixel(
        4000,
        4000,
        Rgba([7; 4]),
    ));
    let profiled = png_with_profile(300 << 20);
    assert!(profiled.len() < 1_000_000, "{}", profiled.len());
    for fit in ["pad", "stretch", "crop"] {
        let dir = temp_dir();
        let host = digits_fitted(dir.path(), fit);
        for (what, file) in [("wide", &wide), ("tall", &tall)] {
            let r = predict(&c, &host, "image", json!({"image": b64(file)})).await;
            assert_eq!(r.status, 200, "{fit}, {what}: {}", r.text());
        }
        let r = predict(&c, &host, "image", json!({"image": b64(&deep)})).await;
        answered_or_refused(&r, "16-bit RGBA, 16 megapixels");
        let r = predict(&c, &host, "image", json!({"image": b64(&profiled)})).await;
        assert_eq!(r.status, 200, "{fit}, a 300 MB profile: {}", r.text());
    }
}
