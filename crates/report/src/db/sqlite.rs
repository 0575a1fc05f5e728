//! The SQLite engine of the results store: one file, opened never through
//! a symbolic link, its schema made and migrated forward when opened.

use super::backend::{Engine, Exec, Kind, Value};
use super::schema;
use crate::error::{ReportError, Result};
use rusqlite::Connection;
use std::path::Path;

/// An open SQLite store.
pub struct Sqlite {
    pub(super) conn: Connection,
    name: String,
}

fn db_err(name: &str) -> impl Fn(rusqlite::Error) -> ReportError + '_ {
    move |e| ReportError::Db {
        store: name.to_string(),
        source: Box::new(e),
    }
}

/// Refuses a database path that is a symbolic link, and creates the file
/// when there is none (`O_CREAT|O_EXCL`, which follows no link; mode 0644
/// as SQLite would), so that a link planted at its name is never followed.
fn create_new(path: &Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let io = |e| ReportError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(ReportError::DbSymlink(path.to_path_buf()));
        }
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(path);
    match created {
        Ok(_) => Ok(()),
        // Someone made it since: a link is refused, a file taken as it is.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            match std::fs::symlink_metadata(path) {
                Ok(m) if m.file_type().is_symlink() => {
                    Err(ReportError::DbSymlink(path.to_path_buf()))
                }
                _ => Ok(()),
            }
        }
        Err(e) => Err(io(e)),
    }
}

/// Adds a column of [`schema::COLUMNS`] that the store lacks, filled from
/// what each stored row holds.
fn add_column(conn: &Connection, c: &schema::Column) -> rusqlite::Result<()> {
    let has: i64 = conn.query_row(
        "SELECT COUNT(*) FROM pragma_table_info(?1) WHERE name = ?2",
        [c.table, c.name],
        |r| r.get(0),
    )?;
    if has == 0 {
        conn.execute_batch(&format!(
            "ALTER TABLE {t} ADD COLUMN {n} {k};
             UPDATE {t} SET {n} = {f};",
            t = c.table,
            n = c.name,
            k = c.sqlite_type,
            f = c.sqlite_fill
        ))?;
    }
    Ok(())
}

impl Sqlite {
    /// Opens (creating it and its directory if needed) the store at `path`.
    /// A `path` that is a symbolic link is refused; a new database file is
    /// created exclusively, never through a link, before SQLite opens it
    /// (which follows no link either: `SQLITE_OPEN_NOFOLLOW`; its journals
    /// are opened `O_NOFOLLOW`).
    pub fn open(path: &Path) -> Result<Sqlite> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| ReportError::Io {
                path: dir.to_path_buf(),
                source: e,
            })?;
        }
        create_new(path)?;
        let name = path.display().to_string();
        let err = db_err(&name);
        let flags = rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(path, flags).map_err(&err)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(&err)?;
        let migrate = || -> rusqlite::Result<()> {
            conn.execute_batch("BEGIN IMMEDIATE")?;
            conn.execute_batch(schema::SQLITE)?;
            for c in &schema::COLUMNS {
                add_column(&conn, c)?;
            }
            conn.execute_batch(schema::INDEXES)?;
            conn.execute_batch("DELETE FROM schema_version")?;
            conn.execute("INSERT INTO schema_version VALUES (?1)", [schema::VERSION])?;
            conn.pragma_update(None, "user_version", schema::VERSION)?;
            conn.execute_batch("COMMIT")
        };
        if let Err(e) = migrate() {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(err(e));
        }
        drop(err);
        Ok(Sqlite { conn, name })
    }
}

fn to_sql(v: &Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as S;
    match v {
        Value::Int(Some(i)) => S::Integer(*i),
        Value::Real(Some(r)) => S::Real(*r),
        Value::Text(Some(t)) => S::Text(t.clone()),
        Value::Bool(b) => S::Integer(i64::from(*b)),
        Value::Int(None) | Value::Real(None) | Value::Text(None) => S::Null,
    }
}

fn execute(conn: &Connection, name: &str, sql: &str, params: &[Value]) -> Result<u64> {
    let p: Vec<_> = params.iter().map(to_sql).collect();
    conn.execute(sql, rusqlite::params_from_iter(p))
        .map(|n| n as u64)
        .map_err(db_err(name))
}

fn query(
    conn: &Connection,
    name: &str,
    sql: &str,
    params: &[Value],
    kinds: &[Kind],
) -> Result<Vec<Vec<Value>>> {
    let err = db_err(name);
    let p: Vec<_> = params.iter().map(to_sql).collect();
    let mut stmt = conn.prepare(sql).map_err(&err)?;
    let rows = stmt
        .query_map(rusqlite::params_from_iter(p), |row| {
            kinds
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    Ok(match k {
                        Kind::Int => Value::Int(row.get(i)?),
                        Kind::Text => Value::Text(row.get(i)?),
                    })
                })
                .collect()
        })
        .map_err(&err)?;
    rows.collect::<rusqlite::Result<_>>().map_err(&err)
}

impl Exec for Sqlite {
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        execute(&self.conn, &self.name, sql, params)
    }

    fn query(&mut self, sql: &str, params: &[Value], kinds: &[Kind]) -> Result<Vec<Vec<Value>>> {
        query(&self.conn, &self.name, sql, params, kinds)
    }
}

/// Statements inside a transaction.
struct Tx<'a> {
    tx: &'a rusqlite::Transaction<'a>,
    name: &'a str,
}

impl Exec for Tx<'_> {
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        execute(self.tx, self.name, sql, params)
    }

    fn query(&mut self, sql: &str, params: &[Value], kinds: &[Kind]) -> Result<Vec<Vec<Value>>> {
        query(self.tx, self.name, sql, params, kinds)
    }
}

impl Engine for Sqlite {
    fn transaction(&mut self, work: &mut dyn FnMut(&mut dyn Exec) -> Result<()>) -> Result<()> {
        // Immediate: the write lock taken first, so that writers at once
        // wait their turn (busy timeout) instead of failing on upgrade.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(db_err(&self.name))?;
        work(&mut Tx {
            tx: &tx,
            name: &self.name,
        })?;
        tx.commit().map_err(db_err(&self.name))
    }
}

/// Whether `path` is a SQLite database file (its header's magic string).
pub fn is_sqlite_file(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| &magic == b"SQLite format 3\0")
}

/// A consistent copy of the SQLite store at `from` in the new file `into`
/// (`VACUUM INTO`, read-only on `from`: a store being written is copied as
/// of one transaction, and is never changed nor migrated by being read).
pub fn snapshot(from: &Path, into: &Path) -> Result<()> {
    let name = from.display().to_string();
    let err = db_err(&name);
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
        | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW
        | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(from, flags).map_err(&err)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(&err)?;
    conn.execute("VACUUM INTO ?1", [into.to_string_lossy()])
        .map(drop)
        .map_err(&err)
}
