//! `runtime-host chats import|export`: moving dialogs in and out of a running chat service
//! through its HTTP API (the write API for import), as JSON arrays in the `/api/dialog` shape.

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use edge_api::chat::{ChatSummary, Dialog, MAX_PAGE};
use hyper::Method;
use service_client::HttpClient;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Subcommand, Debug)]
pub enum ChatsCommand {
    /// Load dialogs from a JSON file (an array of dialogs, as `export` writes) into a running
    /// chat service. Dialogs whose id already exists are skipped.
    Import {
        /// The JSON file.
        file: PathBuf,
        /// Base URL of the chat service.
        #[arg(long, default_value = "http://127.0.0.1:8050")]
        url: String,
        /// The service's `chat_admin_token`.
        #[arg(long, env = "CHAT_ADMIN_TOKEN", hide_env_values = true)]
        token: String,
    },
    /// Write every dialog of a running chat service as a JSON array.
    Export {
        /// Base URL of the chat service.
        #[arg(long, default_value = "http://127.0.0.1:8050")]
        url: String,
        /// Write to this file instead of standard output.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
}

pub async fn run(command: ChatsCommand) -> Result<()> {
    match command {
        ChatsCommand::Export { url, output } => export_to(&url, output.as_deref()).await,
        ChatsCommand::Import { file, url, token } => {
            let report = import(&file, &url, &token).await?;
            if report.failed > 0 {
                bail!("{} dialogs could not be imported", report.failed)
            }
            Ok(())
        }
    }
}

fn base(url: &str) -> &str {
    url.trim_end_matches('/')
}

/// Writes every dialog, in the order `/api/chats` lists them, as one JSON array. Dialogs are
/// fetched and written one at a time, so memory holds one dialog however many there are.
/// Returns how many were written.
async fn export(url: &str, out: &mut dyn Write) -> Result<usize> {
    let client = HttpClient::new(TIMEOUT);
    let summaries = list_all(&client, url).await?;
    let mut written = 0;
    out.write_all(b"[")?;
    for s in summaries {
        let url = format!(
            "{}/api/dialog?id={}",
            base(url),
            service_client::percent_encode(&s.id)
        );
        let reply = client.send(Method::GET, &url, None, None).await?;
        let dialog: Dialog = match reply.status {
            200 => reply.json()?,
            // Deleted between listing and fetching: nothing to export.
            404 => continue,
            s => bail!(
                "fetching dialog `{}` failed (HTTP {s}): {}",
                url,
                reply.error_text()
            ),
        };
        out.write_all(if written == 0 { b"\n" } else { b",\n" })?;
        serde_json::to_writer_pretty(&mut *out, &dialog)?;
        written += 1;
    }
    out.write_all(b"\n]\n")?;
    out.flush()?;
    Ok(written)
}

/// Every dialog's summary, page by page (a page holds at most [`MAX_PAGE`]), most recently
/// updated first. A dialog written while the pages are read moves to the front, past the
/// pages already read, so the listing is read again until a pass finds nothing new; a
/// dialog seen twice is kept once.
async fn list_all(client: &HttpClient, url: &str) -> Result<Vec<ChatSummary>> {
    let mut all: Vec<ChatSummary> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for _pass in 0..MAX_PASSES {
        let before = all.len();
        for offset in (0..).step_by(MAX_PAGE) {
            let page_url = format!("{}/api/chats?limit={MAX_PAGE}&offset={offset}", base(url));
            let list = client.send(Method::GET, &page_url, None, None).await?;
            if list.status != 200 {
                bail!(
                    "listing chats failed (HTTP {}): {}",
                    list.status,
                    list.error_text()
                );
            }
            let page: Vec<ChatSummary> = list.json()?;
            let last = page.len() < MAX_PAGE;
            all.extend(page.into_iter().filter(|s| seen.insert(s.id.clone())));
            if last {
                break;
            }
        }
        if all.len() == before || all.len() <= MAX_PAGE {
            break;
        }
    }
    Ok(all)
}

/// Passes over the listing at most: more only under writes that never stop.
const MAX_PASSES: usize = 5;

async fn export_to(url: &str, output: Option<&Path>) -> Result<()> {
    match output {
        Some(path) => {
            // Written beside the target and renamed, so a failed export leaves no half file.
            let partial = path.with_extension("partial");
            let file = std::fs::File::create(&partial)
                .with_context(|| format!("creating {}", partial.display()))?;
            let count = match export(url, &mut BufWriter::new(file)).await {
                Ok(count) => count,
                Err(e) => {
                    let _ = std::fs::remove_file(&partial);
                    return Err(e);
                }
            };
            std::fs::rename(&partial, path)
                .with_context(|| format!("writing {}", path.display()))?;
            eprintln!("exported {count} dialogs to {}", path.display());
        }
        None => {
            export(url, &mut BufWriter::new(std::io::stdout().lock())).await?;
        }
    }
    Ok(())
}

/// Outcome of an import.
#[derive(Debug, Default, PartialEq, Eq)]
struct ImportReport {
    created: usize,
    skipped: usize,
    failed: usize,
}

async fn import(file: &Path, url: &str, token: &str) -> Result<ImportReport> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let dialogs: Vec<serde_json::Value> = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} must hold a JSON array of dialogs (as `chats export` writes)",
            file.display()
        )
    })?;
    let client = HttpClient::new(TIMEOUT);
    let endpoint = format!("{}/api/chats", base(url));
    let mut report = ImportReport::default();
    for (i, mut dialog) in dialogs.into_iter().enumerate() {
        // A summary field is derived, never stored: tolerate files that carry it.
        if let Some(obj) = dialog.as_object_mut() {
            obj.remove("numMessages");
        }
        let label = dialog
            .get("id")
            .and_then(|v| v.as_str())
            .map(str::to_owned)
            .unwrap_or_else(|| format!("#{i}"));
        let reply = client
            .send(
                Method::POST,
                &endpoint,
                Some(serde_json::to_vec(&dialog)?),
                Some(token),
            )
            .await?;
        match reply.status {
            201 => report.created += 1,
            409 => {
                report.skipped += 1;
                eprintln!("skipped dialog {label}: {}", reply.error_text());
            }
            401 | 403 => bail!("the chat service refused the token: {}", reply.error_text()),
            s => {
                report.failed += 1;
                eprintln!("dialog {label} failed (HTTP {s}): {}", reply.error_text());
            }
        }
    }
    eprintln!(
        "imported {} dialogs, skipped {} already present, {} failed",
        report.created, report.skipped, report.failed
    );
    Ok(report)
}

#[cfg(test)]
mod tests {
    #[test]
    fn query_encoding() {
        assert_eq!(service_client::percent_encode("abc-1_2.~"), "abc-1_2.~");
        assert_eq!(service_client::percent_encode("a b&c"), "a%20b%26c");
    }
}
