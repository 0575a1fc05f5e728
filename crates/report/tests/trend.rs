//! Known answers of the change-point detector (pubsubperf_report::trend):
//! a 15 % step at a named commit inside 5 % run-to-run noise is found at
//! that commit, with an interval holding 15 %; flat noisy series of 100
//! points raise fewer false alarms than the stated rate; two machines'
//! series stay apart. The noise is seeded: the answers are the same on
//! every run.

use pubsubperf_report::trend::{Point, SeriesKey, Settings, change_line, detect, series, text};

/// xorshift64* with Box-Muller: normal deviates from a seed.
struct Noise(u64);

impl Noise {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

fn key(machine: &str) -> SeriesKey {
    SeriesKey {
        binding: "udp".into(),
        transport: "udp".into(),
        test: "latency".into(),
        size: 64,
        reliable: false,
        machine: machine.into(),
    }
}

/// `n` revisions c0.. of `reps` runs each around `level(i)` with 5 % noise.
fn points(
    machine: &str,
    n: usize,
    reps: usize,
    seed: u64,
    level: impl Fn(usize) -> f64,
) -> Vec<Point> {
    let mut noise = Noise(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut out = Vec::new();
    for i in 0..n {
        for _ in 0..reps {
            out.push(Point {
                key: key(machine),
                revision: format!("c{i}"),
                value: level(i) * (1.0 + 0.05 * noise.normal()),
                setup: Default::default(),
            });
        }
    }
    out
}

#[test]
fn a_15_percent_step_is_found_at_its_commit() {
    let s = Settings::default();
    for (seed, reps) in [(1, 1), (2, 3), (3, 5)] {
        let pts = points("pi4", 60, reps, seed, |i| {
            if i >= 40 { 11_500.0 } else { 10_000.0 }
        });
        let found = series(&pts, &s);
        assert_eq!(found.len(), 1);
        let changes = &found[0].changes;
        assert_eq!(changes.len(), 1, "seed {seed}: {changes:?}");
        let c = &changes[0];
        assert_eq!(c.revision, "c40", "seed {seed}: {c:?}");
        assert!(c.worse, "latency up is worse");
        assert!(
            c.low <= 0.15 && 0.15 <= c.high,
            "seed {seed}: the interval holds the step: {c:?}"
        );
    }
}

#[test]
fn flat_noisy_series_raise_fewer_false_alarms_than_the_stated_rate() {
    let s = Settings::default();
    let trials = 300;
    let mut alarms = 0;
    for seed in 0..trials {
        let pts = points("pi4", 100, 1, 1000 + seed, |_| 10_000.0);
        let found = series(&pts, &s);
        if !found[0].changes.is_empty() {
            alarms += 1;
        }
    }
    assert!(
        (alarms as f64) / (trials as f64) <= s.alpha,
        "{alarms} of {trials} flat series alarmed; the stated rate is {}",
        s.alpha
    );
}

#[test]
fn two_machines_series_stay_apart() {
    // Two flat machines, one 30 % slower, measured alternately: mixed,
    // they would look like steps at every revision.
    let s = Settings::default();
    let mut pts = Vec::new();
    let a = points("pi4", 40, 2, 7, |_| 10_000.0);
    let b = points("ipc", 40, 2, 8, |_| 13_000.0);
    for (x, y) in a.into_iter().zip(b) {
        pts.push(x);
        pts.push(y);
    }
    let found = series(&pts, &s);
    assert_eq!(found.len(), 2);
    for x in &found {
        assert_eq!(x.revisions.len(), 40);
        assert!(x.changes.is_empty(), "{}: {:?}", x.key.machine, x.changes);
    }
}

#[test]
fn a_series_too_short_to_test_has_no_change() {
    let pts = points("pi4", 4, 1, 9, |i| 10_000.0 * (1 + i) as f64);
    let revisions = &series(&pts, &Settings::default())[0].revisions;
    assert!(detect(revisions, &Settings::default()).is_empty());
}

/// The report's trend section draws each series across its revisions and
/// lists its change point under the plot.
#[test]
fn the_reports_trend_section_draws_the_series_and_names_its_change() {
    let s = Settings::default();
    let pts = points(
        "pi4",
        60,
        3,
        2,
        |i| if i >= 40 { 11_500.0 } else { 10_000.0 },
    );
    let found = series(&pts, &s);
    let mut plots = Vec::new();
    let html = pubsubperf_report::trend_html::section(&found, &s, &mut plots);
    assert_eq!(plots.len(), 1);
    assert!(plots[0].1.contains("<svg"), "{}", plots[0].1);
    assert!(
        html.contains("udp/udp latency 64 B best effort on pi4"),
        "{html}"
    );
    assert!(html.contains("<p>change at c40: +"), "{html}");
    assert!(html.contains(", worse</p>"), "{html}");
}

/// The machine's setup changed with the step (its governor's verdict
/// went from ok to warn at c40): the change point says the machine
/// changed there too. A kernel update at c20, where nothing moved, is
/// listed on its own. A check recorded on one side only is no change.
#[test]
fn a_step_where_the_machine_changed_says_so() {
    let s = Settings::default();
    let mut pts = points(
        "pi4",
        60,
        3,
        7,
        |i| {
            if i >= 40 { 11_500.0 } else { 10_000.0 }
        },
    );
    for p in &mut pts {
        let i: usize = p.revision[1..].parse().unwrap();
        let kernel = if i >= 20 { "6.12" } else { "6.1" };
        p.setup.insert("kernel".into(), kernel.into());
        let governor = if i >= 40 { "warn" } else { "ok" };
        p.setup.insert("doctor governor".into(), governor.into());
        if i >= 50 {
            p.setup.insert("doctor irq".into(), "warn".into());
        }
    }
    let found = series(&pts, &s);
    let changes = &found[0].changes;
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].revision, "c40");
    assert_eq!(changes[0].machine_changed, ["doctor governor: ok → warn"]);
    assert!(
        change_line(&changes[0], &s)
            .ends_with("worse; the machine changed here too (doctor governor: ok → warn): the step may be the machine's"),
        "{}",
        change_line(&changes[0], &s)
    );
    let t = text(&found, &s);
    assert!(
        t.contains("  the machine changed at c20: kernel: 6.1 → 6.12\n"),
        "{t}"
    );
    assert_eq!(t.matches("the machine changed").count(), 2, "{t}");
}
