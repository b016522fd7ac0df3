//! models/digits from base64: its examples, the same digit in every format, size and colour
//! the component decodes, and batches.

use super::{assert_takes, b64, examples, predict, prediction, serve};
use e2e_tests::{Client, temp_dir};
use image::{DynamicImage, ImageFormat, Rgba, RgbaImage};
use serde_json::json;
use std::io::Cursor;

fn encode(picture: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    picture.write_to(&mut out, format).unwrap();
    out.into_inner()
}

#[tokio::test]
async fn examples_answer_their_digit_and_a_training_image_lies_at_distance_zero() {
    let dir = temp_dir();
    let host = serve("digits", dir.path(), &[]);
    let c = Client::new();
    let ranges = assert_takes(&c, &host, "image").await;
    assert_eq!(ranges["input"]["taken_as"]["width"], 8);
    assert_eq!(ranges["input"]["training_data"]["count"], 1437);
    let mut at_zero = 0;
    for (name, digit, bytes) in examples("digits", "image") {
        let r = predict(&c, &host, "image", json!({"image": b64(&bytes)})).await;
        assert_eq!(prediction(&r), digit, "{name}");
        let results = &r.value()["results"];
        assert_eq!(results["input"]["source"], "inline");
        assert!(results["input"]["width"].as_u64().unwrap() >= 8);
        let p: f64 = results["probabilities"][&digit].as_f64().unwrap();
        assert!(p > 0.5, "{name}: {results}");
        let distance = results["applicability_domain"]["nearest_training_distance"]
            .as_f64()
            .unwrap();
        // A training image fed as served is the row the model was trained on, bit for
        // bit: the featurizer of train.py and the component's are one.
        if name.starts_with("training image") {
            assert_eq!(distance, 0.0, "{name}: {results}");
            assert_eq!(results["in_domain"], true);
            at_zero += 1;
        }
    }
    assert_eq!(
        at_zero, 1,
        "the digits model has one example that is a training image"
    );
}

#[tokio::test]
async fn the_same_digit_in_every_format_size_and_colour_answers_alike() {
    let dir = temp_dir();
    let host = serve("digits", dir.path(), &[]);
    let c = Client::new();
    let (name, digit, png) = examples("digits", "image").remove(0);
    let small = image::load_from_memory(&png).unwrap();
    // 48 x 48, in colour, with an alpha channel: ink opaque dark blue, paper transparent.
    let big = small.resize_exact(48, 48, image::imageops::FilterType::Nearest);
    let grey = big.to_luma8();
    let inked = RgbaImage::from_fn(48, 48, |x, y| {
        let v = grey.get_pixel(x, y)[0];
        Rgba([v / 4, v / 4, v / 2, 255 - v])
    });
    let inked = DynamicImage::ImageRgba8(inked);
    let files = vec![
        ("jpeg", encode(&big.to_rgb8().into(), ImageFormat::Jpeg)),
        ("gif", encode(&big.to_rgba8().into(), ImageFormat::Gif)),
        ("bmp", encode(&big.to_rgb8().into(), ImageFormat::Bmp)),
        ("webp", encode(&big.to_rgba8().into(), ImageFormat::WebP)),
        ("transparent png", encode(&inked, ImageFormat::Png)),
    ];
    for (what, bytes) in files {
        let r = predict(&c, &host, "image", json!({"image": b64(&bytes)})).await;
        assert_eq!(prediction(&r), digit, "{name} as {what}: {}", r.text());
    }
    // A data: URL, line breaks and no padding are read as the plain base64.
    let plain = b64(&png);
    let wrapped: Vec<String> = plain
        .trim_end_matches('=')
        .as_bytes()
        .chunks(20)
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect();
    for text in [format!("data:image/png;base64,{plain}"), wrapped.join("\n")] {
        let r = predict(&c, &host, "image", json!({"image": text})).await;
        assert_eq!(prediction(&r), digit);
    }
}

#[tokio::test]
async fn a_batch_answers_each_picture_and_a_bad_one_fails_alone() {
    let dir = temp_dir();
    let host = serve("digits", dir.path(), &[]);
    let c = Client::new();
    let examples = examples("digits", "image");
    let (good, other) = (&examples[0], &examples[1]);
    let cut = &good.2[..good.2.len() / 2];
    let images = json!([
        b64(&good.2),
        "not base64 at all!",
        b64(b"plain text"),
        b64(cut),
        b64(&other.2)
    ]);
    let r = predict(&c, &host, "image", json!({"images": images})).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.value();
    let items = v["results"]["items"].as_array().unwrap();
    assert_eq!(v["results"]["failed"], 3, "{v}");
    assert_eq!(items[0]["results"]["prediction"], good.1.as_str());
    assert_eq!(items[4]["results"]["prediction"], other.1.as_str());
    for (i, says) in [(1, "base64"), (2, "not a PNG"), (3, "ends before")] {
        assert_eq!(items[i]["success"], false);
        let message = items[i]["error_message"].as_str().unwrap();
        assert!(message.contains(says), "item {i}: {message}");
    }
    // Two lists, or a list and a single picture, are refused whole.
    for data in [
        json!({"images": [b64(&good.2)], "image_urls": ["http://example.org/a.png"]}),
        json!({"images": [b64(&good.2)], "image": b64(&good.2)}),
        json!({"images": []}),
        json!({"images": "one"}),
    ] {
        predict(&c, &host, "image", data.clone())
            .await
            .assert_error(400, "invalid_field");
    }
}
