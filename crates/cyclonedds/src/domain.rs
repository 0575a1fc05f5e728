//! The CycloneDDS domains of this process, shared by every participant of a
//! run and deleted with the last one.

use crate::*;
use pubsubperf_core::BindingError;
use std::ffi::CString;
use std::sync::Mutex;

/// Domains created by this process, shared by every participant of a run
/// (both sides of an in-process test use one domain).
pub(crate) struct DomainSlot {
    pub(crate) id: u32,
    pub(crate) entity: i32,
    pub(crate) xml: String,
    pub(crate) refs: usize,
}

pub(crate) static DOMAINS: Mutex<Vec<DomainSlot>> = Mutex::new(Vec::new());

pub(crate) fn acquire_domain(id: u32, xml: &str) -> Result<(), BindingError> {
    let mut d = DOMAINS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = d.iter_mut().find(|s| s.id == id) {
        if s.xml != xml {
            return Err(BindingError::Unsupported(format!(
                "--domain {id}: this process already uses domain {id} with another configuration; pick another domain"
            )));
        }
        s.refs += 1;
        return Ok(());
    }
    let c = CString::new(xml).map_err(|_| BindingError::Unsupported("config has a NUL".into()))?;
    // SAFETY: a valid C string; the domain lives until release_domain.
    let e = unsafe { sys::pp_create_domain(id, c.as_ptr()) };
    if e < 0 {
        return Err(BindingError::Middleware(format!(
            "creating domain {id}: {} (check --qos-file, --opt peers and the bind address)",
            sys::retcode(e)
        )));
    }
    d.push(DomainSlot {
        id,
        entity: e,
        xml: xml.to_string(),
        refs: 1,
    });
    Ok(())
}

pub(crate) fn release_domain(id: u32) {
    let mut d = DOMAINS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = d.iter().position(|s| s.id == id) {
        d[i].refs -= 1;
        if d[i].refs == 0 {
            let s = d.remove(i);
            // SAFETY: deleting an entity we created.
            unsafe { sys::pp_delete(s.entity) };
        }
    }
}
