//! The two servers of the section, each on the same GGUF file: `runtime-host up` (its app
//! port's OpenAI endpoint, the model loaded on the first request) and llama-cpp-python's
//! own OpenAI-compatible server (llama.cpp underneath, the model loaded at start).

use super::stream::Endpoint;
use crate::peers::{self, Paths, PythonEnv};
use crate::procs::{self, Proc, addr_in, free_port, wait_ok};
use anyhow::{Context, Result};
use edge_api::language_model::MODEL;
use service_client::HttpClient;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// llama-cpp-python with its server's extra, pinned (bench/peers/python/requirements-llm.txt).
pub const LLAMA_CPP_PEER: PythonEnv = PythonEnv {
    requirements: "requirements-llm.txt",
    venv: "venv-llm",
    what: "llama-cpp-python[server] 0.3.16, which compiles llama.cpp: several minutes on 2 cores",
};

/// A server measured: its process (kept to read its memory and to stop it) and endpoint.
pub struct Side {
    pub name: &'static str,
    pub proc: Proc,
    pub endpoint: Endpoint,
}

/// The model's GGUF file in `ai_models` (the one `.gguf` of its directory), if installed.
pub fn gguf(ai_models: &Path) -> Option<PathBuf> {
    let dir = std::fs::read_dir(ai_models.join(MODEL)).ok()?;
    dir.filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "gguf"))
}

/// `runtime-host up` with no model components (the language model is reached through the
/// host's own endpoint, not a component) and `--ai-models-dir ai_models`.
pub async fn ours(paths: &Paths, ai_models: &Path) -> Result<Side> {
    let name = "llm-up";
    let models = procs::fresh_dir(&paths.work, "llm-up-models")?;
    let extra = ["--ai-models-dir".into(), ai_models.display().to_string()];
    let (proc, printed) = peers::up_printed(paths, name, &models, &extra).await?;
    // The table's row `LLM API  http://<app>/v1/models  ready (token in <file>)`.
    let row = printed
        .iter()
        .find(|l| l.trim_start().starts_with("LLM API"))
        .context("`up` printed no LLM API row")?;
    let addr = addr_in(row)?;
    // `up` made the API's token in its data directory (peers::up's, named after it).
    let token_file = paths.work.join(name).join("llm_api_token");
    let token = std::fs::read_to_string(&token_file)
        .with_context(|| format!("reading {}", token_file.display()))?;
    let endpoint = Endpoint {
        addr,
        token: Some(token.trim().to_owned()),
    };
    Ok(Side {
        name: "runtime-host",
        proc,
        endpoint,
    })
}

/// `python -m llama_cpp.server` on the GGUF file, as many threads as cores for decoding and
/// for prompts, the context ours has. `--interrupt_requests false`: by default a new request
/// cuts the one streaming short, and the concurrent row would measure that; so requests
/// queue and run one after the other, as llama-cpp-python serves them. Its access log goes
/// to the piped stdout, one short line a request: far below the pipe's 64 KiB for the
/// section's few dozen requests.
pub async fn llama_cpp(paths: &Paths, gguf: &Path) -> Result<Side, String> {
    let python = peers::python_env(paths, &LLAMA_CPP_PEER).await?;
    let port = free_port().map_err(|e| e.to_string())?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let args: Vec<String> = [
        "-m",
        "llama_cpp.server",
        "--model",
        &gguf.display().to_string(),
        "--model_alias",
        MODEL,
        "--n_ctx",
        &edge_api::language_model::CONTEXT_TOKENS.to_string(),
        "--n_threads",
        &cores.to_string(),
        "--n_threads_batch",
        &cores.to_string(),
        "--interrupt_requests",
        "false",
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
    ]
    .map(str::to_owned)
    .into();
    let name = "llama-cpp-python";
    let log = paths.log(name);
    let proc = Proc::spawn(name, &python, &args, &log).map_err(|e| format!("{e:#}"))?;
    let endpoint = Endpoint {
        addr: ([127, 0, 0, 1], port).into(),
        token: None,
    };
    let client = HttpClient::new(Duration::from_secs(2));
    let models = format!("http://{}/v1/models", endpoint.addr);
    wait_ok(&client, &models, Duration::from_secs(120))
        .await
        .map_err(|e| format!("{e} (see {})", log.display()))?;
    Ok(Side {
        name,
        proc,
        endpoint,
    })
}
