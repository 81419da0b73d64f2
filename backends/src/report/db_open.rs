//! Opening the results database, the one way each command may:
//!
//! - [`open_read`] for the commands that only read it (`report --db`,
//!   `db list`, `db export`, `site`): SQLite's read-only mode, so nothing
//!   is ever created, upgraded or otherwise written, whatever the file
//!   is. A missing or empty file, another program's SQLite file, or a
//!   version 1, 2 or 3 database (which only `db import` upgrades) is one
//!   error.
//! - [`open_import`] for `db import`: the schema is created only in a new
//!   file or an empty one (no tables, no schema version: a 0-byte file,
//!   or one whose creation was interrupted and rolled back); a version 1,
//!   2 or 3 database is upgraded in place; another program's SQLite file is
//!   refused, not modified.
//!
//! Both refuse a file whose header says WAL mode before SQLite opens it
//! (`not_wal`): SQLite would create `-wal` and `-shm` files beside it,
//! even read-only, and `backends` never makes one.
//!
//! The path must be a regular file (for `db import`, or nothing yet): a
//! device, FIFO, socket or folder is refused before SQLite sees it. A
//! symbolic link is followed, as an `-o` output's is everywhere
//! ([`progress_litmus::io::write_atomically`]): the database is its
//! target, checked the same way.
//!
//! Both check the schema first: exactly the objects this code makes for
//! the file's version, nothing else (`check_schema`), so that no query
//! of a reader runs over a view or a trigger someone else put there.

use crate::report::db_schema::{
    expected, from_v1, objects, without, Object, FACTS_TABLE, SCHEMA, SCHEMA_VERSION, V4_TABLES,
};
use progress_litmus::error::excerpt;
use progress_litmus::io::{kind_of, output_target};
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long an importer (or a reader) waits for another one's transaction.
const BUSY: Duration = Duration::from_secs(120);

/// SQLite's `SQLITE_READONLY_ROLLBACK`: a read-only connection found a hot
/// journal (an interrupted import) it may not roll back.
const READONLY_ROLLBACK: std::ffi::c_int = 8 | (3 << 8);

/// The error of a file SQLite cannot read as a database: its message may
/// quote the file's own schema text, so it is escaped onto one line.
fn bad(path: &Path, e: &rusqlite::Error) -> String {
    if let rusqlite::Error::SqliteFailure(f, _) = e {
        if f.extended_code == READONLY_ROLLBACK {
            return format!(
                "{}: an import into it was interrupted; the next `backends db import --db` on it rolls that back (this command only reads)",
                path.display()
            );
        }
    }
    format!(
        "{}: not a results database: {}",
        path.display(),
        crate::excerpt::message(&e.to_string())
    )
}

/// The error of a database that cannot be read: SQLite's message may
/// quote the file's own schema text (a damaged file's, with its line
/// breaks), so it is escaped onto one line.
pub fn cannot_read(path: &Path, e: &rusqlite::Error) -> String {
    format!(
        "{}: cannot read: {}",
        path.display(),
        crate::excerpt::message(&e.to_string())
    )
}

fn user_version(conn: &Connection, path: &Path) -> Result<i64, String> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| bad(path, &e))
}

/// `PRAGMA application_id`: another program's mark, where it set one.
fn application_id(conn: &Connection, path: &Path) -> Result<i64, String> {
    conn.query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(|e| bad(path, &e))
}

/// The first object (table, index, view, trigger) of the database, if it
/// has any: a file without a schema version that holds one is another
/// program's.
fn first_object(conn: &Connection, path: &Path) -> Result<Option<String>, String> {
    let mut stmt = conn
        .prepare("SELECT type, name FROM sqlite_master ORDER BY name LIMIT 1")
        .map_err(|e| bad(path, &e))?;
    let mut rows = stmt.query([]).map_err(|e| bad(path, &e))?;
    let Some(r) = rows.next().map_err(|e| bad(path, &e))? else {
        return Ok(None);
    };
    let kind: String = r.get(0).map_err(|e| bad(path, &e))?;
    let name: String = r.get(1).map_err(|e| bad(path, &e))?;
    Ok(Some(format!(
        "{kind} `{}`",
        progress_litmus::error::excerpt(&name)
    )))
}

/// The refusal of a file with no schema version: empty, or another
/// program's SQLite database.
fn foreign(conn: &Connection, path: &Path) -> String {
    match first_object(conn, path) {
        Err(e) => e,
        Ok(None) => format!(
            "{}: an empty database, not a results database (`backends db import --db` makes one)",
            path.display()
        ),
        Ok(Some(what)) => format!(
            "{}: not a results database: an SQLite file of another program (it holds {what}, and no schema version); `backends db import` creates its schema only in a new or empty file",
            path.display()
        ),
    }
}

/// The refusal of a version this code does not read.
fn other_version(path: &Path, version: i64) -> String {
    format!(
        "{}: a results database of schema version {version}; this backends reads versions 1 to 3 (through `db import`) and {SCHEMA_VERSION}",
        path.display()
    )
}

/// Refuses a database whose schema is not exactly one this code makes for
/// `version` (1 to 4): the same objects, of the same kinds, made by the
/// same statements; no other table, index, view or trigger. Only then is
/// any of it queried: a file whose `devices` was a view over an endless
/// recursive query made every reader run forever.
fn check_schema(conn: &Connection, path: &Path, version: i64) -> Result<(), String> {
    let found = objects(conn).map_err(|e| bad(path, &e))?;
    let [v1, now, upgraded] =
        expected().map_err(|e| format!("{}: the expected schema: {e}", path.display()))?;
    let candidates = match version {
        1 => vec![v1],
        2 => {
            let mut lacks = V4_TABLES.to_vec();
            lacks.push(FACTS_TABLE);
            vec![without(&now, &lacks), without(&upgraded, &lacks)]
        }
        3 => vec![without(&now, &V4_TABLES), without(&upgraded, &V4_TABLES)],
        _ => vec![now, upgraded],
    };
    if candidates.contains(&found) {
        return Ok(());
    }
    // Named against the form it is closest to: the one whose `imports` it has.
    let imports = |objs: &[Object]| objs.iter().find(|o| o.name == "imports").cloned();
    let closest = candidates
        .iter()
        .find(|c| imports(c) == imports(&found))
        .unwrap_or(&candidates[0]);
    Err(format!(
        "{}: not a results database of this backends: {}",
        path.display(),
        first_difference(&found, closest)
    ))
}

/// The first object, by name, in which `found` differs from `expected`.
fn first_difference(found: &[Object], expected: &[Object]) -> String {
    let by_name = |objs: &'_ [Object]| -> BTreeMap<String, Object> {
        objs.iter().map(|o| (o.name.clone(), o.clone())).collect()
    };
    let (f, e) = (by_name(found), by_name(expected));
    let names: BTreeSet<&String> = f.keys().chain(e.keys()).collect();
    for name in names {
        let shown = excerpt(name);
        match (f.get(name), e.get(name)) {
            (Some(a), None) => {
                return format!("{} `{shown}`, which it does not make", excerpt(&a.kind))
            }
            (None, Some(b)) => return format!("no {} `{shown}`", b.kind),
            (Some(a), Some(b)) if a.kind != b.kind => {
                return format!("`{shown}` is a {}, not a {}", excerpt(&a.kind), b.kind)
            }
            (Some(a), Some(b)) if a != b => {
                return format!("{} `{shown}` is not the one it makes", b.kind)
            }
            _ => {}
        }
    }
    "its schema lists an object twice".to_string()
}

/// The file SQLite is to open for `path`: a regular file, or (`import`)
/// nothing yet, never a device, FIFO, socket or folder (SQLite would open
/// `/dev/null` and create `/dev/null-journal` beside it). A symbolic link
/// is followed, as an `-o` output's is: its target is the database and is
/// checked the same way; `db import` creates a dangling link's target.
fn database_file(path: &Path, import: bool) -> Result<PathBuf, String> {
    let target = if import {
        output_target(path).map_err(|e| format!("{}: {e}", path.display()))?
    } else {
        path.to_path_buf()
    };
    let via = if target == path {
        String::new()
    } else {
        format!(" (the target of the link, {})", target.display())
    };
    match std::fs::metadata(&target) {
        Ok(m) if m.is_file() => Ok(target),
        Ok(m) => Err(format!(
            "{}: {}{via}, not a regular file: a results database is a regular file{}",
            path.display(),
            kind_of(&m),
            if import { " (or a new one)" } else { "" }
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && import => Ok(target),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{}: no such results database", path.display()))
        }
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Refuses a database in SQLite's WAL mode (the header's write and read
/// format versions, bytes 18 and 19, 2 for WAL), before SQLite opens it:
/// opening one, even read-only, creates `-wal` and `-shm` files beside it
/// and rewrites an `-shm` that is there (adversarial finding 05, third
/// pass). `backends` never puts a database in WAL mode, so such a file is
/// not one it wrote. A file too short for a header is left to SQLite.
fn not_wal(path: &Path, file: &Path) -> Result<(), String> {
    use std::io::Read;
    let mut head = [0u8; 20];
    let read = std::fs::File::open(file).and_then(|f| f.take(20).read(&mut head));
    match read {
        Ok(20) if head.starts_with(b"SQLite format 3\0") && (head[18] == 2 || head[19] == 2) => {
            Err(format!(
                "{}: an SQLite database in WAL mode (its header's bytes 18 and 19), which backends never makes: not a results database it wrote; refused before SQLite opens it (which would make -wal and -shm files beside it)",
                path.display()
            ))
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("{}: cannot read: {e}", path.display())),
    }
}

/// Opens the database at `path` for reading only: a results database of
/// version [`SCHEMA_VERSION`], never created, upgraded or written.
pub fn open_read(path: &Path) -> Result<Connection, String> {
    database_file(path, false)?;
    not_wal(path, path)?;
    if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        return Err(format!(
            "{}: an empty file, not a results database (`backends db import --db` makes one)",
            path.display()
        ));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| bad(path, &e))?;
    conn.busy_timeout(BUSY).map_err(|e| bad(path, &e))?;
    let version = user_version(&conn, path)?;
    if (1..=SCHEMA_VERSION).contains(&version) {
        check_schema(&conn, path, version)?;
    }
    match version {
        SCHEMA_VERSION => Ok(conn),
        0 => Err(foreign(&conn, path)),
        1..=3 => Err(format!(
            "{}: a results database of schema version {version}, which this command only reads at version {SCHEMA_VERSION}: `backends db import --db` upgrades it in place (with any result file: one already in counts once)",
            path.display()
        )),
        v => Err(other_version(path, v)),
    }
}

/// Opens the database at `path` for `db import`: created with the schema
/// if the file is new or empty, a version 1, 2 or 3 database upgraded (one
/// transaction); another program's SQLite file refused, untouched.
pub fn open_import(path: &Path) -> Result<Connection, String> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let file = database_file(path, true)?;
    not_wal(path, &file)?;
    let mut conn = Connection::open_with_flags(file, flags).map_err(|e| bad(path, &e))?;
    conn.busy_timeout(BUSY).map_err(|e| bad(path, &e))?;
    match user_version(&conn, path)? {
        SCHEMA_VERSION => {
            check_schema(&conn, path, SCHEMA_VERSION)?;
            return Ok(conn);
        }
        0..=3 => {}
        v => return Err(other_version(path, v)),
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| bad(path, &e))?;
    // Read again inside the transaction: another process may have
    // created or upgraded it meanwhile.
    match user_version(&tx, path)? {
        0 if first_object(&tx, path)?.is_some() || application_id(&tx, path)? != 0 => {
            return Err(foreign(&tx, path))
        }
        0 => tx.execute_batch(SCHEMA).map_err(|e| bad(path, &e))?,
        1 => {
            check_schema(&tx, path, 1)?;
            from_v1(&tx).map_err(|e| bad(path, &e))?
        }
        // Versions 3 and 4 only add tables: the schema's statements make
        // them.
        v @ (2 | 3) => {
            check_schema(&tx, path, v)?;
            tx.execute_batch(SCHEMA).map_err(|e| bad(path, &e))?
        }
        SCHEMA_VERSION => check_schema(&tx, path, SCHEMA_VERSION)?,
        v => return Err(other_version(path, v)),
    }
    tx.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION};"))
        .map_err(|e| bad(path, &e))?;
    tx.commit().map_err(|e| bad(path, &e))?;
    Ok(conn)
}
