//! Sweep files: a TOML description of a matrix of runs.
//!
//! ```toml
//! name = "quick"            # optional; default: the file name
//! repetitions = 3           # optional; default 1
//!
//! [matrix]                  # or several [[matrix]] tables
//! bindings = ["udp", "tcp"]
//! tests = ["latency", "throughput"]   # default ["latency"]
//! sizes = [64, "1KiB", "16KiB"]
//! transports = ["default"]            # or { cyclonedds = ["udp", "shm"] }
//! reliability = ["default"]           # "reliable", "best-effort", "default"
//! zero_copy = [false]
//! data_type = ["default"]             # "bytes", "flat", "default"
//! wait = ["block"]                    # "block", "busy", "default"
//! rate = ["default"]                  # samples/s (100, "1k", "max"), or "default"
//! subscribers = [1]
//! load = ["none", "cpu"]              # --load profiles, "none" for no load
//!
//! [settings]                # every cell: any CLI option, without dashes
//! duration = "2s"
//! warmup = "1s"
//!
//! [settings.throughput]     # only throughput cells (also [settings.latency])
//! latency_every = 100
//!
//! [binding.udp]             # only cells of this binding
//! socket_buffer = "4MiB"
//!
//! [hosts.board1]            # an inventory of subscriber hosts
//! connect = "ssh://pi@board1"         # or an agent's "HOST:PORT"
//! data_address = "eth1"               # ssh: the remote agent's --data-address
//! remote_path = "/usr/local/bin/pubsubperf"   # ssh: the remote binary
//! token_file = "lab.token"            # HOST:PORT: the agent's token
//! ```
//!
//! A matrix axis `hosts = ["local", "board1"]` puts each cell's subscriber
//! on the publisher's host (`local`) or a named host of the inventory, and
//! `publisher_hosts = ["local", "board2"]` the publisher on this host or an
//! `ssh://` host of the inventory (the runner runs the cell there over SSH
//! and stores its results here); both are part of the cell's key. The
//! runner keeps one agent per `ssh://` subscriber host for all cells.
//!
//! Each cell of the matrix (one binding, transport, test, size and QoS
//! choice) becomes an argument vector for the CLI (`["latency",
//! "--binding", "udp", "--size", "64", ...]`) and a stable key used to
//! resume an interrupted sweep. Repetitions repeat the whole matrix
//! (repetition 1 of every cell, then repetition 2, ...), so that slow drift
//! of the machine spreads over all cells instead of biasing one.
//!
//! Expansion does not check combinations against the bindings'
//! capabilities: the runner validates each cell through the CLI's parser
//! and skips, with a message, the ones a binding cannot run.

use crate::error::{ReportError, Result};
use pubsubperf_core::result::RunHosts;
use pubsubperf_core::size::parse_size;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[path = "sweep_load_axis.rs"]
mod load_axis;

/// A parsed sweep file.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// Sweep name (recorded with every run in the database).
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Repetitions of every cell (≥ 1).
    pub repetitions: u32,
    /// The expanded cells, repetition-major.
    pub cells: Vec<Cell>,
}

/// One run of a sweep: a CLI invocation for one cell and repetition.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Stable key of the cell (the same for every repetition), e.g.
    /// `latency/udp/transport=default/size=64/reliability=default`.
    pub key: String,
    /// Repetition number, 1-based.
    pub repetition: u32,
    /// The cell's settings by option name, in order (`("size",
    /// Some("64"))`, `("reliable", None)` for a flag): what the runner
    /// applies to a test request, straight from the TOML. [`Cell::args`]
    /// is the same as a command line.
    pub options: Vec<(String, Option<String>)>,
    /// Test name.
    pub test: String,
    /// Binding name.
    pub binding: String,
    /// The matrix table the cell comes from, as errors name it: `matrix`,
    /// or `matrix[i]` for the i-th of several `[[matrix]]` tables (an
    /// unknown binding is `{matrix}.bindings`).
    pub matrix: String,
    /// Size in bytes.
    pub size: usize,
    /// A digest of [`Cell::args`] (FNV-1a, hex): changes when any setting changes,
    /// so a resumed sweep can tell a cell measured with other settings.
    pub digest: String,
    /// The host that runs the publisher, when it is not this one (the
    /// `publisher_hosts` axis): the runner runs [`Cell::args`] there over SSH.
    pub publisher: Option<PublisherHost>,
    /// The inventory's names of the hosts the cell's sides run on, when
    /// the sweep has a `hosts` or `publisher_hosts` axis; each of the cell's
    /// runs carries them ([`pubsubperf_core::result::RunHosts`]).
    pub hosts: Option<RunHosts>,
}

/// A host of the inventory that runs a cell's publisher.
#[derive(Debug, Clone, PartialEq)]
pub struct PublisherHost {
    /// Its name in the inventory.
    pub name: String,
    /// `ssh://[user@]host[:port]`.
    pub connect: String,
    /// Its pubsubperf binary.
    pub remote_path: Option<String>,
}

impl Cell {
    /// The cell's settings as (option name, value) pairs, in order.
    pub fn settings(&self) -> Vec<(String, Option<String>)> {
        self.options.clone()
    }

    /// The cell as a command line, without the program name: the test, then
    /// `--NAME [VALUE]` per setting (what a publisher host runs over SSH,
    /// what the dry run shows, what the digest covers).
    pub fn args(&self) -> Vec<String> {
        argv(&self.test, &self.options)
    }
}

/// A test and its settings as command-line arguments: the test, then
/// `--NAME` and its value, if any, per setting.
fn argv(test: &str, options: &[(String, Option<String>)]) -> Vec<String> {
    let mut out = vec![test.to_string()];
    for (name, value) in options {
        out.push(format!("--{name}"));
        out.extend(value.clone());
    }
    out
}

/// A setting with a value.
fn set(name: &str, value: impl Into<String>) -> (String, Option<String>) {
    (name.to_string(), Some(value.into()))
}

/// A flag.
fn flag(name: &str) -> (String, Option<String>) {
    (name.to_string(), None)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    name: Option<String>,
    description: Option<String>,
    repetitions: Option<i64>,
    matrix: toml::Value,
    #[serde(default)]
    settings: toml::Table,
    #[serde(default)]
    binding: BTreeMap<String, toml::Table>,
    #[serde(default)]
    hosts: BTreeMap<String, RawHost>,
}

/// A host of the inventory (`[hosts.NAME]`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHost {
    /// `ssh://[user@]host[:port]` or an agent's `HOST:PORT`.
    connect: String,
    /// Its data address or interface (ssh only).
    data_address: Option<String>,
    /// Its pubsubperf binary (ssh only).
    remote_path: Option<String>,
    /// The agent's token file (`HOST:PORT` only).
    token_file: Option<String>,
}

impl RawHost {
    /// The settings that put a cell's subscriber on this host.
    fn options(&self, name: &str) -> std::result::Result<Vec<(String, Option<String>)>, String> {
        let at = format!("hosts.{name}");
        let ssh = self.connect.starts_with("ssh://");
        if self.connect.contains(',') || self.connect.contains('?') {
            return Err(format!(
                "{at}.connect: one address, without parameters (use data_address, remote_path)"
            ));
        }
        if !ssh && (self.data_address.is_some() || self.remote_path.is_some()) {
            return Err(format!(
                "{at}: data_address and remote_path are for ssh:// hosts (an agent reached by address chooses its own with 'agent --data-address')"
            ));
        }
        if ssh && self.token_file.is_some() {
            return Err(format!("{at}.token_file: an ssh:// host needs no token"));
        }
        let mut query = Vec::new();
        if let Some(d) = &self.data_address {
            query.push(format!("data={d}"));
        }
        if let Some(p) = &self.remote_path {
            query.push(format!("path={p}"));
        }
        let mut url = self.connect.clone();
        if !query.is_empty() {
            url = format!("{url}?{}", query.join("&"));
        }
        let mut options = vec![set("connect", url)];
        if let Some(t) = &self.token_file {
            options.push(set("token-file", t.clone()));
        }
        Ok(options)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatrix {
    /// Optional label, part of the cell keys of this matrix.
    name: Option<String>,
    bindings: Vec<String>,
    sizes: Vec<toml::Value>,
    #[serde(default)]
    tests: Vec<String>,
    transports: Option<toml::Value>,
    #[serde(default)]
    reliability: Vec<String>,
    #[serde(default)]
    zero_copy: Vec<bool>,
    #[serde(default)]
    data_type: Vec<String>,
    #[serde(default)]
    wait: Vec<String>,
    #[serde(default)]
    rate: Vec<toml::Value>,
    #[serde(default)]
    subscribers: Vec<i64>,
    /// Where the subscriber runs: `local` (the publisher's host) or a host
    /// of the inventory.
    #[serde(default)]
    hosts: Vec<String>,
    /// Where the publisher runs: `local` (this host) or an `ssh://` host of
    /// the inventory.
    #[serde(default)]
    publisher_hosts: Vec<String>,
    /// `--load` profiles (`none`: no load).
    #[serde(default)]
    load: Vec<String>,
    /// Settings for this matrix only (override [settings]).
    #[serde(default)]
    settings: toml::Table,
}

/// Flags that only the matrix sets (a setting of the same name is refused).
const AXIS_FLAGS: &[&str] = &[
    "binding",
    "size",
    "transport",
    "reliable",
    "best_effort",
    "zero_copy",
    "data_type",
    "wait",
    "rate",
    "subscribers",
    "load",
    "json",
    "csv",
    "connect",
];

/// Reads and expands a sweep file.
pub fn load(path: &Path) -> Result<Sweep> {
    let text = std::fs::read_to_string(path).map_err(|e| ReportError::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    let stem = path
        .file_stem()
        .map_or("sweep".to_string(), |s| s.to_string_lossy().into_owned());
    parse(&text, &stem).map_err(|message| ReportError::Sweep {
        path: path.to_path_buf(),
        message,
    })
}

/// Parses and expands sweep text; `default_name` names a sweep without
/// `name`. Errors name the key at fault.
pub fn parse(text: &str, default_name: &str) -> std::result::Result<Sweep, String> {
    let raw: RawSweep = toml::from_str(text).map_err(|e| {
        // toml's message spans several lines (with a source excerpt); keep it to one.
        e.message().replace('\n', " ")
            + &e.span()
                .map(|s| format!(" (at line {})", line_of(text, s.start)))
                .unwrap_or_default()
    })?;
    let repetitions = raw.repetitions.unwrap_or(1);
    if !(1..=1000).contains(&repetitions) {
        return Err(format!("repetitions = {repetitions}: must be 1 to 1000"));
    }
    let repetitions = repetitions as u32;
    check_settings("settings", &raw.settings, true)?;
    for (b, t) in &raw.binding {
        check_settings(&format!("binding.{b}"), t, false)?;
    }
    let one = |v: toml::Value, at: &str| -> std::result::Result<RawMatrix, String> {
        v.try_into::<RawMatrix>()
            .map_err(|e| format!("{at}: {}", e.message().replace('\n', " ")))
    };
    let matrices = match raw.matrix {
        v @ toml::Value::Table(_) => vec![one(v, "matrix")?],
        toml::Value::Array(a) => a
            .into_iter()
            .enumerate()
            .map(|(i, v)| one(v, &format!("matrix[{i}]")))
            .collect::<std::result::Result<Vec<_>, _>>()?,
        _ => return Err("matrix: expected a [matrix] table or [[matrix]] tables".into()),
    };
    if matrices.is_empty() {
        return Err("matrix: at least one [matrix] table is needed".into());
    }
    let mut base_cells: Vec<Cell> = Vec::new();
    for (mi, m) in matrices.iter().enumerate() {
        let at = if matrices.len() > 1 {
            format!("matrix[{mi}]")
        } else {
            "matrix".into()
        };
        check_settings(&format!("{at}.settings"), &m.settings, true)?;
        let cells = expand(&at, m, &raw.settings, &raw.binding)?;
        let cells = place(cells, &subscriber_placements(&at, &m.hosts, &raw.hosts)?);
        base_cells.extend(place(
            cells,
            &publisher_placements(&at, &m.publisher_hosts, &raw.hosts)?,
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for c in &base_cells {
        if !seen.insert(c.key.clone()) {
            return Err(format!(
                "cell '{}' appears twice (matrices overlap; give each [[matrix]] a name)",
                c.key
            ));
        }
    }
    let mut cells = Vec::with_capacity(base_cells.len() * repetitions as usize);
    for rep in 1..=repetitions {
        cells.extend(base_cells.iter().map(|c| Cell {
            repetition: rep,
            ..c.clone()
        }));
    }
    Ok(Sweep {
        name: raw.name.unwrap_or_else(|| default_name.to_string()),
        description: raw.description,
        repetitions,
        cells,
    })
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn check_settings(at: &str, t: &toml::Table, per_test: bool) -> std::result::Result<(), String> {
    for (k, v) in t {
        if per_test && (k == "latency" || k == "throughput") {
            let toml::Value::Table(sub) = v else {
                return Err(format!("{at}.{k}: expected a table of settings"));
            };
            check_settings(&format!("{at}.{k}"), sub, false)?;
            continue;
        }
        if AXIS_FLAGS.contains(&k.as_str()) || k == "best-effort" || k == "zero-copy" {
            return Err(format!(
                "{at}.{k}: set by the matrix (use the matrix's axes: bindings, sizes, transports, reliability, zero_copy, data_type, wait, rate, subscribers, load, hosts)"
            ));
        }
        if k.is_empty()
            || !k
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!("{at}.{k}: not an option name"));
        }
        match v {
            toml::Value::Table(_) => {
                return Err(format!("{at}.{k}: expected a value, not a table"));
            }
            toml::Value::Array(a)
                if a.iter()
                    .any(|x| matches!(x, toml::Value::Table(_) | toml::Value::Array(_))) =>
            {
                return Err(format!("{at}.{k}: a list of plain values is expected"));
            }
            _ => {}
        }
    }
    Ok(())
}

/// A TOML setting as options: `duration = "2s"` → `duration 2s`;
/// `check = true` → the flag `check`; `opt = ["a=1", "b=2"]` → `opt a=1`,
/// `opt b=2`.
fn setting_options(k: &str, v: &toml::Value, out: &mut Vec<(String, Option<String>)>) {
    let name = if k == "opts" { "opt" } else { k }.replace('_', "-");
    match v {
        toml::Value::Boolean(true) => out.push(flag(&name)),
        // The one switch whose default a binding sets (iceoryx2 and
        // iceoryx loan): false says so.
        toml::Value::Boolean(false) if k == "zero_copy" => out.push(set(&name, "false")),
        toml::Value::Boolean(false) => {}
        toml::Value::Array(a) => {
            for x in a {
                out.push(set(&name, scalar(x)));
            }
        }
        x => out.push(set(&name, scalar(x))),
    }
}

fn scalar(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn or_default<T: Clone>(v: &[T], d: T) -> Vec<T> {
    if v.is_empty() { vec![d] } else { v.to_vec() }
}

fn expand(
    at: &str,
    m: &RawMatrix,
    settings: &toml::Table,
    per_binding: &BTreeMap<String, toml::Table>,
) -> std::result::Result<Vec<Cell>, String> {
    if m.bindings.is_empty() {
        return Err(format!("{at}.bindings: at least one binding"));
    }
    if m.sizes.is_empty() {
        return Err(format!("{at}.sizes: at least one size"));
    }
    let mut sizes = Vec::new();
    for s in &m.sizes {
        let text = scalar(s);
        let n = parse_size(&text).map_err(|e| format!("{at}.sizes: {e}"))?;
        sizes.push(n);
    }
    let tests = or_default(&m.tests, "latency".to_string());
    for t in &tests {
        if t != "latency" && t != "throughput" {
            return Err(format!(
                "{at}.tests: '{t}' is not a test (latency, throughput)"
            ));
        }
    }
    let reliability = or_default(&m.reliability, "default".to_string());
    for r in &reliability {
        if !["reliable", "best-effort", "default"].contains(&r.as_str()) {
            return Err(format!(
                "{at}.reliability: '{r}' (use reliable, best-effort or default)"
            ));
        }
    }
    let zero_copy = or_default(&m.zero_copy, false);
    let data_types = or_default(&m.data_type, "default".to_string());
    for d in &data_types {
        if !["bytes", "flat", "default"].contains(&d.as_str()) {
            return Err(format!(
                "{at}.data_type: '{d}' (use bytes, flat or default)"
            ));
        }
    }
    let waits = or_default(&m.wait, "default".to_string());
    for w in &waits {
        if !["block", "busy", "default"].contains(&w.as_str()) {
            return Err(format!("{at}.wait: '{w}' (use block, busy or default)"));
        }
    }
    let mut rates = Vec::new();
    for r in &m.rate {
        match r {
            toml::Value::String(s) if s == "default" => rates.push(None),
            // Rates as the command line's --rate reads them ("1k", "max").
            toml::Value::String(s) => {
                pubsubperf_core::rate::parse_rate(s).map_err(|e| format!("{at}.rate: {e}"))?;
                rates.push(Some(s.clone()));
            }
            toml::Value::Integer(i) if *i > 0 => rates.push(Some(i.to_string())),
            toml::Value::Float(f) if *f > 0.0 && f.is_finite() => rates.push(Some(f.to_string())),
            other => {
                return Err(format!(
                    "{at}.rate: {other} (use a positive number of samples/s or \"default\")"
                ));
            }
        }
    }
    if rates.is_empty() {
        rates.push(None);
    }
    let subscribers = or_default(&m.subscribers, 1);
    for s in &subscribers {
        if !(1..=64).contains(s) {
            return Err(format!("{at}.subscribers: {s} (1 to 64)"));
        }
    }
    let mut cells = Vec::new();
    for test in &tests {
        for binding in &m.bindings {
            let transports = transports_for(at, m.transports.as_ref(), binding)?;
            for transport in &transports {
                for rel in &reliability {
                    for &zc in &zero_copy {
                        for dt in &data_types {
                            for wait in &waits {
                                for rate in &rates {
                                    for &subs in &subscribers {
                                        for &size in &sizes {
                                            let mut key = vec![
                                                test.clone(),
                                                binding.clone(),
                                                format!("transport={transport}"),
                                                format!("size={size}"),
                                            ];
                                            if let Some(n) = &m.name {
                                                key.insert(0, n.clone());
                                            }
                                            let mut options = vec![set("binding", binding.clone())];
                                            if transport != "default" {
                                                options.push(set("transport", transport.clone()));
                                            }
                                            options.push(set("size", size.to_string()));
                                            if !m.reliability.is_empty() {
                                                key.push(format!("reliability={rel}"));
                                            }
                                            match rel.as_str() {
                                                "reliable" => options.push(flag("reliable")),
                                                "best-effort" => options.push(flag("best-effort")),
                                                _ => {}
                                            }
                                            if !m.zero_copy.is_empty() {
                                                key.push(format!("zero_copy={zc}"));
                                            }
                                            if zc {
                                                options.push(flag("zero-copy"));
                                            }
                                            if !m.data_type.is_empty() {
                                                key.push(format!("data_type={dt}"));
                                            }
                                            if dt != "default" {
                                                options.push(set("data-type", dt.clone()));
                                            }
                                            if !m.wait.is_empty() {
                                                key.push(format!("wait={wait}"));
                                            }
                                            if wait != "default" {
                                                options.push(set("wait", wait.clone()));
                                            }
                                            if !m.rate.is_empty() {
                                                key.push(format!(
                                                    "rate={}",
                                                    rate.as_deref().unwrap_or("default")
                                                ));
                                            }
                                            if let Some(r) = rate {
                                                options.push(set("rate", r.clone()));
                                            }
                                            if !m.subscribers.is_empty() {
                                                key.push(format!("subscribers={subs}"));
                                            }
                                            if subs != 1 {
                                                options.push(set("subscribers", subs.to_string()));
                                            }
                                            // Settings: shared, then per test, then per
                                            // matrix (and its per-test), then per binding;
                                            // later ones replace earlier ones.
                                            let mut eff: BTreeMap<String, toml::Value> =
                                                BTreeMap::new();
                                            let mut layer = |t: &toml::Table| {
                                                for (k, v) in t {
                                                    if k != "latency" && k != "throughput" {
                                                        eff.insert(k.clone(), v.clone());
                                                    }
                                                }
                                            };
                                            layer(settings);
                                            if let Some(toml::Value::Table(t)) =
                                                settings.get(test.as_str())
                                            {
                                                layer(t);
                                            }
                                            layer(&m.settings);
                                            if let Some(toml::Value::Table(t)) =
                                                m.settings.get(test.as_str())
                                            {
                                                layer(t);
                                            }
                                            if let Some(t) = per_binding.get(binding) {
                                                layer(t);
                                            }
                                            for (k, v) in &eff {
                                                setting_options(k, v, &mut options);
                                            }
                                            cells.push(Cell {
                                                key: key.join("/"),
                                                repetition: 1,
                                                digest: fnv1a(&command_line(test, &options)),
                                                options,
                                                test: test.clone(),
                                                binding: binding.clone(),
                                                matrix: at.to_string(),
                                                size,
                                                publisher: None,
                                                hosts: None,
                                            });
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(load_axis::with_load_axis(cells, &m.load))
}

fn transports_for(
    at: &str,
    v: Option<&toml::Value>,
    binding: &str,
) -> std::result::Result<Vec<String>, String> {
    let list = |v: &toml::Value, at: String| -> std::result::Result<Vec<String>, String> {
        match v {
            toml::Value::Array(a) if !a.is_empty() => a
                .iter()
                .map(|x| match x {
                    toml::Value::String(s) => Ok(s.clone()),
                    other => Err(format!("{at}: {other} is not a transport name")),
                })
                .collect(),
            toml::Value::String(s) => Ok(vec![s.clone()]),
            _ => Err(format!("{at}: expected a list of transport names")),
        }
    };
    match v {
        None => Ok(vec!["default".into()]),
        Some(toml::Value::Table(t)) => match t.get(binding) {
            Some(x) => list(x, format!("{at}.transports.{binding}")),
            None => Ok(vec!["default".into()]),
        },
        Some(x) => list(x, format!("{at}.transports")),
    }
}

/// Where one value of a host axis puts a cell: what its key, its
/// arguments and its publisher host get.
struct Placement {
    key: String,
    options: Vec<(String, Option<String>)>,
    publisher: Option<PublisherHost>,
    /// The host's name, and whether it takes the publisher (else the
    /// subscribers).
    host: (String, bool),
}

/// The cells once per placement (unchanged when an axis has none); the
/// digest covers the arguments and the publisher's host.
fn place(cells: Vec<Cell>, placements: &[Placement]) -> Vec<Cell> {
    if placements.is_empty() {
        return cells;
    }
    let mut out = Vec::with_capacity(cells.len() * placements.len());
    for p in placements {
        for c in &cells {
            let mut options = c.options.clone();
            options.extend(p.options.iter().cloned());
            let publisher = p.publisher.clone().or_else(|| c.publisher.clone());
            let mut text = command_line(&c.test, &options);
            if let Some(h) = &publisher {
                text = format!("{text}\u{1f}{}", h.connect);
            }
            let mut hosts = c.hosts.clone().unwrap_or_else(|| RunHosts {
                publisher: "local".into(),
                subscriber: "local".into(),
            });
            match &p.host {
                (name, true) => hosts.publisher = name.clone(),
                (name, false) => hosts.subscriber = name.clone(),
            }
            out.push(Cell {
                key: format!("{}/{}", c.key, p.key),
                digest: fnv1a(&text),
                options,
                publisher,
                hosts: Some(hosts),
                ..c.clone()
            });
        }
    }
    out
}

/// The `hosts` axis: `host=NAME` in the key, the host's `--connect` in the
/// arguments.
fn subscriber_placements(
    at: &str,
    hosts: &[String],
    inventory: &BTreeMap<String, RawHost>,
) -> std::result::Result<Vec<Placement>, String> {
    hosts
        .iter()
        .map(|name| {
            let options = match (name.as_str(), inventory.get(name)) {
                ("local", None) => Vec::new(),
                (_, Some(h)) => h.options(name)?,
                (_, None) => {
                    return Err(format!(
                        "{at}.hosts: '{name}' is not in the inventory (add [hosts.{name}] with connect = ..., or use \"local\")"
                    ));
                }
            };
            Ok(Placement {
                key: format!("host={name}"),
                options,
                publisher: None,
                host: (name.clone(), false),
            })
        })
        .collect()
}

/// The `publisher_hosts` axis: `pub=NAME` in the key, the host in
/// [`Cell::publisher`].
fn publisher_placements(
    at: &str,
    hosts: &[String],
    inventory: &BTreeMap<String, RawHost>,
) -> std::result::Result<Vec<Placement>, String> {
    hosts
        .iter()
        .map(|name| {
            let publisher = match (name.as_str(), inventory.get(name)) {
                ("local", None) => None,
                (_, Some(h)) if h.connect.starts_with("ssh://") => Some(PublisherHost {
                    name: name.clone(),
                    connect: h.connect.clone(),
                    remote_path: h.remote_path.clone(),
                }),
                (_, Some(_)) => {
                    return Err(format!(
                        "{at}.publisher_hosts: '{name}' is reached by address; a publisher host is started over SSH (connect = \"ssh://...\")"
                    ));
                }
                (_, None) => {
                    return Err(format!(
                        "{at}.publisher_hosts: '{name}' is not in the inventory (add [hosts.{name}] with connect = \"ssh://...\", or use \"local\")"
                    ));
                }
            };
            Ok(Placement {
                key: format!("pub={name}"),
                options: Vec::new(),
                publisher,
                host: (name.clone(), true),
            })
        })
        .collect()
}

/// The text a cell's digest covers: its command line, arguments joined
/// by U+001F (the digests of sweeps stored before options were kept).
fn command_line(test: &str, options: &[(String, Option<String>)]) -> String {
    argv(test, options).join("\u{1f}")
}

/// FNV-1a 64-bit hash as 16 hex digits (stable across builds and hosts).
fn fnv1a(s: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUICK: &str = r#"
name = "t"
repetitions = 2
[matrix]
bindings = ["udp", "tcp"]
tests = ["latency", "throughput"]
sizes = [64, "1KiB"]
reliability = ["default"]
[settings]
duration = "1s"
check = true
opt = ["a=1", "b=2"]
[settings.throughput]
latency_every = 10
[binding.tcp]
socket_buffer = "1MiB"
"#;

    #[test]
    fn expands_matrix_repetition_major() {
        let s = parse(QUICK, "x").unwrap();
        assert_eq!(s.name, "t");
        assert_eq!(s.cells.len(), 2 * 2 * 2 * 2);
        assert!(s.cells[..8].iter().all(|c| c.repetition == 1));
        assert!(s.cells[8..].iter().all(|c| c.repetition == 2));
        assert_eq!(s.cells[0].key, s.cells[8].key);
        let c = &s.cells[0];
        assert_eq!(
            c.key,
            "latency/udp/transport=default/size=64/reliability=default"
        );
        assert_eq!(
            c.args(),
            [
                "latency",
                "--binding",
                "udp",
                "--size",
                "64",
                "--check",
                "--duration",
                "1s",
                "--opt",
                "a=1",
                "--opt",
                "b=2"
            ]
        );
        let tp_tcp = s
            .cells
            .iter()
            .find(|c| c.test == "throughput" && c.binding == "tcp" && c.size == 1024)
            .unwrap();
        assert!(
            tp_tcp
                .args()
                .windows(2)
                .any(|w| w == ["--latency-every", "10"])
        );
        assert!(
            tp_tcp
                .args()
                .windows(2)
                .any(|w| w == ["--socket-buffer", "1MiB"])
        );
        // Keys are unique per repetition and digests differ between cells.
        let keys: std::collections::HashSet<_> =
            s.cells.iter().map(|c| (&c.key, c.repetition)).collect();
        assert_eq!(keys.len(), s.cells.len());
    }

    #[test]
    fn settings_pair_names_and_values() {
        let s = parse(
            "[matrix]\nbindings = [\"udp\"]\nsizes = [64]\nreliability = [\"best-effort\"]\n[settings]\nduration = \"2s\"\nopts = [\"a=1\", \"b=2\"]",
            "t",
        )
        .unwrap();
        let c = &s.cells[0];
        let pairs: Vec<(String, Option<String>)> = c.settings();
        let want: Vec<(String, Option<String>)> = [
            ("binding", Some("udp")),
            ("size", Some("64")),
            ("best-effort", None),
            ("duration", Some("2s")),
            ("opt", Some("a=1")),
            ("opt", Some("b=2")),
        ]
        .iter()
        .map(|(n, v)| (n.to_string(), v.map(String::from)))
        .collect();
        assert_eq!(pairs, want);
    }

    #[test]
    fn axes_become_flags() {
        let s = parse(
            r#"
[matrix]
bindings = ["cyclonedds"]
sizes = [64]
transports = { cyclonedds = ["udp", "shm"] }
reliability = ["reliable", "best-effort"]
zero_copy = [false, true]
data_type = ["flat"]
wait = ["busy"]
rate = [1000, "default"]
subscribers = [2]
"#,
            "axes",
        )
        .unwrap();
        assert_eq!(s.name, "axes");
        assert_eq!(s.cells.len(), 2 * 2 * 2 * 2);
        let c = &s.cells[0];
        assert_eq!(
            c.args(),
            [
                "latency",
                "--binding",
                "cyclonedds",
                "--transport",
                "udp",
                "--size",
                "64",
                "--reliable",
                "--data-type",
                "flat",
                "--wait",
                "busy",
                "--rate",
                "1000",
                "--subscribers",
                "2"
            ]
        );
        assert!(c.key.contains("zero_copy=false") && c.key.contains("rate=1000"));
    }

    /// A rate axis takes the rates the command line's `--rate` takes.
    #[test]
    fn rates_as_the_command_line_writes_them() {
        let s = parse(
            "[matrix]\nbindings = [\"udp\"]\nsizes = [64]\nrate = [100, \"1k\", \"max\"]",
            "r",
        )
        .unwrap();
        let rates: Vec<&str> = s
            .cells
            .iter()
            .map(|c| {
                c.options
                    .iter()
                    .find(|(n, _)| n == "rate")
                    .and_then(|(_, v)| v.as_deref())
                    .unwrap()
            })
            .collect();
        assert_eq!(rates, ["100", "1k", "max"]);
        assert!(s.cells[2].key.ends_with("rate=max"), "{}", s.cells[2].key);
        let e = parse(
            "[matrix]\nbindings = [\"udp\"]\nsizes = [64]\nrate = [\"fast\"]",
            "r",
        )
        .unwrap_err();
        assert_eq!(
            e,
            "matrix.rate: 'fast' is not a rate (give samples per second like 100, 2.5k or 1M, or max for no limit)"
        );
    }

    #[test]
    fn errors_name_the_key() {
        let e = |t: &str| parse(t, "x").unwrap_err();
        assert!(e("[matrix]\nbindings=[]\nsizes=[64]").starts_with("matrix.bindings"));
        assert!(e("[matrix]\nbindings=['udp']\nsizes=['8XB']").starts_with("matrix.sizes"));
        assert!(
            e("[matrix]\nbindings=['udp']\nsizes=[64]\ntests=['ping']").starts_with("matrix.tests")
        );
        assert!(
            e("[matrix]\nbindings=['udp']\nsizes=[64]\n[settings]\nsize=64")
                .starts_with("settings.size")
        );
        assert!(
            e("repetitions=0\n[matrix]\nbindings=['udp']\nsizes=[64]").starts_with("repetitions")
        );
        assert!(e("[matrix]\nbindings=['udp']\nsizes=[64]\ncolour=1").contains("colour"));
        assert!(!e("[matrix\n").contains('\n'));
    }

    #[test]
    fn overlapping_matrices_are_refused() {
        let t =
            "[[matrix]]\nbindings=['udp']\nsizes=[64]\n[[matrix]]\nbindings=['udp']\nsizes=[64]";
        assert!(parse(t, "x").unwrap_err().contains("appears twice"));
        let t = "[[matrix]]\nname='a'\nbindings=['udp']\nsizes=[64]\n[[matrix]]\nname='b'\nbindings=['udp']\nsizes=[64]";
        assert_eq!(parse(t, "x").unwrap().cells.len(), 2);
    }

    /// Each cell names its matrix table as errors about it name it.
    #[test]
    fn cells_name_their_matrix() {
        let one = parse("[matrix]\nbindings=['udp']\nsizes=[64]", "x").unwrap();
        assert_eq!(one.cells[0].matrix, "matrix");
        let t = "[[matrix]]\nname='a'\nbindings=['udp']\nsizes=[64]\n[[matrix]]\nname='b'\nbindings=['tcp']\nsizes=[64]";
        let two = parse(t, "x").unwrap();
        let m: Vec<(&str, &str)> = two
            .cells
            .iter()
            .map(|c| (c.binding.as_str(), c.matrix.as_str()))
            .collect();
        assert_eq!(m, [("udp", "matrix[0]"), ("tcp", "matrix[1]")]);
    }
}
