//! What a `perftest -sub` prints: its own subscriber's throughput lines
//! (intervals, then the summary), in its own `-outputFormat`,
//! `-latencyHighResolution`, `-noPrintIntervals`, `-noOutputHeaders`,
//! `-cpu` and `-outputFile`, as Perftest's subscriber prints them, in
//! every test: in a latency test it counts the pings it echoes, as
//! Perftest's does. The seeds read throughput on the subscriber's side
//! ("the information displayed here is only what the subscriber side
//! showed"); with several subscribers, each `-sub` prints its own.
//!
//! The run is served by an agent's session process, which the `-sub`
//! starts with this module's [`SubPrint::request`] in its settings; that
//! process prints through [`SubPrint::show`].

use super::options::Invocation;
use super::printer::{Printer, Style};
use pubsubperf_core::result::TestKind;
use pubsubperf_harness::protocol::Msg;
use pubsubperf_harness::spec::RunSpec;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The `-sub`'s output options, handed to the session process.
#[derive(Debug, Serialize, Deserialize)]
pub struct Request {
    style: Style,
    output_file: Option<PathBuf>,
}

/// The session process's printer of its own subscriber's lines.
pub struct SubPrint {
    printer: Printer,
    /// The first write error; the run goes on, the process reports it.
    error: Option<std::io::Error>,
}

impl SubPrint {
    /// The settings' `print` of a `-sub` invocation.
    pub fn request(inv: &Invocation) -> String {
        crate::side_print::Request::Perftest(Request {
            style: inv.style(),
            output_file: inv.output_file.clone(),
        })
        .encode()
    }

    /// The printer of a `-sub`'s request.
    pub fn open(r: Request) -> anyhow::Result<SubPrint> {
        let out = super::output(r.output_file.as_deref())?;
        Ok(SubPrint {
            printer: Printer::new(r.style, out),
            error: None,
        })
    }

    /// One interval or the result of a run this process serves.
    pub fn show(&mut self, spec: &RunSpec, msg: &Msg) {
        let r = match msg {
            Msg::Interval { interval } => {
                self.printer.follow(spec.subscriber_index);
                self.printer.throughput_interval(spec.size, interval)
            }
            Msg::Result {
                throughput,
                resources,
                ..
            } => match (spec.test, throughput) {
                (TestKind::Throughput, Some(t)) => {
                    self.printer
                        .throughput_result(spec.size, t, resources.cpu_percent)
                }
                // A latency test's subscriber measures no throughput of its
                // own: its summary is the pings of its intervals.
                _ => self
                    .printer
                    .throughput_from_intervals(spec.size, resources.cpu_percent),
            },
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
    use pubsubperf_core::result::{Interval, Throughput};

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
            first_sample_ns: None,
            arrivals: Vec::new(),
            placement: None,
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
    fn a_sub_prints_the_pings_of_a_latency_test_and_its_json_holds_its_intervals() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("lat.txt");
        let (mut p, spec) = sub_print("-sub -dataLen 64 -latencyTest -noPrint", &file);
        p.show(&spec, &interval(1.0, 100));
        p.show(&spec, &interval(2.0, 300));
        p.show(&spec, &result(0));
        p.finish();
        let out = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            out,
            "Sample Size (Bytes), Total Samples, Avg Samples/s,    Avg Mbps, Lost Samples, Lost Samples (%)\n                 64,           400,           200,         0.1,            0,             0.00\n"
        );

        let file = dir.path().join("tp.json");
        let (mut p, spec) = sub_print("-sub -dataLen 64 -outputFormat json", &file);
        p.show(&spec, &interval(1.0, 100));
        p.show(&spec, &result(100));
        p.finish();
        let text = std::fs::read_to_string(&file).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).expect(&text);
        let run = &doc["perftest"][0];
        assert_eq!(run["length"], 64);
        assert_eq!(run["intervals"][0]["packets"], 100);
        assert_eq!(run["summary"]["packets"], 100);
        assert!(
            text.starts_with("{\"perftest\":\n\t[\n\t\t{\n\t\t\t\"length\":64,"),
            "{text}"
        );
    }
}
