//! `runtime-host`: serves the project's WebAssembly components natively on wasmtime and does
//! the OS-facing work a sandboxed component cannot. The layers, lowest first: support,
//! metrics, capabilities, runtime and http (the `host-core` crate), then [`services`],
//! [`commands`] and [`cli`] here; docs/ARCHITECTURE.md draws them.

mod cli;
mod commands;
mod services;

use clap::Parser;
use host_core::http::settings;
use host_core::support::log_writer::{self, LogFormat};
use host_core::support::{heap, signals, stop};

fn main() {
    // Before the runtime starts its threads (see heap.rs).
    heap::limit_arenas();
    // First, so `--log-format` decides every line (clap writes its own errors and exits).
    let cli = cli::Cli::parse();
    let flush = start_logging(&cli);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build();
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(e) => fatal(flush, &format!("cannot start the async runtime: {e}")),
    };
    let (code, flush) = runtime.block_on(run(cli, flush));
    // Exit here rather than by returning: dropping the runtime would wait for blocking work
    // still running (a compilation a Ctrl-C interrupted), which nothing needs any more. The
    // log is flushed first.
    drop(flush);
    std::process::exit(code)
}

/// Log lines are queued and written in batches by a thread of their own (log_writer.rs): a
/// request never waits on stderr. The guard writes what is left when it is dropped.
fn start_logging(cli: &cli::Cli) -> log_writer::FlushOnDrop {
    log_writer::set_format(cli.log_format.into());
    let (writer, flush) = log_writer::start();
    let filter = || {
        tracing_subscriber::EnvFilter::try_from_env("RUNTIME_HOST_LOG")
            .unwrap_or_else(|_| "info,wasmtime_cranelift=warn,cranelift=warn".into())
    };
    let lines = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(writer);
    match log_writer::format() {
        LogFormat::Text => lines.with_ansi(log_writer::colours()).init(),
        // The event's fields at the top level, beside `timestamp`, `level` and `target`,
        // as the request lines have them (support::request_log).
        LogFormat::Json => lines.json().flatten_event(true).with_ansi(false).init(),
    }
    flush
}

async fn run(cli: cli::Cli, flush: log_writer::FlushOnDrop) -> (i32, log_writer::FlushOnDrop) {
    // The HTTP layer's settings, one value for the whole process, before anything serves.
    if let Err(held) = settings::install(cli.http_settings()) {
        unreachable!("the HTTP settings are installed once, here (found {held:?})");
    }
    // Before anything else, so no Ctrl-C during start-up is lost (see signals.rs).
    if let Err(e) = signals::install() {
        fatal(
            flush,
            &format!("cannot install the SIGINT/SIGTERM handlers: {e}"),
        );
    }
    let code = match cli.command.run().await {
        Ok(()) => 0,
        // A stop signal during start-up: what had started was stopped in order.
        Err(e) if stop::is_stopped(&e) => {
            tracing::info!("{e:#}");
            0
        }
        Err(e) => {
            report(&format!("{e:#}"));
            1
        }
    };
    (code, flush)
}

/// The error that ends the process, as the log's format wants it: `error: ...` on stderr
/// after the lines that led there, or (`--log-format json`) one more JSON line, since a log
/// pipeline reads every line of stderr as JSON.
fn report(error: &str) {
    match log_writer::format() {
        LogFormat::Text => {
            log_writer::flush(); // the lines that led here come first
            eprintln!("error: {error}");
        }
        LogFormat::Json => tracing::error!("{error}"),
    }
}

/// [`report`]s `error`, writes the log out and exits with status 1.
fn fatal(flush: log_writer::FlushOnDrop, error: &str) -> ! {
    report(error);
    drop(flush);
    std::process::exit(1)
}
