//! Starting what a benchmark measures: a registry and model deployments in `runtime-host`
//! (the product), molprop compiled natively (`molprop-native`), the Python peers (FastAPI +
//! uvicorn + RDKit, and onnxruntime for the solubility model, in a local virtualenv), and
//! whole `up` stacks.

use super::procs::{Proc, addr_in, free_port, wait_ok};
use anyhow::{Context, Result, bail};
use edge_api::registry::RegistryListing;
use service_client::HttpClient;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where things are.
#[derive(Clone)]
pub struct Paths {
    /// The `runtime-host` binary measured.
    pub host: PathBuf,
    /// The built components (`*.wasm`).
    pub components: PathBuf,
    pub native: PathBuf,
    /// `bench/peers/python` (app.py, requirements.txt).
    pub python_app: PathBuf,
    pub python: String,
    /// Scratch space: data directories, logs, the virtualenv.
    pub work: PathBuf,
    /// A program the measured host and native peer run under, with its arguments before
    /// theirs (valgrind, for the instructions section, which runs them in the same
    /// process); empty: none.
    pub wrapper: Vec<String>,
}

impl Paths {
    /// A built component by artifact name (`molprop`, `onnx_model`, ...).
    pub fn component(&self, name: &str) -> Result<PathBuf> {
        let file = self.components.join(format!("{name}.wasm"));
        anyhow::ensure!(
            file.exists(),
            "{} does not exist: build the components with `cargo xtask build` (or pass --components)",
            file.display()
        );
        Ok(file)
    }

    pub(super) fn log(&self, name: &str) -> PathBuf {
        self.work.join(format!("{name}.log"))
    }
}

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// `runtime-host registry` on a free port, assigning from `ports`.
pub async fn registry(
    p: &Paths,
    name: &str,
    ports: &str,
    extra: &[String],
) -> Result<(Proc, SocketAddr)> {
    // The registry refuses a range holding its own port, and ranges may reach into the
    // ephemeral ports that free_port() hands out.
    let range = registry_core::PortRange::parse(ports).map_err(anyhow::Error::msg)?;
    let mut port = free_port()?;
    while range.contains(port) {
        port = free_port()?;
    }
    let addr = loopback(port);
    let data = super::procs::fresh_dir(&p.work, name)?;
    let mut args = vec![
        "registry".into(),
        "--listen".into(),
        addr.to_string(),
        "--ports".into(),
        ports.into(),
        "--ttl".into(),
        "3600".into(),
        // The bench is one process (and user) holding thousands of registrations.
        "--max-per-process".into(),
        "0".into(),
        "--max-per-user".into(),
        "0".into(),
        "--data-dir".into(),
        data.display().to_string(),
    ];
    args.extend(extra.iter().cloned());
    let proc = Proc::spawn(name, &p.host, &args, &p.log(name))?;
    let client = HttpClient::new(Duration::from_secs(2));
    wait_ok(
        &client,
        &format!("http://{addr}/registry"),
        Duration::from_secs(60),
    )
    .await?;
    Ok((proc, addr))
}

/// A model `runtime-host model` deploys: a component, and the flags it needs (mounts).
pub struct ModelUnderTest {
    pub component: PathBuf,
    pub flags: Vec<String>,
}

impl ModelUnderTest {
    pub fn molprop(p: &Paths) -> Result<Self> {
        Ok(Self {
            component: p.component("molprop")?,
            flags: vec![],
        })
    }

    /// The embedding model component, granted all-MiniLM-L6-v2 from `ai_models`.
    pub fn minilm(p: &Paths, ai_models: &Path) -> Result<Self> {
        Ok(Self {
            component: p.component("minilm")?,
            flags: ai_model_flags(ai_models),
        })
    }

    /// The ONNX model component serving `models/<name>` of this repository.
    pub fn onnx(p: &Paths, name: &str) -> Result<Self> {
        let dir = Path::new("models").join(name);
        if !dir.join("model.toml").is_file() {
            bail!(
                "{} has no model.toml (run the bench from the repository root)",
                dir.display()
            );
        }
        Ok(Self {
            component: p.component("onnx_model")?,
            flags: vec!["--dir".into(), format!("{}:/model", dir.display())],
        })
    }
}

/// The flags that grant all-MiniLM-L6-v2, read from `dir`.
pub fn ai_model_flags(dir: &Path) -> Vec<String> {
    vec![
        "--ai-model".into(),
        edge_api::embedding::MODEL.into(),
        "--ai-models-dir".into(),
        dir.display().to_string(),
    ]
}

/// `runtime-host model` registering with `registry`; returns it, its address and the time
/// from exec to registered and healthy.
pub async fn host_model(
    p: &Paths,
    name: &str,
    model: &ModelUnderTest,
    registry: SocketAddr,
    data_dir: &Path,
    extra: &[&str],
) -> Result<(Proc, SocketAddr, Duration)> {
    let started = Instant::now();
    let mut args = vec![
        "model".into(),
        model.component.display().to_string(),
        "--registry".into(),
        format!("http://{registry}"),
        "--data-dir".into(),
        data_dir.display().to_string(),
    ];
    args.extend(model.flags.iter().cloned());
    // Steady state: the code a deployment serves once compiled, not Winch's code that a new
    // component starts on (measured as a side of its own, `--baseline-only`).
    if !extra.contains(&"--baseline-only") {
        args.push("--optimized-only".into());
    }
    args.extend(extra.iter().map(|a| a.to_string()));
    let mut proc = spawn_wrapped(p, name, &p.host, args)?;
    let client = HttpClient::new(Duration::from_secs(2));
    let port = loop {
        if let Ok(r) = client
            .send(
                hyper::Method::GET,
                &format!("http://{registry}/registry"),
                None,
                None,
            )
            .await
            && let Ok(list) = r.json::<RegistryListing>()
            && let Some(e) = list
                .registrations
                .iter()
                .find(|e| e.process_id == proc.pid())
        {
            break e.port;
        }
        if proc.exited() {
            bail!(
                "{name} exited before registering (see {})",
                p.log(name).display()
            );
        }
        if started.elapsed() > Duration::from_secs(120) {
            bail!(
                "{name} did not register within 120 s (see {})",
                p.log(name).display()
            );
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    };
    let addr = loopback(port);
    wait_ok(
        &client,
        &format!("http://{addr}/health"),
        Duration::from_secs(60),
    )
    .await?;
    Ok((proc, addr, started.elapsed()))
}

/// `molprop-native` on a free port.
pub async fn native(p: &Paths) -> Result<(Proc, SocketAddr)> {
    if !p.native.exists() {
        bail!(
            "{} not found; build it with `cargo build --release -p molprop-native` (cargo xtask bench does)",
            p.native.display()
        );
    }
    let mut proc = spawn_wrapped(p, "native", &p.native, vec![])?;
    let lines = proc
        .lines_until("listening on", Duration::from_secs(30))
        .await?;
    Ok((proc, addr_in(lines.last().expect("the line found"))?))
}

/// `program args`, or `wrapper[0] wrapper[1..] program args` with [`Paths::wrapper`].
fn spawn_wrapped(p: &Paths, name: &str, program: &Path, args: Vec<String>) -> Result<Proc> {
    let log = p.log(name);
    match p.wrapper.split_first() {
        None => Proc::spawn(name, program, &args, &log),
        Some((launcher, launcher_args)) => {
            let mut all = launcher_args.to_vec();
            all.push(program.display().to_string());
            all.extend(args);
            Proc::spawn(name, Path::new(launcher), &all, &log)
        }
    }
}

/// A virtualenv of Python peers: its requirements file (in the peers' directory) and its
/// directory (in the work directory).
pub struct PythonEnv {
    pub requirements: &'static str,
    pub venv: &'static str,
    pub what: &'static str,
}

/// FastAPI, uvicorn, RDKit and onnxruntime: the molprop and solubility peers.
pub const CHEMISTRY_PEERS: PythonEnv = PythonEnv {
    requirements: "requirements.txt",
    venv: "venv",
    what: "FastAPI, uvicorn, RDKit, onnxruntime",
};

/// FastAPI, uvicorn, sentence-transformers and torch: the embedding peer (several GB).
pub const EMBEDDING_PEER: PythonEnv = PythonEnv {
    requirements: "requirements-embeddings.txt",
    venv: "venv-embeddings",
    what: "FastAPI, uvicorn, sentence-transformers, torch: about 5.8 GB, ten minutes",
};

/// The Python interpreter of virtualenv `env`, installed first if its requirements changed;
/// `Err` (with the reason) when Python or the packages are not available.
pub async fn python_env(p: &Paths, env: &PythonEnv) -> Result<PathBuf, String> {
    let venv = p.work.join(env.venv);
    let requirements = p.python_app.join(env.requirements);
    let wanted = std::fs::read_to_string(&requirements)
        .map_err(|e| format!("{}: {e}", requirements.display()))?;
    let stamp = venv.join("installed-requirements.txt");
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(wanted.as_str()) {
        eprintln!(
            "installing Python peers ({}) into {} ...",
            env.what,
            venv.display()
        );
        run_quiet(&p.python, &["-m", "venv", &venv.display().to_string()])
            .await
            .map_err(|e| format!("python virtualenv: {e}"))?;
        let pip = venv.join("bin/pip").display().to_string();
        run_quiet(
            &pip,
            &["install", "-q", "-r", &requirements.display().to_string()],
        )
        .await
        .map_err(|e| format!("pip install: {e}"))?;
        std::fs::write(&stamp, wanted).map_err(|e| e.to_string())?;
    }
    Ok(venv.join("bin/python"))
}

/// The Python peer `app` on a free port, from virtualenv `env` (see [`python_env`]).
pub async fn python(p: &Paths, env: &PythonEnv, app: &str) -> Result<(Proc, SocketAddr), String> {
    let py = python_env(p, env).await?;
    let addr = loopback(free_port().map_err(|e| e.to_string())?);
    let args = [
        "-m".into(),
        "uvicorn".into(),
        format!("{app}:app"),
        "--app-dir".into(),
        p.python_app.display().to_string(),
        "--host".into(),
        "127.0.0.1".into(),
        "--port".into(),
        addr.port().to_string(),
        "--workers".into(),
        "1".into(),
        "--log-level".into(),
        "warning".into(),
    ];
    let name = format!("python-{app}");
    let proc = Proc::spawn(&name, &py, &args, &p.log(&name)).map_err(|e| e.to_string())?;
    let client = HttpClient::new(Duration::from_secs(2));
    wait_ok(
        &client,
        &format!("http://{addr}/health"),
        Duration::from_secs(60),
    )
    .await
    .map_err(|e| format!("{e} (see {})", p.log(&name).display()))?;
    Ok((proc, addr))
}

async fn run_quiet(program: &str, args: &[&str]) -> Result<()> {
    let out = tokio::process::Command::new(program)
        .args(args)
        .output()
        .await
        .with_context(|| format!("running {program}"))?;
    if !out.status.success() {
        bail!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// `runtime-host up --models DIR` on free ports; returns it and its models' names and
/// addresses.
pub async fn up(
    p: &Paths,
    name: &str,
    models: &Path,
    extra: &[String],
) -> Result<(Proc, Vec<(String, SocketAddr)>)> {
    let (proc, lines) = up_printed(p, name, models, extra).await?;
    // The table `up` prints: `  <name>  http://<addr>  registered`, one row per model.
    let models = lines
        .iter()
        .filter(|l| l.trim_end().ends_with("registered"))
        .map(|l| {
            let model = l.split_whitespace().next().unwrap_or_default().to_owned();
            Ok((model, addr_in(l)?))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((proc, models))
}

/// [`up`], returning what it printed up to `stack ready` (its table: the app port's rows).
pub async fn up_printed(
    p: &Paths,
    name: &str,
    models: &Path,
    extra: &[String],
) -> Result<(Proc, Vec<String>)> {
    let data = super::procs::fresh_dir(&p.work, name)?;
    let registry = loopback(free_port()?);
    // Below Linux's ephemeral range, so client sockets rarely hold one of these.
    let first = 21_000u16;
    let mut args = vec![
        "up".into(),
        "--registry-port".into(),
        registry.port().to_string(),
        "--chat-port".into(),
        free_port()?.to_string(),
        "--app-port".into(),
        "0".into(),
        "--models".into(),
        models.display().to_string(),
        "--ports".into(),
        format!("{first}-{}", first + 499),
        "--data-dir".into(),
        data.display().to_string(),
    ];
    args.extend(extra.iter().cloned());
    let mut proc = Proc::spawn(name, &p.host, &args, &p.log(name))?;
    let lines = proc
        .lines_until("stack ready", Duration::from_secs(300))
        .await?;
    Ok((proc, lines))
}
