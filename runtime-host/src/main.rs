//! `runtime-host`: serves the project's WebAssembly components natively on wasmtime and does
//! the OS-facing work a sandboxed component cannot. Start at [`cli`] for the commands.

mod app;
mod bindings;
mod caller;
mod chat;
mod chats;
mod cli;
mod compiled;
mod engine;
mod files;
mod guard;
mod heap;
mod instances;
mod keyvalue;
mod limits;
mod listener;
mod llm;
mod log_writer;
mod metrics;
mod model;
mod monitor;
mod predict;
mod preinit;
mod prepare_child;
mod registry;
mod release_order;
mod request_log;
mod responses;
mod serve;
mod server;
mod signals;
mod slot;
mod state;
mod token;
mod up;
mod variables;

use clap::Parser;

fn main() {
    // Before the runtime starts its threads (see heap.rs).
    heap::limit_arenas();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::exit(1)
        });
    runtime.block_on(run())
}

async fn run() {
    // Log lines are queued and written in batches by a thread of their own (log_writer.rs):
    // a request never waits on stderr. `_flush` writes what is left when main returns.
    let (writer, _flush) = log_writer::start();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RUNTIME_HOST_LOG")
                .unwrap_or_else(|_| "info,wasmtime_cranelift=warn,cranelift=warn".into()),
        )
        .with_writer(writer)
        .with_ansi(log_writer::colours())
        .init();
    let cli = cli::Cli::parse();
    guard::allow_hosts(&cli.allowed_hosts);
    // Before anything else, so no Ctrl-C during start-up is lost (see signals.rs).
    if let Err(e) = signals::install() {
        eprintln!("error: cannot install the SIGINT/SIGTERM handlers: {e}");
        std::process::exit(1);
    }
    let result = match cli.command {
        cli::Command::Serve(args) => serve::run(args).await,
        cli::Command::Registry(args) => registry::run(args).await,
        cli::Command::Model(args) => model::run(args).await,
        cli::Command::Up(args) => up::run(args).await,
        cli::Command::Check(args) => edge_check::run(&args).await.and_then(|passed| {
            if passed {
                Ok(())
            } else {
                anyhow::bail!("the deployment fails MUST rules")
            }
        }),
        cli::Command::Predict(cmd) => predict::run(cmd).await,
        cli::Command::Snapshot(args) => preinit::run(args).await,
        cli::Command::Compile(args) => engine::compile_all(&args),
        cli::Command::Prepare(args) => prepare_child::run(args).await,
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
    let code = match result {
        Ok(()) => 0,
        Err(e) => {
            log_writer::flush(); // the lines that led here come first
            eprintln!("error: {e:#}");
            1
        }
    };
    // Exit here rather than by returning: dropping the runtime would wait for blocking work
    // still running (a compilation a Ctrl-C interrupted), which nothing needs any more. The
    // log is flushed first.
    drop(_flush);
    std::process::exit(code)
}
