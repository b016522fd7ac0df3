//! The tests' Python virtual environments, each made from a pinned requirements file and
//! kept beside a copy of it, so it is installed again only when the pins change.

use std::path::Path;
use std::process::{Command, Stdio};

/// Makes sure `venv` (relative to `root`) holds what `requirements` pins: `proof`, a file the
/// installed tools put in it, must exist and the copy of the pins must match. `what` names
/// the tools in the message printed while they install; `Err` says why they could not be.
pub fn pinned(
    root: &Path,
    venv: &str,
    requirements: &str,
    proof: &str,
    what: &str,
) -> Result<(), String> {
    let venv = root.join(venv);
    let pins = root.join(requirements);
    let stamp = venv.join("requirements.txt");
    let wanted = std::fs::read_to_string(&pins)
        .map_err(|e| format!("{} could not be read: {e}", pins.display()))?;
    let installed = || {
        std::fs::read_to_string(&stamp).is_ok_and(|had| had == wanted) && venv.join(proof).exists()
    };
    if installed() {
        return Ok(());
    }
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    eprintln!(
        "xtask: installing {what} ({requirements}) into {}",
        venv.display()
    );
    let done = quiet(Command::new(&python).arg("-m").arg("venv").arg(&venv))
        && quiet(
            Command::new(venv.join("bin/pip"))
                .args(["install", "-q", "-r"])
                .arg(&pins),
        )
        && std::fs::write(&stamp, &wanted).is_ok();
    if done && installed() {
        return Ok(());
    }
    Err(format!(
        "{requirements} could not be installed into {} (it needs `{python}` with venv and pip, \
         and PyPI)",
        venv.display()
    ))
}

/// Runs `cmd` without its output; whether it succeeded.
pub fn quiet(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
