//! The two things every command's output shares: the `--format` choice
//! (text for people, JSON for tools) and writing to stdout.
//!
//! They live in the library, below the command line, because the options
//! of `run` and `import` ([`crate::campaign`]) name the format and a
//! campaign's summary is printed the same way a report is.

use clap::ValueEnum;

/// `--format`: text for people (the default) or JSON for tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Writes `text` to stdout. A closed pipe (`| head`) is not an error worth
/// a message; anything else is, for the caller to report (exit 1).
pub fn print(text: &str) -> Result<(), String> {
    progress_litmus::io::write_stdout(text.as_bytes())
        .map(drop)
        .map_err(|e| format!("writing to stdout: {e}"))
}

/// A time in Unix milliseconds as a UTC date and time,
/// `YYYY-MM-DD hh:mm:ss UTC` (proleptic Gregorian calendar; Howard
/// Hinnant's `civil_from_days`, so no time-zone database is needed).
pub fn utc(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use crate::report::format::utc;

    /// Dates whose Unix times are known independently (`date -u -d`).
    #[test]
    fn unix_times_are_utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        // 2000-02-29, a leap day of a year divisible by 400: 951782400 s.
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
        // 2024-12-31 23:59:59: 1735689599 s.
        assert_eq!(utc(1_735_689_599_999), "2024-12-31 23:59:59 UTC");
        // Before 1970: 1969-12-31 23:59:59 is -1 s.
        assert_eq!(utc(-1000), "1969-12-31 23:59:59 UTC");
    }
}
