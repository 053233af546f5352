//! What a failure says when a server needs the user and nobody can ask them: the command that
//! authorises it, and why the stored credentials did not do.

/// Why a server that needs the user could not be used without them.
pub(crate) enum Missing {
    NoToken,
    Expired,
    Scope(String),
}

/// `authorization required: run "toolnexus auth <config> <name>" (why)`; `config` is the
/// config's path, or `None` for a config given as an object (a placeholder stands in).
pub(crate) fn required(config: Option<&str>, name: &str, missing: &Missing) -> String {
    let why = match missing {
        Missing::NoToken => "no token is stored for this server".to_string(),
        Missing::Expired => "the stored token expired and cannot be refreshed".to_string(),
        Missing::Scope(scope) => format!(
            "the server refused the granted scope; it asks for {}",
            quote_scope(scope)
        ),
    };
    let config = config.map_or_else(|| "<config>".to_string(), shell_word);
    format!(
        "authorization required: run \"toolnexus auth {config} {}\" ({why})",
        shell_word(name)
    )
}

pub(crate) fn quote_scope(scope: &str) -> String {
    crate::config::quote::quote(scope, 100)
}

/// A word as a shell reads it back: bare when safe, else in single quotes.
fn shell_word(word: &str) -> String {
    let word = crate::config::quote::shorten(word, 200);
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_names_the_command_and_the_kind() {
        assert_eq!(
            required(Some("my mcp.json"), "github", &Missing::NoToken),
            "authorization required: run \"toolnexus auth 'my mcp.json' github\" (no token is stored for this server)"
        );
        assert_eq!(
            required(None, "a", &Missing::Expired),
            "authorization required: run \"toolnexus auth <config> a\" (the stored token expired and cannot be refreshed)"
        );
        assert!(
            required(None, "a", &Missing::Scope("repo".into())).ends_with("it asks for \"repo\")")
        );
    }
}
