//! What can be wrong with a config: the document as a whole ([`ConfigError`]), or one server's
//! entry ([`Invalid`]).

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum ConfigErrorKind {
    Syntax,
    Io,
    /// The document has the wrong shape (e.g. the top level is an array): a JS `TypeError`.
    Type,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub kind: ConfigErrorKind,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Why one server's entry cannot be used (a field of the wrong type, a missing command), in
/// words that name the field's path. The server fails with them; the rest of the config stands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

/// Its words, for reading them as text.
impl std::ops::Deref for Invalid {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<String> for Invalid {
    fn from(words: String) -> Self {
        Self(words)
    }
}

impl From<&str> for Invalid {
    fn from(words: &str) -> Self {
        Self(words.to_string())
    }
}

impl PartialEq<String> for Invalid {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<&str> for Invalid {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}
