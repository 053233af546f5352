//! Words out of tool text: splitting identifiers and prose into tokens, dropping stop words, and a
//! small deterministic suffix stripper so that "directories" meets "directory" and "searching"
//! meets "search".
//!
//! The stemmer is deliberately weaker than Porter's: tool catalogs are short texts full of
//! identifiers, and an aggressive stemmer merges words that name different things ("organization"
//! and "organ"). Every rule keeps a stem of at least three letters.

/// Words that carry no meaning for choosing a tool, in requests or in descriptions.
const STOP_WORDS: &[&str] = &[
    "about", "after", "again", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been",
    "being", "but", "by", "can", "could", "did", "do", "does", "doing", "each", "for", "from",
    "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "if", "in",
    "into", "is", "it", "its", "just", "let", "lets", "me", "might", "mine", "must", "my", "need",
    "needs", "of", "off", "on", "once", "onto", "or", "our", "ours", "please", "shall", "she",
    "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "then",
    "there", "these", "they", "this", "those", "to", "too", "us", "via", "want", "wants", "was",
    "we", "were", "what", "when", "where", "whether", "which", "while", "who", "whom", "whose",
    "why", "will", "with", "would", "you", "your", "yours",
];

/// The tokens of `text`, lowercased, stemmed, without one-letter words, numbers (noise in
/// requests like "add 17 and 25") and stop words.
pub(crate) fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, |word| {
        let one_letter = word.chars().nth(1).is_none();
        let number = word.chars().all(|c| c.is_ascii_digit());
        if one_letter || number || STOP_WORDS.binary_search(&word).is_ok() {
            return;
        }
        out.push(stem(word));
    });
    out
}

/// The runs of alphanumerics of `text` ("GitHub", "list", "allowed", "directories" of
/// "GitHub list_allowed_directories").
pub(crate) fn runs(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|r| !r.is_empty())
}

/// The stemmed whole of a run that splits into several tokens ("GitHub" → "github", beside
/// "git" and "hub"), so that a brand or an identifier written as one word also matches whole.
pub(crate) fn compound(run: &str, parts: &[String]) -> Option<String> {
    (parts.len() > 1).then(|| stem(&run.to_lowercase()))
}

/// Calls `f` with each lowercased word of `text`: runs of alphanumerics, split again at camelCase,
/// PascalCase acronym ("HTTPServer" → http, server) and letter/digit boundaries.
fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    let chars: Vec<char> = text.chars().collect();
    let mut word = String::new();
    let mut flush = |word: &mut String| {
        if !word.is_empty() {
            f(word);
            word.clear();
        }
    };
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut word);
            continue;
        }
        if let Some(&prev) = i.checked_sub(1).and_then(|p| chars.get(p)) {
            let next = chars.get(i + 1).copied();
            let lower_to_upper = prev.is_lowercase() && c.is_uppercase();
            let acronym_end =
                prev.is_uppercase() && c.is_uppercase() && next.is_some_and(|n| n.is_lowercase());
            let digit_edge = prev.is_alphanumeric() && (prev.is_numeric() != c.is_numeric());
            if lower_to_upper || acronym_end || digit_edge {
                flush(&mut word);
            }
        }
        word.extend(c.to_lowercase());
    }
    flush(&mut word);
}

/// The stem of a lowercased word: one plural step, then one of -ing/-ed or -er/-ly/-ment/-ion,
/// then a final silent "e" and a doubled final consonant dropped, so that "write", "writes" and
/// "writing" meet at "writ", and "add" meets "added".
pub(crate) fn stem(word: &str) -> String {
    if !word.is_ascii() || word.len() <= 3 {
        return word.to_string();
    }
    let mut w = word.to_string();
    // Plurals: -ies → -y; -s unless -ss/-us/-is.
    if let Some(s) = w.strip_suffix("ies").filter(|s| s.len() >= 3) {
        w = format!("{s}y");
    } else if w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        w.pop();
    }
    // Verb endings, then the noun/adverb ones if no verb ending applied.
    if let Some(s) = w.strip_suffix("ied").filter(|s| s.len() >= 3) {
        w = format!("{s}y");
    } else if let Some(s) = strip(&w, "ing", 3).or_else(|| strip(&w, "ed", 3)) {
        w = s;
    } else if let Some(s) = strip(&w, "ment", 4)
        .or_else(|| strip(&w, "er", 4))
        .or_else(|| strip(&w, "ly", 4))
        .or_else(|| strip_ion(&w))
    {
        w = s;
    }
    // Canonical ending: no final silent "e", no doubled final consonant (but "ll", "ss", "zz").
    if w.len() > 3 && w.ends_with('e') {
        w.pop();
    }
    let b = w.as_bytes();
    if b.len() > 3 {
        let (last, before) = (b[b.len() - 1], b[b.len() - 2]);
        if last == before && !is_vowel(last) && !matches!(last, b'l' | b's' | b'z') {
            w.pop();
        }
    }
    w
}

/// `w` without `suffix`, if what remains has at least `min` letters and a vowel.
fn strip(w: &str, suffix: &str, min: usize) -> Option<String> {
    let s = w.strip_suffix(suffix)?;
    (s.len() >= min && s.bytes().any(is_vowel)).then(|| s.to_string())
}

/// -tion/-sion → -t/-s ("deletion" → "delet", "creation" → "creat", like "delete" and "create").
fn strip_ion(w: &str) -> Option<String> {
    let s = w.strip_suffix("ion")?;
    (s.len() >= 4 && (s.ends_with('t') || s.ends_with('s'))).then(|| s.to_string())
}

fn is_vowel(b: u8) -> bool {
    matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y')
}

/// The words of `text` before stop words and stemming (for tests of the splitting).
#[cfg(test)]
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, |w| out.push(w.to_string()));
    out
}

#[cfg(test)]
pub(crate) fn stop_words_sorted() -> bool {
    STOP_WORDS.windows(2).all(|w| w[0] < w[1])
}
