//! A library's lines, read with a bound: a line longer than the limit is skipped over
//! without being held in memory (its length is all that is kept), so one 100 MB row costs
//! what a short one does and fails alone, and a line that is not UTF-8 is handed on as bytes
//! for its row to fail alone too.

use std::io::BufRead;

/// Longest row read: the host's default request-body cap (1 MiB), past which no model could
/// be sent the row anyway.
pub const MAX_ROW_BYTES: usize = 1 << 20;

/// One line, without its line ending.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    Bytes(Vec<u8>),
    /// Longer than the limit: this many bytes, skipped.
    TooLong(u64),
}

impl Line {
    /// The line as text, or why its row cannot be read.
    pub fn text(self) -> Result<String, String> {
        match self {
            Line::Bytes(b) => String::from_utf8(b).map_err(|_| "the row is not UTF-8 text".into()),
            Line::TooLong(n) => Err(too_long(n)),
        }
    }
}

/// Why a row of `bytes` bytes is not read.
pub fn too_long(bytes: u64) -> String {
    format!(
        "the row is {bytes} bytes, over the limit of {MAX_ROW_BYTES} bytes (1 MiB); it was skipped"
    )
}

/// The lines of `reader`, each at most `max` bytes held.
pub struct BoundedLines<R> {
    reader: R,
    max: usize,
}

impl<R: BufRead> BoundedLines<R> {
    pub fn new(reader: R, max: usize) -> Self {
        Self { reader, max }
    }
}

impl<R: BufRead> Iterator for BoundedLines<R> {
    type Item = std::io::Result<Line>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut line = Vec::new();
        let mut skipped: u64 = 0;
        let mut any = false;
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Some(Err(e)),
            };
            if buf.is_empty() {
                break;
            }
            any = true;
            let (part, found) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            if skipped > 0 || line.len() + part.len() > self.max {
                skipped += (line.len() + part.len()) as u64;
                line = Vec::new();
            } else {
                line.extend_from_slice(part);
            }
            let used = found.unwrap_or(buf.len());
            self.reader.consume(used);
            if found.is_some() {
                break;
            }
        }
        if !any {
            return None;
        }
        if skipped > 0 {
            return Some(Ok(Line::TooLong(skipped)));
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Some(Ok(Line::Bytes(line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_skipped_and_counted_and_the_rest_read() {
        let mut text = b"short\r\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', 100));
        text.extend(b"\n\xff\xfe\nlast");
        // A tiny read buffer, so a line spans many reads.
        let reader = std::io::BufReader::with_capacity(7, &text[..]);
        let lines: Vec<Line> = BoundedLines::new(reader, 10).map(Result::unwrap).collect();
        assert_eq!(
            lines,
            [
                Line::Bytes(b"short".to_vec()),
                Line::TooLong(100),
                Line::Bytes(vec![0xff, 0xfe]),
                Line::Bytes(b"last".to_vec()),
            ]
        );
        assert!(Line::Bytes(vec![0xff]).text().is_err());
    }
}
