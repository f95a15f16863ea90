//! The result document as JSON.

use crate::result::ResultDoc;

/// Pretty JSON with a final newline.
pub fn to_bytes(doc: &ResultDoc) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(doc).expect("the document serialises");
    v.push(b'\n');
    v
}
