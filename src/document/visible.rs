//! A JSON document's strings made safe to print before it is read: names, labels and
//! messages in another's file reach the terminal (tables, warnings, errors), where an escape
//! sequence would move the cursor, retitle the window or hide text. Each control character in
//! a string, escaped (`\u001b`, `\n`) or raw (DEL, C1), becomes the text that
//! [`crate::format::visible`] writes for it (`\u{1b}`); everything else is left as it was.

use std::borrow::Cow;

/// The JSON text with its strings' control characters written out; the same text, not a
/// copy, when it has none. One pass, linear in the text.
pub fn json(text: &[u8]) -> Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let (mut i, mut copied, mut in_string) = (0, 0, false);
    while i < text.len() {
        let (len, control) = match (in_string, text[i]) {
            (false, b) => {
                in_string = b == b'"';
                (1, None)
            }
            (true, b'"') => {
                in_string = false;
                (1, None)
            }
            (true, b'\\') => escape(&text[i..]),
            (true, 0x7f) => (1, Some('\u{7f}')),
            (true, 0xc2) if text.get(i + 1).is_some_and(|b| (0x80..0xa0).contains(b)) => {
                (2, char::from_u32(u32::from(text[i + 1])))
            }
            (true, _) => (1, None),
        };
        if let Some(c) = control {
            let out = out.get_or_insert_with(|| Vec::with_capacity(text.len() + 64));
            out.extend_from_slice(&text[copied..i]);
            // Its visible text as a JSON string holds it: each backslash doubled.
            out.extend_from_slice(c.escape_debug().to_string().replace('\\', "\\\\").as_bytes());
            copied = i + len;
        }
        i += len;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.extend_from_slice(&text[copied..]);
            Cow::Owned(out)
        }
    }
}

/// The escape at the start of `s` (a backslash): its length, and the control character it
/// stands for, if it is one.
fn escape(s: &[u8]) -> (usize, Option<char>) {
    let c = match s.get(1) {
        Some(b'b') => '\u{8}',
        Some(b'f') => '\u{c}',
        Some(b'n') => '\n',
        Some(b'r') => '\r',
        Some(b't') => '\t',
        Some(b'u') => {
            let code =
                s.get(2..6).and_then(|h| std::str::from_utf8(h).ok()).and_then(|h| u32::from_str_radix(h, 16).ok());
            return match code.and_then(char::from_u32).filter(|c| c.is_control()) {
                Some(c) => (6, Some(c)),
                None => (2, None),
            };
        }
        // `\"`, `\\`, `\/`, or something the parser refuses.
        _ => return (s.len().min(2), None),
    };
    (2, Some(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> serde_json::Value {
        serde_json::from_slice(&json(text.as_bytes())).unwrap()
    }

    #[test]
    fn control_characters_in_strings_are_written_out_and_nothing_else_changes() {
        let v = read(r#"{"name": "a\u001b[2Jb\n\t", "x\u0007": "\\u001b \" é \u00e9 \ud83d\ude00", "n": -1.5e3}"#);
        assert_eq!(v["name"], r"a\u{1b}[2Jb\n\t");
        assert_eq!(v[r"x\u{7}"], "\\u001b \" é é 😀");
        assert_eq!(v["n"], -1500.0);
        let raw = "{\"c1\": \"a\u{9b}2J\u{7f}\"}";
        assert_eq!(read(raw)["c1"], r"a\u{9b}2J\u{7f}");
        let clean = br#"{"a": "plain \\ text", "b": [1, 2]}"#;
        assert!(matches!(json(clean), Cow::Borrowed(_)));
        // What the parser refuses stays refused.
        assert!(serde_json::from_slice::<serde_json::Value>(&json(br#"{"a": "\u00"}"#)).is_err());
    }
}
