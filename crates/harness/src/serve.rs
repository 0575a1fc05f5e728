//! The subscriber's side of a session: serves a publisher's session on one
//! control connection (runs as subscriber or extra publisher, one after
//! another), listening for publishers (`pubsubperf sub --listen`) or
//! connecting back to the publisher that started this process.

use crate::protocol::{self, ControlError, Msg};
use crate::registry::with_binding;
use crate::spec::RunSpec;
use crate::{Fault, INTERRUPTED, VERSION};
use pubsubperf_core::environment::Environment;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Subscriber side: serves one publisher's session on `stream` until it
/// says goodbye or goes away.
pub fn serve_session(mut stream: TcpStream) -> Result<(), Fault> {
    let _ = stream.set_nodelay(true);
    let setup_timeout = Duration::from_secs(30);
    match protocol::recv(&mut stream, Some(setup_timeout)) {
        Ok(Msg::Hello {
            version,
            protocol: p,
        }) => {
            if version != VERSION || p != protocol::PROTOCOL {
                let message = format!(
                    "version mismatch: publisher runs pubsubperf {version} (protocol {p}), this subscriber runs {VERSION} (protocol {}); run the same version on both hosts",
                    protocol::PROTOCOL
                );
                let _ = protocol::send(
                    &mut stream,
                    &Msg::Error {
                        message: message.clone(),
                    },
                );
                return Err(Fault::Peer(message));
            }
        }
        Ok(other) => return Err(Fault::Peer(format!("expected Hello, got {other:?}"))),
        Err(e) => return Err(Fault::Peer(format!("publisher: {e}"))),
    }
    protocol::send(
        &mut stream,
        &Msg::Welcome {
            version: VERSION.into(),
            environment: Box::new(Environment::detect()),
        },
    )
    .map_err(|e| Fault::Peer(e.to_string()))?;
    loop {
        let msg = match protocol::recv(&mut stream, Some(Duration::from_millis(200))) {
            Ok(m) => m,
            Err(ControlError::Timeout(_)) => {
                if INTERRUPTED.load(Ordering::Relaxed) {
                    return Err(Fault::Interrupted);
                }
                continue;
            }
            Err(ControlError::Closed) => return Ok(()),
            Err(e) => return Err(Fault::Peer(format!("publisher: {e}"))),
        };
        match msg {
            Msg::Setup { spec } => {
                let spec: RunSpec = *spec;
                let name = spec.peer_binding.clone();
                let r = with_binding!(name.as_str(), B => crate::subscriber::serve_run::<B>(&mut stream, &spec, setup_timeout),
                    unknown => Err(Fault::Config(crate::registry::unknown_binding("--peer-binding", &name))));
                if let Err(e) = r {
                    let _ = protocol::send(
                        &mut stream,
                        &Msg::Error {
                            message: e.to_string(),
                        },
                    );
                    if matches!(e, Fault::Interrupted) {
                        return Err(e);
                    }
                }
            }
            Msg::PubSetup {
                spec,
                publisher,
                data,
            } => {
                let spec: RunSpec = *spec;
                let name = spec.binding.clone();
                let r = with_binding!(name.as_str(), B => crate::extra::serve_publisher::<B>(&mut stream, &spec, publisher, &data, setup_timeout),
                    unknown => Err(Fault::Config(crate::registry::unknown_binding("--binding", &name))));
                if let Err(e) = r {
                    let _ = protocol::send(
                        &mut stream,
                        &Msg::Error {
                            message: e.to_string(),
                        },
                    );
                    if matches!(e, Fault::Interrupted) {
                        return Err(e);
                    }
                }
            }
            Msg::Bye => return Ok(()),
            // Anything else outside a run (late Stop, Start) is stale.
            _ => {}
        }
    }
}

/// `pubsubperf sub --listen ADDR`: waits for one publisher and serves its session.
pub fn listen(addr: &str, on_ready: &mut dyn FnMut(SocketAddr)) -> Result<(), Fault> {
    let l = TcpListener::bind(addr).map_err(|e| Fault::Config(format!("--listen {addr}: {e}")))?;
    let local = l.local_addr().map_err(|e| Fault::Config(e.to_string()))?;
    on_ready(local);
    l.set_nonblocking(true)
        .map_err(|e| Fault::Peer(e.to_string()))?;
    loop {
        match l.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false)
                    .map_err(|e| Fault::Peer(e.to_string()))?;
                return serve_session(s);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if INTERRUPTED.load(Ordering::Relaxed) {
                    return Err(Fault::Interrupted);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(Fault::Peer(e.to_string())),
        }
    }
}

/// `pubsubperf sub --connect-back ADDR`: a subscriber child process.
pub fn connect_back(addr: &str) -> Result<(), Fault> {
    let s =
        TcpStream::connect(addr).map_err(|e| Fault::Peer(format!("--connect-back {addr}: {e}")))?;
    serve_session(s)
}
