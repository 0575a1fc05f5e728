//! The middleware the front ends of RTI's tools (`perftest`,
//! `throughput-example`) measure when the command line names none: RTI
//! Connext, as RTI's own tools do, where the connext binding is compiled in
//! and its libraries are installed (`scripts/setup.sh --with-connext`);
//! otherwise CycloneDDS, and the publishing side says why on standard
//! error (its standard output keeps RTI's formats).

/// The middleware of RTI's tools.
pub const CONNEXT: &str = "connext";

/// The one measured when Connext cannot be.
pub const FALLBACK: &str = "cyclonedds";

/// The middleware a line without `-middleware` measures, and, when it is
/// not Connext, why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtiDefault {
    pub middleware: &'static str,
    pub fallback_reason: Option<String>,
}

impl RtiDefault {
    /// A default with no fallback to tell (Connext, or another middleware
    /// a caller chose).
    pub fn of(middleware: &'static str) -> RtiDefault {
        RtiDefault {
            middleware,
            fallback_reason: None,
        }
    }

    /// Prints, on stderr, why a publishing side of `tool` measures
    /// [`FALLBACK`], if it does for want of Connext.
    pub fn say(&self, tool: &str) {
        if let Some(why) = &self.fallback_reason {
            eprintln!("{}", fallback_note(tool, why));
        }
    }
}

/// This machine's default: Connext where it runs, else [`FALLBACK`].
pub fn middleware() -> RtiDefault {
    let fallback = |why: String| RtiDefault {
        middleware: FALLBACK,
        fallback_reason: Some(why),
    };
    match pubsubperf_harness::registry::info(CONNEXT) {
        Some(info) => match info.available {
            Ok(()) => RtiDefault::of(CONNEXT),
            Err(why) => fallback(why),
        },
        None => fallback(
            "the connext binding is not compiled into this build (cargo feature pubsubperf-harness/connext)".into(),
        ),
    }
}

/// What a publishing side prints when it measures [`FALLBACK`] for want
/// of Connext.
fn fallback_note(tool: &str, why: &str) -> String {
    format!(
        "pubsubperf {tool}: no -middleware given, so {FALLBACK}: RTI Connext, which RTI's tool measures, cannot run here ({why})"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_names_the_fallback_and_the_reason() {
        let n = fallback_note("perftest", "not installed");
        assert!(n.starts_with("pubsubperf perftest: no -middleware given, so cyclonedds:"));
        assert!(n.ends_with("(not installed)"));
    }
}
