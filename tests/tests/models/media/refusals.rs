//! Every way a picture can be bad, each a 400 with its own `error_code`; the model answers
//! the next good request as before.

use super::{b64, examples, predict, prediction};
use e2e_tests::{Client, HostBuilder, component, copy_model, model_dir, temp_dir};
use image::{GrayImage, ImageFormat};
use serde_json::{Value, json};
use std::io::Cursor;

fn png_of(picture: GrayImage) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    picture.write_to(&mut out, ImageFormat::Png).unwrap();
    out.into_inner()
}

#[tokio::test]
async fn bad_pictures_are_refused_each_with_its_own_code() {
    let dir = temp_dir();
    // The digits model with a 400 kB cap on files, so the cap is met below the host's own
    // (1 MiB of body).
    let model = dir.path().join("digits");
    copy_model(&model_dir("digits"), &model);
    let toml = std::fs::read_to_string(model.join("model.toml")).unwrap();
    let capped = toml.replacen("[input.image]\n", "[input.image]\nmax_bytes = 400000\n", 1);
    assert_ne!(capped, toml);
    std::fs::write(model.join("model.toml"), capped).unwrap();
    let host = HostBuilder::new(component("onnx-model"), dir.path())
        .shared_compile_cache()
        .mount(&model, "/model")
        .start();
    let c = Client::new();
    let examples = examples("digits", "image");
    let png = &examples[0].2;
    let jpeg = &examples
        .iter()
        .find(|e| e.2.starts_with(&[0xFF, 0xD8]))
        .unwrap()
        .2;
    // 5,000 x 5,000 grey pixels: 25 MB once decoded, from a file a hundredth of that.
    let bomb = png_of(GrayImage::new(5000, 5000));
    assert!(bomb.len() < 400_000, "{}", bomb.len());
    let wav = b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00".to_vec();
    let cases: Vec<(&str, Value, u16, &str)> = vec![
        (
            "not base64",
            json!({"image": "no, this is *not* base64"}),
            400,
            "invalid_base64",
        ),
        (
            "text",
            json!({"image": b64(b"just some text, no picture")}),
            400,
            "unsupported_media",
        ),
        (
            "a sound",
            json!({"image": b64(&wav)}),
            400,
            "unsupported_media",
        ),
        (
            "a TIFF",
            json!({"image": b64(b"II*\x00\x08\x00\x00\x00....")}),
            400,
            "unsupported_media",
        ),
        ("empty", json!({"image": ""}), 400, "unsupported_media"),
        (
            "cut PNG",
            json!({"image": b64(&png[..png.len() - 20])}),
            400,
            "truncated_media",
        ),
        (
            "cut JPEG",
            json!({"image": b64(&jpeg[..jpeg.len() / 2])}),
            400,
            "truncated_media",
        ),
        ("bomb", json!({"image": b64(&bomb)}), 400, "media_too_large"),
        (
            "over max_bytes",
            json!({"image": b64(&vec![7u8; 500_000])}),
            400,
            "media_too_large",
        ),
        (
            "both",
            json!({"image": b64(png), "image_url": "http://example.org/x.png"}),
            400,
            "invalid_field",
        ),
        ("neither", json!({}), 400, "missing_field"),
        ("a number", json!({"image": 42}), 400, "invalid_field"),
        (
            "an unknown field",
            json!({"image": b64(png), "colour": "red"}),
            400,
            "invalid_field",
        ),
        (
            "not a URL",
            json!({"image_url": "file:///etc/passwd"}),
            400,
            "invalid_field",
        ),
    ];
    for (what, data, status, code) in cases {
        let r = predict(&c, &host, "image", data).await;
        let body = r.assert_error(status, code);
        assert!(
            body.error.contains("data.image"),
            "{what}: the message names the field: {}",
            body.error
        );
    }
    predict(&c, &host, "text", json!({"image": b64(png)}))
        .await
        .assert_error(400, "unsupported_input_type");
    // The instance that met every bad file answers a good one.
    let r = predict(&c, &host, "image", json!({"image": b64(png)})).await;
    assert_eq!(prediction(&r), examples[0].1);
    let health = c.get(&host.url("/health")).await;
    assert_eq!(health.status, 200);
}

/// The largest picture the limits allow (16 megapixels, in colour: 48 MB decoded) is
/// answered within the instance's memory, and the instance serves on; one more row of
/// pixels is refused from the header. `serve` lets through the body such a model reads
/// (its file's base64), beyond its default cap of 1 MiB.
#[tokio::test]
async fn the_largest_picture_allowed_is_answered_and_a_larger_one_refused() {
    let dir = temp_dir();
    let host = HostBuilder::new(component("onnx-model"), dir.path())
        .shared_compile_cache()
        .mount(&model_dir("digits"), "/model")
        .start();
    let c = Client::new();
    let encode = |w: u32, h: u32| {
        let picture = image::RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([(x % 251) as u8, (y % 241) as u8, ((x ^ y) % 239) as u8])
        });
        let mut out = Cursor::new(Vec::new());
        picture.write_to(&mut out, ImageFormat::Jpeg).unwrap();
        out.into_inner()
    };
    let largest = encode(4000, 4000);
    let r = predict(&c, &host, "image", json!({"image": b64(&largest)})).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.value()["results"]["input"]["width"], 4000);
    let larger = encode(4000, 4001);
    predict(&c, &host, "image", json!({"image": b64(&larger)}))
        .await
        .assert_error(400, "media_too_large");
    let (_, digit, png) = &examples("digits", "image")[0];
    let r = predict(&c, &host, "image", json!({"image": b64(png)})).await;
    assert_eq!(prediction(&r), *digit);
}
