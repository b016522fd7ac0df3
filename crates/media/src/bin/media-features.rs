//! `media-features`: the training scripts' featurizer. Reads the `[input]` table of a
//! `model.toml` (image or audio input) and writes, for each file named, the tensor the ONNX
//! model component would feed the graph for it, computed by the same code.
//!
//! ```text
//! media-features --input model.toml --out features.f32 [--list files.txt] [FILE...]
//! ```
//!
//! `--out` gets one row of little-endian f32 per file, in order; stdout one line per file,
//! `ok<TAB>path<TAB>{facts}` or `error<TAB>path<TAB>why`. The exit status is 1 when any file
//! failed (a training set with an unreadable file is a mistake to fix, not to skip).

use media::{audio, image};
use model_manifest::Input;
use std::io::Write;
use std::process::ExitCode;

const USAGE: &str =
    "usage: media-features --input MODEL.toml --out OUT.f32 [--list FILES.txt] [FILE...]";

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("media-features: {e}");
            ExitCode::from(2)
        }
    }
}

/// What a file becomes.
enum Reader {
    Image(model_manifest::ImageSpec),
    Audio(audio::Featurizer),
}

fn run() -> Result<bool, String> {
    let mut args = std::env::args().skip(1);
    let (mut input, mut out, mut files) = (None, None, Vec::new());
    while let Some(a) = args.next() {
        match a.as_str() {
            "--input" => input = args.next(),
            "--out" => out = args.next(),
            "--list" => {
                let list = args.next().ok_or(USAGE)?;
                let text = std::fs::read_to_string(&list).map_err(|e| format!("{list}: {e}"))?;
                files.extend(
                    text.lines()
                        .filter(|l| !l.trim().is_empty())
                        .map(String::from),
                );
            }
            "-h" | "--help" => return Err(USAGE.into()),
            _ if a.starts_with("--") => return Err(format!("unknown option {a}\n{USAGE}")),
            _ => files.push(a),
        }
    }
    let (input, out) = (input.ok_or(USAGE)?, out.ok_or(USAGE)?);
    let reader = reader(&input)?;
    let mut sink =
        std::io::BufWriter::new(std::fs::File::create(&out).map_err(|e| format!("{out}: {e}"))?);
    let stdout = std::io::stdout();
    let mut said = stdout.lock();
    let mut all_ok = true;
    for path in &files {
        let outcome =
            std::fs::read(path)
                .map_err(|e| e.to_string())
                .and_then(|bytes| match &reader {
                    Reader::Image(spec) => image::to_tensor(&bytes, spec)
                        .map(|p| p.into_parts())
                        .map_err(|e| e.to_string()),
                    Reader::Audio(f) => f
                        .to_tensor(bytes)
                        .map(|p| p.into_parts())
                        .map_err(|e| e.to_string()),
                });
        let line = match outcome {
            Ok((values, facts)) => {
                for v in values {
                    sink.write_all(&v.to_le_bytes())
                        .map_err(|e| format!("{out}: {e}"))?;
                }
                format!("ok\t{path}\t{facts}")
            }
            Err(why) => {
                all_ok = false;
                format!("error\t{path}\t{why}")
            }
        };
        writeln!(said, "{line}").map_err(|e| e.to_string())?;
    }
    sink.flush().map_err(|e| format!("{out}: {e}"))?;
    Ok(all_ok)
}

/// The reader `[input]` of `path` describes; its problems name the field.
fn reader(path: &str) -> Result<Reader, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    let value = table
        .get("input")
        .ok_or_else(|| format!("{path}: no [input] table"))?
        .clone();
    let input: Input = value
        .try_into()
        .map_err(|e: toml::de::Error| format!("{path}: [input]: {}", e.message()))?;
    let problems = match &input {
        Input::Image { image } => image.problems(),
        Input::Audio { audio } => audio.problems(),
        _ => vec!["[input] type must be \"image\" or \"audio\"".into()],
    };
    if !problems.is_empty() {
        return Err(format!("{path}: {}", problems.join("; ")));
    }
    Ok(match input {
        Input::Image { image } => Reader::Image(image),
        Input::Audio { audio } => Reader::Audio(audio::Featurizer::new(&audio)),
        _ => unreachable!("refused above"),
    })
}
