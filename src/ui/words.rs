//! The command line's words put in the page's: a message about a job the page built names the
//! page's control, not the line of a TOML text the user never wrote (`job:3:6:`) nor a flag
//! (`--allow-write`) where the page has a field for it. The command line's messages are left
//! as they are; the page's calls translate what they answer.

use crate::error::Error;

/// The names a message's place in a job's text starts with: `job:3:6: `, `/dev/stdin:3: ` (a
/// run's), `specs.toml:4:1: `.
const TEXTS: [&str; 3] = ["job:", "/dev/stdin:", "specs.toml:"];
/// The safety rule's cure, as the command line gives it, around the device's name.
const ALLOW: (&str, &str) = ("pass --allow-write ", " (or allow_write in the job file)");

/// The command line's words the page says otherwise, each with the page's.
const SAID: &[(&str, &str)] = &[
    ("'iogauge specs' lists the built-in ones", "the Access Specifications tab lists the built-in ones"),
    ("(or --spec NAME)", "(or choose one in the worker's Access specification)"),
    ("--allow-mounted-write", "allow_mounted_write (Test Setup)"),
];

/// `e` as the page says it, for a job whose text is `toml`.
pub fn error(e: Error, toml: &str) -> Error {
    match e {
        Error::Input(m) => Error::Input(said(&m, toml)),
        Error::Runtime(m) => Error::Runtime(said(&m, toml)),
        Error::Stopped => Error::Stopped,
    }
}

/// `text` (one message or many lines) as the page says it, for a job whose text is `toml`.
pub fn said(text: &str, toml: &str) -> String {
    let lines = text.split_inclusive('\n').map(|l| allowed(&placed(l, toml)));
    let page = lines.collect::<String>();
    SAID.iter().fold(page, |t, (cli, page)| t.replace(cli, page))
}

/// A message's line with its place in the job's text (`job:3:6: `) said as the page's control.
fn placed(line: &str, toml: &str) -> String {
    let (head, rest) = line.strip_prefix("iogauge: ").map_or(("", line), |r| ("iogauge: ", r));
    let Some(after) = TEXTS.iter().find_map(|t| rest.strip_prefix(t)) else { return line.to_string() };
    // A text's name alone (`specs.toml: access specification 'x' line 1: ...`): the rest says it.
    if let Some(message) = after.strip_prefix(' ') {
        return format!("{head}{message}");
    }
    let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n = digits(after);
    let Ok(number) = after[..n].parse::<usize>() else { return line.to_string() };
    let mut tail = &after[n..];
    if let Some(col) = tail.strip_prefix(':').filter(|c| digits(c) > 0) {
        tail = &col[digits(col)..];
    }
    let Some(message) = tail.strip_prefix(": ") else { return line.to_string() };
    let place = control(toml, number).unwrap_or_else(|| format!("line {number} of the job (the Job tab)"));
    let message = without_key(toml, number, message);
    format!("{head}{place}: {}", typed_wrong(message).unwrap_or_else(|| message.to_string()))
}

/// `message` without the key of line `line` it starts with (`time: 'abc' is not a duration`):
/// the control its place names says it.
fn without_key<'a>(toml: &str, line: usize, message: &'a str) -> &'a str {
    let here = toml.lines().nth(line.saturating_sub(1)).and_then(|l| l.split_once('='));
    let key = here.map(|(k, _)| k.trim().trim_matches('"')).filter(|k| !k.is_empty());
    key.and_then(|k| message.strip_prefix(k)?.strip_prefix(": ")).unwrap_or(message)
}

/// What serde expected, as the page says it.
const EXPECTED: &[(&str, &str)] = &[
    ("u8", "a whole number from 0 to 255"),
    ("u32", "a whole number from 0 to 4294967295"),
    ("u64", "a whole number"),
    ("i32", "a whole number"),
    ("i64", "a whole number"),
    ("f64", "a number"),
    ("a boolean", "true or false"),
];

/// A value of the wrong type said as the page says it: `seed: invalid type: string "abc",
/// expected u64: give ...` (the key is the control the place names already) is `'abc' is not a
/// whole number`; None for any other message.
fn typed_wrong(message: &str) -> Option<String> {
    let from = message.find("invalid type: ").or_else(|| message.find("invalid value: "))?;
    let (got, expected) = message[from..].split_once(": ")?.1.split_once(", expected ")?;
    let expected = expected.split(": give ").next()?.trim_end();
    let (_, give) = EXPECTED.iter().find(|(serde, _)| *serde == expected)?;
    // `string "abc"`, `integer `-1``, `floating point `1.5``; a list or a table has no text.
    let value = got.split_once(['"', '`']).map(|(_, v)| v.trim_end_matches(['"', '`']));
    Some(match value {
        Some(v) => format!("'{v}' is not {give}"),
        None => format!("{got} where the field takes {give}"),
    })
}

/// The safety rule's cure said by the page's field for it.
fn allowed(line: &str) -> String {
    let Some(at) = line.find(ALLOW.0) else { return line.to_string() };
    let name_at = at + ALLOW.0.len();
    let end = line[name_at..].find(' ').map_or(line.len(), |i| name_at + i);
    let Some(rest) = line[end..].strip_prefix(ALLOW.1) else { return line.to_string() };
    let name = &line[name_at..end];
    format!("{}type {name} in Test Setup's 'Allow writing to' (Safety), or in the box below,{rest}", &line[..at])
}

/// The page's control for the key on line `line` (from 1) of a job's or spec file's text:
/// `Test Setup's time`, `worker "w2"'s outstanding I/Os`, `specification "x"'s line 2 (read)`.
pub fn control(toml: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = toml.lines().collect();
    let here = lines.get(line.checked_sub(1)?)?.trim();
    let key = here.split_once('=').map(|(k, _)| k.trim().trim_matches('"')).filter(|k| !k.starts_with('['));
    // The table the line is in: the last header at or above it.
    let at = (0..line).rev().find(|&i| lines[i].trim_start().starts_with('['))?;
    let header = lines[at].trim();
    let name = |from: usize| table_name(&lines, from);
    let count = |h: &str| lines[..=at].iter().filter(|l| l.trim() == h).count();
    Some(match (header, key) {
        ("[test]", Some("allow_write")) => "Test Setup's 'Allow writing to' (Safety)".into(),
        ("[test]", Some("run")) => "the test's list of specifications (Access Specifications)".into(),
        ("[test]", Some(k)) => format!("Test Setup's {k}"),
        ("[[worker]]", k) => {
            let who = name(at).unwrap_or_else(|| format!("worker {}", count("[[worker]]")));
            format!("worker \"{who}\"'s {}", worker_field(k.unwrap_or("settings")))
        }
        ("[[spec]]", k) => format!("specification \"{}\"'s {}", name(at).unwrap_or_default(), k.unwrap_or("settings")),
        ("[[spec.lines]]", k) => {
            let spec = (0..at).rev().find(|&i| lines[i].trim() == "[[spec]]");
            let n = lines[spec.unwrap_or(0)..=at].iter().filter(|l| l.trim() == "[[spec.lines]]").count();
            let who = spec.and_then(name).unwrap_or_default();
            format!("specification \"{who}\"'s line {n} ({})", line_field(k.unwrap_or("settings")))
        }
        (h, k) if h.starts_with("[study") => format!("Test Setup's cycling ({})", k.unwrap_or(h)),
        _ => return None,
    })
}

/// The `name` a table starting at line index `from` gives, if any.
fn table_name(lines: &[&str], from: usize) -> Option<String> {
    let table = lines[from + 1..].iter().take_while(|l| !l.trim_start().starts_with('['));
    table.filter_map(|l| l.split_once('=')).find(|(k, _)| k.trim() == "name").map(|(_, v)| {
        let v = v.trim();
        v.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(v).to_string()
    })
}

/// A worker's key as its panel labels the field.
fn worker_field(key: &str) -> String {
    match key {
        "outstanding" => "Outstanding I/Os".into(),
        "spec" => "Access specification".into(),
        "targets" => "Disk Targets".into(),
        "name" => "Name".into(),
        k => k.to_string(),
    }
}

/// A specification line's key as the editor's column is labelled.
fn line_field(key: &str) -> &str {
    match key {
        "share" => "% of access",
        "read" => "% read",
        "random" => "% random",
        "delay_ms" => "delay ms",
        k => k,
    }
}
