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
//!
//! Records are RFC 4180 ([`records`]): a quoted field may hold `,`, `""`
//! and line breaks. The published files quote only one header label; our
//! own files quote a test id that needs it (a test's full name, see
//! [`write()`]), so that every id reads back as it was written.

use crate::excerpt::excerpt;
use crate::mapping::Mapping;

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
            format!(
                "bad result cell `{}`: expected `P`, `F (k/n)` with 0 < k <= n, or an empty cell (not run)",
                excerpt(s)
            )
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

/// One record of a results file: its fields, the line it starts on, and
/// whether its first field (the test id) was quoted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub line: usize,
    pub fields: Vec<String>,
    pub id_quoted: bool,
}

impl Record {
    /// An empty line: one empty, unquoted field.
    fn is_blank(&self) -> bool {
        !self.id_quoted && self.fields.len() == 1 && self.fields[0].is_empty()
    }
}

/// Splits a results file into records, strictly by RFC 4180: fields
/// separated by `,`, records ended by LF or CRLF (the last one may lack
/// it), a field in double quotes may hold `,`, line breaks and `""` for a
/// quote. Where RFC 4180 is silent the reader is strict rather than
/// guessing: a quote inside an unquoted field, anything but `,` or a line
/// end after a closing quote, and a carriage return not followed by a line
/// feed (outside quotes) are errors at their line.
pub fn records(src: &str) -> Result<Vec<Record>, CsvError> {
    let mut out = Vec::new();
    let mut chars = src.chars().peekable();
    let mut line = 1;
    while chars.peek().is_some() {
        let start = line;
        let mut fields = Vec::new();
        let mut id_quoted = false;
        loop {
            let mut field = String::new();
            let quoted = chars.peek() == Some(&'"');
            if fields.is_empty() {
                id_quoted = quoted;
            }
            if quoted {
                chars.next();
                loop {
                    match chars.next() {
                        None => return err(start, "unterminated quoted field"),
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            field.push('"');
                        }
                        Some('"') => break,
                        Some(c) => {
                            line += (c == '\n') as usize;
                            field.push(c);
                        }
                    }
                }
            } else {
                while let Some(&c) = chars.peek() {
                    match c {
                        ',' | '\n' | '\r' => break,
                        '"' => return err(line, "a quote inside an unquoted field"),
                        _ => {
                            field.push(c);
                            chars.next();
                        }
                    }
                }
            }
            fields.push(field);
            match chars.next() {
                None => break,
                Some(',') => {}
                Some('\n') => {
                    line += 1;
                    break;
                }
                Some('\r') if chars.peek() == Some(&'\n') => {
                    chars.next();
                    line += 1;
                    break;
                }
                Some('\r') => {
                    return err(line, "stray carriage return (not followed by a line feed)")
                }
                Some(c) => {
                    return err(
                        line,
                        format!("`{}` after a closing quote", c.escape_debug()),
                    )
                }
            }
        }
        out.push(Record {
            line: start,
            fields,
            id_quoted,
        });
    }
    Ok(out)
}

/// Parses a results file (see the module doc for what is checked).
pub fn parse(src: &str) -> Result<Table, CsvError> {
    // A final line end is optional; blank lines are allowed only at the
    // very end.
    let mut lines = records(src)?;
    while lines.last().is_some_and(Record::is_blank) {
        lines.pop();
    }
    if let Some(r) = lines.iter().find(|r| r.is_blank()) {
        return err(r.line, "blank line inside the table");
    }
    let Some(header) = lines.first() else {
        return err(0, "empty file: expected a result CSV header");
    };
    let header = &header.fields;
    let columns = header_columns(header)?;
    let width = header.len();
    let Some(total) = lines.last().filter(|_| lines.len() >= 2) else {
        return err(
            lines.len(),
            format!("no `{TOTAL_LABEL}` row: the file looks truncated"),
        );
    };

    let mut rows: Vec<Row> = Vec::new();
    let mut first_at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut passed_col = Vec::new();
    for r in &lines[1..lines.len() - 1] {
        let (row, all_passed) = parse_row(r, width, &mut first_at)?;
        passed_col.push(all_passed);
        rows.push(row);
    }
    let failing = passed_col.iter().filter(|p| !**p).count();
    check_totals(total, &columns, &rows, width, failing)?;
    Ok(Table { columns, rows })
}

/// The result columns a header names, between its first (test id) and
/// last (`All Passed`) labels: each label must be known
/// ([`KNOWN_COLUMNS`]) and each run kind measured once, so that a renamed
/// or repeated column is an error rather than data read under the wrong
/// mapping.
fn header_columns(header: &[String]) -> Result<Vec<Column>, CsvError> {
    if header.len() < 3 || header[0] != ID_HEADER || header.last().unwrap() != ALL_PASSED_HEADER {
        return err(
            1,
            format!(
                "not a result CSV header: expected `{ID_HEADER},<result columns>,{ALL_PASSED_HEADER}`, got `{}`",
                excerpt(&header.join(","))
            ),
        );
    }
    let mut columns = Vec::new();
    for label in &header[1..header.len() - 1] {
        let Some(&(_, kind)) = KNOWN_COLUMNS.iter().find(|(l, _)| l == label) else {
            let known: Vec<&str> = KNOWN_COLUMNS.iter().map(|(l, _)| *l).collect();
            return err(
                1,
                format!(
                    "unknown result column `{}`: expected one of {known:?}",
                    excerpt(label)
                ),
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
    Ok(columns)
}

/// One test's row (`width` fields, as the header): a new, well-formed id
/// (`first_at` holds the ids seen so far, with their lines), its cells,
/// and an `All Passed` cell that agrees with them. Returns the row and its
/// `All Passed` value, which the totals row counts.
fn parse_row<'a>(
    r: &'a Record,
    width: usize,
    first_at: &mut std::collections::HashMap<&'a str, usize>,
) -> Result<(Row, bool), CsvError> {
    let (n, f) = (r.line, &r.fields);
    if f.len() != width {
        return err(n, format!("{} fields, the header has {width}", f.len()));
    }
    if f[0] == TOTAL_LABEL {
        return err(n, format!("`{TOTAL_LABEL}` row before the end of the file"));
    }
    // White space around an id is a sloppy edit unless the id was
    // quoted (a test's full name, as `write` quotes it).
    if f[0].is_empty() || (!r.id_quoted && f[0].trim() != f[0]) {
        return err(n, format!("bad test id `{}`", excerpt(&f[0])));
    }
    if let Some(prev) = first_at.insert(&f[0], n) {
        return err(
            n,
            format!("test id `{}` twice (first at line {prev})", excerpt(&f[0])),
        );
    }
    let mut cells = Vec::with_capacity(width - 2);
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
                format!(
                    "bad `{ALL_PASSED_HEADER}` cell `{}`: expected P or F",
                    excerpt(other)
                ),
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
    let row = Row {
        id: f[0].clone(),
        cells,
        line: n,
    };
    Ok((row, all_passed))
}

/// Checks the `Total failures:` row against the rows: per column, the
/// failed runs (Apple, CUDA) or the failing tests (Vulkan), and in the
/// last cell the number of `failing` rows. A total that is neither
/// catches a truncated or edited file.
fn check_totals(
    total: &Record,
    columns: &[Column],
    rows: &[Row],
    width: usize,
    failing: usize,
) -> Result<(), CsvError> {
    let (total_line, t) = (total.line, &total.fields);
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
            msg: format!("bad total `{}` for `{}`", excerpt(&t[c + 1]), column.label),
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
    if t[width - 1] != failing.to_string() {
        return err(
            total_line,
            format!(
                "total `{}` for `{ALL_PASSED_HEADER}`, but {failing} rows failed",
                excerpt(&t[width - 1])
            ),
        );
    }
    Ok(())
}

/// Writes rows `(id, [plain, round-robin, chunked])` in the artifact format
/// (the CUDA files' flavour: LF, totals are failed runs), rows in the order
/// given, with a final newline. Fields are quoted as RFC 4180 says (by the
/// `csv` crate): only where needed, so the artifact's own ids and cells are
/// written bare, and any id (a test's full name may hold `,`, `"` or a line
/// break) reads back as it was.
pub fn write(rows: &[(String, [Cell; 3])]) -> String {
    let mut out = Vec::new();
    let mut header = vec![ID_HEADER];
    header.extend(WRITE_COLUMNS);
    header.push(ALL_PASSED_HEADER);
    record(&mut out, &header);
    let mut totals = [0u64; 3];
    let mut failing = 0;
    for (id, cells) in rows {
        let texts: Vec<String> = cells.iter().map(|c| c.text()).collect();
        for (c, cell) in cells.iter().enumerate() {
            if let Cell::Fail { failed, .. } = cell {
                totals[c] += *failed as u64;
            }
        }
        let fail = cells.iter().any(|c| c.failed());
        failing += fail as usize;
        record(
            &mut out,
            &[
                id,
                &texts[0],
                &texts[1],
                &texts[2],
                if fail { "F" } else { "P" },
            ],
        );
    }
    let totals: Vec<String> = totals.iter().map(u64::to_string).collect();
    record(
        &mut out,
        &[
            TOTAL_LABEL,
            &totals[0],
            &totals[1],
            &totals[2],
            &failing.to_string(),
        ],
    );
    String::from_utf8(out).expect("a CSV of UTF-8 fields is UTF-8")
}

/// Appends one record, ended by LF, its fields quoted where RFC 4180 needs
/// it; a record whose id is empty or has white space at an end (which the
/// reader refuses bare, as a sloppy edit) is quoted whole.
fn record(out: &mut Vec<u8>, fields: &[&str]) {
    let id = fields[0];
    let style = if id.is_empty() || id.trim() != id {
        csv::QuoteStyle::Always
    } else {
        csv::QuoteStyle::Necessary
    };
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .quote_style(style)
        .from_writer(out);
    w.write_record(fields)
        .expect("writing a CSV record to memory cannot fail");
    w.flush()
        .expect("writing a CSV record to memory cannot fail");
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
    fn any_id_is_quoted_as_rfc_4180_says_and_reads_back() {
        let ids = [
            "plain",
            "a,b",
            "say \"hi\"",
            "two\nlines",
            "crlf\r\nx",
            " padded ",
            "\"",
            "Total failures:x",
        ];
        let rows: Vec<(String, [Cell; 3])> = ids
            .iter()
            .map(|id| (id.to_string(), [Cell::Pass, Cell::NotRun, Cell::NotRun]))
            .collect();
        let text = write(&rows);
        assert!(text.contains("\nplain,P,,,P\n\"a,b\",P,,,P\n\"say \"\"hi\"\"\",P"));
        let t = parse(&text).unwrap();
        let back: Vec<&str> = t.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(back, ids);
        // Rows keep the line they start on, past ids with line breaks.
        assert_eq!(t.rows[3].line, 5);
        assert_eq!(t.rows[4].line, 7);
        assert_eq!(t.rows[5].line, 9);
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
        let strict: [(&str, usize, &str); 5] = [
            (
                &CUDA.replace("\n2,", "\n\"2\"x,"),
                3,
                "`x` after a closing quote",
            ),
            (
                &CUDA.replace("\n2,", "\n2\",\","),
                3,
                "a quote inside an unquoted field",
            ),
            (
                &CUDA.replace("\n2,", "\n\"2,"),
                3,
                "unterminated quoted field",
            ),
            (&CUDA.replace("\n2,", "\r2,"), 2, "stray carriage return"),
            (&CUDA.replace("\n2,", "\n 2,"), 3, "bad test id ` 2`"),
        ];
        for (src, line, needle) in strict {
            let e = parse(src).unwrap_err();
            assert_eq!(e.line, line, "{src:?}: {e:?}");
            assert!(e.msg.contains(needle), "{src:?}: {e:?}");
        }
    }
}
