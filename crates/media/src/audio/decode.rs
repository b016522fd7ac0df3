//! Decoding with symphonia: the declared length checked before any sample is decoded, the
//! channels mixed down to mono and resampled to the model's rate as the packets come (so the
//! source's rate is never held whole), and a file that ends before the length it declares
//! reported as cut short.

use super::resample::Stream;
use crate::error::{MediaError, check_size};
use symphonia::core::audio::SampleBuffer;
use symphonia::core::codecs::{CODEC_TYPE_NULL, DecoderOptions};
use symphonia::core::errors::Error;
use symphonia::core::formats::FormatOptions;
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

/// The formats decoded, by name, for messages.
pub const FORMATS: &str = "WAV (PCM 8 to 32-bit or float), FLAC or Ogg Vorbis";

/// A decoded sound, mixed down to mono, at the model's rate.
pub struct Sound {
    pub samples: Vec<f32>,
    /// The file's own rate.
    pub sample_rate: u32,
    pub channels: usize,
    /// The length the file holds (or declares, when decoding stopped early).
    pub seconds: f64,
    pub format: &'static str,
}

/// Decodes `bytes` into samples at `to_rate` Hz; stops after `enough` seconds when given.
pub fn decode(
    bytes: Vec<u8>,
    max_bytes: u64,
    max_seconds: f64,
    enough: Option<f64>,
    to_rate: u32,
) -> Result<Sound, MediaError> {
    check_size(&bytes, max_bytes, "audio")?;
    let format = match bytes.get(..4) {
        Some(b"RIFF") | Some(b"RIFX") => "wav",
        Some(b"fLaC") => "flac",
        Some(b"OggS") => "ogg",
        _ => {
            return Err(MediaError::Unsupported(format!(
                "not a {FORMATS} file (its first bytes are no known audio signature)"
            )));
        }
    };
    let bytes = if format == "wav" {
        with_streamed_lengths(bytes)
    } else {
        bytes
    };
    let unreadable = |e: Error| match e {
        Error::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            MediaError::Truncated(format!("the {format} file ends before its header does"))
        }
        e => MediaError::Unsupported(format!("cannot decode the {format} file: {e}")),
    };
    let source = MediaSourceStream::new(Box::new(std::io::Cursor::new(bytes)), Default::default());
    let probed = symphonia::default::get_probe()
        .format(
            &Hint::new(),
            source,
            &FormatOptions::default(),
            &MetadataOptions::default(),
        )
        .map_err(unreadable)?;
    let mut reader = probed.format;
    let track = reader
        .tracks()
        .iter()
        .find(|t| t.codec_params.codec != CODEC_TYPE_NULL)
        .ok_or_else(|| MediaError::Unsupported(format!("the {format} file holds no sound")))?;
    let track_id = track.id;
    let params = track.codec_params.clone();
    // A rate far from any recording's asks the resampler for FFTs of millions of points (a
    // 54-byte WAV declaring 1 Hz took 393 MB): 1 kHz to 384 kHz are taken.
    let rate = params.sample_rate.unwrap_or(0);
    if !(1000..=384_000).contains(&rate) {
        return Err(MediaError::Unsupported(format!(
            "the {format} file declares a sample rate of {rate} Hz; 1,000 to 384,000 Hz are \
             taken"
        )));
    }
    let declared = params.n_frames;
    let limit = (max_seconds * f64::from(rate)).ceil() as u64;
    if let Some(n) = declared
        && n > limit
    {
        return Err(MediaError::TooLarge(format!(
            "the {format} file declares {:.1} s of sound; this model takes at most {max_seconds} \
             s (refused before decoding)",
            n as f64 / f64::from(rate)
        )));
    }
    let stop_at = enough.map(|s| (s * f64::from(rate)).ceil() as u64 + 1);
    let mut decoder = symphonia::default::get_codecs()
        .make(&params, &DecoderOptions::default())
        .map_err(unreadable)?;
    let mut resampled = Stream::new(rate, to_rate)?;
    let mut mono: Vec<f32> = Vec::new();
    let mut frames: u64 = 0;
    let mut channels = params.channels.map_or(0, |c| c.count());
    let mut buffer: Option<SampleBuffer<f32>> = None;
    let mut stopped_early = false;
    loop {
        let packet = match reader.next_packet() {
            Ok(p) => p,
            Err(Error::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(Error::ResetRequired) => break,
            Err(e) => return Err(unreadable(e)),
        };
        if packet.track_id() != track_id {
            continue;
        }
        let decoded = match decoder.decode(&packet) {
            Ok(d) => d,
            // A damaged packet: skipped, as players do; a file of nothing else fails below.
            Err(Error::DecodeError(_)) => continue,
            Err(e) => return Err(unreadable(e)),
        };
        let spec = *decoded.spec();
        channels = spec.channels.count();
        let capacity = decoded.capacity() as u64;
        if buffer
            .as_ref()
            .is_none_or(|b| b.capacity() < decoded.capacity())
        {
            buffer = Some(SampleBuffer::new(capacity, spec));
        }
        let buf = buffer.as_mut().expect("made above");
        buf.copy_interleaved_ref(decoded);
        mono.clear();
        for frame in buf.samples().chunks_exact(channels.max(1)) {
            mono.push(frame.iter().sum::<f32>() / channels.max(1) as f32);
        }
        frames += mono.len() as u64;
        resampled.push(&mono)?;
        if frames > limit {
            return Err(MediaError::TooLarge(format!(
                "the {format} file holds more than {max_seconds} s of sound, the most this \
                 model takes"
            )));
        }
        if stop_at.is_some_and(|n| frames >= n) {
            stopped_early = true;
            break;
        }
    }
    if frames == 0 {
        return Err(MediaError::Unsupported(format!(
            "the {format} file holds no sound that could be decoded"
        )));
    }
    if !stopped_early
        && let Some(n) = declared
        && frames < n
    {
        return Err(MediaError::Truncated(format!(
            "the {format} file declares {n} samples per channel but ends after {}: it was cut \
             short",
            frames
        )));
    }
    let held = if stopped_early {
        declared.unwrap_or(frames)
    } else {
        frames
    };
    Ok(Sound {
        samples: resampled.finish()?,
        sample_rate: rate,
        channels,
        seconds: held as f64 / f64::from(rate),
        format,
    })
}

/// A WAV written to a pipe (ffmpeg, sox) cannot go back to write its lengths, and says
/// 0xFFFFFFFF (or 0) for the RIFF and data chunks instead: those lengths become what the file
/// holds. Any other length is kept, so a file cut short is still found to be.
fn with_streamed_lengths(mut bytes: Vec<u8>) -> Vec<u8> {
    const UNKNOWN: [u32; 2] = [u32::MAX, 0];
    let word = |b: &[u8], at: usize| {
        b.get(at..at + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    };
    if bytes.get(8..12) != Some(b"WAVE") {
        return bytes;
    }
    let mut at = 12;
    while let (Some(id), Some(size)) = (bytes.get(at..at + 4), word(&bytes, at + 4)) {
        if id == b"data" {
            if UNKNOWN.contains(&size) {
                let held = u32::try_from(bytes.len() - at - 8).unwrap_or(u32::MAX);
                bytes[at + 4..at + 8].copy_from_slice(&held.to_le_bytes());
                if word(&bytes, 4).is_some_and(|r| UNKNOWN.contains(&r)) {
                    let riff = u32::try_from(bytes.len() - 8).unwrap_or(u32::MAX);
                    bytes[4..8].copy_from_slice(&riff.to_le_bytes());
                }
            }
            break;
        }
        at += 8 + size as usize + (size as usize & 1);
    }
    bytes
}
