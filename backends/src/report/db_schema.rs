//! The results database's schema ([`SCHEMA`], version [`SCHEMA_VERSION`]
//! in `PRAGMA user_version`; the tables are described in
//! [`crate::report::db`]) and the upgrades, each in one transaction,
//! which [`crate::report::db_open`] runs for `db import`: of a version 1
//! database (one observation per device, test and mapping), of a
//! version 2 one (no `campaign_facts`: [`SCHEMA`] adds the table, empty
//! until the campaigns' files are imported again), and of a version 3
//! one (no `gpus`, `programs`, `suite_tests`: added empty).

use crate::report::db_campaign::CampaignId;
use rusqlite::{params, Transaction};

/// The schema this code reads and writes.
pub const SCHEMA_VERSION: i64 = 4;

/// The tables of version 4 (see the module doc); version 3 had all but
/// `gpus`, `programs` and `suite_tests` ([`V4_TABLES`]), version 2 none
/// of those nor `campaign_facts` ([`FACTS_TABLE`]).
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS devices (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    vendor TEXT,
    architecture TEXT,
    driver TEXT,
    host TEXT
);
CREATE TABLE IF NOT EXISTS suites (
    id INTEGER PRIMARY KEY,
    fnv64 TEXT NOT NULL UNIQUE,
    tests INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS campaigns (
    id INTEGER PRIMARY KEY,
    identity TEXT NOT NULL UNIQUE,
    device_id INTEGER NOT NULL REFERENCES devices(id),
    target TEXT,
    suite_id INTEGER REFERENCES suites(id),
    started_unix_ms INTEGER,
    definition TEXT,
    label TEXT,
    driver TEXT,
    host TEXT
);
CREATE TABLE IF NOT EXISTS imports (
    id INTEGER PRIMARY KEY,
    content TEXT NOT NULL UNIQUE,
    file TEXT NOT NULL,
    imported_unix_s INTEGER NOT NULL,
    target TEXT,
    suite_id INTEGER REFERENCES suites(id),
    observations INTEGER NOT NULL,
    campaign_id INTEGER REFERENCES campaigns(id),
    format TEXT NOT NULL DEFAULT 'csv'
);
CREATE TABLE IF NOT EXISTS runs (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    test TEXT NOT NULL,
    mapping TEXT NOT NULL,
    iteration INTEGER NOT NULL CHECK (iteration >= 0),
    terminated INTEGER NOT NULL CHECK (terminated IN (0, 1)),
    at_unix_ms INTEGER,
    import_id INTEGER NOT NULL REFERENCES imports(id),
    line INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, test, mapping, iteration)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS summaries (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    test TEXT NOT NULL,
    mapping TEXT NOT NULL,
    failed INTEGER NOT NULL,
    runs INTEGER,
    import_id INTEGER NOT NULL REFERENCES imports(id),
    line INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, test, mapping)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS campaign_facts (
    campaign_id INTEGER PRIMARY KEY REFERENCES campaigns(id),
    facts TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS gpus (
    device_id INTEGER PRIMARY KEY REFERENCES devices(id),
    gpu TEXT NOT NULL,
    setup TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS programs (
    fnv64 TEXT PRIMARY KEY,
    text TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS suite_tests (
    suite_id INTEGER NOT NULL REFERENCES suites(id),
    name TEXT NOT NULL,
    program TEXT NOT NULL REFERENCES programs(fnv64),
    PRIMARY KEY (suite_id, name)
) WITHOUT ROWID;
";

/// The table version 3 added to version 2: what a campaign's device file
/// or journal records beyond its runs (options, description, run times
/// per mapping), read back by [`crate::report::db_facts`].
pub const FACTS_TABLE: &str = "campaign_facts";

/// The tables version 4 added to version 3: the physical GPU a device is
/// one setup of (`db import --gpu NAME --setup TEXT`,
/// [`crate::report::db_gpus`]); the programs of the tests, by fingerprint,
/// and each suite's tests by name ([`crate::report::db_programs`]).
pub const V4_TABLES: [&str; 3] = ["gpus", "programs", "suite_tests"];

/// The tables of version 1, as its code created them: what
/// [`crate::report::db_open`] checks a version 1 file against before
/// upgrading it.
pub const SCHEMA_V1: &str = "
CREATE TABLE IF NOT EXISTS devices (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    vendor TEXT,
    architecture TEXT,
    driver TEXT,
    host TEXT
);
CREATE TABLE IF NOT EXISTS suites (
    id INTEGER PRIMARY KEY,
    fnv64 TEXT NOT NULL UNIQUE,
    tests INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS imports (
    id INTEGER PRIMARY KEY,
    content TEXT NOT NULL UNIQUE,
    file TEXT NOT NULL,
    imported_unix_s INTEGER NOT NULL,
    target TEXT,
    suite_id INTEGER REFERENCES suites(id),
    observations INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS observations (
    import_id INTEGER NOT NULL REFERENCES imports(id),
    device_id INTEGER NOT NULL REFERENCES devices(id),
    test TEXT NOT NULL,
    mapping TEXT NOT NULL,
    failed INTEGER NOT NULL,
    runs INTEGER,
    line INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS one_observation
    ON observations(device_id, test, mapping);
";

/// One object of a database's schema, as `sqlite_master` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    /// `table`, `index`, `view` or `trigger`.
    pub kind: String,
    pub name: String,
    pub table: String,
    /// The statement that made it (none for SQLite's own indexes).
    pub sql: Option<String>,
}

/// Every object of the schema of `conn`, by name.
pub fn objects(conn: &rusqlite::Connection) -> rusqlite::Result<Vec<Object>> {
    let mut stmt =
        conn.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name")?;
    let rows = stmt.query_map([], |r| {
        Ok(Object {
            kind: r.get(0)?,
            name: r.get(1)?,
            table: r.get(2)?,
            sql: r.get(3)?,
        })
    })?;
    rows.collect()
}

/// The schemas this code makes, each exactly as `sqlite_master` holds it
/// (built in memory by the same statements): version 1; the current
/// version made new (a version 2 database upgraded is the same: its
/// tables' statements did not change); the current version upgraded from
/// version 1 (its `imports` altered). Versions 2 and 3 have these two
/// forms without the tables they lack ([`without`]).
pub fn expected() -> rusqlite::Result<[Vec<Object>; 3]> {
    let v1 = rusqlite::Connection::open_in_memory()?;
    v1.execute_batch(SCHEMA_V1)?;
    let now = rusqlite::Connection::open_in_memory()?;
    now.execute_batch(SCHEMA)?;
    let mut up = rusqlite::Connection::open_in_memory()?;
    up.execute_batch(SCHEMA_V1)?;
    let tx = up.transaction()?;
    from_v1(&tx)?;
    tx.commit()?;
    Ok([objects(&v1)?, objects(&now)?, objects(&up)?])
}

/// A schema's objects without the tables named in `tables` (and their
/// automatic indexes): version 3's forms are the current ones without
/// [`V4_TABLES`], version 2's without those and [`FACTS_TABLE`].
pub fn without(objs: &[Object], tables: &[&str]) -> Vec<Object> {
    objs.iter()
        .filter(|o| !tables.contains(&o.table.as_str()))
        .cloned()
        .collect()
}

/// Upgrades a version 1 database inside `tx`: each device's observations
/// of one target and suite become one campaign's k-of-n summaries (what
/// version 1 could hold). A campaign without a recorded suite gets the
/// identity of the artifact's CSVs (device and framework directory), the
/// one a re-import of such a file computes now; one with a suite came
/// from a campaign whose options version 1 did not keep, and its identity
/// says so. Either way a re-import of the same files is recognised by the
/// content hash version 1 stored ([`crate::report::db_import`] checks it
/// too) and counts once.
pub(crate) fn from_v1(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(SCHEMA)?;
    tx.execute_batch(
        "ALTER TABLE imports ADD COLUMN campaign_id INTEGER REFERENCES campaigns(id);
         ALTER TABLE imports ADD COLUMN format TEXT NOT NULL DEFAULT 'csv';",
    )?;
    type Group = (i64, String, Option<String>, Option<i64>, Option<String>);
    let groups: Vec<Group> = {
        let mut stmt = tx.prepare(
            "SELECT DISTINCT o.device_id, d.name, i.target, i.suite_id, s.fnv64
             FROM observations o JOIN imports i ON i.id = o.import_id
             JOIN devices d ON d.id = o.device_id LEFT JOIN suites s ON s.id = i.suite_id
             ORDER BY d.name, i.target, s.fnv64",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for (device_id, name, target, suite_id, fnv64) in groups {
        let definition = fnv64.map(|f| serde_json::json!({"migrated_from_schema_1": {"suite": f}}));
        let id = CampaignId {
            device: name,
            target: target.clone(),
            definition: definition.clone(),
            started_unix_ms: None,
        };
        tx.execute(
            "INSERT INTO campaigns (identity, device_id, target, suite_id, definition) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![id.identity(), device_id, target, suite_id, definition.map(|d| d.to_string())],
        )?;
        // A file of several devices (the artifact's Vulkan CSVs) is
        // filed under the first; its summaries name their own campaigns.
        tx.execute(
            "UPDATE imports SET campaign_id = ?1
             WHERE id IN (SELECT import_id FROM observations WHERE device_id = ?2)
               AND target IS ?3 AND suite_id IS ?4 AND campaign_id IS NULL",
            params![tx.last_insert_rowid(), device_id, target, suite_id],
        )?;
    }
    tx.execute_batch(
        "INSERT INTO summaries (campaign_id, test, mapping, failed, runs, import_id, line)
           SELECT c.id, o.test, o.mapping, o.failed, o.runs, o.import_id, o.line
           FROM observations o JOIN imports i ON i.id = o.import_id
           JOIN campaigns c ON c.device_id = o.device_id AND c.target IS i.target
             AND c.suite_id IS i.suite_id;
         DROP INDEX IF EXISTS one_observation;
         DROP TABLE observations;",
    )
}
