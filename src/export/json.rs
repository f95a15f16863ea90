//! Result and study documents as JSON.

use serde::Serialize;

/// Pretty JSON with a final newline, every array that holds no object on one line: a
/// histogram's buckets as `[[12, 3], [13, 40]]`, not two lines a number (a long run's
/// document a fifth of the size).
pub fn to_bytes<T: Serialize>(doc: &T) -> Vec<u8> {
    let pretty = serde_json::to_vec_pretty(doc).expect("the document serialises");
    let mut v = Vec::with_capacity(pretty.len() / 2);
    let mut i = 0;
    while i < pretty.len() {
        let b = pretty[i];
        match b {
            b'"' => {
                let end = string_end(&pretty, i);
                v.extend_from_slice(&pretty[i..end]);
                i = end;
                continue;
            }
            b'[' => {
                if let Some(end) = flat_array_end(&pretty, i) {
                    inline(&pretty[i..end], &mut v);
                    i = end;
                    continue;
                }
            }
            _ => {}
        }
        v.push(b);
        i += 1;
    }
    v.push(b'\n');
    v
}

/// Where the string starting at `json[at]` (its opening quote) ends: past its closing quote.
fn string_end(json: &[u8], at: usize) -> usize {
    let mut i = at + 1;
    while i < json.len() && json[i] != b'"' {
        i += if json[i] == b'\\' { 2 } else { 1 };
    }
    (i + 1).min(json.len())
}

/// Where the array opening at `json[at]` ends (past its `]`), if it holds no object.
fn flat_array_end(json: &[u8], at: usize) -> Option<usize> {
    let (mut depth, mut i) = (0usize, at);
    while i < json.len() {
        match json[i] {
            b'"' => {
                i = string_end(json, i);
                continue;
            }
            b'{' => return None,
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Writes the pretty `array` (no object in it) on one line.
fn inline(array: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < array.len() {
        match array[i] {
            b'"' => {
                let end = string_end(array, i);
                out.extend_from_slice(&array[i..end]);
                i = end;
                continue;
            }
            b' ' | b'\n' => {}
            b',' => out.extend_from_slice(b", "),
            b => out.push(b),
        }
        i += 1;
    }
}

/// JSON without whitespace, as the history stores documents: a document of many histograms is
/// a sixth of its pretty size (8.7 MB pretty, 1.4 MB compact at 64 workers x 8 targets).
pub fn to_compact<T: Serialize>(doc: &T) -> String {
    serde_json::to_string(doc).expect("the document serialises")
}

/// The document itself (`--json`), rewritten after every study point.
pub struct Json;

impl super::Exporter for Json {
    fn what(&self) -> &'static str {
        "the JSON document"
    }
    fn run(&self, doc: &crate::result::ResultDoc) -> Vec<u8> {
        to_bytes(doc)
    }
    fn study(&self, doc: &crate::study::doc::StudyDoc) -> super::Export {
        super::Export::Bytes(to_bytes(doc))
    }
    fn every_point(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn arrays_without_objects_are_one_line_and_the_document_reads_the_same() {
        let doc = serde_json::json!({
            "buckets": [[12, 3], [13, 40]],
            "names": ["a \\\"[x]\\\" {", "b"],
            "empty": [],
            "rows": [{ "x": [1, 2], "y": "]" }, { "x": [] }],
        });
        let text = String::from_utf8(super::to_bytes(&doc)).unwrap();
        assert!(text.contains("\"buckets\": [[12, 3], [13, 40]]"), "{text}");
        assert!(text.contains("\"x\": [1, 2]"), "{text}");
        assert!(text.contains("\"rows\": [\n"), "an array of objects stays pretty: {text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, doc);
    }
}
