//! A private OCI registry for the tests: Debian's `docker-registry` (the CNCF distribution
//! registry) on a free loopback port, storing into a temporary directory, and `spin registry
//! push` of the project's app to it. Tests that need one and cannot have one print a loud
//! SKIPPED line, unless `cargo xtask test` has installed the package, where they fail instead
//! ([`crate::tools::require_or_skip`]).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct OciRegistry {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl OciRegistry {
    /// A fresh, empty registry, or `None` (announced loudly, naming `test`) where the
    /// `docker-registry` program is not installed.
    pub fn start(test: &str) -> Option<Self> {
        let installed = Command::new("docker-registry")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
            .then_some(());
        crate::tools::require_or_skip(crate::tools::Tool::OciRegistry, test, installed)?;
        let dir = crate::temp_dir();
        // Its default port is 5000, the registry interface's: never that one.
        let port = crate::free_port();
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    \
                 rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
                dir.path().join("data").display()
            ),
        )
        .expect("writing the registry's configuration");
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting docker-registry");
        let registry = Self {
            child,
            port,
            _dir: dir,
        };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "docker-registry did not listen on {port} within 30 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(registry)
    }

    /// `path` on the registry's HTTP API (`/v2/...`).
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// `spin registry push` of the project's `spin.toml` (its components, the model
    /// directories their `files` mount, the console) as `edge/<name>:<tag>`; returns the
    /// reference `spin up --from` takes.
    pub fn push_app(&self, spin: &std::path::Path, name: &str, tag: &str) -> String {
        let reference = format!("127.0.0.1:{}/edge/{name}:{tag}", self.port);
        let out = Command::new(spin)
            .args(["registry", "push", "--insecure", "--from"])
            .arg(crate::workspace_root().join("spin.toml"))
            .arg(&reference)
            .output()
            .expect("running spin registry push");
        assert!(
            out.status.success(),
            "spin registry push {reference}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        reference
    }
}

impl Drop for OciRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
