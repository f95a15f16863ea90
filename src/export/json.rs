//! Result and study documents as JSON.

use serde::Serialize;

/// Pretty JSON with a final newline.
pub fn to_bytes<T: Serialize>(doc: &T) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(doc).expect("the document serialises");
    v.push(b'\n');
    v
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
