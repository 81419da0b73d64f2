//! What identifies a campaign in the results database (docs/GUIDE.md,
//! "Many devices"): a device's runs of one sitting, whichever file brings them.
//!
//! The identity is the SHA-256 of the canonical JSON (keys sorted, no
//! whitespace) of `{"device", "target", "campaign", "started_unix_ms"}`:
//! - a campaign journal of `backends run` or `backends import`
//!   (`NAME.journal.jsonl`): the device is the campaign line's `name`, the
//!   target its `target`, `campaign` the whole campaign line (the options
//!   it ran with) and `started_unix_ms` the start of its first session;
//! - that campaign's CSVs with their `NAME.device.json`: the same four,
//!   from the device file (`device`, `target`, `options`, the first of
//!   `times.sessions`), so a journal and its CSV export are one campaign;
//! - a WebGPU page's runs, through `backends import --target webgpu`
//!   (journal or CSVs): the campaign line's `page` (the device the page
//!   reported and the `at_unix_ms` of its first session) stands for the
//!   campaign line and gives the start, so the same page file imported
//!   twice, from any path at any time, is one campaign;
//! - the runs of another target through `backends import` (journal or
//!   CSVs): the campaign line's `lines` (the SHA-256 and count of the runs
//!   as read, [`crate::campaign::import`]) stands for the campaign line,
//!   and the start is left out of the identity (an import's session starts
//!   when the import was made; the first one seen is kept for `db list`),
//!   so the same lines imported twice, from any path at any time, are one
//!   campaign; an import made before `lines` existed keeps the general
//!   rule;
//! - a result CSV without a device file (the published artifact): the
//!   device is the file's stem, the target its framework directory,
//!   `campaign` null, or `{"label": L}` with `db import --campaign L`,
//!   and no start: all such files of one device and target are one
//!   campaign unless labelled apart.
//!
//! Two campaigns of a device (another day, another driver) differ in their
//! start or options, or, for bare CSVs, in their label.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The parts of a campaign's identity.
#[derive(Clone, Debug, PartialEq)]
pub struct CampaignId {
    pub device: String,
    pub target: Option<String>,
    /// The campaign line (options), a label, or nothing.
    pub definition: Option<Value>,
    pub started_unix_ms: Option<u64>,
}

impl CampaignId {
    /// The campaign of `device` whose campaign line (a journal's first
    /// line, a device file's `options`) is `line` and whose first session
    /// started at `started`; a WebGPU page's `page` stands for both.
    pub fn of_campaign(
        device: &str,
        target: Option<String>,
        line: &Value,
        started: Option<u64>,
    ) -> CampaignId {
        let page = line
            .get("page")
            .filter(|p| p.get("started_unix_ms").is_some_and(Value::is_u64));
        let lines = line
            .get("lines")
            .filter(|l| l.get("sha256").is_some_and(Value::is_string));
        let (definition, started) = match (page, lines) {
            (Some(p), _) => (json!({ "page": p }), p["started_unix_ms"].as_u64()),
            (None, Some(l)) => (json!({ "lines": l }), started),
            (None, None) => (line.clone(), started),
        };
        CampaignId {
            device: device.to_string(),
            target,
            definition: Some(definition),
            started_unix_ms: started,
        }
    }

    /// The hex SHA-256 of the canonical JSON of the four parts; for an
    /// import's `lines`, without the start (kept for `db list`, not part
    /// of what the campaign is).
    pub fn identity(&self) -> String {
        // Only the definition `of_campaign` makes of an import's lines: a
        // campaign line that merely has a `lines` key keeps its start.
        let imported = self
            .definition
            .as_ref()
            .and_then(Value::as_object)
            .is_some_and(|d| d.len() == 1 && d.contains_key("lines"));
        let doc = json!({
            "device": self.device,
            "target": self.target,
            "campaign": self.definition,
            "started_unix_ms": if imported { None } else { self.started_unix_ms },
        });
        hex(&Sha256::digest(canonical(&doc).as_bytes()))
    }
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `v` as JSON with object keys sorted at every level and no whitespace:
/// the same value in any formatting gives the same text.
pub fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&m[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_and_whitespace_do_not_change_the_identity() {
        let a: Value = serde_json::from_str(r#"{"b": [1, {"y": 2, "x": 1}], "a": "s"}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":"s","b":[1,{"x":1,"y":2}]}"#).unwrap();
        assert_eq!(canonical(&a), canonical(&b));
        let id = |d: Value, s| CampaignId {
            device: "dev".into(),
            target: Some("cpp".into()),
            definition: Some(d),
            started_unix_ms: s,
        };
        assert_eq!(id(a.clone(), Some(1)).identity(), id(b, Some(1)).identity());
        assert_ne!(id(a.clone(), Some(1)).identity(), id(a, Some(2)).identity());
    }

    /// An import's `lines` stand for its campaign line and start: the same
    /// lines imported at another time from another path are one campaign,
    /// other lines another.
    #[test]
    fn imported_lines_are_their_own_identity() {
        let line = |from: &str, sha: &str| json!({"name": "dev", "imported_from": [from], "lines": {"sha256": sha, "runs": 10}});
        let of = |l: &Value, started| {
            CampaignId::of_campaign("dev", Some("cuda".into()), l, Some(started)).identity()
        };
        assert_eq!(
            of(&line("a.jsonl", "ab"), 1),
            of(&line("b/c.jsonl", "ab"), 2)
        );
        assert_ne!(of(&line("a.jsonl", "ab"), 1), of(&line("a.jsonl", "cd"), 1));
        // Without `lines` (an older import), the start still tells apart.
        let old = json!({"name": "dev", "imported_from": ["a.jsonl"]});
        assert_ne!(of(&old, 1), of(&old, 2));
        // A `lines` that is not an import's (no SHA-256) is no identity.
        let odd = json!({"name": "dev", "lines": 3});
        assert_ne!(of(&odd, 1), of(&odd, 2));
    }
}
