//! models/spoken-digits from base64: its examples (one a training file, at distance ~0), the
//! same word as another kind of WAV (stereo, 44.1 kHz, float), bad sounds refused each with
//! its own code, and a batch whose bad item fails alone.

use super::{assert_takes, b64, examples, predict, prediction, serve};
use e2e_tests::{Client, temp_dir};
use serde_json::json;

/// The samples of a 16-bit PCM WAV file (mono or the first channel) and its rate.
fn pcm16(wav: &[u8]) -> (Vec<f64>, u32, u16) {
    let rate = u32::from_le_bytes(wav[24..28].try_into().unwrap());
    let channels = u16::from_le_bytes(wav[22..24].try_into().unwrap());
    let bits = u16::from_le_bytes(wav[34..36].try_into().unwrap());
    assert_eq!(bits, 16, "the examples are 16-bit PCM");
    let data = wav.windows(4).position(|w| w == b"data").unwrap() + 8;
    let samples = wav[data..]
        .chunks_exact(2 * channels as usize)
        .map(|f| f64::from(i16::from_le_bytes([f[0], f[1]])) / 32768.0)
        .collect();
    (samples, rate, channels)
}

/// A 32-bit float stereo WAV (format 3) of `samples` at `rate`, both channels alike.
fn float_stereo(samples: &[f64], rate: u32) -> Vec<u8> {
    let data: Vec<u8> = samples
        .iter()
        .flat_map(|s| {
            let b = (*s as f32).to_le_bytes();
            [b, b].concat()
        })
        .collect();
    let mut out = b"RIFF".to_vec();
    out.extend((36 + data.len() as u32).to_le_bytes());
    out.extend(b"WAVEfmt ");
    out.extend(16u32.to_le_bytes());
    out.extend(3u16.to_le_bytes());
    out.extend(2u16.to_le_bytes());
    out.extend(rate.to_le_bytes());
    out.extend((rate * 8).to_le_bytes());
    out.extend(8u16.to_le_bytes());
    out.extend(32u16.to_le_bytes());
    out.extend(b"data");
    out.extend((data.len() as u32).to_le_bytes());
    out.extend(data);
    out
}

/// `samples` at `from` Hz to `to` Hz by linear interpolation (upsampling only: no aliasing).
fn upsample(samples: &[f64], from: u32, to: u32) -> Vec<f64> {
    let n = (samples.len() as u64 * u64::from(to) / u64::from(from)) as usize;
    (0..n)
        .map(|i| {
            let x = i as f64 * f64::from(from) / f64::from(to);
            let (j, f) = (x.floor() as usize, x.fract());
            let a = samples[j.min(samples.len() - 1)];
            let b = samples[(j + 1).min(samples.len() - 1)];
            a + (b - a) * f
        })
        .collect()
}

#[tokio::test]
async fn spoken_digits_answer_from_any_wav_and_bad_sounds_are_refused() {
    let dir = temp_dir();
    let host = serve("spoken-digits", dir.path(), &[]);
    let c = Client::new();
    let ranges = assert_takes(&c, &host, "audio").await;
    assert_eq!(ranges["input"]["taken_as"]["sample_rate"], 16000);
    let examples = examples("spoken-digits", "audio");
    let mut at_zero = 0;
    for (name, word, bytes) in &examples {
        let r = predict(&c, &host, "audio", json!({"audio": b64(bytes)})).await;
        assert_eq!(prediction(&r), *word, "{name}");
        let results = &r.value()["results"];
        assert_eq!(results["input"]["format"], "wav");
        let distance = results["applicability_domain"]["nearest_training_distance"]
            .as_f64()
            .unwrap();
        // A training file is the row the model was trained on, to float rounding: the same
        // code computed both, natively for train.py (its FFTs on AVX, glibc's logarithm) and
        // as WebAssembly here (scalar FFTs, Rust's libm): 2.9e-5 over 500 values, measured,
        // where the domain's threshold is about 70.
        if name.starts_with("training") {
            assert!(distance < 1e-3, "{name}: {distance}");
            at_zero += 1;
        }
    }
    assert_eq!(at_zero, 1, "one example is a training file");
    // A held-out example as a stereo, 44.1 kHz, 32-bit float file.
    let (name, word, wav) = examples
        .iter()
        .find(|e| !e.0.starts_with("training"))
        .unwrap();
    let (samples, rate, _) = pcm16(wav);
    let other = float_stereo(&upsample(&samples, rate, 44100), 44100);
    let r = predict(&c, &host, "audio", json!({"audio": b64(&other)})).await;
    assert_eq!(prediction(&r), *word, "{name} as stereo float at 44.1 kHz");
    assert_eq!(r.value()["results"]["input"]["channels"], 2);
    // Bad sounds, each with its own code.
    let mut too_long = float_stereo(&samples[..100], rate);
    let declared: u32 = 3600 * rate * 8;
    too_long[40..44].copy_from_slice(&declared.to_le_bytes());
    too_long[4..8].copy_from_slice(&(36 + declared).to_le_bytes());
    let png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR".to_vec();
    for (what, bytes, code) in [
        (
            "cut short",
            wav[..wav.len() * 2 / 3].to_vec(),
            "truncated_media",
        ),
        ("an hour declared", too_long, "media_too_large"),
        ("a picture", png, "unsupported_media"),
        (
            "an MP3",
            b"ID3\x04\x00\x00\x00\x00\x00\x00mp3".to_vec(),
            "unsupported_media",
        ),
    ] {
        let r = predict(&c, &host, "audio", json!({"audio": b64(&bytes)})).await;
        let body = r.assert_error(400, code);
        assert!(body.error.contains("data.audio"), "{what}: {}", body.error);
    }
    // A batch: the bad item fails alone.
    let audios = json!([b64(wav), b64(&wav[..100])]);
    let r = predict(&c, &host, "audio", json!({"audios": audios})).await;
    let v = r.value();
    assert_eq!(
        v["results"]["items"][0]["results"]["prediction"],
        word.as_str(),
        "{v}"
    );
    assert_eq!(v["results"]["items"][1]["success"], false);
}
