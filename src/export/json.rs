//! Result and study documents as JSON.

use serde::Serialize;

/// Pretty JSON with a final newline.
pub fn to_bytes<T: Serialize>(doc: &T) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(doc).expect("the document serialises");
    v.push(b'\n');
    v
}
