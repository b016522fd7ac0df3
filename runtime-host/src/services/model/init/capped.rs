//! The files `model init` is given, read with a bound: a file's size over the limit is
//! refused before anything is read, and a stream whose size is not known (a pipe, a device
//! such as `/dev/zero`) once it passes the limit, so a wrong file ends in an error naming
//! it instead of exhausting memory.

use anyhow::{Context, Result, bail};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// A file read through [`Read`], failing once more than `limit` bytes come.
pub struct LimitReader {
    file: File,
    left: u64,
    limit: u64,
    what: &'static str,
}

impl LimitReader {
    /// Opens `path` (`what` it is, for the error: "a CSV file"), refusing it when its size is
    /// over `limit` bytes.
    pub fn open(path: &Path, limit: u64, what: &'static str) -> Result<Self> {
        let file = File::open(path).with_context(|| format!("reading {}", path.display()))?;
        let len = file
            .metadata()
            .with_context(|| format!("reading {}", path.display()))?
            .len();
        if len > limit {
            bail!(
                "{}: {len} bytes, over the {limit} bytes `model init` reads of {what}",
                path.display()
            );
        }
        Ok(Self {
            file,
            left: limit,
            limit,
            what,
        })
    }

    /// The whole of `path`, at most `limit` bytes of it.
    pub fn read_all(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        Self::open(path, limit, what)?
            .read_to_end(&mut bytes)
            .with_context(|| format!("reading {}", path.display()))?;
        Ok(bytes)
    }
}

impl Read for LimitReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // One byte more tells a file of exactly `limit` bytes from a longer one.
            if self.file.read(&mut [0u8; 1])? == 0 {
                return Ok(0);
            }
            return Err(io::Error::other(format!(
                "over the {} bytes `model init` reads of {}",
                self.limit, self.what
            )));
        }
        let room = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.file.read(&mut buf[..room])?;
        self.left -= n as u64;
        Ok(n)
    }
}
