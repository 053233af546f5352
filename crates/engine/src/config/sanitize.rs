//! Tool-name sanitising, with parity to the JavaScript reference (one `_` per UTF-16 code unit).

/// Replaces every character outside `[A-Za-z0-9_-]` by `_`, one per UTF-16 code unit.
pub fn sanitize(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for ch in value.chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' || ch == '-' {
            out.push(ch);
        } else {
            for _ in 0..ch.len_utf16() {
                out.push('_');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn one_underscore_per_utf16_unit() {
        assert_eq!(sanitize("a.b c"), "a_b_c");
        assert_eq!(sanitize("😀"), "__");
        assert_eq!(sanitize("é-x_Y9"), "_-x_Y9");
    }
}
