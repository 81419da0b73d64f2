//! What `backends serve` does with an upload, without HTTP: check it as
//! `backends import --target webgpu` does, keep it with its provenance,
//! import its runs into the database as `db import` does, and write the
//! site again.

use crate::campaign::import::{import, ImportArgs};
use crate::campaign::options::RunTarget;
use crate::report::db::{self, DeviceInfo, Imported};
use crate::report::format::Format;
use crate::report::{db_import, site};
use crate::serve::ServeArgs;
use crate::target::webgpu;
use progress_litmus::axb::load::NamedTest;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The service's files and suite, and the lock that takes uploads one at
/// a time.
pub struct Service {
    db: PathBuf,
    uploads: PathBuf,
    suite: Vec<PathBuf>,
    tests: Vec<NamedTest>,
    page: String,
    one_at_a_time: Mutex<()>,
}

impl Service {
    /// Reads the page and the suite (they must match: the page's suite
    /// fingerprint is the suite's), makes the uploads folder and writes
    /// the site of what the database holds.
    pub fn open(args: &ServeArgs) -> Result<Service, String> {
        let page = std::fs::read_to_string(&args.page)
            .map_err(|e| format!("{}: cannot read: {e}", args.page.display()))?;
        let data = webgpu::embedded(&page)
            .map_err(|e| format!("{}: {e}", args.page.display()))?
            .data;
        let tests = crate::campaign::suite::load_suite(&args.suite).map_err(|f| f.msg)?;
        let fp = webgpu::suite_fingerprint(&tests);
        if data["suite"]["fnv64"] != fp.as_str() {
            return Err(format!(
                "{}: the page is of suite fingerprint {}, not of the suite given ({fp}): serve it with the tests it was emitted from",
                args.page.display(),
                data["suite"]["fnv64"]
            ));
        }
        let uploads = args.uploads.clone().unwrap_or_else(|| {
            let mut p = args.db.clone().into_os_string();
            p.push(".uploads");
            PathBuf::from(p)
        });
        std::fs::create_dir_all(&uploads)
            .map_err(|e| format!("{}: cannot create: {e}", uploads.display()))?;
        let s = Service {
            db: args.db.clone(),
            uploads,
            suite: args.suite.clone(),
            tests,
            page,
            one_at_a_time: Mutex::new(()),
        };
        s.write_site()?;
        Ok(s)
    }

    pub fn db(&self) -> &Path {
        &self.db
    }

    pub fn page(&self) -> &str {
        &self.page
    }

    fn site_dir(&self) -> PathBuf {
        self.uploads.join("site")
    }

    /// Writes the site of the database, or a page saying there is nothing
    /// yet where it does not exist.
    fn write_site(&self) -> Result<(), String> {
        let out = self.site_dir();
        if !self.db.exists() {
            std::fs::create_dir_all(&out)
                .map_err(|e| format!("{}: cannot create: {e}", out.display()))?;
            let empty = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>No results yet</title></head><body><h1>No results yet</h1><p>Open <a href=\"../\">the page</a>, run it and send the results: they appear here.</p></body></html>\n";
            return std::fs::write(out.join("index.html"), empty)
                .map_err(|e| format!("{}: cannot write: {e}", out.display()));
        }
        let (report, info, campaigns) = site::gather(&self.db, &[])?;
        site::write(&report, &info, &campaigns, None, &out)
            .map(|_| ())
            .map_err(|e| e.message().to_string())
    }

    /// The text of a site page: `index.html` or `devices/NAME.html` with a
    /// name of the characters page names are made of; none otherwise.
    pub fn site_page(&self, file: &str) -> Option<String> {
        let ok = |name: &str| {
            !name.is_empty()
                && !name.starts_with('.')
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-~".contains(c))
        };
        let allowed = file == "index.html"
            || file
                .strip_prefix("devices/")
                .and_then(|n| n.strip_suffix(".html"))
                .is_some_and(ok);
        if !allowed {
            return None;
        }
        let _held = self.one_at_a_time.lock().unwrap_or_else(|e| e.into_inner());
        std::fs::read_to_string(self.site_dir().join(file)).ok()
    }

    /// Takes one upload from `client`: checked, kept with its provenance,
    /// imported; the site written again. The words for the sender, or
    /// why nothing was stored.
    pub fn store(&self, client: &str, body: &[u8]) -> Result<String, String> {
        let _held = self.one_at_a_time.lock().unwrap_or_else(|e| e.into_inner());
        let text = std::str::from_utf8(body)
            .map_err(|_| "not UTF-8 text: the page's result file is JSON lines".to_string())?;
        let header = text
            .lines()
            .find(|l| !l.trim().is_empty())
            .ok_or("an empty upload: no result lines")?;
        let header: serde_json::Value = crate::json::parse(header)
            .map_err(|e| format!("line 1: not a result file's header: {e}"))?;
        let device = webgpu::check_header(&header, "webgpu", &self.tests)?;
        let name = device_name(&device);
        let dir = self.keep(client, body)?;
        let result = self.import(&dir, &name, &device);
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        result
    }

    /// Keeps the upload's lines and provenance in a folder of its own
    /// (named by time and content), which the import writes into.
    fn keep(&self, client: &str, body: &[u8]) -> Result<PathBuf, String> {
        let sha = Sha256::digest(body)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let dir = self.uploads.join(format!("{now}-{}", &sha[..16]));
        let io = |e: std::io::Error| format!("{}: cannot write: {e}", dir.display());
        std::fs::create_dir_all(&dir).map_err(io)?;
        std::fs::write(dir.join("lines.jsonl"), body).map_err(io)?;
        let provenance = serde_json::json!({
            "client": client,
            "received_unix_ms": now,
            "received_utc": crate::report::format::utc(now as i64),
            "bytes": body.len(),
            "sha256": sha,
        });
        std::fs::write(dir.join("provenance.json"), format!("{provenance:#}\n")).map_err(io)?;
        Ok(dir)
    }

    /// Imports the kept lines of `dir` as device `name`: the result files
    /// `backends import` writes, then its journal into the database.
    fn import(&self, dir: &Path, name: &str, device: &serde_json::Value) -> Result<String, String> {
        let out = dir.join("out");
        let args = ImportArgs {
            target: RunTarget::Webgpu,
            suite: self.suite.clone(),
            lines: vec![dir.join("lines.jsonl")],
            info: None,
            name: Some(name.to_string()),
            out: out.clone(),
            format: Format::Text,
            simt: false,
        };
        let summary = import(&args).map_err(|f| f.msg)?;
        let journal = out.join(format!("{name}.journal.jsonl"));
        let src = crate::campaign::db_journal::runs_source(&journal, None)?;
        let info = DeviceInfo {
            vendor: device["vendor"].as_str().map(str::to_string),
            architecture: device["architecture"].as_str().map(str::to_string),
            host: Some("a browser, sent to backends serve".to_string()),
            ..DeviceInfo::default()
        };
        let mut conn = db::open_import(&self.db)?;
        let stored = db_import::import_runs(&mut conn, &src, &info)?;
        drop(conn);
        self.write_site()?;
        Ok(match stored {
            Imported::New(n) => format!(
                "stored {n} runs of device {name} ({} not terminating); the site shows it at site/devices/{}.html",
                summary.non_terminating,
                site::page_name(name)
            ),
            Imported::Already(from) => format!(
                "these runs were stored before (from {}): nothing new",
                crate::excerpt::printable(&from)
            ),
        })
    }
}

/// The device name of an upload: `webgpu-` and the adapter's vendor and
/// architecture as the page reported them, in lower-case letters, digits
/// and dashes (at most 60 of them); `webgpu-unknown` without them.
fn device_name(device: &serde_json::Value) -> String {
    let said = ["vendor", "architecture"]
        .iter()
        .filter_map(|k| device[k].as_str())
        .collect::<Vec<_>>()
        .join("-");
    let mut slug = String::new();
    for c in said.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    let slug: String = slug.trim_end_matches('-').chars().take(60).collect();
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        "webgpu-unknown".to_string()
    } else {
        format!("webgpu-{slug}")
    }
}

#[cfg(test)]
mod tests {
    use crate::serve::store::device_name;
    use serde_json::json;

    #[test]
    fn device_names_are_plain_slugs() {
        assert_eq!(
            device_name(&json!({"vendor": "Google", "architecture": "SwiftShader"})),
            "webgpu-google-swiftshader"
        );
        assert_eq!(
            device_name(&json!({"vendor": "../../x", "architecture": "$(rm -rf /)\n"})),
            "webgpu-x-rm-rf"
        );
        assert_eq!(device_name(&json!({})), "webgpu-unknown");
    }
}
