//! Decoding every WAV sample format, resampling, trimming, the declared-length checks, and
//! the spectrogram against a reference computed with numpy.

use super::*;
use model_manifest::LogMel;

/// A WAV file: `format` 1 (PCM) or 3 (float), `bits` per sample, interleaved `frames`.
fn wav(rate: u32, channels: u16, format: u16, bits: u16, samples: &[f64]) -> Vec<u8> {
    let mut data = Vec::new();
    for &s in samples {
        match (format, bits) {
            (1, 8) => data.push(((s * 127.0).round() + 128.0) as u8),
            (1, 16) => data.extend(((s * 32767.0).round() as i16).to_le_bytes()),
            (1, 24) => data.extend(&((s * 8_388_607.0).round() as i32).to_le_bytes()[..3]),
            (1, 32) => data.extend(((s * 2_147_483_647.0).round() as i32).to_le_bytes()),
            (3, 32) => data.extend((s as f32).to_le_bytes()),
            _ => unreachable!(),
        }
    }
    let block = channels * bits / 8;
    let mut out = b"RIFF".to_vec();
    out.extend((36 + data.len() as u32).to_le_bytes());
    out.extend(b"WAVEfmt ");
    out.extend(16u32.to_le_bytes());
    out.extend(format.to_le_bytes());
    out.extend(channels.to_le_bytes());
    out.extend(rate.to_le_bytes());
    out.extend((rate * u32::from(block)).to_le_bytes());
    out.extend(block.to_le_bytes());
    out.extend(bits.to_le_bytes());
    out.extend(b"data");
    out.extend((data.len() as u32).to_le_bytes());
    out.extend(data);
    out
}

fn sine(rate: u32, hz: f64, seconds: f64, amplitude: f64) -> Vec<f64> {
    (0..(f64::from(rate) * seconds) as usize)
        .map(|i| amplitude * (2.0 * std::f64::consts::PI * hz * i as f64 / f64::from(rate)).sin())
        .collect()
}

fn spec(rate: u32, seconds: f64) -> AudioSpec {
    AudioSpec::new(rate, seconds)
}

#[test]
fn every_wav_sample_format_decodes_to_the_same_sound() {
    let tone = sine(8000, 440.0, 0.25, 0.5);
    let s = spec(8000, 0.25);
    for (format, bits) in [(1, 8), (1, 16), (1, 24), (1, 32), (3, 32)] {
        let got = Featurizer::new(&s)
            .to_tensor(wav(8000, 1, format, bits, &tone))
            .unwrap();
        assert_eq!(
            (got.format, got.sample_rate, got.channels),
            ("wav", 8000, 1)
        );
        let worst = got
            .values
            .iter()
            .zip(&tone)
            .map(|(a, b)| (f64::from(*a) - b).abs())
            .fold(0.0, f64::max);
        // 8-bit PCM has steps of 1/128.
        let allowed = if bits == 8 { 1.0 / 100.0 } else { 1e-4 };
        assert!(worst < allowed, "format {format}/{bits}: off by {worst}");
    }
}

#[test]
fn stereo_is_mixed_down_to_mono() {
    // Left a tone, right its opposite: the mix is silence; left and right equal: the tone.
    let tone = sine(8000, 300.0, 0.1, 0.5);
    let opposite: Vec<f64> = tone.iter().flat_map(|s| [*s, -*s]).collect();
    let same: Vec<f64> = tone.iter().flat_map(|s| [*s, *s]).collect();
    let f = Featurizer::new(&spec(8000, 0.1));
    let mixed = f.to_tensor(wav(8000, 2, 1, 16, &opposite)).unwrap();
    assert_eq!(mixed.channels, 2);
    assert!(mixed.values.iter().all(|v| v.abs() < 1e-4));
    let mixed = f.to_tensor(wav(8000, 2, 1, 16, &same)).unwrap();
    assert!((mixed.values[20] as f64 - tone[20]).abs() < 1e-4);
}

#[test]
fn resampling_keeps_length_pitch_and_loudness() {
    // 0.5 s of 440 Hz at 22,050 Hz brought to 16 kHz: 8,000 samples, 440 crossings a second
    // (220 upward in 0.5 s), amplitude kept.
    let f = Featurizer::new(&spec(16000, 0.5));
    let got = f
        .to_tensor(wav(22050, 1, 3, 32, &sine(22050, 440.0, 0.5, 0.5)))
        .unwrap();
    assert_eq!(got.values.len(), 8000);
    let middle = &got.values[400..7600];
    let upward = middle
        .windows(2)
        .filter(|w| w[0] < 0.0 && w[1] >= 0.0)
        .count();
    assert!(
        (197..=199).contains(&upward),
        "{upward} upward crossings in 0.45 s"
    );
    let peak = middle.iter().fold(0f32, |m, v| m.max(v.abs()));
    assert!((peak - 0.5).abs() < 0.01, "peak {peak}");
    // The sound starts where it started (the resampler's delay removed).
    let expected = sine(16000, 440.0, 0.5, 0.5);
    assert!((got.values[1000] as f64 - expected[1000]).abs() < 0.02);
}

#[test]
fn silence_is_trimmed_then_normalized_then_padded() {
    let mut sound = vec![0.0; 4000];
    sound.extend(sine(8000, 500.0, 0.25, 0.25));
    sound.extend(vec![0.0; 4000]);
    let mut s = spec(8000, 0.5);
    s.trim_silence_db = Some(40.0);
    s.normalize = true;
    let got = Featurizer::new(&s)
        .to_tensor(wav(8000, 1, 3, 32, &sound))
        .unwrap();
    assert_eq!(got.values.len(), 4000);
    assert!((got.seconds - 1.25).abs() < 1e-9);
    // The tone now starts at once, with a peak of 1, and the end is padded with silence.
    let peak = got.values.iter().fold(0f32, |m, v| m.max(v.abs()));
    assert!((peak - 1.0).abs() < 1e-6);
    assert!(got.values[1..8].iter().any(|v| v.abs() > 0.1));
    assert!(got.values[2100..].iter().all(|v| *v == 0.0));
}

#[test]
fn a_longer_sound_is_cut_to_the_models_length() {
    let got = Featurizer::new(&spec(8000, 0.1))
        .to_tensor(wav(8000, 1, 1, 16, &sine(8000, 200.0, 2.0, 0.3)))
        .unwrap();
    assert_eq!(got.values.len(), 800);
    assert!((got.seconds - 2.0).abs() < 1e-9, "the length as sent");
}

/// Reference: numpy 2.4 in float64 (`np.fft.rfft`, the same filters written out), over
/// 0.5 sin(2 pi 1130 t) + 0.25 sin(2 pi 2970 t) min(1, 2t), 1 s at 16 kHz, window 400,
/// hop 160, 8 mels from 100 to 7000 Hz.
#[test]
fn the_log_mel_spectrogram_is_numpys() {
    let mut s = spec(16000, 1.0);
    s.features = AudioFeatures::LogMel;
    s.log_mel = Some(LogMel {
        mels: 8,
        window: 400,
        hop: 160,
        fmin: 100.0,
        fmax: Some(7000.0),
    });
    assert_eq!(s.shape(), vec![8, 98]);
    let signal: Vec<f64> = (0..16000)
        .map(|i| {
            let t = i as f64 / 16000.0;
            0.5 * (2.0 * std::f64::consts::PI * 1130.0 * t).sin()
                + 0.25 * (2.0 * std::f64::consts::PI * 2970.0 * t).sin() * (t * 2.0).min(1.0)
        })
        .collect();
    let got = Featurizer::new(&s)
        .to_tensor(wav(16000, 1, 3, 32, &signal))
        .unwrap();
    assert_eq!(got.values.len(), 8 * 98);
    let numpy: [(usize, [f32; 8]); 3] = [
        (
            0,
            [
                -10.58198, -5.06075, 7.92368, 6.89576, -9.42744, -0.50725, -3.48470, -13.8091,
            ],
        ),
        (
            10,
            [
                -10.57795, -5.06048, 7.92368, 6.89576, -6.68637, 3.81121, 0.83364, -13.79432,
            ],
        ),
        (
            97,
            [
                -10.41402, -5.05679, 7.92368, 6.89576, -3.74763, 6.79353, 3.81596, -13.68534,
            ],
        ),
    ];
    for (frame, expected) in numpy {
        for (m, want) in expected.iter().enumerate() {
            let have = got.values[m * 98 + frame];
            assert!(
                (have - want).abs() < 2e-3,
                "mel {m}, frame {frame}: {have} vs {want}"
            );
        }
    }
}

#[test]
fn a_cut_file_is_truncated() {
    let file = wav(8000, 1, 1, 16, &sine(8000, 440.0, 0.5, 0.5));
    let cut = file[..file.len() / 2].to_vec();
    let e = Featurizer::new(&spec(8000, 0.5))
        .to_tensor(cut)
        .unwrap_err();
    assert!(matches!(e, MediaError::Truncated(_)), "{e:?}");
    let e = Featurizer::new(&spec(8000, 0.5))
        .to_tensor(file[..30].to_vec())
        .unwrap_err();
    assert!(
        matches!(e, MediaError::Truncated(_) | MediaError::Unsupported(_)),
        "{e:?}"
    );
}

#[test]
fn a_declared_length_over_the_limit_is_refused_before_decoding() {
    // A header that declares 700 s at 8 kHz over 2 bytes of data.
    let mut file = wav(8000, 1, 1, 16, &[0.0]);
    let declared: u32 = 700 * 8000 * 2;
    file[40..44].copy_from_slice(&declared.to_le_bytes());
    file[4..8].copy_from_slice(&(36 + declared).to_le_bytes());
    let e = Featurizer::new(&spec(8000, 1.0))
        .to_tensor(file)
        .unwrap_err();
    assert!(
        matches!(&e, MediaError::TooLarge(m) if m.contains("700")),
        "{e:?}"
    );
}

#[test]
fn what_is_not_a_sound_is_unsupported() {
    let f = Featurizer::new(&spec(8000, 1.0));
    for bytes in [
        b"\x89PNG\r\n\x1a\n....".to_vec(),
        b"ID3\x04 mp3".to_vec(),
        vec![0; 100],
    ] {
        let e = f.to_tensor(bytes).unwrap_err();
        assert!(matches!(e, MediaError::Unsupported(_)), "{e:?}");
    }
    assert!(matches!(
        f.to_tensor(Vec::new()),
        Err(MediaError::Unsupported(_))
    ));
    let mut small = spec(8000, 1.0);
    small.max_bytes = 100;
    let e = Featurizer::new(&small)
        .to_tensor(wav(8000, 1, 1, 16, &[0.0; 100]))
        .unwrap_err();
    assert!(matches!(e, MediaError::TooLarge(_)), "{e:?}");
}

#[test]
fn a_rate_no_recording_has_is_refused_before_the_resampler_sees_it() {
    // 1 Hz asked the resampler for FFTs of millions of points.
    for rate in [1, 999, 400_000] {
        let e = Featurizer::new(&spec(16000, 1.0))
            .to_tensor(wav(rate, 1, 1, 16, &[0.1; 8]))
            .unwrap_err();
        assert!(
            matches!(&e, MediaError::Unsupported(m) if m.contains("sample rate")),
            "{e:?}"
        );
    }
}

#[test]
fn a_wav_written_to_a_pipe_is_read_whole() {
    let tone = sine(8000, 440.0, 0.25, 0.5);
    let mut file = wav(8000, 1, 1, 16, &tone);
    // What ffmpeg writes to a pipe: no lengths.
    file[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    file[40..44].copy_from_slice(&u32::MAX.to_le_bytes());
    let got = Featurizer::new(&spec(8000, 0.25)).to_tensor(file).unwrap();
    assert!((got.seconds - 0.25).abs() < 1e-9, "{}", got.seconds);
    assert!((f64::from(got.values[100]) - tone[100]).abs() < 1e-4);
}

/// A committed file of crates/media/tests/data (see its README).
fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/").to_owned() + name).unwrap()
}

#[test]
fn flac_and_ogg_vorbis_decode_to_the_tone_they_hold() {
    // 0.5 s of 440 Hz at half scale, 22,050 Hz, brought to 16 kHz.
    let tone = sine(16000, 440.0, 0.5, 0.5);
    // Vorbis pads its last packet: the decoder gives up to a few ms more than was encoded.
    for (name, format, allowed, longer) in [
        ("tone.flac", "flac", 1e-3, 0.001),
        ("tone.ogg", "ogg", 0.05, 0.03),
    ] {
        let got = Featurizer::new(&spec(16000, 0.5))
            .to_tensor(fixture(name))
            .unwrap();
        assert_eq!(
            (got.format, got.sample_rate, got.channels),
            (format, 22050, 1)
        );
        assert!(
            (0.5..0.5 + longer).contains(&got.seconds),
            "{name}: {}",
            got.seconds
        );
        // Away from the edges (the encoder's and resampler's start-up), the same wave.
        let worst = got.values[800..7200]
            .iter()
            .zip(&tone[800..7200])
            .map(|(a, b)| (f64::from(*a) - b).abs())
            .fold(0.0, f64::max);
        assert!(worst < allowed, "{name}: off by {worst}");
    }
}

#[test]
fn a_cut_flac_is_truncated() {
    // FLAC declares its length in its header; Ogg does not, so a cut Ogg file is the sound
    // it still holds (docs/models.md says so).
    let file = fixture("tone.flac");
    let e = Featurizer::new(&spec(16000, 0.5))
        .to_tensor(file[..file.len() * 2 / 3].to_vec())
        .unwrap_err();
    assert!(matches!(e, MediaError::Truncated(_)), "{e:?}");
}
