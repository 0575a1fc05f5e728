//! The one table of test options: each option of `pubsubperf latency` and
//! `throughput` is one [`TestOption`] in [`OPTIONS`], with its name, value
//! grammar, default, help, kind and the setter that stores its value in a
//! [`TestRequest`]. The command line's arguments (the binary builds its clap
//! arguments from the table), [`TestRequest::set`] (sweep files, the front
//! ends' mappings), the completions, the man page and the option reference in
//! docs/options.md all come from here.
//!
//! Adding an option: an entry in `table.rs`, a field in [`TestRequest`] for
//! its value, and the code that uses the value (docs/architecture.md).

use crate::plan::{TestRequest, UsageError};
use std::fmt::Display;
use std::str::FromStr;

pub mod reference;
mod table;
#[cfg(test)]
mod tests;

pub use table::OPTIONS;

/// What an option is about: the reference in docs/options.md groups by it,
/// and the DDS QoS knobs are those a binding maps to its vendor's QoS (or
/// refuses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// What runs: binding, sizes, rates, counts, lengths, endpoints.
    Test,
    /// How samples are delivered and received.
    Delivery,
    /// A DDS QoS setting a binding maps to its vendor's (or refuses).
    Qos,
    /// Where and how the two sides run: cores, priority, memory, load.
    Placement,
    /// What is recorded beside the figures, and how they are timed.
    Measurement,
    /// Subscribers and publishers on other hosts.
    Hosts,
    /// Where the results go.
    Output,
}

impl Kind {
    /// Every kind, in the reference's order.
    pub const ALL: [Kind; 7] = [
        Kind::Test,
        Kind::Delivery,
        Kind::Qos,
        Kind::Placement,
        Kind::Measurement,
        Kind::Hosts,
        Kind::Output,
    ];

    /// Its heading in the reference.
    pub fn title(self) -> &'static str {
        match self {
            Kind::Test => "What runs",
            Kind::Delivery => "Delivery",
            Kind::Qos => "DDS QoS",
            Kind::Placement => "Placement",
            Kind::Measurement => "Measurement",
            Kind::Hosts => "Other hosts",
            Kind::Output => "Output",
        }
    }
}

/// The values of an option with a fixed list of them (`--wait busy`).
pub trait ChoiceList: Sync {
    /// Each value's name and help, in order.
    fn names(&self) -> Vec<(&'static str, &'static str)>;
}

/// A fixed list of values: name, the value it stands for, help.
pub struct Choices<T: 'static>(pub &'static [(&'static str, T, &'static str)]);

impl<T: Sync> ChoiceList for Choices<T> {
    fn names(&self) -> Vec<(&'static str, &'static str)> {
        self.0
            .iter()
            .map(|(name, _, help)| (*name, *help))
            .collect()
    }
}

/// What an option takes on the command line.
#[derive(Clone, Copy)]
pub enum Grammar {
    /// Nothing: `--reliable`.
    Flag,
    /// Nothing (on), or `true`/`false`: `--zero-copy`, `--zero-copy false`.
    Switch,
    /// One value, named for the help: `--size SIZES`.
    Value(&'static str),
    /// A file on this host (completed as one): `--json FILE`.
    Path(&'static str),
    /// One value out of a list: `--wait busy`.
    Choice(&'static str, &'static dyn ChoiceList),
    /// One value each time, and it may be given again: `--opt K=V`.
    Repeated(&'static str),
}

impl Grammar {
    /// The value's name in the help (`SIZES`), None for a flag.
    pub fn value_name(self) -> Option<&'static str> {
        match self {
            Grammar::Flag => None,
            Grammar::Switch => Some("BOOL"),
            Grammar::Value(n) | Grammar::Path(n) | Grammar::Choice(n, _) | Grammar::Repeated(n) => {
                Some(n)
            }
        }
    }
}

/// One option's value as given: its name (for errors) and its text (None
/// for a flag given bare).
#[derive(Debug, Clone, Copy)]
pub struct Given<'a> {
    pub name: &'a str,
    pub value: Option<&'a str>,
}

impl<'a> Given<'a> {
    /// The value as text.
    pub fn text(self) -> Result<String, UsageError> {
        self.needed().map(String::from)
    }

    /// The value parsed as a `T`; the error names the option and why.
    pub fn parse<T: FromStr>(self) -> Result<T, UsageError>
    where
        T::Err: Display,
    {
        let v = self.needed()?;
        v.parse()
            .map_err(|e| UsageError(format!("--{} '{v}': {e}", self.name)))
    }

    /// A flag: given bare.
    pub fn flag(self) -> Result<bool, UsageError> {
        match self.value {
            None => Ok(true),
            Some(v) => Err(UsageError(format!("--{} '{v}': takes no value", self.name))),
        }
    }

    /// A flag that may also be turned off: bare or `true`, or `false`.
    pub fn switch(self) -> Result<bool, UsageError> {
        match self.value {
            None | Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(v) => Err(UsageError(format!(
                "--{} '{v}': expected true or false",
                self.name
            ))),
        }
    }

    /// The value out of `choices`.
    pub fn choose<T: Copy>(self, choices: &Choices<T>) -> Result<T, UsageError> {
        let v = self.needed()?;
        choices
            .0
            .iter()
            .find(|(name, _, _)| *name == v)
            .map(|(_, value, _)| *value)
            .ok_or_else(|| {
                let names: Vec<&str> = choices.0.iter().map(|(n, _, _)| *n).collect();
                UsageError(format!(
                    "--{} '{v}': expected one of {}",
                    self.name,
                    names.join(", ")
                ))
            })
    }

    fn needed(self) -> Result<&'a str, UsageError> {
        self.value
            .ok_or_else(|| UsageError(format!("--{}: needs a value", self.name)))
    }
}

/// Stores an option's value in a request.
pub type Setter = fn(&mut TestRequest, Given<'_>) -> Result<(), UsageError>;

/// One option of `latency` and `throughput`.
#[derive(Clone, Copy)]
pub struct TestOption {
    /// Its long name, without the dashes.
    pub name: &'static str,
    /// Its one-letter name, if any.
    pub short: Option<char>,
    /// Other long names it answers to.
    pub aliases: &'static [&'static str],
    pub grammar: Grammar,
    /// The value it has when not given, as it would be given; None: unset
    /// (the help says what then).
    pub default: Option<&'static str>,
    pub kind: Kind,
    /// One paragraph, no final period: `-h`'s.
    pub help: &'static str,
    /// More, for `--help`, the man page and the reference (empty: none).
    pub details: &'static str,
    /// Options it may not be given with.
    pub conflicts: &'static [&'static str],
    /// An option it needs.
    pub requires: Option<&'static str>,
    set: Setter,
}

impl TestOption {
    /// An option of `kind`, unset by default.
    pub const fn new(
        name: &'static str,
        grammar: Grammar,
        kind: Kind,
        help: &'static str,
        set: Setter,
    ) -> TestOption {
        TestOption {
            name,
            short: None,
            aliases: &[],
            grammar,
            default: None,
            kind,
            help,
            details: "",
            conflicts: &[],
            requires: None,
            set,
        }
    }

    pub const fn short(mut self, c: char) -> Self {
        self.short = Some(c);
        self
    }

    pub const fn alias(mut self, names: &'static [&'static str]) -> Self {
        self.aliases = names;
        self
    }

    pub const fn details(mut self, text: &'static str) -> Self {
        self.details = text;
        self
    }

    pub const fn default(mut self, value: &'static str) -> Self {
        self.default = Some(value);
        self
    }

    pub const fn conflicts(mut self, names: &'static [&'static str]) -> Self {
        self.conflicts = names;
        self
    }

    pub const fn requires(mut self, name: &'static str) -> Self {
        self.requires = Some(name);
        self
    }

    /// Stores `value` (None: a flag given bare) in `r`; an error names this
    /// option.
    pub fn apply(&self, r: &mut TestRequest, value: Option<&str>) -> Result<(), UsageError> {
        (self.set)(
            r,
            Given {
                name: self.name,
                value,
            },
        )
    }

    /// Whether `name` is its long name or an alias.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
}

/// The option named `name` (or one of its aliases).
pub fn find(name: &str) -> Option<&'static TestOption> {
    OPTIONS.iter().find(|o| o.answers_to(name))
}
