//! What names a target. A [`TargetName`] is the text a job, a flag or a request gives (a path,
//! `null`, a network target's URL), read once: the password such a URL may carry is taken out
//! as it is read and kept beside the name as a [`Secret`]. An [`Address`] is a network target as
//! its inspection reads that name, once: what it names (the server resolved), who logs in and
//! with what. Both show themselves (`Display`, and a name's `Serialize`) as the name without
//! the password: the one form in which a target reaches a message, a file, the workbench's
//! answers or the history.

use std::ops::Range;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Locator, Secret, percent_decode};

/// A target as named: the text without the password its URL may have carried, and that
/// password. Every way of making one ([`TargetName::read`], `From`, `FromStr`, `Deserialize`)
/// takes the password out; every way of showing one leaves it out.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TargetName {
    /// The text as given, less the password.
    name: String,
    /// The password taken out of the URL, for the login.
    secret: Option<Secret>,
}

impl TargetName {
    /// `text` read: a URL's password (`SCHEME://USER:PASSWORD@...`, the URI's form, or for
    /// iSCSI also `iscsi://USER%PASSWORD@...`, libiscsi's) taken out into the secret, percent
    /// decoded; anything else is the name as it is.
    pub fn read(text: &str) -> TargetName {
        match password_span(text) {
            Some(p) => TargetName {
                name: format!("{}{}", &text[..p.start], &text[p.end..]),
                secret: Some(Secret(percent_decode(&text[p.start + 1..p.end]))),
            },
            None => TargetName { name: text.to_string(), secret: None },
        }
    }

    /// The name, without the password.
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// The password taken out of the URL, if it carried one.
    pub fn secret(&self) -> Option<&Secret> {
        self.secret.as_ref()
    }

    /// The user the URL names (`SCHEME://USER@...`), percent decoded.
    pub fn user(&self) -> Option<String> {
        let (_, u) = userinfo(&self.name)?;
        Some(percent_decode(&self.name[u])).filter(|u| !u.is_empty())
    }

    /// The target `f` makes of the name (`{host}` and `{rank}` filled in), with its password.
    pub fn map(&self, f: impl FnOnce(&str) -> String) -> TargetName {
        TargetName { name: f(&self.name), secret: self.secret.clone() }
    }

    /// This name with `other`'s password, where this one has none and `other` names the same
    /// text: a password given once for a URL (the workbench's typed target) for every use of it.
    pub fn or_secret_of(self, other: &TargetName) -> TargetName {
        match (&self.secret, &other.secret) {
            (None, Some(s)) if self.name == other.name => TargetName { secret: Some(s.clone()), ..self },
            _ => self,
        }
    }

    /// The text with its password put back (percent encoded, which reads back exactly), for
    /// one process of iogauge's own that logs in: the workbench's run, handed its job on a
    /// pipe. Never for people, nor for a file.
    pub fn with_secret(&self) -> String {
        let (Some(secret), Some((scheme, u))) = (&self.secret, userinfo(&self.name)) else {
            return self.name.clone();
        };
        let separator = if scheme == "iscsi" { '%' } else { ':' };
        let (before, after) = self.name.split_at(u.end);
        format!("{before}{separator}{}{after}", percent_encode(secret.expose()))
    }
}

/// `text` with the password of every URL in it taken out, as [`TargetName::read`] takes it
/// (a URL here runs to white space or a quote): the last guard of a message that quotes what
/// it was given before any target was named in it (a parser's, quoting a value it could not
/// read), where the message leaves the process (stderr, the workbench's answers).
pub fn without_passwords(text: &str) -> String {
    let scheme = |c: char| c.is_ascii_alphanumeric() || "+-.".contains(c);
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let start = rest[..i].char_indices().rev().take_while(|(_, c)| scheme(*c)).last().map_or(i, |(j, _)| j);
        let end = rest[i..].find(|c: char| c.is_whitespace() || "\"'`<>".contains(c)).map_or(rest.len(), |j| i + j);
        out.push_str(&rest[..start]);
        out.push_str(TargetName::read(&rest[start..end]).as_str());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The scheme of URL `text` and the byte range of its userinfo (between `://` and the `@` that
/// ends it). An iSCSI URL's ends at its last `@` (an IQN holds none), so that a password with
/// an unencoded `/`, `?` or `@` is still the password; any other URL's at the last `@` of its
/// authority (before the first `/`, `?` or `#`), as RFC 3986 reads it.
fn userinfo(text: &str) -> Option<(&str, Range<usize>)> {
    let (scheme, rest) = text.split_once("://")?;
    if scheme.is_empty() || !scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)) {
        return None;
    }
    let authority = if scheme == "iscsi" { rest } else { &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())] };
    let at = authority.rfind('@')?;
    let start = scheme.len() + 3;
    Some((scheme, start..start + at))
}

/// Where the password of URL `text` is: from its separator (`:`, or iSCSI's `%`) to the `@`.
fn password_span(text: &str) -> Option<Range<usize>> {
    let (scheme, u) = userinfo(text)?;
    let separators: &[char] = if scheme == "iscsi" { &['%', ':'] } else { &[':'] };
    let at = text[u.clone()].find(separators)?;
    Some(u.start + at..u.end)
}

/// Every byte but RFC 3986's unreserved ones as `%XX`.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl std::fmt::Display for TargetName {
    /// The name without the password: how a target is shown to people, anywhere.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

impl std::fmt::Debug for TargetName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.name, f)
    }
}

/// A name is its text wherever text is asked (a path to open, a comparison).
impl std::ops::Deref for TargetName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.name
    }
}

impl AsRef<str> for TargetName {
    fn as_ref(&self) -> &str {
        &self.name
    }
}

impl AsRef<std::ffi::OsStr> for TargetName {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.name.as_ref()
    }
}

impl AsRef<std::path::Path> for TargetName {
    fn as_ref(&self) -> &std::path::Path {
        self.name.as_ref()
    }
}

impl PartialEq<str> for TargetName {
    fn eq(&self, other: &str) -> bool {
        self.name == other
    }
}

impl PartialEq<&str> for TargetName {
    fn eq(&self, other: &&str) -> bool {
        self.name == *other
    }
}

impl PartialEq<String> for TargetName {
    fn eq(&self, other: &String) -> bool {
        self.name == *other
    }
}

impl From<&str> for TargetName {
    fn from(text: &str) -> TargetName {
        TargetName::read(text)
    }
}

impl From<String> for TargetName {
    fn from(text: String) -> TargetName {
        TargetName::read(&text)
    }
}

impl std::str::FromStr for TargetName {
    type Err = std::convert::Infallible;
    fn from_str(text: &str) -> Result<TargetName, Self::Err> {
        Ok(TargetName::read(text))
    }
}

impl Serialize for TargetName {
    /// The name without the password: no file, document or answer holds one.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name)
    }
}

impl<'de> Deserialize<'de> for TargetName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TargetName, D::Error> {
        String::deserialize(d).map(|text| TargetName::read(&text))
    }
}

/// A network target as its inspection read its name, once: what every later step (the checks,
/// each worker's connections, `iogauge verify`) takes, so that none reads the URL again nor
/// looks its server's name up again.
#[derive(Debug, Clone, PartialEq)]
pub struct Address {
    /// Its name (libnbd reads its URI's parameters from it) and password.
    pub name: TargetName,
    /// What it names: the protocol, the server as resolved at the inspection, the export or
    /// IQN and LUN.
    pub locator: Locator,
    /// The user the URL names, who logs in (iSCSI CHAP).
    pub user: Option<String>,
}

impl std::fmt::Display for Address {
    /// Its name, without the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.name.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_taken_out_of_urls_as_they_are_read_and_never_shown() {
        let t = TargetName::read("iscsi://alice%p%40ss@127.0.0.1:3261/iqn.2026-11.x:y/1");
        assert_eq!(t.as_str(), "iscsi://alice@127.0.0.1:3261/iqn.2026-11.x:y/1");
        assert_eq!((t.secret().map(Secret::expose), t.user().as_deref()), (Some("p@ss"), Some("alice")));
        // Read again, the name is itself, without a password.
        assert_eq!(TargetName::read(t.as_str()).secret(), None);
        // A password holding an unencoded '/', '?' or '@', and the URI's USER:PASSWORD form.
        let t = TargetName::read("iscsi://carol%a/b?c@d@127.0.0.1:3262/iqn.2026-11.x:y/2");
        assert_eq!(t.as_str(), "iscsi://carol@127.0.0.1:3262/iqn.2026-11.x:y/2");
        assert_eq!((t.user().as_deref(), t.secret().map(Secret::expose)), (Some("carol"), Some("a/b?c@d")));
        let t = TargetName::read("iscsi://dave:s3%2Fcret@127.0.0.1:3263/iqn.2026-11.x:y/0");
        assert_eq!(t.as_str(), "iscsi://dave@127.0.0.1:3263/iqn.2026-11.x:y/0");
        assert_eq!(t.secret().map(Secret::expose), Some("s3/cret"));
        // Any URL's URI form; '%' is only iSCSI's separator, elsewhere percent encoding.
        let t = TargetName::read("nbd://erin:pw@h:10809/e%20x?tls=on");
        assert_eq!((t.as_str(), t.secret().map(Secret::expose)), ("nbd://erin@h:10809/e%20x?tls=on", Some("pw")));
        for kept in ["nbd://al%69ce@h/e", "nbd://h:10809/a@b", "nbd+unix:///e?socket=/t/a:b@c", "/dev/sdb", "null"] {
            assert_eq!((TargetName::read(kept).as_str(), TargetName::read(kept).secret()), (kept, None));
        }
        // Never shown: not in Display, Debug, Serialize, nor in a name made from it.
        let t = TargetName::read("iscsi://frank%Xy9-secret@h/iqn.2026-11.x:y/{rank}");
        let filled = t.map(|n| n.replace("{rank}", "3"));
        let shown = format!("{t} {t:?} {} {filled} {filled:?}", serde_json::to_string(&t).unwrap());
        assert!(!shown.contains("Xy9") && shown.contains("frank@h"), "{shown}");
        assert_eq!(filled.secret().map(Secret::expose), Some("Xy9-secret"));
        // Deserialised, it is read.
        let t: TargetName = serde_json::from_str("\"iscsi://g:Zq7@h/iqn.2026-11.x:y/1\"").unwrap();
        assert_eq!((t.as_str(), t.secret().map(Secret::expose)), ("iscsi://g@h/iqn.2026-11.x:y/1", Some("Zq7")));
    }

    #[test]
    fn messages_quoting_urls_lose_their_passwords() {
        let said = "t.toml:3:11: invalid type: string \"iscsi://al%Pw9/x@h:3260/iqn.2026-11.x:y/1\", expected a sequence; \
                    'nbd://b:Qz8@h/e' and iscsi://c:Rk7@h/iqn.2026-11.x:y/2\nat http://127.0.0.1:80/ éx://d:Sx6@h";
        let clean = without_passwords(said);
        for pw in ["Pw9", "Qz8", "Rk7", "Sx6"] {
            assert!(!clean.contains(pw), "{clean}");
        }
        assert!(
            clean.contains("\"iscsi://al@h:3260/iqn.2026-11.x:y/1\", expected")
                && clean.contains("http://127.0.0.1:80/")
        );
        assert_eq!(without_passwords("no URL here"), "no URL here");
    }

    #[test]
    fn a_name_with_its_password_put_back_reads_back_the_same() {
        for text in [
            "iscsi://alice%p%40ss@127.0.0.1:3261/iqn.2026-11.x:y/1",
            "iscsi://carol%a/b?c@d%25e:f@h/iqn.2026-11.x:y/2",
            "nbd://erin:p%3Aw@h/e",
            "iscsi://h/iqn.2026-11.x:y/1",
            "/dev/sdb",
        ] {
            let t = TargetName::read(text);
            assert_eq!(TargetName::read(&t.with_secret()), t, "{text}");
        }
        // A password given once, for the same name given without one.
        let typed = TargetName::read("iscsi://a%pw@h/iqn.2026-11.x:y/1");
        let named = TargetName::read("iscsi://a@h/iqn.2026-11.x:y/1").or_secret_of(&typed);
        assert_eq!(named, typed);
        let other = TargetName::read("iscsi://a@h/iqn.2026-11.x:y/2").or_secret_of(&typed);
        assert_eq!(other.secret(), None);
    }
}
