//! Reading a request: the words that say what to do, and the values it carries (quoted text,
//! paths, file names, ids), which say little about which tool to use.

/// The weight of a word inside a value ("'Crash on start'", "src/components/buttons").
pub(crate) const VALUE_WEIGHT: f64 = 0.3;

/// The whitespace-separated chunks of a request, each with whether it is (part of) a value: inside
/// quotes, or shaped like a path, a file name, an address or an id.
pub(crate) fn chunks(query: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let mut open_quote: Option<char> = None;
    for chunk in query.split_whitespace() {
        let first = chunk.chars().next();
        let starts_quote = first.filter(|c| is_quote(*c) && open_quote.is_none());
        if let Some(q) = starts_quote {
            open_quote = Some(closing(q));
        }
        let in_quotes = open_quote.is_some();
        let trimmed = chunk.trim_end_matches(|c: char| !c.is_alphanumeric() && !is_quote_mark(c));
        if let Some(q) = open_quote {
            let body = if starts_quote.is_some() {
                &trimmed[first.map_or(0, char::len_utf8)..]
            } else {
                trimmed
            };
            if body.ends_with(q) {
                open_quote = None;
            }
        }
        out.push((chunk, in_quotes || looks_like_value(chunk)));
    }
    out
}

fn is_quote(c: char) -> bool {
    matches!(c, '\'' | '"' | '`' | '‘' | '“')
}

/// An opening or closing quote mark.
fn is_quote_mark(c: char) -> bool {
    is_quote(c) || matches!(c, '’' | '”')
}

fn closing(open: char) -> char {
    match open {
        '‘' => '’',
        '“' => '”',
        c => c,
    }
}

/// A path ("a/b"), an address ("https://…", "x@y"), an issue number ("#12") or a file name.
fn looks_like_value(chunk: &str) -> bool {
    let inner = chunk.trim_matches(|c: char| !c.is_alphanumeric() && c != '#' && c != '*');
    inner.contains('/')
        || inner.contains('\\')
        || inner.contains('@')
        || inner.starts_with('#')
        || names_a_file_chunk(chunk)
}

/// Whether a request names a file by its extension ("notes.txt", "docs/index.md"): then it is
/// about a file even when it does not say so.
pub(crate) fn names_a_file(query: &str) -> bool {
    query.split_whitespace().any(names_a_file_chunk)
}

fn names_a_file_chunk(chunk: &str) -> bool {
    let chunk = chunk.trim_end_matches(|c: char| !c.is_alphanumeric());
    let Some((stem, ext)) = chunk.rsplit_once('.') else {
        return false;
    };
    let stem_ok = stem
        .chars()
        .last()
        .is_some_and(|c| c.is_alphanumeric() || c == '*');
    let ext_ok = (1..=5).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic());
    stem_ok && ext_ok
}
