//! `latency` and `throughput`'s options as clap arguments, built from the
//! runner's option table ([`pubsubperf_runner::options::OPTIONS`]): each
//! option's name, letter, value, default, help and constraints come from
//! there, and what was given becomes a [`TestRequest`] through the table's
//! setters, as a sweep cell's settings do.

use crate::plan::TestRequest;
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches, ValueHint};
use pubsubperf_runner::options::{Grammar, OPTIONS, TestOption};

/// A test's options as given on the command line.
#[derive(Debug, Clone, Default)]
pub struct TestOptions(pub TestRequest);

/// The clap argument of `o`.
fn argument(o: &TestOption) -> Arg {
    let mut a = Arg::new(o.name)
        .long(o.name)
        .help(o.help)
        .aliases(o.aliases.iter().copied());
    if !o.details.is_empty() {
        a = a.long_help(format!("{}.\n\n{}.", o.help, o.details));
    }
    if let Some(c) = o.short {
        a = a.short(c);
    }
    if let Some(n) = o.grammar.value_name() {
        a = a.value_name(n);
    }
    a = match o.grammar {
        Grammar::Flag => a.action(ArgAction::SetTrue),
        Grammar::Switch => a
            .action(ArgAction::Set)
            .num_args(0..=1)
            .default_missing_value("true")
            .value_parser(PossibleValuesParser::new(["true", "false"])),
        Grammar::Value(_) => a.action(ArgAction::Set),
        Grammar::Path(_) => a.action(ArgAction::Set).value_hint(ValueHint::AnyPath),
        Grammar::Choice(_, choices) => {
            a.action(ArgAction::Set)
                .value_parser(PossibleValuesParser::new(
                    choices
                        .names()
                        .into_iter()
                        .map(|(name, help)| PossibleValue::new(name).help(help)),
                ))
        }
        Grammar::Repeated(_) => a.action(ArgAction::Append),
    };
    if let Some(d) = o.default {
        a = a.default_value(d);
    }
    for c in o.conflicts {
        a = a.conflicts_with(*c);
    }
    if let Some(r) = o.requires {
        a = a.requires(r);
    }
    a
}

impl Args for TestOptions {
    fn augment_args(cmd: Command) -> Command {
        OPTIONS.iter().fold(cmd, |cmd, o| cmd.arg(argument(o)))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for TestOptions {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut r = TestOptions::default();
        r.update_from_arg_matches(m)?;
        Ok(r)
    }

    /// Sets each option given on the command line (a default stays the
    /// request's own, which is the table's).
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        let invalid = |e: crate::plan::UsageError| {
            clap::Error::raw(clap::error::ErrorKind::ValueValidation, e)
        };
        for o in OPTIONS {
            if m.value_source(o.name) != Some(ValueSource::CommandLine) {
                continue;
            }
            match o.grammar {
                Grammar::Flag => o.apply(&mut self.0, None).map_err(invalid)?,
                _ => {
                    let values = m.get_many::<String>(o.name).into_iter().flatten();
                    for v in values {
                        o.apply(&mut self.0, Some(v)).map_err(invalid)?;
                    }
                }
            }
        }
        Ok(())
    }
}
