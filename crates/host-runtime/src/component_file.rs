//! Reading a component file: by the rules for any file a models directory holds, since a
//! model's `.wasm` may be dropped there by whoever may write the directory.

use anyhow::{Context, Result};
use std::path::Path;

/// The most a component file may hold: the ONNX model component is 9 MB; a component with
/// a model's weights inside it may be some tens. Several model directories deploy at once,
/// and each holds its component's bytes while it compiles.
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;

/// Whether the component's path may be a symbolic link.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Links {
    /// A path named on the command line or found in the installation: the user chose it.
    Followed,
    /// A file in a models directory or named through the admin API: whoever may write there
    /// chose it, and a link could point anywhere.
    Refused,
}

/// The component file at `path`, read by the rules for any file a models directory holds: a
/// regular file (a link refused where `links` says so, not followed: `shadow.wasm ->
/// /etc/shadow` was read, and `pm.wasm -> /proc/self/pagemap` read until the host ran out of
/// memory), at most [`MAX_COMPONENT_BYTES`], its first bytes WebAssembly's before the rest is
/// read, read to the length it had when opened, and nothing of a refused file's content in
/// the error.
pub fn read(path: &Path, links: Links) -> Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let shown = path.display();
    let file = std::fs::File::options()
        .read(true)
        // A FIFO does not hold up the open; and not through a link, where refused.
        .custom_flags(match links {
            Links::Refused => libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
            Links::Followed => libc::O_NONBLOCK | libc::O_CLOEXEC,
        })
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => anyhow::anyhow!(
                "component {shown} is a symbolic link: a component is read only from a regular \
                 file (a link could point anywhere); copy the component there instead"
            ),
            _ => anyhow::anyhow!("reading component {shown}: {e}"),
        })?;
    let meta = file
        .metadata()
        .with_context(|| format!("reading component {shown}"))?;
    if !meta.is_file() {
        anyhow::bail!("component {shown} is not a regular file");
    }
    if meta.len() > MAX_COMPONENT_BYTES {
        anyhow::bail!(
            "component {shown} is {} bytes, over the {} a component may have",
            meta.len(),
            MAX_COMPONENT_BYTES
        );
    }
    let mut file = file.take(meta.len());
    let mut magic = [0u8; 4];
    let is_wasm = file.read_exact(&mut magic).is_ok() && &magic == b"\0asm";
    if !is_wasm {
        anyhow::bail!("{shown} is not a WebAssembly component (it does not start with \\0asm)");
    }
    let mut wasm = Vec::with_capacity(meta.len() as usize);
    wasm.extend_from_slice(&magic);
    file.read_to_end(&mut wasm)
        .with_context(|| format!("reading component {shown}"))?;
    Ok(wasm)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_special_files_and_other_content_are_refused_without_showing_it() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, b"root:$6$hash:19000").unwrap();
        let link = dir.path().join("shadow.wasm");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        let error = format!("{:#}", read(&link, Links::Refused).unwrap_err());
        assert!(error.contains("symbolic link"), "{error}");
        // Followed where the user named it, and still checked.
        let error = format!("{:#}", read(&link, Links::Followed).unwrap_err());
        assert!(error.contains("not a WebAssembly component"), "{error}");
        let error = format!("{:#}", read(&secret, Links::Refused).unwrap_err());
        assert!(error.contains("not a WebAssembly component"), "{error}");
        assert!(
            !error.contains("root"),
            "nothing of the content shown: {error}"
        );
        let proc_link = dir.path().join("pm.wasm");
        std::os::unix::fs::symlink("/proc/self/pagemap", &proc_link).unwrap();
        assert!(read(&proc_link, Links::Refused).is_err());
        // A file of /proc read directly: its length is 0, so nothing is read.
        assert!(read(Path::new("/proc/self/pagemap"), Links::Followed).is_err());
        let fifo = dir.path().join("fifo.wasm");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let error = format!("{:#}", read(&fifo, Links::Followed).unwrap_err());
        assert!(error.contains("not a regular file"), "{error}");
        let component = dir.path().join("ok.wasm");
        std::fs::write(&component, b"\0asm\x0d\0\x01\0").unwrap();
        assert_eq!(read(&component, Links::Refused).unwrap().len(), 8);
        let linked = dir.path().join("linked.wasm");
        std::os::unix::fs::symlink(&component, &linked).unwrap();
        assert_eq!(read(&linked, Links::Followed).unwrap().len(), 8);
        // Over the cap (sparse: nothing read), and the wrong start of a large file.
        let big = dir.path().join("big.wasm");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_COMPONENT_BYTES + 1).unwrap();
        let error = format!("{:#}", read(&big, Links::Refused).unwrap_err());
        assert!(error.contains("over the"), "{error}");
    }
}
