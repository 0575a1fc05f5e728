//! A binding that prefers the host's own address on one host
//! ([`registry::prefers_host_address`]: CycloneDDS over udp) runs between
//! two sides of this host on that address, not 127.0.0.1: an unconnected
//! UDP socket's sends to an address on `lo` cost 6-8 µs more a round trip
//! on the machines we measured (docs/bindings/cyclonedds.md), and
//! CycloneDDS 0.10 binds its receive sockets to every address anyway, so
//! 127.0.0.1 closes nothing. Its packets stay on this host: discovery is
//! unicast to that same address.

use super::{TestRequest, UsageError};
use pubsubperf_harness::registry;
use std::collections::BTreeMap;

impl TestRequest {
    /// The publisher's data address (`--data-address ADDR|NIC`) as an
    /// address of this host, for a binding with a network path.
    pub(super) fn data_address(
        &self,
        caps: &pubsubperf_core::binding::Capabilities,
    ) -> Result<Option<String>, UsageError> {
        let Some(a) = &self.data_address else {
            return Ok(None);
        };
        if !caps.remote {
            return Err(UsageError(format!(
                "--data-address: {} has no network path (bindings with one: {})",
                self.binding,
                registry::infos()
                    .iter()
                    .filter(|i| i.capabilities.remote)
                    .map(|i| i.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        pubsubperf_core::sys::data_address(a)
            .map(Some)
            .map_err(|e| UsageError(format!("--data-address {a}: {e}")))
    }

    /// The data address and `--opt peers=` a one-host run of a binding
    /// that prefers the host's address over `transport` takes when the
    /// user named neither: this host's first address on an interface that
    /// is up (none: loopback, as before). Runs with a peer of another
    /// binding (its sockets on 127.0.0.1), with multicast, IPv6, an agent,
    /// or `loopback_only` (a topology's nodes of several bindings) keep
    /// loopback.
    pub(super) fn one_host_address(
        &self,
        peer: &str,
        transport: &str,
        remote: bool,
        data_address: Option<String>,
        options: &mut BTreeMap<String, String>,
    ) -> Option<String> {
        let applies = registry::prefers_host_address(&self.binding, transport)
            && peer == self.binding
            && !remote
            && !self.multicast
            && !self.ipv6
            && !self.loopback_only
            && data_address.is_none()
            && !options.contains_key("peers");
        if !applies {
            return data_address;
        }
        let addr = pubsubperf_core::sys::host_address()?.to_string();
        options.insert("peers".into(), addr.clone());
        Some(addr)
    }
}
