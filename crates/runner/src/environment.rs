//! The environment a plan's results are measured in: the machine, its
//! saved calibration, the doctor's findings on the cores the runs pin, and
//! each binding's version.

use pubsubperf_core::environment::Environment;
use pubsubperf_harness::registry;

/// The environment of a plan's `specs`.
pub fn bindings_env(specs: &[pubsubperf_harness::spec::RunSpec]) -> Environment {
    let mut env = Environment::detect();
    env.calibration = crate::calibration::load();
    if let Some(s) = specs.first() {
        env.doctor = pubsubperf_doctor::examine_here(&pinned(s), None);
    }
    for s in specs {
        for b in [&s.binding, &s.peer_binding] {
            if let Some(i) = registry::info(b) {
                env.bindings.insert(b.clone(), i.version);
            }
        }
    }
    env
}

/// The cores a run pins its two sides to.
pub fn pinned(s: &pubsubperf_harness::spec::RunSpec) -> Vec<usize> {
    [s.pub_cpu, s.sub_cpu].into_iter().flatten().collect()
}
