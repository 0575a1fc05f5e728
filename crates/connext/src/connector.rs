//! [`Connector`]: one RTI Connector, the participant it creates from an
//! XML application ([`crate::xml`]) and that participant's one writer or
//! reader. The binding creates every DDS entity through Connector, never
//! through Connext's own factory: Connector is what RTI's libraries, as
//! shipped in its package, allow to create them.

use crate::library::{Api, ConnectorOptions};
use pubsubperf_core::BindingError;
use std::ffi::{CStr, CString, c_void};

/// A Connector and its participant, deleted on drop.
pub struct Connector {
    pub(crate) api: &'static Api,
    raw: *mut c_void,
}

// SAFETY: Connector's entities may be used from any thread; the handle is
// only passed to RTI's functions.
unsafe impl Send for Connector {}
// SAFETY: as above.
unsafe impl Sync for Connector {}

impl Connector {
    /// Creates the participant of `xml` (a whole XML application, given to
    /// Connector as a `str://` URL) and its entities.
    pub fn new(api: &'static Api, xml: &str) -> Result<Connector, BindingError> {
        let url = CString::new(format!("str://\"{xml}\""))
            .map_err(|_| BindingError::Middleware("the XML application holds a NUL".into()))?;
        let config = CString::new(crate::xml::PARTICIPANT).expect("a plain name");
        let options = ConnectorOptions {
            enable_on_data_event: 0,
            one_based_sequence_indexing: 0,
        };
        // SAFETY: valid C strings and options, copied by Connector.
        let raw = unsafe { (api.RTI_Connector_new)(config.as_ptr(), url.as_ptr(), &options) };
        if raw.is_null() {
            return Err(BindingError::Middleware(format!(
                "RTI Connector could not create the participant: {}",
                api.last_error("no reason given (see Connext's log above)")
            )));
        }
        Ok(Connector { api, raw })
    }

    /// The native `DDS_DataWriter*` of the participant's writer.
    pub fn writer(&self) -> Result<*mut c_void, BindingError> {
        self.entity(crate::xml::WRITER, self.api.RTI_Connector_get_datawriter)
    }

    /// The native `DDS_DataReader*` of the participant's reader.
    pub fn reader(&self) -> Result<*mut c_void, BindingError> {
        self.entity(crate::xml::READER, self.api.RTI_Connector_get_datareader)
    }

    /// The writer's own `DDS_DynamicData*` sample (Connector's instance of
    /// its output), written in place for every send.
    pub fn writer_sample(&self) -> Result<*mut c_void, BindingError> {
        let mut sample = std::ptr::null_mut();
        // SAFETY: live connector, a name of its XML, a valid out pointer.
        let rc = unsafe {
            (self.api.RTI_Connector_get_native_instance)(
                self.raw,
                crate::xml::WRITER.as_ptr(),
                &mut sample,
            )
        };
        if rc != 0 || sample.is_null() {
            return Err(BindingError::Middleware(format!(
                "RTI Connector gave no sample for its writer: {}",
                self.api.last_error("no reason given")
            )));
        }
        Ok(sample)
    }

    fn entity(
        &self,
        name: &CStr,
        get: unsafe extern "C" fn(*mut c_void, *const std::ffi::c_char) -> *mut c_void,
    ) -> Result<*mut c_void, BindingError> {
        // SAFETY: live connector and a name of its XML.
        let p = unsafe { get(self.raw, name.as_ptr()) };
        if p.is_null() {
            return Err(BindingError::Middleware(format!(
                "RTI Connector has no entity {}: {}",
                name.to_string_lossy(),
                self.api.last_error("no reason given")
            )));
        }
        Ok(p)
    }
}

impl Drop for Connector {
    fn drop(&mut self) {
        // SAFETY: raw came from RTI_Connector_new; the binding's objects of
        // its entities (waitsets, conditions, listeners) are gone.
        unsafe { (self.api.RTI_Connector_delete)(self.raw) };
    }
}
