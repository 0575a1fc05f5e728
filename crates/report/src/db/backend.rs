//! What a results store's engine offers the store (SQLite, PostgreSQL):
//! statements with positional parameters (`?1`, `?2`, ... in the text;
//! an engine that numbers them otherwise rewrites them), typed values and
//! rows, and transactions. The store's logic (what is saved, how it is
//! queried) is written once, over this, in [`super`].

use crate::error::Result;

/// A parameter or a column's value. Nulls are typed: PostgreSQL checks
/// each parameter's type against its column's.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A 64-bit integer (SQLite INTEGER, PostgreSQL BIGINT).
    Int(Option<i64>),
    /// A double (SQLite REAL, PostgreSQL DOUBLE PRECISION).
    Real(Option<f64>),
    /// Text.
    Text(Option<String>),
    /// A truth value (SQLite INTEGER 0/1, PostgreSQL BOOLEAN).
    Bool(bool),
}

/// The type of a column read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// [`Value::Int`].
    Int,
    /// [`Value::Text`].
    Text,
}

impl Value {
    /// The integer, or 0 for a null or another type.
    pub fn int(&self) -> i64 {
        match self {
            Value::Int(Some(i)) => *i,
            _ => 0,
        }
    }

    /// The text, or `None` for a null or another type.
    pub fn text(&self) -> Option<String> {
        match self {
            Value::Text(t) => t.clone(),
            _ => None,
        }
    }
}

/// Statements on a connection or inside a transaction.
pub trait Exec {
    /// Runs a statement; returns the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64>;
    /// Runs a query; each row's columns are read as `kinds` says.
    fn query(&mut self, sql: &str, params: &[Value], kinds: &[Kind]) -> Result<Vec<Vec<Value>>>;
    /// Inside a transaction, waits until no other transaction holds `key`,
    /// and holds it to the commit: writers at once that check, then add,
    /// the same thing take turns. Nothing to do where a transaction
    /// already excludes every other writer (SQLite's immediate ones).
    fn lock(&mut self, _key: &str) -> Result<()> {
        Ok(())
    }
}

/// An open store's engine.
pub trait Engine: Exec {
    /// Runs `work` in one transaction: committed when it returns `Ok`,
    /// rolled back otherwise (and by the engine when the process dies
    /// before the commit).
    fn transaction(&mut self, work: &mut dyn FnMut(&mut dyn Exec) -> Result<()>) -> Result<()>;
}
