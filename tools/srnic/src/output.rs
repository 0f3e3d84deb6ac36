// SPDX-License-Identifier: GPL-2.0
//! The tool's one output layer: every command builds its result once, as a
//! value that is both [`serde::Serialize`] and [`Report`], and [`Output`]
//! prints it either as text or (`--json`) as one JSON value on one line.
//!
//! The JSON form's field names are the Rust fields' names (serde's derive),
//! the text form is written from the same fields: no command keeps a second
//! list of what it reports. A command that prints more than one value (`stats
//! -w`, `xfer -s --count N`) prints one JSON value per line (JSON Lines).
//!
//! Progress lines (one per ping, say) are reports too: in text mode they are
//! printed as they happen; in JSON mode they are left out, and the final
//! document holds them. Notices (a server's "ready" line that a script waits
//! for) go to standard output in text mode and to standard error in JSON mode,
//! so that standard output stays JSON. Errors always go to standard error as
//! text, with a non-zero exit (`main`).

use crate::util::{CmdResult, Fail};
use serde::Serialize;
use std::io::{self, Write};

/// A command's result, printable as text or as JSON.
pub trait Report: Serialize {
    /// Writes the text form: zero or more lines, each ending in a newline.
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()>;
}

/// How results are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Lines for people (and for the shell scripts that always read them).
    Text,
    /// One JSON value per report, each on one line.
    Json,
}

/// Where and how a command prints its reports.
#[derive(Clone, Copy, Debug)]
pub struct Output {
    format: Format,
}

impl Output {
    /// An output in `format`.
    pub fn new(format: Format) -> Self {
        Self { format }
    }

    /// The format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Prints a report on standard output (and flushes it: a script may be
    /// waiting for the line).
    pub fn emit(&self, r: &impl Report) -> CmdResult {
        let out = io::stdout();
        let mut out = out.lock();
        self.write(&mut out, r)
            .and_then(|()| out.flush())
            .map_err(|e| Fail::Error(format!("cannot write the output: {e}")))
    }

    /// Prints a progress report: as [`Self::emit`] in text mode, nothing in
    /// JSON mode (the command's final report holds it).
    pub fn progress(&self, r: &impl Report) -> CmdResult {
        match self.format {
            Format::Text => self.emit(r),
            Format::Json => Ok(()),
        }
    }

    /// Prints a notice line (no newline in `line`): on standard output in text
    /// mode, on standard error in JSON mode.
    pub fn notice(&self, line: &str) {
        match self.format {
            Format::Text => {
                let out = io::stdout();
                let mut out = out.lock();
                let _ = writeln!(out, "{line}").and_then(|()| out.flush());
            }
            Format::Json => eprintln!("srnic: {line}"),
        }
    }

    /// Writes `r` to `out` in this output's format.
    pub fn write(&self, out: &mut dyn Write, r: &impl Report) -> io::Result<()> {
        match self.format {
            Format::Text => r.write_text(out),
            Format::Json => {
                serde_json::to_writer(&mut *out, r)?;
                writeln!(out)
            }
        }
    }
}

/// `r` in `format`, as a string (for the tests of every report).
#[cfg(test)]
pub fn render(format: Format, r: &impl Report) -> String {
    let mut v = Vec::new();
    Output::new(format).write(&mut v, r).unwrap();
    String::from_utf8(v).unwrap()
}

/// `r`'s JSON form, parsed back (for the tests of every report): checks that
/// it is exactly one line.
#[cfg(test)]
pub fn json(r: &impl Report) -> serde_json::Value {
    let s = render(Format::Json, r);
    assert_eq!(s.matches('\n').count(), 1, "one line: {s}");
    assert!(s.ends_with('\n'));
    serde_json::from_str(&s).unwrap()
}

/// Serializes a list of (name, value) pairs as a JSON object, keeping their
/// order (the ABI's): `#[serde(serialize_with = "named_values")]`.
pub fn named_values<S, V>(v: &[(&'static str, V)], s: S) -> Result<S::Ok, S::Error>
where
    S: serde::Serializer,
    V: Serialize,
{
    s.collect_map(v.iter().map(|(k, v)| (*k, v)))
}

/// A rate in MB/s (10^6 bytes per second) of `bytes` moved in `secs`; 0 when
/// no time passed (JSON has no infinity).
pub fn mb_per_s(bytes: f64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes / secs / 1e6
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Two {
        name: &'static str,
        n: u64,
        #[serde(serialize_with = "named_values")]
        values: Vec<(&'static str, u64)>,
    }

    impl Report for Two {
        fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
            writeln!(out, "{} {}", self.name, self.n)?;
            writeln!(out, "second line")
        }
    }

    #[test]
    fn one_value_two_forms() {
        let t = Two {
            name: "x",
            n: 3,
            values: vec![("z", 1), ("a", 2)],
        };
        assert_eq!(render(Format::Text, &t), "x 3\nsecond line\n");
        let s = render(Format::Json, &t);
        // The ABI's order, not sorted.
        assert_eq!(s, "{\"name\":\"x\",\"n\":3,\"values\":{\"z\":1,\"a\":2}}\n");
        let v = json(&t);
        assert_eq!(v["n"], 3);
        assert_eq!(v["values"]["a"], 2);
    }

    #[test]
    fn rates() {
        assert_eq!(mb_per_s(2e6, 2.0), 1.0);
        assert_eq!(mb_per_s(1.0, 0.0), 0.0);
    }
}
