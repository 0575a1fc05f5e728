//! The PostgreSQL engine of the results store: a server many hosts write
//! to at once. Connecting follows libpq's conventions (see
//! [`super::pg_connect`]); the schema is made and migrated forward under
//! an advisory lock, so that writers opening a new store at once make it
//! once.

use super::backend::{Engine, Exec, Kind, Value};
use super::pg_connect::{self, SslMode, Target};
use super::schema;
use crate::error::{ReportError, Result};
use postgres::error::SqlState;
use postgres::types::ToSql;

/// An open PostgreSQL store.
pub struct Postgres {
    client: postgres::Client,
    name: String,
}

/// Any number, the same for every pubsubperf: the advisory lock its
/// writers take to make or migrate the schema.
const SCHEMA_LOCK: i64 = 0x7075_6273_7562;

/// A failure as one line, naming the store.
fn failed(name: &str, e: &postgres::Error) -> ReportError {
    ReportError::Store {
        store: name.to_string(),
        message: one_line(e),
    }
}

fn one_line(e: &postgres::Error) -> String {
    let m = match e.as_db_error() {
        Some(d) => format!("{}: {}", d.severity(), d.message()),
        None => {
            let mut m = e.to_string();
            let mut cause = std::error::Error::source(e);
            while let Some(c) = cause {
                let text = c.to_string();
                if !m.contains(&text) {
                    m = format!("{m}: {text}");
                }
                cause = c.source();
            }
            m
        }
    };
    m.replace(['\n', '\r'], " ")
}

/// A connection failure: the user's doing (password, user, database, TLS
/// the server does not offer) is bad input; the server's absence is not.
fn connect_error(t: &Target, e: &postgres::Error) -> ReportError {
    let refused = |message: String| ReportError::StoreRefused {
        store: t.name.clone(),
        message,
    };
    let code = e.code();
    if code == Some(&SqlState::INVALID_PASSWORD)
        || code == Some(&SqlState::INVALID_AUTHORIZATION_SPECIFICATION)
    {
        let from = if std::env::var_os("PGPASSWORD").is_some_and(|v| !v.is_empty()) {
            "the password of PGPASSWORD"
        } else if t.password.is_some() {
            "the password of the password file"
        } else {
            "no password"
        };
        return refused(format!(
            "the server refused {from}: {} (set PGPASSWORD or ~/.pgpass)",
            one_line(e)
        ));
    }
    if code == Some(&SqlState::INVALID_CATALOG_NAME) {
        return refused(format!("{} (create it: createdb)", one_line(e)));
    }
    let m = one_line(e);
    if m.contains("password missing") {
        let note = t
            .passfile_note
            .as_deref()
            .map_or(String::new(), |n| format!("; {n}"));
        return refused(format!(
            "the server asks for a password: set PGPASSWORD or add a line to ~/.pgpass{note}"
        ));
    }
    if m.contains("TLS") || m.contains("SSL") || m.contains("ssl") {
        return refused(format!("{m} (sslmode={:?})", t.ssl));
    }
    ReportError::Store {
        store: t.name.clone(),
        message: format!("cannot connect: {m}"),
    }
}

/// The TLS connector for `mode`: the certificate checked in the verify
/// modes (and in `require` when a root certificate is at hand, as libpq).
fn tls(t: &Target) -> Result<postgres_openssl::MakeTlsConnector> {
    use openssl::ssl::{SslConnector, SslMethod, SslVerifyMode};
    let bad = |m: String| ReportError::StoreRefused {
        store: t.name.clone(),
        message: m,
    };
    let mut b =
        SslConnector::builder(SslMethod::tls_client()).map_err(|e| bad(format!("TLS: {e}")))?;
    let root = std::env::var_os("PGSSLROOTCERT")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| {
                std::path::Path::new(&h)
                    .join(".postgresql")
                    .join("root.crt")
            })
        })
        .filter(|p| p.is_file());
    let verify = match t.ssl {
        SslMode::VerifyCa | SslMode::VerifyFull => true,
        SslMode::Require => root.is_some(),
        SslMode::Disable | SslMode::Prefer => false,
    };
    if let Some(r) = &root {
        b.set_ca_file(r)
            .map_err(|e| bad(format!("root certificate {}: {e}", r.display())))?;
    }
    b.set_verify(if verify {
        SslVerifyMode::PEER
    } else {
        SslVerifyMode::NONE
    });
    let mut c = postgres_openssl::MakeTlsConnector::new(b.build());
    let full = t.ssl == SslMode::VerifyFull;
    c.set_callback(move |config, _| {
        config.set_verify_hostname(full);
        Ok(())
    });
    Ok(c)
}

impl Postgres {
    /// Connects to the store at `url` and makes or migrates its schema.
    pub fn open(url: &str) -> Result<Postgres> {
        let t = pg_connect::target(url)?;
        let mut config: postgres::Config =
            t.url
                .parse()
                .map_err(|e: postgres::Error| ReportError::StoreUrl {
                    url: url.to_string(),
                    message: one_line(&e),
                })?;
        if config.get_user().is_none()
            && let Some(u) = std::env::var("PGUSER")
                .ok()
                .or_else(|| std::env::var("USER").ok())
        {
            config.user(&u);
        }
        if config.get_hosts().is_empty() {
            config.host_path("/var/run/postgresql");
        }
        if let Some(p) = &t.password {
            config.password(p);
        }
        config.ssl_mode(match t.ssl {
            SslMode::Disable => postgres::config::SslMode::Disable,
            SslMode::Prefer => postgres::config::SslMode::Prefer,
            _ => postgres::config::SslMode::Require,
        });
        config.connect_timeout(std::time::Duration::from_secs(10));
        config.application_name("pubsubperf");
        let client = config
            .connect(tls(&t)?)
            .map_err(|e| connect_error(&t, &e))?;
        let mut store = Postgres {
            client,
            name: t.name,
        };
        store.migrate()?;
        Ok(store)
    }

    /// Makes the tables, adds the columns of later versions (filled from
    /// what the rows hold) and records the version, in one transaction
    /// under the schema's advisory lock.
    fn migrate(&mut self) -> Result<()> {
        let name = self.name.clone();
        let err = |e: postgres::Error| failed(&name, &e);
        let mut tx = self.client.transaction().map_err(err)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
            .map_err(err)?;
        tx.batch_execute(schema::POSTGRES).map_err(err)?;
        for c in &schema::COLUMNS {
            let has = tx
                .query_one(
                    "SELECT COUNT(*) FROM information_schema.columns
                     WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2",
                    &[&c.table, &c.name],
                )
                .map_err(err)?
                .get::<_, i64>(0);
            if has == 0 {
                tx.batch_execute(&format!(
                    "ALTER TABLE {t} ADD COLUMN {n} {k};
                     UPDATE {t} SET {n} = {f};",
                    t = c.table,
                    n = c.name,
                    k = c.pg_type,
                    f = c.pg_fill
                ))
                .map_err(err)?;
            }
        }
        tx.batch_execute(schema::INDEXES).map_err(err)?;
        tx.execute("DELETE FROM schema_version", &[]).map_err(err)?;
        tx.execute(
            "INSERT INTO schema_version VALUES ($1)",
            &[&schema::VERSION],
        )
        .map_err(err)?;
        tx.commit().map_err(err)
    }
}

/// `?N` parameters as PostgreSQL's `$N` (the store's statements hold no
/// other `?`).
fn dollars(sql: &str) -> String {
    sql.replace('?', "$")
}

fn params(values: &[Value]) -> Vec<Box<dyn ToSql + Sync>> {
    values
        .iter()
        .map(|v| -> Box<dyn ToSql + Sync> {
            match v {
                Value::Int(i) => Box::new(*i),
                Value::Real(r) => Box::new(*r),
                Value::Text(t) => Box::new(t.clone()),
                Value::Bool(b) => Box::new(*b),
            }
        })
        .collect()
}

fn execute(
    c: &mut impl postgres::GenericClient,
    name: &str,
    sql: &str,
    values: &[Value],
) -> Result<u64> {
    let p = params(values);
    let refs: Vec<&(dyn ToSql + Sync)> = p.iter().map(|b| b.as_ref()).collect();
    c.execute(&dollars(sql), &refs)
        .map_err(|e| failed(name, &e))
}

fn query(
    c: &mut impl postgres::GenericClient,
    name: &str,
    sql: &str,
    values: &[Value],
    kinds: &[Kind],
) -> Result<Vec<Vec<Value>>> {
    let p = params(values);
    let refs: Vec<&(dyn ToSql + Sync)> = p.iter().map(|b| b.as_ref()).collect();
    let rows = c
        .query(&dollars(sql), &refs)
        .map_err(|e| failed(name, &e))?;
    rows.iter()
        .map(|row| {
            kinds
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    Ok(match k {
                        Kind::Int => Value::Int(row.try_get(i).map_err(|e| failed(name, &e))?),
                        Kind::Text => Value::Text(row.try_get(i).map_err(|e| failed(name, &e))?),
                    })
                })
                .collect()
        })
        .collect()
}

impl Exec for Postgres {
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        execute(&mut self.client, &self.name, sql, params)
    }

    fn query(&mut self, sql: &str, params: &[Value], kinds: &[Kind]) -> Result<Vec<Vec<Value>>> {
        query(&mut self.client, &self.name, sql, params, kinds)
    }
}

/// Statements inside a transaction.
struct Tx<'a, 'b> {
    tx: &'a mut postgres::Transaction<'b>,
    name: &'a str,
}

impl Exec for Tx<'_, '_> {
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        execute(self.tx, self.name, sql, params)
    }

    fn query(&mut self, sql: &str, params: &[Value], kinds: &[Kind]) -> Result<Vec<Vec<Value>>> {
        query(self.tx, self.name, sql, params, kinds)
    }

    /// A transaction-level advisory lock on the key's 64-bit hash.
    fn lock(&mut self, key: &str) -> Result<()> {
        self.tx
            .execute(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                &[&key],
            )
            .map(drop)
            .map_err(|e| failed(self.name, &e))
    }
}

impl Engine for Postgres {
    fn transaction(&mut self, work: &mut dyn FnMut(&mut dyn Exec) -> Result<()>) -> Result<()> {
        let name = self.name.clone();
        let mut tx = self.client.transaction().map_err(|e| failed(&name, &e))?;
        work(&mut Tx {
            tx: &mut tx,
            name: &name,
        })?;
        tx.commit().map_err(|e| failed(&name, &e))
    }
}
