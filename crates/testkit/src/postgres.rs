//! A PostgreSQL server of a test's own: Debian's binaries
//! (/usr/lib/postgresql/*/bin, package `postgresql`), a data directory and
//! a unix socket directory in a temporary directory, its own port on
//! 127.0.0.1, TLS with a certificate made for it, and stopped (`pg_ctl
//! stop -m immediate`) when the guard is dropped, a failing test's too.
//! As root the server runs as the `postgres` user (`runuser`), which owns
//! the temporary directory.
//!
//! Who may connect: the superuser `postgres` without a password (over
//! the socket and over TCP), and the role [`PgServer::USER`] with the
//! password [`PgServer::PASSWORD`] over TCP only (scram-sha-256).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A running server; stopped when dropped.
pub struct PgServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

/// The newest `/usr/lib/postgresql/N/bin` with `initdb`, or a panic naming
/// the package.
fn bin_dir() -> PathBuf {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((v, bin))
        })
        .collect();
    found.sort();
    match found.pop() {
        Some((_, b)) => b,
        None => panic!(
            "PostgreSQL's server binaries are missing (no /usr/lib/postgresql/*/bin/initdb): \
             install Debian's package postgresql (scripts/apt-packages.txt)"
        ),
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}

impl PgServer {
    /// The role that logs in with a password.
    pub const USER: &'static str = "lab";
    /// Its password.
    pub const PASSWORD: &'static str = "lab-secret";

    /// Makes and starts a server, with the database `results` owned by
    /// [`PgServer::USER`].
    pub fn start() -> PgServer {
        let bin = bin_dir();
        let as_postgres = unsafe { libc::geteuid() } == 0;
        let dir = tempfile::Builder::new()
            .prefix("pubsubperf-pg")
            .tempdir()
            .expect("a temporary directory");
        let server = PgServer {
            dir,
            bin,
            port: free_port(),
            as_postgres,
        };
        if as_postgres {
            server.must(
                Command::new("chown")
                    .args(["postgres:postgres", server.dir.path().to_str().unwrap()]),
            );
        }
        let data = server.data();
        server.must(server.tool("initdb").args([
            "-D",
            data.to_str().unwrap(),
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-sync",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
        ]));
        // Certificate and key for TLS (the key readable by its owner only).
        let (crt, key) = (data.join("server.crt"), data.join("server.key"));
        server.must(server.as_owner("openssl").args([
            "req",
            "-new",
            "-x509",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-keyout",
            key.to_str().unwrap(),
            "-out",
            crt.to_str().unwrap(),
        ]));
        server.must(
            server
                .as_owner("chmod")
                .args(["0600", key.to_str().unwrap()]),
        );
        let conf = format!(
            "\nport = {}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\n\
             ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n\
             max_connections = 40\nfsync = off\n",
            server.port,
            server.dir.path().display()
        );
        append(&data.join("postgresql.conf"), &conf);
        let hba = "host all postgres 127.0.0.1/32 trust\n\
                   host all all 127.0.0.1/32 scram-sha-256\n\
                   local all all trust\n";
        std::fs::write(data.join("pg_hba.conf"), hba).unwrap();
        server.chown(&data.join("pg_hba.conf"));
        server.pg_ctl_start();
        server.psql(&format!(
            "CREATE ROLE {} LOGIN PASSWORD '{}'",
            Self::USER,
            Self::PASSWORD
        ));
        server.createdb("results");
        server
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A command run as the server's owner.
    fn as_owner(&self, program: &str) -> Command {
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--", program]);
            c
        } else {
            Command::new(program)
        }
    }

    fn tool(&self, name: &str) -> Command {
        self.as_owner(self.bin.join(name).to_str().unwrap())
    }

    fn chown(&self, p: &Path) {
        if self.as_postgres {
            self.must(Command::new("chown").args(["postgres:postgres", p.to_str().unwrap()]));
        }
    }

    fn must(&self, c: &mut Command) -> Output {
        let o = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
        let log = std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default();
        assert!(
            o.status.success(),
            "{c:?}: {}\n{}\nserver log:\n{log}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        o
    }

    fn pg_ctl_start(&self) {
        let log = self.dir.path().join("log");
        self.must(self.tool("pg_ctl").args([
            "-D",
            self.data().to_str().unwrap(),
            "-l",
            log.to_str().unwrap(),
            "-w",
            "-t",
            "60",
            "start",
        ]));
    }

    /// Stops the server (fast shutdown: connections ended).
    pub fn stop(&self) {
        self.must(self.tool("pg_ctl").args([
            "-D",
            self.data().to_str().unwrap(),
            "-m",
            "fast",
            "-w",
            "stop",
        ]));
    }

    /// Starts the server again after [`PgServer::stop`].
    pub fn start_again(&self) {
        self.pg_ctl_start();
    }

    /// The server's TCP port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A URL for `user` on database `db` over TCP, with `extra` query
    /// parameters (e.g. `sslmode=require`), no password.
    pub fn url(&self, user: &str, db: &str, extra: &str) -> String {
        let q = if extra.is_empty() {
            String::new()
        } else {
            format!("?{extra}")
        };
        format!("postgres://{user}@127.0.0.1:{}/{db}{q}", self.port)
    }

    /// Makes a database owned by [`PgServer::USER`].
    pub fn createdb(&self, name: &str) {
        self.psql(&format!("CREATE DATABASE \"{name}\" OWNER {}", Self::USER));
    }

    /// Runs SQL as the superuser on database `postgres`; its output
    /// (unaligned, tuples only).
    pub fn psql(&self, sql: &str) -> String {
        self.psql_on("postgres", sql)
    }

    /// Runs SQL as the superuser on database `db`.
    pub fn psql_on(&self, db: &str, sql: &str) -> String {
        let o = self.must(self.tool("psql").args([
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            self.dir.path().to_str().unwrap(),
            "-p",
            &self.port.to_string(),
            "-U",
            "postgres",
            "-d",
            db,
            "-c",
            sql,
        ]));
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }
}

fn append(p: &Path, text: &str) {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(p)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let _ = self
            .tool("pg_ctl")
            .args([
                "-D",
                self.data().to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ])
            .output();
    }
}
