//! `data.image` / `data.audio` (base64 of the file) or `data.image_url` / `data.audio_url`
//! (fetched through the host's outgoing HTTP, within its allowed hosts), made into the graph's
//! tensor by the `media` crate, the training scripts' own featurizer. Every way a file can be
//! bad is a 400 with its own `error_code`, naming the field.

use super::{Cell, InputRow};
use base64::Engine;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use guest_kit::fetch::{self, FetchError};
use media::MediaError;
use model_sdk::{ApiError, ErrorCode, PredictError};
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

/// How long one URL may take to fetch (within the request's own deadline).
pub const FETCH_TIME: Duration = Duration::from_secs(10);
/// Files a batch fetches and decodes at once.
const WAVE: usize = 4;
/// Most files in one batch.
const MAX_BATCH: usize = 64;
/// What a batch's tensors may take while the graph's rows are built.
const BATCH_VALUES_BYTES: usize = 24 << 20;

/// What the file is: an image or a sound, and how it becomes the tensor.
pub enum Kind {
    Image(model_manifest::ImageSpec),
    Audio(media::audio::Featurizer),
}

/// Where a request's file comes from.
pub enum Source {
    /// Sent inline, already decoded from base64.
    Inline(Vec<u8>),
    /// To be fetched.
    Url(String),
}

impl Kind {
    /// `image` or `audio`: the field that holds the file, and `<field>_url` its URL.
    pub fn field(&self) -> &'static str {
        match self {
            Kind::Image(_) => "image",
            Kind::Audio(_) => "audio",
        }
    }

    fn max_bytes(&self) -> u64 {
        match self {
            Kind::Image(s) => s.max_bytes,
            Kind::Audio(f) => f.spec().max_bytes,
        }
    }

    /// The tensor's shape for one input.
    pub fn shape(&self) -> Vec<usize> {
        match self {
            Kind::Image(s) => s.shape().to_vec(),
            Kind::Audio(f) => f.spec().shape(),
        }
    }

    /// The largest request body a single input needs (see `model_manifest::body_for`).
    pub fn max_body(&self) -> usize {
        model_manifest::body_for(self.max_bytes())
    }

    /// The file a request names: exactly one of `<field>` and `<field>_url`.
    pub fn source(&self, data: &Map<String, Value>) -> Result<Source, PredictError> {
        let field = self.field();
        let url_field = format!("{field}_url");
        let hint = format!("send data.{field} (base64 of the file) or data.{url_field}");
        model_sdk::input::only_fields(data, &[field, &url_field], &hint)?;
        let inline = model_sdk::input::string_field(data, field)?;
        let url = model_sdk::input::string_field(data, &url_field)?;
        match (inline, url) {
            (Some(_), Some(_)) => Err(ApiError::invalid(
                &format!("data.{url_field}"),
                format!("send data.{field} or data.{url_field}, not both"),
            )
            .into()),
            (None, None) => Err(ApiError::missing(&format!("data.{field}")).into()),
            (None, Some(url)) => Ok(Source::Url(url.trim().to_owned())),
            (Some(text), None) => Ok(Source::Inline(self.decode_base64(text)?)),
        }
    }

    /// Decodes base64 (standard or URL-safe alphabet, padding optional, line breaks
    /// ignored, a `data:...;base64,` prefix allowed), refusing by length before decoding.
    fn decode_base64(&self, text: &str) -> Result<Vec<u8>, ApiError> {
        let at = format!("data.{}", self.field());
        let text = match text.split_once(";base64,") {
            Some((head, rest)) if head.starts_with("data:") => rest,
            _ => text,
        };
        // Counted without line breaks, as decoded: a wrapped file of the largest size passes
        // (the estimate is up to 2 bytes high, from the padding: hence the 3 below).
        let significant = text.bytes().filter(|b| !b.is_ascii_whitespace()).count();
        let decoded_len = significant / 4 * 3;
        if decoded_len as u64 > self.max_bytes() + 3 {
            return Err(ApiError::new(
                ErrorCode::MediaTooLarge,
                format!(
                    "{at}: the file is about {decoded_len} bytes; this model takes at most {}",
                    self.max_bytes()
                ),
            ));
        }
        let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let alphabet = if compact.contains(['-', '_']) {
            &base64::alphabet::URL_SAFE
        } else {
            &base64::alphabet::STANDARD
        };
        let config = GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true);
        GeneralPurpose::new(alphabet, config)
            .decode(compact.as_bytes())
            .map_err(|e| {
                ApiError::new(
                    ErrorCode::InvalidBase64,
                    format!("{at}: not valid base64 ({e}); send the file's bytes in base64"),
                )
            })
    }

    /// Fetches `url` within the deadline; its problems as 400s naming the field.
    pub fn fetch(&self, url: &str, deadline: Instant) -> Result<Vec<u8>, ApiError> {
        let at = format!("data.{}_url", self.field());
        let deadline = deadline.min(Instant::now() + FETCH_TIME);
        fetch::get(url, self.max_bytes(), deadline)
            .map(|f| f.bytes)
            .map_err(|e| fetch_error(&at, e))
    }

    /// The file made into the graph's row; `echo` says where it came from.
    pub fn to_row(&self, bytes: Vec<u8>, source: Value) -> Result<InputRow<'static>, ApiError> {
        let at = format!("data.{}", self.field());
        let (values, mut facts) = match self {
            Kind::Image(spec) => media::image::to_tensor(&bytes, spec).map(|p| p.into_parts()),
            Kind::Audio(f) => f.to_tensor(bytes).map(|p| p.into_parts()),
        }
        .map_err(|e| media_error(&at, e))?;
        if let (Value::Object(facts), Value::Object(from)) = (&mut facts, source) {
            facts.extend(from);
        }
        Ok(InputRow {
            cells: values
                .into_iter()
                .map(|v| Cell::Number(f64::from(v)))
                .collect(),
            echo: facts,
            fingerprint: None,
            named: Vec::new(),
            unseen: Vec::new(),
        })
    }

    /// Reads one request's `data`: the file, fetched if need be, made into the row.
    pub fn read(&self, data: &Map<String, Value>) -> Result<InputRow<'static>, PredictError> {
        match self.source(data)? {
            Source::Inline(bytes) => Ok(self.to_row(bytes, json!({"source": "inline"}))?),
            Source::Url(url) => {
                let bytes = self.fetch(&url, Instant::now() + FETCH_TIME)?;
                Ok(self.to_row(bytes, json!({"source": "url", "url": url}))?)
            }
        }
    }

    /// Reads a batch's items in waves of [`WAVE`]: each wave's URLs fetched at once (one slow
    /// server does not hold up the others), its files decoded and let go before the next, so
    /// a batch holds a wave's files, never all of them (nor opens a thousand connections to a
    /// host at once). Each item fails alone; past `deadline` the rest are not read (a shorter
    /// list: the SDK answers them "not computed").
    pub fn read_all(
        &self,
        items: &[Map<String, Value>],
        deadline: Instant,
    ) -> Vec<Result<InputRow<'static>, PredictError>> {
        let at = format!("data.{}_url", self.field());
        let mut read = Vec::with_capacity(items.len());
        for wave in items.chunks(WAVE) {
            if Instant::now() >= deadline {
                break;
            }
            let sources: Vec<Result<Source, PredictError>> =
                wave.iter().map(|d| self.source(d)).collect();
            let urls: Vec<&str> = sources
                .iter()
                .filter_map(|s| match s {
                    Ok(Source::Url(u)) => Some(u.as_str()),
                    _ => None,
                })
                .collect();
            let fetch_by = deadline.min(Instant::now() + FETCH_TIME);
            let mut fetched = fetch::get_all(&urls, self.max_bytes(), fetch_by).into_iter();
            for source in sources {
                if Instant::now() >= deadline {
                    return read;
                }
                read.push(source.and_then(|source| match source {
                    Source::Inline(bytes) => Ok(self.to_row(bytes, json!({"source": "inline"}))?),
                    Source::Url(url) => {
                        let bytes = fetched
                            .next()
                            .ok_or_else(|| PredictError::Fault("a URL without an answer".into()))?
                            .map_err(|e| fetch_error(&at, e))?
                            .bytes;
                        Ok(self.to_row(bytes, json!({"source": "url", "url": url}))?)
                    }
                }));
            }
        }
        read
    }

    /// Most items of a batch: the tensors of a whole batch are held at once (a value takes 32
    /// bytes as the graph's row is built), so at most [`BATCH_VALUES_BYTES`] of them, and at
    /// most [`MAX_BATCH`] files.
    pub fn max_batch(&self) -> usize {
        let per_item = self.shape().iter().product::<usize>() * 32;
        (BATCH_VALUES_BYTES / per_item.max(1)).clamp(1, MAX_BATCH)
    }

    /// The JSON Schema of `data`.
    pub fn schema(&self) -> Value {
        let field = self.field();
        let url_field = format!("{field}_url");
        let (formats, what) = match self {
            Kind::Image(_) => (media::image::FORMATS, "picture"),
            Kind::Audio(_) => (media::audio::FORMATS, "sound"),
        };
        let max = self.max_bytes();
        let inline = json!({
            "type": "string",
            "contentEncoding": "base64",
            "minLength": 1,
            "maxLength": max.div_ceil(3) * 4,
            "description": format!("The {what} file ({formats}, at most {max} bytes) in base64; a `data:` URL prefix is allowed."),
        });
        let url = json!({
            "type": "string",
            "format": "uri",
            "minLength": 1,
            "maxLength": 2048,
            "description": format!("An http(s) URL of the {what} file ({formats}), fetched by the deployment: only hosts its allowed_outbound_hosts lists (and, under runtime-host, never this machine's or a private network's addresses unless named there)."),
        });
        json!({
            "type": "object",
            "properties": {field: inline, url_field.clone(): url},
            "oneOf": [{"required": [field]}, {"required": [url_field]}],
            "additionalProperties": false,
        })
    }
}

/// A `media` refusal as its own error code.
fn media_error(at: &str, e: MediaError) -> ApiError {
    let code = match e {
        MediaError::Unsupported(_) => ErrorCode::UnsupportedMedia,
        MediaError::Truncated(_) => ErrorCode::TruncatedMedia,
        MediaError::TooLarge(_) => ErrorCode::MediaTooLarge,
    };
    ApiError::new(code, format!("{at}: {e}"))
}

/// A fetch that failed, as its own error code.
fn fetch_error(at: &str, e: FetchError) -> ApiError {
    match e {
        FetchError::BadUrl(why) => ApiError::invalid(at, why),
        FetchError::NotAllowed(why) => {
            ApiError::new(ErrorCode::UrlNotAllowed, format!("{at}: {why}"))
        }
        FetchError::TooLarge(why) => {
            ApiError::new(ErrorCode::MediaTooLarge, format!("{at}: {why}"))
        }
        FetchError::Failed(why) => ApiError::new(ErrorCode::FetchFailed, format!("{at}: {why}")),
    }
}
