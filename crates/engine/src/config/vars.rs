//! `${VAR}`, `${VAR:-default}` and `${env:VAR}` (also `${env:VAR:-default}`) expansion.
//!
//! Anything else in `${...}` (VS Code's `${input:id}`, names that are not identifiers) is kept
//! literally, because it belongs to some other tool's substitution and guessing would be worse.

/// opencode's `{env:VAR}` in every string of `value` (an entry of an opencode config) written as
/// `${VAR}`, which [`expand`] then fills in as opencode does (an unset one is empty, and warned
/// of). Only where `VAR` is an identifier and the brace is not already `${`; opencode's
/// `{file:path}` stays literal.
pub(crate) fn opencode_env(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) if s.contains("{env:") => Value::String(opencode_string(s)),
        Value::Array(items) => Value::Array(items.iter().map(opencode_env).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), opencode_env(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn opencode_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut rest = s;
    while let Some(at) = rest.find("{env:") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "{env:".len()..];
        let name_len = after
            .char_indices()
            .find(|&(i, c)| !(c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit())))
            .map_or(after.len(), |(i, _)| i);
        let dollar = out.ends_with('$');
        if name_len > 0 && after[name_len..].starts_with('}') && !dollar {
            out.push_str("${");
            out.push_str(&after[..name_len]);
            out.push('}');
            rest = &after[name_len + 1..];
        } else {
            out.push_str("{env:");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Expands from the process environment. `${workspaceFolder}` and `${userHome}`, which editors
/// define but shells do not, fall back to the current directory and the home directory.
pub fn expand(s: &str, missing: &mut Vec<String>) -> String {
    expand_with(s, &process_lookup, missing)
}

/// Expands with `lookup`; each variable that is unset (and has no default) becomes `""` and
/// its name is appended once to `missing`.
pub fn expand_with(
    s: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    missing: &mut Vec<String>,
) -> String {
    expand_nested(s, lookup, missing, 0)
}

/// How deep defaults may nest (`${A:-${B:-...}}`) before the rest is kept as written: real
/// configs nest one or two levels; a bound keeps a hostile string from exhausting the stack.
const MAX_NESTED_DEFAULTS: usize = 8;

fn expand_nested(
    s: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    missing: &mut Vec<String>,
    nesting: usize,
) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let body_start = start + 2;
        let Some(len) = closing_brace(&rest[body_start..]) else {
            // Unclosed: nothing more can be a placeholder.
            out.push_str(&rest[start..]);
            return out;
        };
        let body = &rest[body_start..body_start + len];
        match parse_body(body) {
            Some((name, default)) => match lookup(name) {
                Some(value) if !(value.is_empty() && default.is_some()) => out.push_str(&value),
                found => match default {
                    Some(d) if nesting < MAX_NESTED_DEFAULTS => {
                        out.push_str(&expand_nested(d, lookup, missing, nesting + 1));
                    }
                    Some(d) => out.push_str(d),
                    None => {
                        // Only an unset variable is "missing"; a set-but-empty one is intended.
                        if found.is_none() && !missing.iter().any(|m| m == name) {
                            missing.push(name.to_string());
                        }
                    }
                },
            },
            None => out.push_str(&rest[start..body_start + len + 1]),
        }
        rest = &rest[body_start + len + 1..];
    }
    out.push_str(rest);
    out
}

/// Length of the body up to its matching `}`, allowing `${...}` nested in a default.
fn closing_brace(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut depth = 1;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' && bytes.get(i + 1) == Some(&b'{') {
            depth += 1;
            i += 2;
            continue;
        }
        if bytes[i] == b'}' {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}

/// `NAME`, `NAME:-default`, `env:NAME` or `env:NAME:-default`; anything else is not ours.
fn parse_body(body: &str) -> Option<(&str, Option<&str>)> {
    let body = body.strip_prefix("env:").unwrap_or(body);
    let (name, default) = match body.split_once(":-") {
        Some((n, d)) => (n, Some(d)),
        None => (body, None),
    };
    is_identifier(name).then_some((name, default))
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn process_lookup(name: &str) -> Option<String> {
    if let Some(v) = std::env::var_os(name) {
        return Some(v.to_string_lossy().into_owned());
    }
    let fallback = match name {
        "workspaceFolder" => std::env::current_dir().ok()?.into_os_string(),
        "userHome" => std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"))?,
        _ => return None,
    };
    Some(fallback.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("t0k".into()),
            "HOME" => Some("/home/u".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    fn run(s: &str) -> (String, Vec<String>) {
        let mut missing = Vec::new();
        (expand_with(s, &env, &mut missing), missing)
    }

    #[test]
    fn three_forms() {
        assert_eq!(run("Bearer ${TOKEN}").0, "Bearer t0k");
        assert_eq!(run("${env:HOME}/x").0, "/home/u/x");
        assert_eq!(run("${NOPE:-fallback}").0, "fallback");
        assert_eq!(run("${TOKEN:-fallback}").0, "t0k");
        assert_eq!(run("${env:NOPE:-d}").0, "d");
    }

    #[test]
    fn defaults_follow_shell_rules() {
        // `:-` treats set-but-empty like unset.
        assert_eq!(run("${EMPTY:-d}"), ("d".into(), vec![]));
        assert_eq!(run("[${EMPTY}]"), ("[]".into(), vec![]));
        assert_eq!(run("${NOPE:-}"), (String::new(), vec![]));
        assert_eq!(run("${NOPE:-${HOME}/x}").0, "/home/u/x");
        assert_eq!(run("${A:-${B:-z}}").0, "z");
    }

    #[test]
    fn missing_become_empty_and_are_named_once() {
        assert_eq!(
            run("${GH}:${GH}:${OTHER}"),
            ("::".into(), vec!["GH".to_string(), "OTHER".to_string()])
        );
    }

    #[test]
    fn opencode_env_becomes_a_dollar_reference() {
        use serde_json::json;
        let entry = json!({
            "type": "remote",
            "url": "https://h/{env:HOST_PART}/mcp",
            "headers": { "Authorization": "Bearer {env:TOKEN}" },
            "environment": { "A": "{env:A_1}{env:B}", "F": "{file:~/secret}" },
            "command": ["x", "--k={env:K}", 3],
        });
        assert_eq!(
            opencode_env(&entry),
            json!({
                "type": "remote",
                "url": "https://h/${HOST_PART}/mcp",
                "headers": { "Authorization": "Bearer ${TOKEN}" },
                "environment": { "A": "${A_1}${B}", "F": "{file:~/secret}" },
                "command": ["x", "--k=${K}", 3],
            })
        );
        for literal in [
            "{env:}",
            "{env:1A}",
            "{env:A-B}",
            "{env:A",
            "${env:A}",
            "{env: A}",
        ] {
            assert_eq!(opencode_string(literal), literal, "{literal}");
        }
        assert_eq!(opencode_string("{env:{env:A}}"), "{env:${A}}");
        assert_eq!(run(&opencode_string("x{env:TOKEN}y")).0, "xt0ky");
    }

    #[test]
    fn other_forms_stay_literal() {
        for s in [
            "${input:github_pat}",
            "https://${input:fn-name}.azurewebsites.net",
            "$TOKEN",
            "${}",
            "${1ABC}",
            "${A-B}",
            "{env:TOKEN}",
            "${TOKEN",
            "a${",
        ] {
            assert_eq!(run(s), (s.to_string(), vec![]), "{s}");
        }
        assert_eq!(run("${input:x} ${TOKEN}").0, "${input:x} t0k");
    }

    #[test]
    fn deeply_nested_defaults_stop_expanding_without_exhausting_the_stack() {
        let depth = 1_000_000;
        let s = format!("{}z{}", "${NOPE:-".repeat(depth), "}".repeat(depth));
        let (out, missing) = run(&s);
        // Eight levels expand; the ninth default is kept as written.
        let kept = depth - 8;
        assert_eq!(
            out,
            format!("{}z{}", "${NOPE:-".repeat(kept - 1), "}".repeat(kept - 1))
        );
        assert!(missing.is_empty());
        assert_eq!(run("${A:-${B:-${HOME}}}").0, "/home/u");
    }

    #[test]
    fn process_env_and_editor_fallbacks() {
        let mut missing = Vec::new();
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            expand("${workspaceFolder}/a", &mut missing),
            format!("{}/a", cwd.display())
        );
        let path = std::env::var("PATH").unwrap_or_default();
        assert_eq!(expand("${PATH}", &mut missing), path);
        assert_eq!(
            expand("${TOOLNEXUS_TEST_SURELY_UNSET_VAR}", &mut missing),
            ""
        );
        assert_eq!(missing, vec!["TOOLNEXUS_TEST_SURELY_UNSET_VAR".to_string()]);
    }
}
