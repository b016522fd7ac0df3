//! Every step of the way from a file to the tensor, and every bad file refused as what it is.

use super::*;
use image::{GrayAlphaImage, RgbaImage};

fn spec(color: Color, width: u32, height: u32) -> ImageSpec {
    ImageSpec::new(color, width, height)
}

fn encode(picture: impl Into<DynamicImage>, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    picture.into().write_to(&mut out, format).unwrap();
    out.into_inner()
}

/// Values as 0..255 levels again (for `scale = 255`, no inversion).
fn levels(values: &[f32]) -> Vec<u8> {
    values.iter().map(|v| v.round() as u8).collect()
}

#[test]
fn a_picture_of_the_models_size_passes_unchanged_through_the_digits_rule() {
    let picture = GrayImage::from_fn(8, 8, |x, y| image::Luma([(x * 32 + y) as u8]));
    let mut s = spec(Color::Grayscale, 8, 8);
    s.invert = true;
    s.scale = 16.0;
    let got = to_tensor(&encode(picture.clone(), ImageFormat::Png), &s).unwrap();
    assert_eq!((got.format, got.width, got.height), ("png", 8, 8));
    for (i, v) in got.values.iter().enumerate() {
        let level = picture.as_raw()[i];
        assert_eq!(*v, f32::from(255 - level) / 255.0 * 16.0, "pixel {i}");
    }
}

#[test]
fn colour_becomes_grey_as_pillow_makes_it() {
    let picture = RgbImage::from_pixel(2, 1, image::Rgb([255, 0, 0]));
    let mut s = spec(Color::Grayscale, 2, 1);
    s.scale = 255.0;
    let got = to_tensor(&encode(picture, ImageFormat::Bmp), &s).unwrap();
    // Pillow: Image.new("RGB", (1, 1), (255, 0, 0)).convert("L").getpixel((0, 0)) == 76.
    assert_eq!(levels(&got.values), vec![76, 76]);
    assert_eq!(got.format, "bmp");
}

#[test]
fn transparency_is_laid_over_the_background() {
    let picture =
        GrayAlphaImage::from_fn(2, 1, |x, _| image::LumaA([0, if x == 0 { 0 } else { 255 }]));
    let mut s = spec(Color::Grayscale, 2, 1);
    s.scale = 255.0;
    s.background = 255;
    let got = to_tensor(&encode(picture, ImageFormat::Png), &s).unwrap();
    assert_eq!(levels(&got.values), vec![255, 0]);
    let rgba = RgbaImage::from_pixel(1, 1, image::Rgba([200, 100, 0, 128]));
    let mut s = spec(Color::Rgb, 1, 1);
    s.scale = 255.0;
    s.background = 0;
    let got = to_tensor(&encode(rgba, ImageFormat::Png), &s).unwrap();
    assert_eq!(levels(&got.values), vec![100, 50, 0]);
}

#[test]
fn padding_keeps_the_aspect_ratio_and_fills_with_the_background() {
    // A black 8 x 4 picture into 4 x 4: 4 x 2 in the middle rows, white above and below.
    let picture = GrayImage::from_pixel(8, 4, image::Luma([0]));
    let mut s = spec(Color::Grayscale, 4, 4);
    s.fit = Fit::Pad;
    s.background = 255;
    s.scale = 255.0;
    let got = levels(
        &to_tensor(&encode(picture, ImageFormat::Png), &s)
            .unwrap()
            .values,
    );
    assert_eq!(&got[..4], &[255; 4]);
    assert_eq!(&got[4..12], &[0; 8]);
    assert_eq!(&got[12..], &[255; 4]);
}

#[test]
fn cropping_keeps_the_centre() {
    // 12 x 4: a white left third, grey middle, black right third; cropped to 4 x 4, the
    // middle is left.
    let picture = GrayImage::from_fn(12, 4, |x, _| image::Luma([[255, 128, 0][x as usize / 4]]));
    let mut s = spec(Color::Grayscale, 4, 4);
    s.fit = Fit::Crop;
    s.scale = 255.0;
    let got = levels(
        &to_tensor(&encode(picture, ImageFormat::Png), &s)
            .unwrap()
            .values,
    );
    assert_eq!(got, vec![128; 16]);
}

#[test]
fn stretching_resizes_both_ways() {
    let picture = GrayImage::from_pixel(30, 10, image::Luma([200]));
    let mut s = spec(Color::Grayscale, 5, 5);
    s.scale = 255.0;
    let got = levels(
        &to_tensor(&encode(picture, ImageFormat::Png), &s)
            .unwrap()
            .values,
    );
    assert_eq!(got, vec![200; 25]);
}

#[test]
fn layouts_order_channels_first_or_last_and_normalize_per_channel() {
    let picture = RgbImage::from_fn(2, 1, |x, _| image::Rgb([10 + x as u8, 20, 30]));
    let file = encode(picture, ImageFormat::Png);
    let mut s = spec(Color::Rgb, 2, 1);
    s.scale = 255.0;
    assert_eq!(
        levels(&to_tensor(&file, &s).unwrap().values),
        vec![10, 11, 20, 20, 30, 30]
    );
    s.layout = Layout::Nhwc;
    assert_eq!(
        levels(&to_tensor(&file, &s).unwrap().values),
        vec![10, 20, 30, 11, 20, 30]
    );
    s.mean = vec![10.0, 20.0, 30.0];
    s.std = vec![1.0, 2.0, 0.5];
    let got = to_tensor(&file, &s).unwrap().values;
    assert_eq!(got, vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
    assert_eq!(s.shape(), [1, 2, 3]);
}

#[test]
fn every_format_decodes() {
    let picture = RgbImage::from_pixel(4, 4, image::Rgb([90, 90, 90]));
    let mut s = spec(Color::Grayscale, 4, 4);
    s.scale = 255.0;
    for (format, name) in [
        (ImageFormat::Png, "png"),
        (ImageFormat::Jpeg, "jpeg"),
        (ImageFormat::Gif, "gif"),
        (ImageFormat::Bmp, "bmp"),
        (ImageFormat::WebP, "webp"),
    ] {
        let got = to_tensor(&encode(picture.clone(), format), &s).unwrap();
        assert_eq!(got.format, name);
        assert!(
            got.values.iter().all(|v| (v - 90.0).abs() <= 3.0),
            "{name}: {:?}",
            got.values
        );
    }
}

#[test]
fn a_cut_file_is_truncated() {
    let picture = RgbImage::from_fn(64, 64, |x, y| image::Rgb([x as u8 * 3, y as u8 * 3, 7]));
    let s = spec(Color::Rgb, 8, 8);
    for format in [ImageFormat::Png, ImageFormat::Jpeg, ImageFormat::Gif] {
        let file = encode(picture.clone(), format);
        let cut = &file[..file.len() * 2 / 3];
        let e = to_tensor(cut, &s).unwrap_err();
        assert!(matches!(e, MediaError::Truncated(_)), "{format:?}: {e:?}");
    }
}

#[test]
fn a_declared_size_over_the_limit_is_refused_before_decoding() {
    // 5,000 x 5,000 pixels of one grey: 25 MB decoded from a file a hundredth of that.
    let bomb = encode(GrayImage::new(5000, 5000), ImageFormat::Png);
    assert!(bomb.len() < 250_000, "{}", bomb.len());
    let e = to_tensor(&bomb, &spec(Color::Grayscale, 8, 8)).unwrap_err();
    assert!(
        matches!(&e, MediaError::TooLarge(m) if m.contains("5000 x 5000")),
        "{e:?}"
    );
    let mut small = spec(Color::Grayscale, 8, 8);
    small.max_bytes = 10;
    let e = to_tensor(&encode(GrayImage::new(8, 8), ImageFormat::Png), &small).unwrap_err();
    assert!(matches!(e, MediaError::TooLarge(_)), "{e:?}");
}

#[test]
fn what_is_not_a_picture_is_unsupported() {
    let s = spec(Color::Grayscale, 8, 8);
    for bytes in [
        &b"RIFF....WAVEfmt "[..],
        b"hello, world",
        b"%PDF-1.7",
        &[0u8; 64],
    ] {
        let e = to_tensor(bytes, &s).unwrap_err();
        assert!(matches!(e, MediaError::Unsupported(_)), "{e:?}");
    }
    assert!(matches!(
        to_tensor(b"", &s),
        Err(MediaError::Unsupported(_))
    ));
}
