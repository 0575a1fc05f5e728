//! The handshake of a control connection: a mutual challenge-response keyed
//! by the agent's token, so that the token never crosses the wire, a
//! recorded handshake cannot be replayed, and a publisher knows it talks to
//! the agent it meant.
//!
//! ```text
//! publisher                                   agent
//!   Hello {version, protocol, nonce: Np}  ->
//!                                         <-  Challenge {nonce: Na, proof: HMAC(T, "agent" Np Na)}
//!   (checks the agent's proof)
//!   Proof {proof: HMAC(T, "publisher" Np Na)}  ->
//!                                             (checks the publisher's proof)
//!   every later frame tagged with HMAC(T, "publisher to agent" Np Na)
//!   or HMAC(T, "agent to publisher" Np Na), by direction (crate::channel)
//! ```
//!
//! `T` is the token (the token file's text), `Np` and `Na` 32 random bytes
//! each, fresh per connection; each HMAC is HMAC-SHA256 over a label naming
//! its role and the protocol, then both nonces. Each side proves itself over
//! a nonce the other chose, so neither proof can be replayed to another
//! connection; the labels differ, so neither can be reflected. A publisher
//! whose token differs from the agent's finds the agent's proof wrong and
//! says so without sending its own (a fake agent learns nothing that helps
//! it guess the token); proofs are compared in constant time
//! ([`Mac::verify_slice`]).
//!
//! Without a token on either side (the subscribers a publisher starts
//! itself, an agent over SSH, an `--insecure` agent with a publisher that
//! has no token) the Hello carries no nonce and frames go unkeyed. A
//! publisher that holds a token never accepts an agent that cannot prove it.

use crate::channel::{Ctl, SessionKeys};
use crate::protocol::{ControlError, Msg, PROTOCOL};
use crate::{Fault, VERSION};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::time::Instant;

type HmacSha256 = Hmac<Sha256>;

/// Bytes of a nonce.
pub const NONCE: usize = 32;

const AGENT: &[u8] = b"pubsubperf 3 agent proof";
const PUBLISHER: &[u8] = b"pubsubperf 3 publisher proof";
const TO_AGENT: &[u8] = b"pubsubperf 3 publisher to agent";
const TO_PUBLISHER: &[u8] = b"pubsubperf 3 agent to publisher";

/// `bytes` as lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Hex (either case) as bytes; None unless every character is a hex digit
/// and there is an even number of them.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A fresh nonce from the kernel's random source.
pub fn nonce() -> Result<[u8; NONCE], Fault> {
    let mut n = [0u8; NONCE];
    getrandom::fill(&mut n).map_err(|e| Fault::Peer(format!("random nonce: {e}")))?;
    Ok(n)
}

/// A nonce as carried in a message: exactly [`NONCE`] bytes of hex.
fn parse_nonce(s: &str) -> Option<[u8; NONCE]> {
    unhex(s)?.try_into().ok()
}

fn mac(token: &str, label: &[u8], np: &[u8; NONCE], na: &[u8; NONCE]) -> HmacSha256 {
    let mut m = HmacSha256::new_from_slice(token.as_bytes()).expect("HMAC takes any key length");
    m.update(label);
    m.update(np);
    m.update(na);
    m
}

fn proof(token: &str, label: &[u8], np: &[u8; NONCE], na: &[u8; NONCE]) -> String {
    hex(&mac(token, label, np, na).finalize().into_bytes())
}

/// True when `presented` (hex) is the proof of `label` over the nonces
/// with `token`, compared in constant time.
fn proven(token: &str, label: &[u8], np: &[u8; NONCE], na: &[u8; NONCE], presented: &str) -> bool {
    match unhex(presented) {
        Some(p) => mac(token, label, np, na).verify_slice(&p).is_ok(),
        None => false,
    }
}

/// The session keys of one side after a handshake over `np` and `na`.
pub fn session_keys(token: &str, np: &[u8; NONCE], na: &[u8; NONCE], agent: bool) -> SessionKeys {
    let key = |label| -> [u8; 32] { mac(token, label, np, na).finalize().into_bytes().into() };
    let (to_agent, to_publisher) = (key(TO_AGENT), key(TO_PUBLISHER));
    if agent {
        SessionKeys {
            send: to_publisher,
            recv: to_agent,
        }
    } else {
        SessionKeys {
            send: to_agent,
            recv: to_publisher,
        }
    }
}

/// Why an agent did not admit a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What the publisher is told (when it can be) and the log says.
    pub why: String,
    /// The connection failed to prove the token, or sent no Hello within
    /// the handshake's deadline (an idle stranger holding a slot): counted
    /// against its address ([`crate::agent`]'s back-off).
    pub failed_proof: bool,
}

impl Refusal {
    fn other(why: impl Into<String>) -> Refusal {
        Refusal {
            why: why.into(),
            failed_proof: false,
        }
    }
}

const NO_TOKEN: &str = "no token: this agent takes only publishers that hold its token; copy its token file to the publisher's host (~/.config/pubsubperf/agent.token, or --token-file) or start the agent over SSH (--connect ssh://HOST)";

/// The agent's side: reads the Hello by `deadline`, and with `token`
/// challenges the publisher and checks its proof, then checks the version.
/// Returns the session's keys (None without a token); the connection is
/// keyed, or trusted, from then on. A refusal is told to the publisher
/// where it can be, and returned.
pub fn admit(
    ctl: &Ctl,
    token: Option<&str>,
    deadline: Instant,
) -> Result<Option<SessionKeys>, Refusal> {
    let (version, protocol, np) = match recv_by(ctl, deadline) {
        Ok(Msg::Hello {
            version,
            protocol,
            nonce,
        }) => (version, protocol, nonce),
        Ok(_) => return Err(Refusal::other("expected Hello, got another message")),
        // Idle connections held every handshake slot without ever failing
        // a proof, so the per-address limits never bit.
        Err(ControlError::Timeout(_)) => {
            return Err(Refusal {
                why: "sent no Hello within the handshake's deadline".into(),
                failed_proof: true,
            });
        }
        Err(e) => return Err(Refusal::other(format!("publisher: {e}"))),
    };
    let refuse = |r: Refusal| {
        let _ = ctl.send(&Msg::Error {
            message: r.why.clone(),
        });
        Err(r)
    };
    let keys = match (token, np) {
        (Some(_), None) => return refuse(Refusal::other(NO_TOKEN)),
        (Some(t), Some(np)) => {
            let Some(np) = parse_nonce(&np) else {
                return refuse(Refusal::other(
                    "bad Hello: its nonce is not 32 bytes of hex",
                ));
            };
            let keys = challenge(ctl, t, &np, deadline)?;
            ctl.authenticated(&keys);
            Some(keys)
        }
        (None, Some(_)) => {
            return refuse(Refusal::other(
                "this agent has no token (--insecure) and cannot prove it is the agent you meant; to use it anyway, pass --insecure to the publisher",
            ));
        }
        (None, None) => {
            ctl.trusted();
            None
        }
    };
    if version != VERSION || protocol != PROTOCOL {
        return refuse(Refusal::other(format!(
            "version mismatch: publisher runs pubsubperf {} (protocol {protocol}), this subscriber runs {VERSION} (protocol {PROTOCOL}); run the same version on both hosts",
            crate::escape::printable(&version, 40)
        )));
    }
    Ok(keys)
}

/// The agent's challenge and the check of the publisher's proof.
fn challenge(
    ctl: &Ctl,
    token: &str,
    np: &[u8; NONCE],
    deadline: Instant,
) -> Result<SessionKeys, Refusal> {
    let na = nonce().map_err(|f| Refusal::other(f.to_string()))?;
    ctl.send(&Msg::Challenge {
        nonce: hex(&na),
        proof: proof(token, AGENT, np, &na),
    })
    .map_err(|e| Refusal::other(format!("publisher: {e}")))?;
    let wrong = |why: &str| Refusal {
        why: format!("wrong token: {why}"),
        failed_proof: true,
    };
    match recv_by(ctl, deadline) {
        Ok(Msg::Proof { proof }) if proven(token, PUBLISHER, np, &na, &proof) => {
            Ok(session_keys(token, np, &na, true))
        }
        Ok(Msg::Proof { .. }) => {
            let r = wrong(
                "the publisher's proof does not match this agent's token; copy the agent's token file to the publisher's host (~/.config/pubsubperf/agent.token, or --token-file)",
            );
            let _ = ctl.send(&Msg::Error {
                message: r.why.clone(),
            });
            Err(r)
        }
        // The publisher found our proof wrong: its token differs.
        Ok(Msg::Error { .. }) => Err(wrong(
            "the publisher holds another token (it found this agent's proof wrong)",
        )),
        Ok(_) => Err(Refusal {
            why: "expected the publisher's proof, got another message".into(),
            failed_proof: true,
        }),
        Err(e) => Err(Refusal {
            why: format!("publisher: {e} (during the handshake)"),
            failed_proof: true,
        }),
    }
}

/// The publisher's side, on a new connection to `peer`: says Hello, and
/// with `token` checks the agent's proof and proves itself. The connection
/// is keyed afterwards (with a token) or trusted. The agent's refusal comes
/// later, as the answer to the handshake ([`crate::session`] reads it).
pub fn greet(ctl: &Ctl, peer: &str, token: Option<&str>, deadline: Instant) -> Result<(), Fault> {
    greet_as(ctl, peer, token, VERSION, deadline)
}

/// [`greet`] as pubsubperf `version` would (a test of the agent's version
/// check).
pub fn greet_as(
    ctl: &Ctl,
    peer: &str,
    token: Option<&str>,
    version: &str,
    deadline: Instant,
) -> Result<(), Fault> {
    let np = token.map(|_| nonce()).transpose()?;
    let io = |e: ControlError| Fault::Peer(format!("subscriber {peer}: {e}"));
    ctl.send(&Msg::Hello {
        version: version.into(),
        protocol: PROTOCOL,
        nonce: np.as_ref().map(|n| hex(n)),
    })
    .map_err(io)?;
    let (Some(token), Some(np)) = (token, np) else {
        ctl.trusted();
        return Ok(());
    };
    let (na, their) = match recv_by(ctl, deadline).map_err(io)? {
        Msg::Challenge { nonce, proof } => (nonce, proof),
        Msg::Error { message } => {
            return Err(Fault::Peer(format!(
                "subscriber {peer} refused: {}",
                crate::escape::printable(&message, 400)
            )));
        }
        _ => {
            return Err(Fault::Peer(format!(
                "subscriber {peer}: expected its challenge, got another message"
            )));
        }
    };
    let Some(na) = parse_nonce(&na) else {
        return Err(Fault::Peer(format!(
            "subscriber {peer}: bad challenge (its nonce is not 32 bytes of hex)"
        )));
    };
    if !proven(token, AGENT, &np, &na, &their) {
        let _ = ctl.send(&Msg::Error {
            message: "wrong token: the agent's proof does not match this publisher's token".into(),
        });
        return Err(Fault::Peer(format!(
            "subscriber {peer}: wrong token: the agent's proof does not match this publisher's token (the token files differ: copy the agent's token file to this host, ~/.config/pubsubperf/agent.token or --token-file; or {peer} is not the agent you meant)"
        )));
    }
    ctl.send(&Msg::Proof {
        proof: proof(token, PUBLISHER, &np, &na),
    })
    .map_err(io)?;
    ctl.authenticated(&session_keys(token, &np, &na, false));
    Ok(())
}

/// The next message by `deadline` (one deadline for the whole handshake:
/// a peer that sends a byte at a time cannot stretch it).
fn recv_by(ctl: &Ctl, deadline: Instant) -> Result<Msg, ControlError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(ControlError::Timeout(left));
    }
    ctl.recv(Some(left))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use std::time::Duration;

    fn pair() -> (Ctl, Ctl) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (Ctl::plain(a), Ctl::stranger(b))
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    /// Runs the publisher's side on a thread and the agent's here.
    fn handshake(
        publisher_token: Option<&'static str>,
        agent_token: Option<&'static str>,
    ) -> (
        Result<(), Fault>,
        Result<Option<SessionKeys>, Refusal>,
        Ctl,
        Ctl,
    ) {
        let (p, a) = pair();
        let pc = p.try_clone().unwrap();
        let t = std::thread::spawn(move || greet(&pc, "agent", publisher_token, soon()));
        let admitted = admit(&a, agent_token, soon());
        (t.join().unwrap(), admitted, p, a)
    }

    /// A stranger that connects and says nothing is counted against its
    /// address when its deadline passes, as a wrong proof is.
    #[test]
    fn an_idle_stranger_counts_as_a_failure() {
        let (_p, a) = pair();
        let r = admit(
            &a,
            Some("secret"),
            Instant::now() + Duration::from_millis(100),
        )
        .unwrap_err();
        assert!(r.failed_proof, "{r:?}");
        assert!(r.why.contains("no Hello"), "{r:?}");
    }

    #[test]
    fn the_same_token_keys_both_ends() {
        let (greeted, admitted, p, a) = handshake(Some("secret"), Some("secret"));
        greeted.unwrap();
        assert!(admitted.unwrap().is_some());
        assert!(p.is_keyed() && a.is_keyed());
        a.send(&Msg::Heartbeat).unwrap();
        assert!(matches!(
            p.recv(Some(Duration::from_secs(5))),
            Ok(Msg::Heartbeat)
        ));
        p.send(&Msg::Bye).unwrap();
        assert!(matches!(a.recv(Some(Duration::from_secs(5))), Ok(Msg::Bye)));
    }

    #[test]
    fn a_different_token_fails_on_both_sides_and_no_proof_is_sent() {
        let (greeted, admitted, _, _) = handshake(Some("other"), Some("secret"));
        let e = greeted.unwrap_err().to_string();
        assert!(e.contains("wrong token"), "{e}");
        let r = admitted.unwrap_err();
        assert!(r.failed_proof && r.why.contains("wrong token"), "{r:?}");
        assert!(r.why.contains("found this agent's proof wrong"), "{r:?}");
    }

    #[test]
    fn no_token_is_refused_by_an_agent_with_one() {
        let (greeted, admitted, p, _) = handshake(None, Some("secret"));
        greeted.unwrap();
        assert_eq!(admitted.unwrap_err().why, NO_TOKEN);
        match p.recv(Some(Duration::from_secs(5))) {
            Ok(Msg::Error { message }) => assert!(message.starts_with("no token"), "{message}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_publisher_with_a_token_refuses_an_agent_without_one() {
        let (greeted, admitted, _, _) = handshake(Some("secret"), None);
        let e = greeted.unwrap_err().to_string();
        assert!(e.contains("refused: this agent has no token"), "{e}");
        assert!(!admitted.unwrap_err().failed_proof);
    }

    #[test]
    fn without_tokens_frames_stay_plain() {
        let (greeted, admitted, p, a) = handshake(None, None);
        greeted.unwrap();
        assert_eq!(admitted.unwrap(), None);
        assert!(!p.is_keyed() && !a.is_keyed());
    }

    #[test]
    fn a_recorded_proof_does_not_open_a_second_connection() {
        // The agent's nonce is fresh per connection, so a proof recorded
        // from one handshake fails on the next.
        let np = [7u8; NONCE];
        let na1 = nonce().unwrap();
        let recorded = proof("secret", PUBLISHER, &np, &na1);
        let na2 = nonce().unwrap();
        assert_ne!(na1, na2);
        assert!(proven("secret", PUBLISHER, &np, &na1, &recorded));
        assert!(!proven("secret", PUBLISHER, &np, &na2, &recorded));
        // Nor is the agent's own proof accepted as the publisher's.
        let reflected = proof("secret", AGENT, &np, &na1);
        assert!(!proven("secret", PUBLISHER, &np, &na1, &reflected));
    }

    #[test]
    fn the_two_directions_have_different_keys() {
        let (np, na) = ([1u8; NONCE], [2u8; NONCE]);
        let a = session_keys("t", &np, &na, true);
        let p = session_keys("t", &np, &na, false);
        assert_eq!(a.send, p.recv);
        assert_eq!(a.recv, p.send);
        assert_ne!(a.send, a.recv);
    }

    #[test]
    fn hex_round_trips_and_refuses_junk() {
        assert_eq!(unhex(&hex(&[0, 1, 254, 255])), Some(vec![0, 1, 254, 255]));
        for junk in ["0", "zz", "0g", "é1"] {
            assert_eq!(unhex(junk), None, "{junk}");
        }
    }
}
