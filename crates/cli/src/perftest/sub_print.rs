//! What a `perftest -sub` prints: its own subscriber's throughput lines
//! (intervals, then the summary), in its own `-outputFormat`,
//! `-noPrintIntervals`, `-noOutputHeaders`, `-cpu` and `-outputFile`, as
//! Perftest's subscriber prints them. The seeds read throughput on the
//! subscriber's side ("the information displayed here is only what the
//! subscriber side showed"); with several subscribers, each `-sub` prints
//! its own.
//!
//! The run is served by an agent's session process, which the `-sub`
//! starts with this module's [`SubPrint::request`] in its settings; that
//! process prints through [`SubPrint::show`]. A latency test's subscriber
//! measures no throughput (it echoes), so it prints nothing there: the
//! `-pub` prints the latency.

use super::options::{Format, Invocation};
use super::printer::{Printer, Summary};
use pubsubperf_core::result::{Interval, TestKind};
use pubsubperf_harness::protocol::Msg;
use pubsubperf_harness::spec::RunSpec;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The `-sub`'s output options, handed to the session process.
#[derive(Debug, Serialize, Deserialize)]
pub struct Request {
    format: Format,
    headers: bool,
    intervals: bool,
    cpu: bool,
    output_file: Option<PathBuf>,
}

/// The session process's printer of its own subscriber's lines.
pub struct SubPrint {
    printer: Printer,
    /// This run's intervals (the JSON document holds them in its summary).
    intervals: Vec<Interval>,
    /// The first write error; the run goes on, the process reports it.
    error: Option<std::io::Error>,
}

impl SubPrint {
    /// The settings' `print` of a `-sub` invocation.
    pub fn request(inv: &Invocation) -> String {
        crate::side_print::Request::Perftest(Request {
            format: inv.format,
            headers: inv.headers,
            intervals: inv.intervals,
            cpu: inv.cpu,
            output_file: inv.output_file.clone(),
        })
        .encode()
    }

    /// The printer of a `-sub`'s request.
    pub fn open(r: Request) -> anyhow::Result<SubPrint> {
        let out = super::output(r.output_file.as_deref())?;
        Ok(SubPrint {
            printer: Printer::new(r.format, r.headers, r.intervals, r.cpu, out),
            intervals: Vec::new(),
            error: None,
        })
    }

    /// One interval or the result of a run this process serves.
    pub fn show(&mut self, spec: &RunSpec, msg: &Msg) {
        if spec.test != TestKind::Throughput {
            return;
        }
        let r = match msg {
            Msg::Interval { interval } => {
                self.printer.follow(spec.subscriber_index);
                self.intervals.push(interval.clone());
                self.printer.interval(spec.test, spec.size, interval)
            }
            Msg::Result {
                throughput,
                resources,
                ..
            } => {
                let r = self.printer.summary(&Summary {
                    test: spec.test,
                    size: spec.size,
                    subscriber: spec.subscriber_index,
                    intervals: &self.intervals,
                    throughput: throughput.as_ref(),
                    latency: None,
                    publisher_cpu: f64::NAN,
                    subscriber_cpu: resources.cpu_percent,
                });
                self.intervals.clear();
                r
            }
            _ => Ok(()),
        };
        if let Err(e) = r {
            self.error.get_or_insert(e);
        }
    }

    /// The end of the output (a JSON document is written here); a write
    /// error is reported on standard error (the run's result already went
    /// to the publisher).
    pub fn finish(mut self) {
        if let Err(e) = self.printer.finish() {
            self.error.get_or_insert(e);
        }
        if let Some(e) = self.error {
            eprintln!("pubsubperf perftest -sub: writing the output: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pubsubperf_core::result::Throughput;

    fn sub_print(line: &str, file: &std::path::Path) -> (SubPrint, RunSpec) {
        let args: Vec<String> = format!("{line} -outputFile {}", file.display())
            .split_whitespace()
            .map(String::from)
            .collect();
        let inv = super::super::read(&args).unwrap();
        let mut spec = super::super::plan(&inv).unwrap().specs.remove(0);
        // The second subscriber of the run: it prints its own lines.
        spec.subscriber_index = 1;
        let crate::side_print::Request::Perftest(r) =
            serde_json::from_str(&SubPrint::request(&inv)).unwrap()
        else {
            panic!("a -sub asks for Perftest's lines")
        };
        (SubPrint::open(r).unwrap(), spec)
    }

    fn interval(t_s: f64, received: u64) -> Msg {
        Msg::Interval {
            interval: Interval {
                t_s,
                subscriber: 1,
                received,
                samples_per_s: received as f64,
                mbps: received as f64 * 8e-3,
                ..Interval::default()
            },
        }
    }

    fn result(received: u64) -> Msg {
        Msg::Result {
            throughput: Some(Throughput {
                sent: received,
                received,
                samples_per_s: received as f64 / 2.0,
                mbps: 1.5,
                ..Throughput::default()
            }),
            by_publisher: Vec::new(),
            echoed: 0,
            bad_samples: 0,
            foreign: 0,
            resources: Default::default(),
            profile: None,
        }
    }

    #[test]
    fn a_sub_prints_its_own_intervals_and_summary_in_its_format() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sub.txt");
        let (mut p, spec) = sub_print("-sub -dataLen 1000 -outputFormat legacy", &file);
        p.show(&spec, &interval(1.0, 100));
        p.show(&spec, &interval(2.0, 300));
        p.show(&spec, &result(400));
        p.finish();
        let out = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = out.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines[0], "********** New data length is 1000", "{out}");
        assert!(
            lines[1].starts_with("Packets:      100  Packets/s:     100"),
            "{out}"
        );
        assert!(
            lines[2].starts_with("Packets:      400  Packets/s:     300"),
            "{out}"
        );
        assert!(
            lines[3].starts_with("Length:  1000  Packets:      400  Packets/s(ave):     200"),
            "{out}"
        );
        assert_eq!(lines.len(), 4, "{out}");
    }

    #[test]
    fn a_sub_prints_nothing_of_a_latency_test_and_its_json_holds_its_intervals() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("lat.txt");
        let (mut p, spec) = sub_print("-sub -dataLen 64 -latencyTest", &file);
        p.show(&spec, &interval(1.0, 100));
        p.show(&spec, &result(100));
        p.finish();
        assert_eq!(std::fs::read_to_string(&file).unwrap_or_default(), "");

        let file = dir.path().join("tp.json");
        let (mut p, spec) = sub_print("-sub -dataLen 64 -outputFormat json", &file);
        p.show(&spec, &interval(1.0, 100));
        p.show(&spec, &result(100));
        p.finish();
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let run = &doc["perftest"][0];
        assert_eq!(run["length"], 64);
        assert_eq!(run["intervals"][0]["packets"], 100);
        assert_eq!(run["summary"]["packets"], 100);
    }
}
