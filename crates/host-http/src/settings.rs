//! What the HTTP layer holds for the whole process, as one value: the names this machine
//! answers to ([`crate::guard`]), what the process may hold of bodies still arriving
//! ([`crate::held`]) and the threads that run batches ([`crate::lanes`]). The command line
//! builds it from its flags (runtime-host's `cli`) and installs it once, before the first
//! listener starts; every module reads that one value. A second install is refused, so no
//! part of the program can change what another already relies on.

use host_runtime::limits::{DEFAULT_MAX_HELD_BYTES, DEFAULT_MAX_RECEIVING};
use std::sync::OnceLock;

/// The process's HTTP settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpSettings {
    /// Further names this machine answers to on loopback listeners (`--allowed-host`),
    /// beside `localhost`, loopback addresses and its hostname; compared without case.
    pub allowed_hosts: Vec<String>,
    /// Bytes of request bodies the process holds while they arrive (`--max-held-bodies`).
    pub max_held_bytes: usize,
    /// Request bodies the process receives at once (`--max-receiving`), at least 1.
    pub max_receiving: usize,
    /// Threads that run batches at a lower priority (`--batch-lanes`), at least 1.
    pub batch_lanes: usize,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            allowed_hosts: Vec::new(),
            max_held_bytes: DEFAULT_MAX_HELD_BYTES,
            max_receiving: DEFAULT_MAX_RECEIVING,
            batch_lanes: default_batch_lanes(),
        }
    }
}

/// Default of `--batch-lanes`: one per core.
pub fn default_batch_lanes() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

static INSTALLED: OnceLock<HttpSettings> = OnceLock::new();

/// Makes `settings` the process's, once. `Err` carries the settings already in force (a
/// second install, or one after a module read the defaults): a mistake in the program.
pub fn install(settings: HttpSettings) -> Result<(), &'static HttpSettings> {
    install_into(&INSTALLED, settings)
}

fn install_into(
    cell: &OnceLock<HttpSettings>,
    settings: HttpSettings,
) -> Result<(), &HttpSettings> {
    let settings = HttpSettings {
        max_receiving: settings.max_receiving.max(1),
        batch_lanes: settings.batch_lanes.max(1),
        ..settings
    };
    match cell.set(settings) {
        Ok(()) => Ok(()),
        Err(refused) => {
            let now = cell.get().expect("set refused: the cell holds a value");
            if *now == refused { Ok(()) } else { Err(now) }
        }
    }
}

/// The settings in force: those installed, or the defaults where none were (a unit test, a
/// command that serves nothing).
pub fn current() -> &'static HttpSettings {
    INSTALLED.get_or_init(HttpSettings::default)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Into a cell of its own: the process's is read by other tests of this binary.
    #[test]
    fn installed_once_a_second_install_refused() {
        let cell = OnceLock::new();
        let settings = HttpSettings {
            allowed_hosts: vec!["Edge.Example".into()],
            max_held_bytes: 1 << 20,
            max_receiving: 0,
            batch_lanes: 3,
        };
        install_into(&cell, settings.clone()).unwrap();
        assert_eq!(cell.get().unwrap().max_receiving, 1, "at least one body");
        assert_eq!(cell.get().unwrap().batch_lanes, 3);
        install_into(&cell, settings.clone()).expect("the same settings again are no change");
        let other = HttpSettings {
            batch_lanes: 4,
            ..settings
        };
        assert_eq!(
            install_into(&cell, other).unwrap_err().batch_lanes,
            3,
            "a second install is refused"
        );
    }
}
