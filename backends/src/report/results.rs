//! The artifact's result CSV format (SPEC §6): reading it exactly as the
//! published files are, quirks included, and writing it for our own runs.
//!
//! ```text
//! Test File Name,No saturation Result,Round Robin Saturation Result,Chunking Saturation Result,All Passed
//! 0,P,P,P,P
//! 2,F (21/21),F (21/21),F (21/21),F
//! Total failures:,63,63,63,3
//! ```
//!
//! A cell is `P` (every run terminated) or `F (k/n)` (k of n runs did not).
//! The published files differ in ways a reader must know about, and each is
//! handled explicitly here rather than by a lenient parser that could drop
//! data unnoticed:
//!
//! - Line endings: the Vulkan files use CRLF, the others LF; the Apple and
//!   CUDA files have no newline after the last row.
//! - Columns: the Apple and CUDA files have the three mappings; the Vulkan
//!   files label them differently (`No saturation (same subgroup)`, `Round
//!   Robin Saturation`, `Chunking Saturation`) and add two intra-workgroup
//!   columns (one with a quoted label holding a comma). Every label must be
//!   one of [`KNOWN_COLUMNS`]; an unknown one is an error.
//! - Runs per cell: 20, but 21 in the Apple files; a cell's own `n` is kept.
//! - The `Total failures:` row sums the failed *runs* per column in the Apple
//!   and CUDA files but counts failing *tests* in the Vulkan files; both are
//!   accepted, per column, and anything else is an error (it catches a
//!   truncated or edited file). Its last cell counts the failing tests.
//! - `All Passed` must be `F` exactly when some result cell of the row is `F`.
//!
//! An empty result cell means "not run" (a campaign limited to some
//! mappings); the published files have none.

use crate::mapping::Mapping;
use std::fmt::Write;

/// The header of the first column.
pub const ID_HEADER: &str = "Test File Name";
/// The header of the last column.
pub const ALL_PASSED_HEADER: &str = "All Passed";
/// The first cell of the last row.
pub const TOTAL_LABEL: &str = "Total failures:";

/// What a result column measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ColumnKind {
    /// One of the three inter-workgroup mappings.
    Mapping(Mapping),
    /// An intra-workgroup variant of the plain mapping that only the Vulkan
    /// files have; the name is a short slug used to name it as a device of
    /// its own (see `observations`).
    Variant(&'static str),
}

/// Every column label the reader accepts, and what it means. The Vulkan
/// runner labelled its inter-workgroup plain column `No saturation (same
/// subgroup)`: its results are those of the plain mapping (one test thread
/// per workgroup; e.g. the Mali's occasional plain failures), unlike the
/// last column, where the test threads share one subgroup of a 4-thread
/// workgroup and fail like SIMT execution predicts.
pub const KNOWN_COLUMNS: [(&str, ColumnKind); 8] = [
    ("No saturation Result", ColumnKind::Mapping(Mapping::Plain)),
    (
        "Round Robin Saturation Result",
        ColumnKind::Mapping(Mapping::RoundRobin),
    ),
    (
        "Chunking Saturation Result",
        ColumnKind::Mapping(Mapping::Chunked),
    ),
    (
        "No saturation (same subgroup)",
        ColumnKind::Mapping(Mapping::Plain),
    ),
    (
        "Round Robin Saturation",
        ColumnKind::Mapping(Mapping::RoundRobin),
    ),
    ("Chunking Saturation", ColumnKind::Mapping(Mapping::Chunked)),
    (
        "No saturation (diff. subgroup, 256 threads per workgroup)",
        ColumnKind::Variant("diff-subgroup-256"),
    ),
    (
        "No saturation (same subgroup, 4 threads per workgroup)",
        ColumnKind::Variant("same-subgroup-4"),
    ),
];

/// The labels we write, in the order of [`Mapping::ALL`].
pub const WRITE_COLUMNS: [&str; 3] = [
    "No saturation Result",
    "Round Robin Saturation Result",
    "Chunking Saturation Result",
];

/// One result cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cell {
    /// Every run terminated (the format does not say how many runs).
    Pass,
    /// `failed` of `runs` runs did not terminate; `0 < failed <= runs`.
    Fail { failed: u32, runs: u32 },
    /// The column was not run for this test (an empty cell).
    NotRun,
}

impl Cell {
    /// The cell for `failed` non-terminating runs out of `runs`.
    pub fn from_counts(failed: u32, runs: u32) -> Cell {
        match (failed, runs) {
            (_, 0) => Cell::NotRun,
            (0, _) => Cell::Pass,
            (k, n) => Cell::Fail { failed: k, runs: n },
        }
    }

    pub fn failed(self) -> bool {
        matches!(self, Cell::Fail { .. })
    }

    /// The text of the cell in the artifact format.
    pub fn text(self) -> String {
        match self {
            Cell::Pass => "P".into(),
            Cell::Fail { failed, runs } => format!("F ({failed}/{runs})"),
            Cell::NotRun => String::new(),
        }
    }

    /// Parses a cell; the error says what was expected.
    pub fn parse(s: &str) -> Result<Cell, String> {
        if s.is_empty() {
            return Ok(Cell::NotRun);
        }
        if s == "P" {
            return Ok(Cell::Pass);
        }
        let bad = || {
            format!("bad result cell `{s}`: expected `P`, `F (k/n)` with 0 < k <= n, or an empty cell (not run)")
        };
        let inner = s
            .strip_prefix("F (")
            .and_then(|r| r.strip_suffix(')'))
            .ok_or_else(bad)?;
        let (k, n) = inner.split_once('/').ok_or_else(bad)?;
        let num = |t: &str| -> Result<u32, String> {
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            t.parse().map_err(|_| bad())
        };
        let (k, n) = (num(k)?, num(n)?);
        if k == 0 || k > n {
            return Err(bad());
        }
        Ok(Cell::Fail { failed: k, runs: n })
    }
}

/// A result column: its label as written and what it measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub label: String,
    pub kind: ColumnKind,
}

/// One row: a test id and one cell per result column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub id: String,
    pub cells: Vec<Cell>,
    /// Line number in the file (from 1), for error messages.
    pub line: usize,
}

/// A whole results file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

/// An error at a line of a results file (line 0: the file as a whole).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvError {
    pub line: usize,
    pub msg: String,
}

fn err<T>(line: usize, msg: impl Into<String>) -> Result<T, CsvError> {
    Err(CsvError {
        line,
        msg: msg.into(),
    })
}

/// Splits one CSV record. Quoted fields (`"a, b"`, with `""` for a quote)
/// are supported because a published header has one; anything after a
/// closing quote other than a comma is an error.
pub fn split_record(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    None => return Err("unterminated quoted field".into()),
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                }
            }
            match chars.next() {
                None => {
                    fields.push(field);
                    return Ok(fields);
                }
                Some(',') => {}
                Some(c) => return Err(format!("`{c}` after a closing quote")),
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        fields.push(field);
                        return Ok(fields);
                    }
                    Some(',') => break,
                    Some('"') => return Err("a quote inside an unquoted field".into()),
                    Some(c) => field.push(c),
                }
            }
        }
        fields.push(field);
    }
}

/// Parses a results file (see the module doc for what is checked).
pub fn parse(src: &str) -> Result<Table, CsvError> {
    // Lines without their terminator (LF or CRLF). A final terminator is
    // optional; blank lines are allowed only at the very end.
    let mut lines: Vec<(usize, &str)> = src
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
        .collect();
    while lines.last().is_some_and(|(_, l)| l.is_empty()) {
        lines.pop();
    }
    if let Some((n, _)) = lines.iter().find(|(_, l)| l.is_empty()) {
        return err(*n, "blank line inside the table");
    }
    if let Some((n, l)) = lines.iter().find(|(_, l)| l.contains('\r')) {
        return err(
            *n,
            format!("stray carriage return in `{}`", l.escape_debug()),
        );
    }
    let Some(&(_, header)) = lines.first() else {
        return err(0, "empty file: expected a result CSV header");
    };
    let header = split_record(header).map_err(|m| CsvError { line: 1, msg: m })?;
    if header.len() < 3 || header[0] != ID_HEADER || header.last().unwrap() != ALL_PASSED_HEADER {
        return err(
            1,
            format!(
                "not a result CSV header: expected `{ID_HEADER},<result columns>,{ALL_PASSED_HEADER}`, got `{}`",
                header.join(",")
            ),
        );
    }
    let mut columns = Vec::new();
    for label in &header[1..header.len() - 1] {
        let Some(&(_, kind)) = KNOWN_COLUMNS.iter().find(|(l, _)| l == label) else {
            let known: Vec<&str> = KNOWN_COLUMNS.iter().map(|(l, _)| *l).collect();
            return err(
                1,
                format!("unknown result column `{label}`: expected one of {known:?}"),
            );
        };
        if columns.iter().any(|c: &Column| c.kind == kind) {
            return err(
                1,
                format!("two result columns for the same run kind (`{label}`)"),
            );
        }
        columns.push(Column {
            label: label.clone(),
            kind,
        });
    }
    let width = header.len();
    let Some(&(total_line, total)) = lines.last().filter(|_| lines.len() >= 2) else {
        return err(
            lines.len(),
            format!("no `{TOTAL_LABEL}` row: the file looks truncated"),
        );
    };

    let mut rows: Vec<Row> = Vec::new();
    let mut passed_col = Vec::new();
    for &(n, line) in &lines[1..lines.len() - 1] {
        let f = split_record(line).map_err(|m| CsvError { line: n, msg: m })?;
        if f.len() != width {
            return err(n, format!("{} fields, the header has {width}", f.len()));
        }
        if f[0] == TOTAL_LABEL {
            return err(n, format!("`{TOTAL_LABEL}` row before the end of the file"));
        }
        if f[0].is_empty() || f[0].trim() != f[0] {
            return err(n, format!("bad test id `{}`", f[0]));
        }
        if let Some(prev) = rows.iter().find(|r| r.id == f[0]) {
            return err(
                n,
                format!("test id `{}` twice (first at line {})", f[0], prev.line),
            );
        }
        let mut cells = Vec::with_capacity(columns.len());
        for cell in &f[1..width - 1] {
            cells.push(Cell::parse(cell).map_err(|m| CsvError { line: n, msg: m })?);
        }
        let any_fail = cells.iter().any(|c| c.failed());
        let all_passed = match f[width - 1].as_str() {
            "P" => true,
            "F" => false,
            other => {
                return err(
                    n,
                    format!("bad `{ALL_PASSED_HEADER}` cell `{other}`: expected P or F"),
                )
            }
        };
        if all_passed == any_fail {
            return err(
                n,
                format!(
                    "`{ALL_PASSED_HEADER}` is {} but the result cells {}",
                    f[width - 1],
                    if any_fail {
                        "have a failure"
                    } else {
                        "have none"
                    }
                ),
            );
        }
        passed_col.push(all_passed);
        rows.push(Row {
            id: f[0].clone(),
            cells,
            line: n,
        });
    }

    let t = split_record(total).map_err(|m| CsvError {
        line: total_line,
        msg: m,
    })?;
    if t.first().map(String::as_str) != Some(TOTAL_LABEL) {
        return err(
            total_line,
            format!("the last row must be `{TOTAL_LABEL},...`: the file looks truncated"),
        );
    }
    if t.len() != width {
        return err(
            total_line,
            format!("{} fields, the header has {width}", t.len()),
        );
    }
    for (c, column) in columns.iter().enumerate() {
        let runs: u64 = rows
            .iter()
            .map(|r| match r.cells[c] {
                Cell::Fail { failed, .. } => failed as u64,
                _ => 0,
            })
            .sum();
        let tests = rows.iter().filter(|r| r.cells[c].failed()).count() as u64;
        let got: u64 = t[c + 1].parse().map_err(|_| CsvError {
            line: total_line,
            msg: format!("bad total `{}` for `{}`", t[c + 1], column.label),
        })?;
        if got != runs && got != tests {
            return err(
                total_line,
                format!(
                    "total {got} for `{}` is neither the failed runs ({runs}) nor the failing tests ({tests}) of the rows",
                    column.label
                ),
            );
        }
    }
    let failing = passed_col.iter().filter(|p| !**p).count();
    if t[width - 1] != failing.to_string() {
        return err(
            total_line,
            format!(
                "total `{}` for `{ALL_PASSED_HEADER}`, but {failing} rows failed",
                t[width - 1]
            ),
        );
    }
    Ok(Table { columns, rows })
}

/// Writes rows `(id, [plain, round-robin, chunked])` in the artifact format
/// (the CUDA files' flavour: LF, totals are failed runs), rows in the order
/// given, with a final newline.
pub fn write(rows: &[(String, [Cell; 3])]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{ID_HEADER},{},{ALL_PASSED_HEADER}",
        WRITE_COLUMNS.join(",")
    );
    let mut totals = [0u64; 3];
    let mut failing = 0;
    for (id, cells) in rows {
        assert!(
            !id.contains([',', '"', '\n', '\r']),
            "test id `{id}` cannot be written to a CSV cell"
        );
        out.push_str(id);
        for (c, cell) in cells.iter().enumerate() {
            out.push(',');
            out.push_str(&cell.text());
            if let Cell::Fail { failed, .. } = cell {
                totals[c] += *failed as u64;
            }
        }
        let fail = cells.iter().any(|c| c.failed());
        failing += fail as usize;
        out.push_str(if fail { ",F\n" } else { ",P\n" });
    }
    let _ = writeln!(
        out,
        "{TOTAL_LABEL},{},{},{},{failing}",
        totals[0], totals[1], totals[2]
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUDA: &str = "Test File Name,No saturation Result,Round Robin Saturation Result,Chunking Saturation Result,All Passed\n0,P,P,P,P\n2,F (21/21),F (3/21),P,F\nTotal failures:,21,3,0,1";

    #[test]
    fn reads_the_cuda_flavour() {
        let t = parse(CUDA).unwrap();
        assert_eq!(t.columns.len(), 3);
        assert_eq!(t.columns[1].kind, ColumnKind::Mapping(Mapping::RoundRobin));
        assert_eq!(t.rows[1].id, "2");
        assert_eq!(t.rows[1].line, 3);
        assert_eq!(
            t.rows[1].cells,
            vec![
                Cell::Fail {
                    failed: 21,
                    runs: 21
                },
                Cell::Fail {
                    failed: 3,
                    runs: 21
                },
                Cell::Pass
            ]
        );
    }

    #[test]
    fn reads_the_vulkan_flavour_with_crlf_and_a_quoted_label() {
        let src = "Test File Name,No saturation (same subgroup),Round Robin Saturation,Chunking Saturation,\"No saturation (diff. subgroup, 256 threads per workgroup)\",\"No saturation (same subgroup, 4 threads per workgroup)\",All Passed\r\n0,P,P,P,P,P,P\r\n1,F (6/20),P,P,P,F (20/20),F\r\n4,P,P,P,P,F (20/20),F\r\nTotal failures:,1,0,0,0,2,2\r\n";
        let t = parse(src).unwrap();
        assert_eq!(t.columns[0].kind, ColumnKind::Mapping(Mapping::Plain));
        assert_eq!(t.columns[3].kind, ColumnKind::Variant("diff-subgroup-256"));
        assert_eq!(t.columns[4].kind, ColumnKind::Variant("same-subgroup-4"));
        assert_eq!(t.rows.len(), 3);
    }

    #[test]
    fn write_then_parse_round_trips() {
        let rows = vec![
            ("0".to_string(), [Cell::Pass, Cell::Pass, Cell::NotRun]),
            (
                "7".to_string(),
                [Cell::Pass, Cell::Fail { failed: 2, runs: 5 }, Cell::NotRun],
            ),
        ];
        let text = write(&rows);
        let t = parse(&text).unwrap();
        let back: Vec<(String, [Cell; 3])> = t
            .rows
            .iter()
            .map(|r| (r.id.clone(), [r.cells[0], r.cells[1], r.cells[2]]))
            .collect();
        assert_eq!(back, rows);
        assert!(text.ends_with("Total failures:,0,2,0,1\n"));
    }

    #[test]
    fn quirks_beyond_the_known_ones_are_errors_with_lines() {
        let cases: [(&str, usize, &str); 9] = [
            ("", 0, "empty file"),
            (
                "Test File Name,No saturation Result,Round Robin Saturation Result,Chunking Saturation Result,All Passed\n0,P,P,P,P",
                2,
                "truncated",
            ),
            (
                "Test File Name,Fancy,All Passed\n0,P,P\nTotal failures:,0,0",
                1,
                "unknown result column",
            ),
            (&CUDA.replace("F (3/21)", "F(3/21)"), 3, "bad result cell"),
            (&CUDA.replace("F (3/21)", "F (0/21)"), 3, "bad result cell"),
            (&CUDA.replace("F (3/21)", " F (3/21)"), 3, "bad result cell"),
            (&CUDA.replace(",3,0,1", ",4,0,1"), 4, "neither the failed runs"),
            (&CUDA.replace("0,P,P,P,P", "0,P,P,P,F"), 2, "All Passed"),
            (&CUDA.replace("0,P,P,P,P", "2,P,P,P,P"), 3, "twice"),
        ];
        for (src, line, needle) in cases {
            let e = parse(src).unwrap_err();
            assert_eq!(e.line, line, "{src:?}: {e:?}");
            assert!(e.msg.contains(needle), "{src:?}: {e:?}");
        }
        assert!(parse(&CUDA.replace("\n2,", "\n\n2,")).is_err());
    }
}
