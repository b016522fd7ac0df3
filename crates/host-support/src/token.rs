//! Secrets a service is started with (chat's admin token, `up`'s admin API token): from an
//! environment variable, else kept in a file of the data directory (made on first run,
//! readable only by its owner), so it survives restarts and scripts can read it.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

pub struct Token {
    pub value: String,
    /// Where a user finds it, for the line `up` prints.
    pub note: String,
    /// The secret's SHA-256, what every presented secret's digest is compared with
    /// ([`Token::matches`]): computed once, not per request.
    digest: [u8; 32],
}

impl Token {
    /// The secret `value`, found where `note` says.
    pub fn new(value: String, note: String) -> Self {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(value.as_bytes()).into();
        Self {
            value,
            note,
            digest,
        }
    }

    /// `$env_var` if set and not empty, else the contents of `data_dir/file` (made if absent).
    ///
    /// Refused, so a mistake stops the start instead of leaving a service open: a value that
    /// is an example file's placeholder (anything starting `change-me`, as
    /// `deploy/fleet/host.env` ships), which anybody who read the documents knows; and a token
    /// file that is empty, which would make the empty token the secret (a bare `Bearer `
    /// passes) rather than turn anything off.
    pub fn load(env_var: &str, data_dir: &Path, file: &str) -> Result<Self> {
        if let Ok(value) = std::env::var(env_var)
            && !value.is_empty()
        {
            let value = value.trim().to_owned();
            if value.is_empty() {
                bail!(
                    "${env_var} holds only whitespace: set a token (e.g. `openssl rand -hex \
                     32`), or unset it; an empty token is refused rather than taken as no token"
                );
            }
            refuse_placeholder(&value, &format!("${env_var}"))?;
            let note = format!("token from ${env_var}");
            return Ok(Self::new(value, note));
        }
        let path: PathBuf = data_dir.join(file);
        let value = match std::fs::read_to_string(&path) {
            Ok(t) => checked_file_contents(&path, &t)?,
            Err(_) => {
                let token = uuid::Uuid::new_v4().simple().to_string();
                write_private(&path, &token)
                    .with_context(|| format!("writing {}", path.display()))?;
                token
            }
        };
        let note = format!("token in {}", path.display());
        Ok(Self::new(value, note))
    }

    /// A secret given on the command line as `flag` (`--api-key`), by the same rules as a
    /// token file's: not empty, not a placeholder.
    pub fn from_flag(value: &str, flag: &str) -> Result<Self> {
        let value = value.trim();
        if value.is_empty() {
            bail!(
                "{flag} is empty: give a secret (e.g. `openssl rand -hex 32`), or leave the \
                 flag out; an empty secret is refused rather than taken as none"
            );
        }
        refuse_placeholder(value, flag)?;
        Ok(Self::new(value.to_owned(), format!("given with {flag}")))
    }

    /// A secret kept in `path`, made by the operator: it must exist, be readable by its
    /// owner only, not be empty and not be a placeholder (the rules of the token files
    /// [`Token::load`] reads).
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| {
            format!(
                "reading {}: write the secret there (e.g. `openssl rand -hex 32 > FILE; \
                 chmod 600 FILE`)",
                path.display()
            )
        })?;
        let value = checked_file_contents(path, &text)?;
        let note = format!("in {}", path.display());
        Ok(Self::new(value, note))
    }

    /// Whether `headers` carry this secret, as `Authorization: Bearer <secret>` or, for
    /// clients that cannot set `Authorization`, as `x-api-key: <secret>`.
    pub fn admits_key(&self, headers: &hyper::HeaderMap) -> Admission {
        match self.admits_headers(headers) {
            Admission::Missing => match headers.get(API_KEY_HEADER) {
                Some(given) => self.matches(given.as_bytes()),
                None => Admission::Missing,
            },
            found => found,
        }
    }

    /// Whether the `Authorization` header of `headers` carries this token.
    pub fn admits_headers(&self, headers: &hyper::HeaderMap) -> Admission {
        self.admits(
            headers
                .get(hyper::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok()),
        )
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
        self.matches(presented.as_bytes())
    }

    /// Compares `presented` with the secret in constant time: their SHA-256 digests (equal
    /// lengths whatever was sent, so neither the secret's length nor how much of it a guess
    /// got right shows in the time taken), compared by `subtle`.
    fn matches(&self, presented: &[u8]) -> Admission {
        use sha2::Digest;
        use subtle::ConstantTimeEq;
        let given = sha2::Sha256::digest(presented);
        if bool::from(given.as_slice().ct_eq(&self.digest)) {
            Admission::Admitted
        } else {
            Admission::Wrong
        }
    }
}

/// The header a client may send an API key in instead of `Authorization: Bearer`.
pub const API_KEY_HEADER: &str = "x-api-key";

/// A token file's secret: the file private to its owner, the secret neither empty nor a
/// placeholder.
fn checked_file_contents(path: &Path, text: &str) -> Result<String> {
    super::private::private_file(path)?;
    let value = text.trim().to_owned();
    if value.is_empty() {
        bail!(
            "the token file {} is empty: write a token in it (e.g. `openssl rand -hex 32`), or \
             remove it to have a new one made; an empty token is refused rather than taken as \
             no token",
            path.display()
        );
    }
    refuse_placeholder(&value, &path.display().to_string())?;
    Ok(value)
}

/// The prefix of every placeholder secret in the example files (`change-me-admin-token`,
/// `change-me-chat-token`, `change-me-redis-password`).
pub const PLACEHOLDER_PREFIX: &str = "change-me";

/// Whether `value` is an example file's placeholder rather than a secret.
pub fn is_placeholder(value: &str) -> bool {
    value
        .trim()
        .get(..PLACEHOLDER_PREFIX.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(PLACEHOLDER_PREFIX))
}

/// `Err` naming `source` when `value` is a placeholder.
fn refuse_placeholder(value: &str, source: &str) -> Result<()> {
    if is_placeholder(value) {
        bail!(
            "{source} holds a placeholder token (`{PLACEHOLDER_PREFIX}...`) from the example files: set a \
             secret of your own (e.g. `openssl rand -hex 32`); a token everybody can read in \
             the documents is refused"
        );
    }
    Ok(())
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
        let t = Token::new("abc123".into(), String::new());
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

    /// Issue 56, item 11: the example files' placeholders and an empty token file stop the
    /// start with a message saying what to do; a real token in either place is taken.
    #[test]
    fn placeholders_and_empty_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let var = "TOKEN_TEST_PLACEHOLDER";
        // SAFETY: this test alone reads or writes this variable.
        unsafe { std::env::set_var(var, "change-me-admin-token") };
        let err = format!("{:#}", Token::load(var, dir.path(), "t").err().unwrap());
        assert!(
            err.contains("placeholder") && err.contains("$TOKEN_TEST_PLACEHOLDER"),
            "{err}"
        );
        unsafe { std::env::set_var(var, " Change-Me ") };
        assert!(Token::load(var, dir.path(), "t").is_err());
        // Only whitespace: an empty token, not none.
        unsafe { std::env::set_var(var, "  \t") };
        let err = format!("{:#}", Token::load(var, dir.path(), "t").err().unwrap());
        assert!(err.contains("only whitespace"), "{err}");
        unsafe { std::env::set_var(var, "s3cret") };
        assert_eq!(Token::load(var, dir.path(), "t").unwrap().value, "s3cret");
        unsafe { std::env::remove_var(var) };

        let file = dir.path().join("t");
        write_private(&file, " \n").unwrap();
        let err = format!("{:#}", Token::load(var, dir.path(), "t").err().unwrap());
        assert!(
            err.contains("is empty") && err.contains("remove it"),
            "{err}"
        );
        std::fs::remove_file(&file).unwrap();
        write_private(&file, "change-me-chat-token\n").unwrap();
        let err = format!("{:#}", Token::load(var, dir.path(), "t").err().unwrap());
        assert!(err.contains("placeholder"), "{err}");
        std::fs::remove_file(&file).unwrap();
        // Absent: one is made, and read back the same next time.
        let made = Token::load(var, dir.path(), "t").unwrap().value;
        assert_eq!(made.len(), 32);
        assert_eq!(Token::load(var, dir.path(), "t").unwrap().value, made);
        assert!(!is_placeholder("my-change-me"));
    }
}
