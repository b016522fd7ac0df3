//! Why a file could not be made into a tensor; each kind is its own `error_code` on the wire.

/// What went wrong with a picture or a sound, in words a caller can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MediaError {
    /// Not a format this crate decodes, or not a picture or sound at all.
    Unsupported(String),
    /// The file ends before its data does.
    Truncated(String),
    /// Larger than the manifest allows (bytes, pixels or seconds), found before decoding.
    TooLarge(String),
}

impl MediaError {
    pub fn message(&self) -> &str {
        match self {
            Self::Unsupported(m) | Self::Truncated(m) | Self::TooLarge(m) => m,
        }
    }
}

impl std::fmt::Display for MediaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

/// Refuses `bytes` longer than `max` before anything reads them.
pub(crate) fn check_size(bytes: &[u8], max: u64, what: &str) -> Result<(), MediaError> {
    if bytes.len() as u64 > max {
        return Err(MediaError::TooLarge(format!(
            "the {what} file is {} bytes; this model takes at most {max}",
            bytes.len()
        )));
    }
    if bytes.is_empty() {
        return Err(MediaError::Unsupported(format!("the {what} file is empty")));
    }
    Ok(())
}
