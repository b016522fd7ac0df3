//! `runtime-host`: serves the project's WebAssembly components natively on wasmtime and does
//! the OS-facing work a sandboxed component cannot. Start at [`cli`] for the commands.

mod app;
mod bench;
mod bindings;
mod caller;
mod chats;
mod check;
mod cli;
mod client;
mod engine;
mod files;
mod guard;
mod instances;
mod keyvalue;
mod limits;
mod llm;
mod model;
mod monitor;
mod registry;
mod responses;
mod serve;
mod server;
mod state;
mod up;
mod variables;

use clap::Parser;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    // Request logs go through a buffer that a background thread writes out, so a request
    // never waits on stderr. Not lossy: when the buffer is full, logging waits rather than
    // dropping lines. `_flush` writes what is left when main returns.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let (writer, _flush) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .finish(std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RUNTIME_HOST_LOG")
                .unwrap_or_else(|_| "info,wasmtime_cranelift=warn,cranelift=warn".into()),
        )
        .with_writer(writer)
        .with_ansi(ansi)
        .init();
    let cli = cli::Cli::parse();
    guard::allow_hosts(&cli.allowed_hosts);
    let result = match cli.command {
        cli::Command::Serve(args) => serve::run(args).await,
        cli::Command::Registry(args) => registry::run(args).await,
        cli::Command::Model(args) => model::run(args).await,
        cli::Command::Up(args) => up::run(args).await,
        cli::Command::Bench(args) => bench::run(args).await,
        cli::Command::Check(args) => check::run(args).await.and_then(|passed| {
            if passed {
                Ok(())
            } else {
                anyhow::bail!("the deployment fails MUST rules")
            }
        }),
        cli::Command::Chats(cli::ChatsCommand::Export { url, output }) => {
            chats::export_to(&url, output.as_deref()).await
        }
        cli::Command::Chats(cli::ChatsCommand::Import { file, url, token }) => {
            chats::import(&file, &url, &token).await.and_then(|r| {
                if r.failed > 0 {
                    anyhow::bail!("{} dialogs could not be imported", r.failed)
                }
                Ok(())
            })
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
