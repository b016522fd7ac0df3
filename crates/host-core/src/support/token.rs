//! Secrets a service is started with (chat's admin token, `up`'s admin API token): from an
//! environment variable, else kept in a file of the data directory (made on first run,
//! readable only by its owner), so it survives restarts and scripts can read it.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

pub struct Token {
    pub value: String,
    /// Where a user finds it, for the line `up` prints.
    pub note: String,
}

impl Token {
    /// `$env_var` if set and not empty, else the contents of `data_dir/file` (made if absent).
    pub fn load(env_var: &str, data_dir: &Path, file: &str) -> Result<Self> {
        if let Ok(value) = std::env::var(env_var)
            && !value.is_empty()
        {
            let note = format!("token from ${env_var}");
            return Ok(Self { value, note });
        }
        let path: PathBuf = data_dir.join(file);
        let value = match std::fs::read_to_string(&path) {
            Ok(t) => {
                super::private::private_file(&path)?;
                t.trim().to_owned()
            }
            Err(_) => {
                let token = uuid::Uuid::new_v4().simple().to_string();
                write_private(&path, &token)
                    .with_context(|| format!("writing {}", path.display()))?;
                token
            }
        };
        let note = format!("token in {}", path.display());
        Ok(Self { value, note })
    }

    /// Whether `Authorization` header `given` carries this token (compared in constant time).
    pub fn admits(&self, given: Option<&str>) -> Admission {
        // The scheme is case-insensitive (RFC 9110, section 11.1): `bearer` is `Bearer`.
        let presented = given
            .and_then(|h| h.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim_matches(' '));
        let Some(presented) = presented else {
            return Admission::Missing;
        };
        let (a, b) = (presented.as_bytes(), self.value.as_bytes());
        let differ =
            a.len() != b.len() || a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) != 0;
        if differ {
            Admission::Wrong
        } else {
            Admission::Admitted
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Admission {
    Admitted,
    Missing,
    Wrong,
}

#[cfg(unix)]
fn write_private(path: &Path, value: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(value.as_bytes())
}

#[cfg(not(unix))]
fn write_private(path: &Path, value: &str) -> std::io::Result<()> {
    std::fs::write(path, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_bearer_token_is_admitted() {
        let t = Token {
            value: "abc123".into(),
            note: String::new(),
        };
        assert_eq!(t.admits(Some("Bearer abc123")), Admission::Admitted);
        assert_eq!(t.admits(Some("Bearer abc124")), Admission::Wrong);
        assert_eq!(t.admits(Some("Bearer abc1234")), Admission::Wrong);
        assert_eq!(t.admits(Some("Bearer ")), Admission::Wrong);
        assert_eq!(t.admits(Some("bearer abc123")), Admission::Admitted);
        assert_eq!(t.admits(Some("BEARER  abc123")), Admission::Admitted);
        assert_eq!(t.admits(Some("Basic abc123")), Admission::Missing);
        assert_eq!(t.admits(Some("abc123")), Admission::Missing);
        assert_eq!(t.admits(None), Admission::Missing);
    }
}
