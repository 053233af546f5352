//! JSONC (JSON with comments and trailing commas), as editors write `mcp.json`.
//!
//! Comments and trailing commas are overwritten with spaces rather than removed, so every byte
//! keeps its offset and serde_json's line:column stays true to the original text.

use serde_json::Value;

/// A syntax error at a 1-based line and character column of the original text.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub(crate) message: String,
}

/// Parses JSON that may contain `//` and `/* */` comments, trailing commas and a leading BOM.
pub fn parse(text: &str) -> Result<Value, SyntaxError> {
    let plain = strip(text)?;
    serde_json::from_str(&plain).map_err(|e| {
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
        SyntaxError {
            line: e.line(),
            column: char_column(text, e.line(), e.column()),
            message,
        }
    })
}

/// Returns `text` with comments, trailing commas and a BOM blanked out (newlines kept).
pub fn strip(text: &str) -> Result<String, SyntaxError> {
    let src = text.as_bytes();
    let mut out = src.to_vec();
    let mut i = 0;
    if text.starts_with('\u{FEFF}') {
        out[..3].fill(b' ');
        i = 3;
    }
    // A comma stays "pending" while only whitespace and comments follow it; a closing bracket
    // then makes it a trailing comma. One after `[`, `{`, `:` or `,` is an error for serde.
    let mut pending_comma: Option<usize> = None;
    let mut prev = b' ';
    while i < src.len() {
        let byte = src[i];
        match byte {
            b'"' => {
                pending_comma = None;
                i += 1;
                while i < src.len() && src[i] != b'"' {
                    // UTF-8 continuation bytes never equal `\` or `"`, so bytewise is safe.
                    i += if src[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if src.get(i + 1) == Some(&b'/') => {
                while i < src.len() && src[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            b'/' if src.get(i + 1) == Some(&b'*') => {
                let start = i;
                out[i] = b' ';
                out[i + 1] = b' ';
                i += 2;
                loop {
                    if i >= src.len() {
                        let (line, column) = line_col(text, start);
                        return Err(SyntaxError {
                            line,
                            column,
                            message: "unterminated /* comment".into(),
                        });
                    }
                    if src[i] == b'*' && src.get(i + 1) == Some(&b'/') {
                        out[i] = b' ';
                        out[i + 1] = b' ';
                        i += 2;
                        break;
                    }
                    if src[i] != b'\n' {
                        out[i] = b' ';
                    }
                    i += 1;
                }
                continue;
            }
            b',' if !matches!(prev, b'[' | b'{' | b':' | b',') => pending_comma = Some(i),
            b']' | b'}' => {
                if let Some(at) = pending_comma.take() {
                    out[at] = b' ';
                }
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ => pending_comma = None,
        }
        if !matches!(byte, b' ' | b'\t' | b'\r' | b'\n') {
            prev = byte;
        }
        i += 1;
    }
    // Only whole characters inside comments were blanked, so this cannot fail; stay panic-free.
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// serde_json counts columns in bytes; people count characters.
fn char_column(text: &str, line: usize, byte_column: usize) -> usize {
    let Some(row) = text.split('\n').nth(line.saturating_sub(1)) else {
        return byte_column.max(1);
    };
    let chars = row
        .char_indices()
        .take_while(|(at, _)| *at < byte_column)
        .count();
    chars.max(1)
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let row_start = before.rfind('\n').map_or(0, |n| n + 1);
    (line, before[row_start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn comments_and_trailing_commas() {
        let text =
            "// top\n{\n  \"a\": [1, 2,], /* x\n y */ \"b\": {\"c\": true,\n // last\n },\n}\n";
        assert_eq!(parse(text).unwrap(), json!({"a": [1, 2], "b": {"c": true}}));
    }

    #[test]
    fn comment_markers_inside_strings_survive() {
        let text = r#"{"u": "http://x//y", "v": "/* no */", "w": "a\"//b", "x": ",]"}"#;
        let v = parse(text).unwrap();
        assert_eq!(v["u"], "http://x//y");
        assert_eq!(v["v"], "/* no */");
        assert_eq!(v["w"], "a\"//b");
        assert_eq!(v["x"], ",]");
    }

    #[test]
    fn bom_is_ignored() {
        assert_eq!(parse("\u{FEFF}{\"a\": 1}").unwrap(), json!({"a": 1}));
    }

    #[test]
    fn only_a_real_trailing_comma_is_forgiven() {
        let e = parse("{\"a\": [1,,]}").unwrap_err();
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (1, 10, "expected value")
        );
        for text in ["[,]", "{,}", "{\"a\":,}", "[1,/* c */,]"] {
            assert!(parse(text).is_err(), "{text}");
        }
        assert_eq!(parse("[1, // c\n]").unwrap(), json!([1]));
    }

    #[test]
    fn error_position_is_line_and_character_column() {
        let e = parse("{\n  \"a\": 1\n  \"b\": 2\n}").unwrap_err();
        assert_eq!((e.line, e.column), (3, 3));
        assert_eq!(e.message, "expected `,` or `}`");
        // Multibyte characters before the error count once each.
        let e = parse("{\"é😀\": 1 x}").unwrap_err();
        assert_eq!((e.line, e.column), (1, 10));
    }

    #[test]
    fn comment_with_multibyte_text_keeps_positions() {
        let e = parse("{ /* é😀 */ \"a\" 1}").unwrap_err();
        assert_eq!((e.line, e.column), (1, 16));
    }

    #[test]
    fn unterminated_block_comment_points_at_its_start() {
        let e = parse("{\n  /* open\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 3));
        assert_eq!(e.message, "unterminated /* comment");
    }
}
