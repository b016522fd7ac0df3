//! One model deployment by the v1.2 startup sequence (spec 9), as `runtime-host model` and
//! `up` run it:
//!
//! 1. print the attribution and registration notice;
//! 2. load the component and pass its self-test (its `/health` runs the test examples);
//! 3. register with the registry, with this process's id, *before* binding any port;
//! 4. bind the assigned port and serve;
//! 5. heartbeat, registering again when the registry forgot us, tracking its availability;
//! 6. on SIGINT/SIGTERM or an allowed `POST /shutdown`: stop accepting, finish requests,
//!    cancel the heartbeat task if there is one, unregister (skipped, not failed, when the
//!    registry does not answer), exit 0.

use crate::services::launch::{Launch, Service};
use crate::services::model::port_guard::PortGuard;
use crate::services::model::registration::{self, DeployOptions, Registry, State};
use crate::services::model::self_test::SelfTestPass;
use anyhow::{Context, Result, bail};
use host_core::support::stop::{self, Stopped};
use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Runs one loaded model through the lifecycle until `stop`: self-test, register, bind,
/// serve (calling `ready` with the address), heartbeat, then stop and unregister. `source`
/// (the component, or an ONNX model's directory) is named in the registration's reason.
/// A `stop` before it serves ends it in order too: `Ok`, with nothing left registered.
pub async fn deploy(
    loaded: Launch,
    source: &Path,
    opts: DeployOptions,
    stop: impl Future<Output = ()>,
    ready: impl FnOnce(SocketAddr),
) -> Result<()> {
    tokio::pin!(stop);
    let tested =
        match stop::unless(&mut stop, SelfTestPass::of(loaded, opts.self_test_deadline)).await {
            Ok(tested) => tested?,
            Err(Stopped) => return stopped(),
        };
    let name = tested.info.name.clone();
    let registry = Arc::new(Registry::new(
        &opts.registry,
        tested.registration(&opts, source),
    ));
    let registering = registry.register_within(opts.preferred_port, opts.registry_wait);
    tokio::pin!(registering);
    let registered = match stop::unless(&mut stop, &mut registering).await {
        Ok(done) => done,
        Err(Stopped) => {
            // The request under way may already have reached the registry: let it finish
            // (the client's timeout bounds it) and give back whatever it obtained, so no
            // registration outlives a Ctrl-C.
            let wait = registration::CALL_TIMEOUT + std::time::Duration::from_millis(500);
            if let Ok(Ok(r)) = tokio::time::timeout(wait, registering).await {
                tracing::info!(model = %name, port = r.assigned_port, message = %r.message, "registered");
                match registry
                    .unregister(r.assigned_port, &r.registration_id)
                    .await
                {
                    Ok(()) => tracing::info!(port = r.assigned_port, "unregistered"),
                    Err(e) => {
                        tracing::warn!(error = %format!("{e:#}"), "registry unreachable; unregistration skipped")
                    }
                }
            }
            return stopped();
        }
    };
    let state = match registered {
        Ok(r) => {
            tracing::info!(model = %name, port = r.assigned_port, message = %r.message, "registered");
            State {
                port: r.assigned_port,
                lease: registration::lease_left(&r.expires_at),
                registration_id: Some(r.registration_id),
                registry_available: true,
            }
        }
        Err(e) if e.is::<registration::Permanent>() => {
            bail!(
                "the registry at {} refused this deployment: {e:#}\nfix what it names (the \
                 model's name or version in its manifest, say) and deploy it again",
                registry.url()
            )
        }
        Err(e) => match opts.preferred_port {
            Some(port) => {
                tracing::warn!(error = %format!("{e:#}"), port, "registry unavailable; serving on the preferred port and registering when it returns");
                State {
                    port,
                    registration_id: None,
                    registry_available: false,
                    lease: None,
                }
            }
            None => bail!(
                "could not register with the registry at {} within {:?}: {e:#}\n\
                 start it (`runtime-host registry`) or pass --preferred-port to serve without it",
                registry.url(),
                opts.registry_wait
            ),
        },
    };
    let state = Arc::new(Mutex::new(state));

    let binding = bind_or_move(&tested.loaded, &opts, &registry, &state);
    let (service, guards) = match stop::unless(&mut stop, binding).await {
        Ok(bound) => bound?,
        Err(Stopped) => {
            registration::release(&registry, &state).await;
            return stopped();
        }
    };
    ready(service.addr());
    let heartbeat = tokio::spawn(
        registry
            .clone()
            .keep_alive(state.clone(), opts.heartbeat_interval),
    );
    service.run_until(&mut stop).await?;
    heartbeat.abort();
    registration::release(&registry, &state).await;
    PortGuard::release_all(guards).await;
    tracing::info!(model = %name, "stopped");
    Ok(())
}

/// A start-up that a stop ended: nothing to undo any more, nothing failed.
fn stopped() -> Result<()> {
    tracing::info!("{Stopped}");
    Ok(())
}

/// How many times one deployment moves to another port before it gives up (the registry's range
/// may be nearly all held by other programs).
const MAX_MOVES: usize = 64;

/// Binds the registered port. If a process outside the registry holds it, the port is
/// reserved under a guard registration (so the registry does not hand it out again while
/// busy), and the deployment registers again for another port.
///
/// Several deployments starting at once may be handed the same busy port one after the
/// other (each gives it back before guarding it): whoever guards it, every one of them
/// remembers it as busy, passes over it if it comes round again, and moves on. A busy port
/// is never a reason to fail; only a registry with no free port left (or [`MAX_MOVES`]
/// busy ones) is.
async fn bind_or_move(
    loaded: &Launch,
    opts: &DeployOptions,
    registry: &Arc<Registry>,
    state: &Arc<Mutex<State>>,
) -> Result<(Service, Vec<PortGuard>)> {
    let mut guards: Vec<PortGuard> = Vec::new();
    let mut busy: Vec<u16> = Vec::new();
    for moves in 0.. {
        let (port, registered) = {
            let s = state.lock().unwrap();
            (s.port, s.registration_id.is_some())
        };
        if !busy.contains(&port) {
            match loaded
                .bind(SocketAddr::new(opts.host, port), "--preferred-port")
                .await
            {
                Ok(service) => return Ok((service, guards)),
                Err(e) if registered => {
                    tracing::warn!(port, error = %format!("{e:#}"), "assigned port is held by another process; moving");
                }
                Err(e) => return Err(e).context(format!("the preferred port {port} is busy")),
            }
            busy.push(port);
        }
        if moves == MAX_MOVES {
            registration::release(registry, state).await;
            PortGuard::release_all(guards).await;
            bail!(
                "moved {MAX_MOVES} times and every port assigned was held by another program \
                 ({busy:?}); free some of the registry's ports or give it another range (--ports)"
            );
        }
        registration::release(registry, state).await;
        match PortGuard::reserve(registry, opts, port).await {
            Some(guard) => guards.push(guard),
            // Another deployment was handed it meanwhile: it finds it busy too, and whoever
            // reserves it keeps it from the registry; this one knows to pass it over.
            None => tracing::info!(
                port,
                "the busy port went to another deployment meanwhile; moving on"
            ),
        }
        let r = match registry.register(None).await {
            Ok(r) => r,
            Err(e) => {
                let guarded: Vec<u16> = guards.iter().map(|g| g.port).collect();
                PortGuard::release_all(guards).await;
                return Err(e).context(format!(
                    "registering again for another port (busy: {busy:?}, reserved: {guarded:?})"
                ));
            }
        };
        if guards.iter().any(|g| g.port == r.assigned_port) {
            // A registry that ignores the reservation would send us round for ever.
            let _ = registry
                .unregister(r.assigned_port, &r.registration_id)
                .await;
            PortGuard::release_all(guards).await;
            bail!(
                "the registry assigned port {} again, though it is busy and reserved there; \
                 not moving on",
                r.assigned_port
            );
        }
        tracing::info!(port = r.assigned_port, "registered on another port");
        let mut s = state.lock().unwrap();
        s.port = r.assigned_port;
        s.lease = registration::lease_left(&r.expires_at);
        s.registration_id = Some(r.registration_id);
    }
    unreachable!("the loop returns or gives up after {MAX_MOVES} moves")
}
