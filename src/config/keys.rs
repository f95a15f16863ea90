//! The keys of a job file's sections, each declared once by the [`keys!`] macro: the entry is
//! the key with its doc and default, the command-line flag that sets it (when it has one) and
//! its check. The section's struct, its `Default`, the flags (with their `--help`), the checks,
//! the section's table in docs/job-file.md and the workbench's form all come from it, so a new
//! key is one entry. `[test]` is declared in settings.rs, `[[worker]]` in worker.rs.
//!
//! An entry reads:
//!
//! ```text
//! /// Doc: its first paragraph is the flag's short help, all of it the key's meaning.
//! #[serde(...)]                           // how the key is read and written, if special
//! key: Type = default, "default as a job file writes it",
//!     flag(clap's arg options) FlagType => how the flag sets it,
//!     check |value| is_wrong => ("message naming the key = {value}: and what to give");
//! ```
//!
//! A flag sets its key with `set` (the value given, over the job file's), `some` (an optional
//! key), `switch` (a flag that turns a `false` key on), `add` (a list the flag's values join),
//! or a function of the section and the flag's value for anything else.

/// A key of a section: what its docs, `--help` and the workbench say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Key {
    /// The key in a job file, and the id of its flag (`total_` before `[test]`'s rates, whose
    /// plain names are the workers' own flags).
    pub name: &'static str,
    /// Its doc, paragraphs split by an empty line.
    pub doc: &'static str,
    /// Its default as a job file writes it (`"1s"`), or words when it has none set (`-`,
    /// `every manager`).
    pub default: &'static str,
    /// Its type as declared, which says how the workbench's form takes it ([`Key::form`]).
    pub ty: &'static str,
}

impl Key {
    /// The doc's first paragraph on one line: a flag's short help.
    pub fn summary(&self) -> String {
        self.paragraphs().next().unwrap_or_default()
    }

    /// The doc on one line (a table cell).
    pub fn meaning(&self) -> String {
        self.paragraphs().collect::<Vec<_>>().join(" ")
    }

    pub(super) fn paragraphs(&self) -> impl Iterator<Item = String> + '_ {
        self.doc.split("\n\n").map(|p| p.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|p| !p.is_empty())
    }

    /// How a form takes the key's value: `switch` (a tick), `list` (values apart by spaces or
    /// commas), or `value` (one value: a number, or words such as `4K` or `"1s"`).
    pub fn form(&self) -> &'static str {
        match self.ty {
            "bool" => "switch",
            t if t.starts_with("Vec") => "list",
            _ => "value",
        }
    }

    /// A flag's help: the summary, its default, and for `--help` the rest of the doc.
    pub(super) fn help(&self, long: bool) -> String {
        let default = match self.default.trim_matches('"') {
            "-" | "none" | "all" | "[]" | "false" => String::new(),
            d => format!(" [default: {d}]"),
        };
        // As clap writes a doc comment: the summary without its full stop.
        let mut help = self.summary().trim_end_matches('.').to_string() + &default;
        if long {
            for p in self.paragraphs().skip(1) {
                help += "\n\n";
                help += &p;
            }
        }
        help
    }

    /// The key named `name` of `keys`.
    pub(super) fn named(keys: &'static [Key], name: &str) -> &'static Key {
        keys.iter().find(|k| k.name == name).expect("a key of its section")
    }
}

/// Whether a flag was given: a value, a list of some, a switch turned on.
pub(super) trait Given {
    fn given(&self) -> bool;
}

impl<T> Given for Option<T> {
    fn given(&self) -> bool {
        self.is_some()
    }
}

impl<T> Given for Vec<T> {
    fn given(&self) -> bool {
        !self.is_empty()
    }
}

impl Given for bool {
    fn given(&self) -> bool {
        *self
    }
}

/// How a flag's value sets its key.
macro_rules! apply {
    ($t:ident, $flag:expr, $key:ident, set) => {
        if let Some(v) = &$flag {
            $t.$key = v.clone();
        }
    };
    ($t:ident, $flag:expr, $key:ident, some) => {
        if $flag.is_some() {
            $t.$key = $flag.clone();
        }
    };
    ($t:ident, $flag:expr, $key:ident, switch) => {
        $t.$key |= $flag;
    };
    ($t:ident, $flag:expr, $key:ident, add) => {
        $t.$key.extend($flag.iter().cloned());
    };
    ($t:ident, $flag:expr, $key:ident, ($by:path)) => {
        $by($t, &$flag)
    };
}
pub(super) use apply;

/// A section's keys: its struct `$section`, their list `$keys`, and the flags `$flags` that set
/// them (module docs).
macro_rules! keys {
    (
        $(#[doc = $section_doc:literal])*
        $section:ident, $keys:ident, $flags:ident;
        $(
            $(#[doc = $doc:literal])*
            $(#[serde($($serde:tt)*)])*
            $key:ident: $ty:ty = $default:expr, $shown:literal
            $(, flag($($arg:tt)*) $flag_ty:ty => $apply:tt)?
            $(, check |$v:ident| $wrong:expr => ($($message:tt)+))?
            ;
        )*
    ) => {
        $(#[doc = $section_doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct $section {
            $(
                $(#[doc = $doc])*
                $(#[serde($($serde)*)])*
                pub $key: $ty,
            )*
        }

        impl Default for $section {
            fn default() -> Self {
                $section { $($key: $default,)* }
            }
        }

        #[doc = concat!("Every key of [`", stringify!($section), "`], in the order a job file writes them.")]
        pub const $keys: &[Key] = &[$(Key {
            name: stringify!($key),
            doc: concat!($($doc, "\n",)*),
            default: $shown,
            ty: stringify!($ty),
        },)*];

        #[doc = concat!("The flags that set keys of [`", stringify!($section), "`] (a flag given wins over a job file's key).")]
        #[derive(clap::Args, Debug, Default, Clone, PartialEq)]
        pub struct $flags {
            $($(
                #[doc = concat!("Sets `", stringify!($key), "`.")]
                #[arg($($arg)*, help = Key::named($keys, stringify!($key)).help(false),
                    long_help = Key::named($keys, stringify!($key)).help(true))]
                pub $key: $flag_ty,
            )?)*
        }

        impl $flags {
            /// Sets the keys whose flags are given in `t`.
            pub fn apply(&self, t: &mut $section) {
                $($(apply!(t, self.$key, $key, $apply);)?)*
            }

            /// The keys whose flags are given.
            pub fn given(&self) -> Vec<&'static str> {
                let mut keys = Vec::new();
                $($(
                    if <$flag_ty as $crate::config::keys::Given>::given(&self.$key) {
                        keys.push(stringify!($key));
                    }
                )?)*
                keys
            }
        }

        impl $section {
            /// Each key's own check; the first wrong one, at its key under `at_path`.
            pub(super) fn check_keys(&self, at_path: &[Seg]) -> Result<(), ConfigError> {
                $($(
                    let $v = &self.$key;
                    if $wrong {
                        let mut path = at_path.to_vec();
                        path.push(Seg::Key(stringify!($key)));
                        return Err(at(path, format!($($message)+)));
                    }
                )?)*
                Ok(())
            }
        }
    };
}
pub(super) use keys;

/// The flag (`--workers`) that sets key `key` among `flags`, if one does.
pub fn flag_of(flags: &clap::Command, key: &str) -> Option<String> {
    let arg = flags.get_arguments().find(|a| a.get_id() == key || a.get_id() == &*format!("total_{key}"))?;
    arg.get_long().map(|l| format!("--{l}"))
}

#[cfg(test)]
pub(super) mod tests {
    use serde::Serialize;

    use super::*;

    /// The longest prose line of a doc page (tests/it/docs.rs holds every page to it).
    const LONGEST_LINE: usize = 300;
    /// The width the list under a table of docs/job-file.md is wrapped to.
    const COLUMNS: usize = 100;

    /// `text` as a Markdown list item wrapped at [`COLUMNS`] between words; a word that would
    /// open a block of its own at the start of a line (a list item, a heading) stays on the
    /// line before.
    fn list_item(text: &str) -> String {
        let mut lines = vec![String::from("-")];
        for word in text.split_whitespace() {
            let line = lines.last_mut().expect("a line");
            let fits = line.chars().count() + 1 + word.chars().count() <= COLUMNS;
            if fits || line == "-" || opens_block(word) {
                line.push(' ');
                line.push_str(word);
            } else {
                lines.push(format!("  {word}"));
            }
        }
        lines.join("\n") + "\n"
    }

    /// Whether a line that starts with `word` starts a Markdown block: a list item, a heading,
    /// a quote, a table row.
    fn opens_block(word: &str) -> bool {
        let after_digits = word.trim_start_matches(|c: char| c.is_ascii_digit());
        let numbered = after_digits.len() < word.len() && matches!(after_digits, "." | ")");
        matches!(word, "-" | "+" | "*") || word.starts_with(['#', '>', '|']) || numbered
    }

    #[test]
    fn a_list_item_is_wrapped_between_words_and_opens_no_block() {
        // Each long word fills a line: the `-` and `1.` after them would start a list there.
        let (a, b) = ("a".repeat(COLUMNS - 3), "b".repeat(COLUMNS - 3));
        assert_eq!(list_item(&format!("{a} - {b} 1. x")), format!("- {a} -\n  {b} 1.\n  x\n"));
        assert_eq!(list_item("`k`: one two"), "- `k`: one two\n");
    }

    #[test]
    fn a_keys_form_follows_its_type() {
        let key = |ty| Key { name: "k", doc: "", default: "-", ty };
        assert_eq!(key("bool").form(), "switch");
        assert_eq!(key("Vec<TargetName>").form(), "list");
        assert_eq!(key("Option<f64>").form(), "value");
    }

    /// Each key's default as its docs and `--help` show it is the value the code uses: read as
    /// a key of the section (`read` of `key = default`) it gives the section's default; words
    /// instead (`-`, `none`, `every manager`) stand for a key that is not set by default.
    pub(in crate::config) fn the_defaults_shown_are_the_defaults<T>(keys: &[Key], read: impl Fn(&str) -> Option<T>)
    where
        T: Serialize + PartialEq + std::fmt::Debug + Default,
    {
        let written = toml::Value::try_from(T::default()).unwrap();
        for k in keys {
            match read(&format!("{} = {}", k.name, k.default)) {
                Some(read) => assert_eq!(read, T::default(), "{} = {}", k.name, k.default),
                None => assert!(written.get(k.name).is_none(), "{} has a default but shows {}", k.name, k.default),
            }
        }
    }

    /// A section's table in docs/job-file.md is its keys' own: their docs, defaults and flags,
    /// each key's first paragraph in its row and the rest in a list under the table, between
    /// the marks `<!-- the [SECTION] keys: ... -->` and `<!-- end of the [SECTION] keys -->`
    /// (`IOGAUGE_BLESS=1 cargo test --lib keys` writes it after a change).
    pub(in crate::config) fn the_docs_table_is(section: &str, keys: &[Key], flags: &clap::Command) {
        let mut table = String::from("| key | default | flag | meaning |\n| --- | --- | --- | --- |\n");
        let mut more = String::new();
        for k in keys {
            assert!(!k.summary().is_empty(), "{} has no doc", k.name);
            // A TOML value as code; words (`-`, `none`, `every manager`) as they are.
            let default = match toml::from_str::<toml::Table>(&format!("k = {}", k.default)) {
                Ok(_) => format!("`{}`", k.default),
                Err(_) => k.default.to_string(),
            };
            let flag = flag_of(flags, k.name).map(|l| format!("`{l}`")).unwrap_or_default();
            let rest = k.paragraphs().skip(1).collect::<Vec<_>>().join(" ");
            let below = if rest.is_empty() { "" } else { " More below." };
            let row = format!("| `{}` | {default} | {flag} | {}{below} |\n", k.name, k.summary());
            assert!(
                row.trim_end().chars().count() <= LONGEST_LINE,
                "{}: its doc's first paragraph makes a row of docs/job-file.md's [{section}] table over \
                 {LONGEST_LINE} characters: shorten it, and say the rest in a paragraph of its own",
                k.name
            );
            table += &row;
            if !rest.is_empty() {
                more += &list_item(&format!("`{}`: {rest}", k.name));
            }
        }
        if !more.is_empty() {
            table += "\nMore on the keys above:\n\n";
            table += &more;
        }
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/job-file.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let begin = format!("<!-- the [{section}] keys: made from src/config/ -->\n");
        let end = format!("<!-- end of the [{section}] keys -->");
        let start = doc.find(&begin).unwrap_or_else(|| panic!("the [{section}] table's first mark")) + begin.len();
        let stop = doc.find(&end).unwrap_or_else(|| panic!("the [{section}] table's last mark"));
        if std::env::var_os("IOGAUGE_BLESS").is_some() {
            std::fs::write(path, format!("{}{table}{}", &doc[..start], &doc[stop..])).unwrap();
        } else {
            assert!(
                doc[start..stop] == table,
                "docs/job-file.md's [{section}] table is not the keys' (IOGAUGE_BLESS=1 cargo test --lib keys):\n{table}"
            );
        }
    }
}
