//! This machine's name, as `hostname` prints it: a name requests may give in `Host`
//! (`http::guard`), and the default scope of a registry's keys on a shared store.

use anyhow::{Result, bail};

/// This machine's name.
pub fn hostname() -> Result<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that much.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        bail!(
            "cannot read this machine's hostname ({})",
            std::io::Error::last_os_error()
        );
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
}
