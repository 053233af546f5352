//! Where a config comes from: inline JSON/JSONC text, a file, or an already-parsed value; and
//! reading a file without letting it hang the caller or fill its memory.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::error::{ConfigError, ConfigErrorKind};
use super::quote::{QUOTE_CHARS, shorten};

pub use crate::bounds::MAX_CONFIG_BYTES;

pub enum ConfigInput {
    Text(String),
    Path(PathBuf),
    Value(Value),
}

/// For a JS string input: JSON/JSONC text when its first character that is not blank, a BOM or
/// inside a comment is `{` (so `// mcp.json\n{...}` is text), else a file path relative to the
/// current directory.
pub fn input_from_string(s: &str) -> ConfigInput {
    if first_significant_char(s) == Some('{') {
        ConfigInput::Text(s.to_string())
    } else {
        ConfigInput::Path(PathBuf::from(s))
    }
}

/// The first character outside whitespace, a BOM, `//` line comments and `/* */` comments.
fn first_significant_char(s: &str) -> Option<char> {
    let mut rest = s;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{FEFF}');
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.split_once('\n').map_or("", |(_, next)| next);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/")?.1;
        } else {
            return rest.chars().next();
        }
    }
}

/// The path as messages show it: absolute, and cut to a few hundred characters.
pub(super) fn shown_path(path: &Path) -> String {
    let path = std::env::current_dir().map_or(path.to_path_buf(), |cwd| cwd.join(path));
    shorten(&path.display().to_string(), QUOTE_CHARS)
}

/// Reads a config file: a regular file of at most [`MAX_CONFIG_BYTES`], valid UTF-8.
///
/// The file type is checked before opening, so a FIFO (which would block the open until a
/// writer comes), a device such as `/dev/zero` (endless) or a directory fails at once; the
/// open itself does not block either, and the read stops past the bound even if the file grows.
pub(super) fn read_file(path: &Path) -> Result<String, ConfigError> {
    let shown = shown_path(path);
    let fail = |kind: ConfigErrorKind, why: String| ConfigError {
        kind,
        message: format!("toolnexus: cannot read MCP config {shown}: {why}"),
    };
    let io = |e: std::io::Error| fail(ConfigErrorKind::Io, e.to_string());
    check_file(&std::fs::metadata(path).map_err(io)?)
        .map_err(|why| fail(ConfigErrorKind::Io, why))?;
    let file = open_without_blocking(path).map_err(io)?;
    // The path may have been swapped for something else since the check: check what was opened.
    let metadata = file.metadata().map_err(io)?;
    check_file(&metadata).map_err(|why| fail(ConfigErrorKind::Io, why))?;
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(fail(ConfigErrorKind::Io, too_large(bytes.len() as u64)));
    }
    String::from_utf8(bytes).map_err(|_| ConfigError {
        kind: ConfigErrorKind::Syntax,
        message: format!("toolnexus: invalid MCP config {shown}: not UTF-8 text"),
    })
}

fn check_file(metadata: &std::fs::Metadata) -> Result<(), String> {
    let kind = metadata.file_type();
    if !kind.is_file() {
        return Err(format!("not a regular file ({})", file_kind(&kind)));
    }
    if metadata.len() > MAX_CONFIG_BYTES {
        return Err(too_large(metadata.len()));
    }
    Ok(())
}

pub(super) fn too_large(bytes: u64) -> String {
    format!(
        "{bytes} bytes is too large (an MCP config may be at most {} MiB)",
        MAX_CONFIG_BYTES / (1024 * 1024)
    )
}

fn file_kind(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a plain file"
    }
}

#[cfg(unix)]
fn open_without_blocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_without_blocking(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_text(s: &str) -> bool {
        matches!(input_from_string(s), ConfigInput::Text(_))
    }

    #[test]
    fn text_is_recognised_past_comments() {
        assert!(is_text("// mcp.json\n{\"mcpServers\": {}}"));
        assert!(is_text("/* a */ /* b\n */ // c\n\t{}"));
        assert!(is_text("\u{FEFF}// x\r\n{}"));
        assert!(!is_text("// only a comment"));
        assert!(!is_text("/* unterminated {"));
        // `//host/share/mcp.json` is a path (a comment with nothing after it).
        assert!(!is_text("//host/share/mcp.json"));
        assert!(!is_text("/etc/mcp.json"));
        assert!(!is_text("[{}]"));
    }

    #[test]
    fn examples_mcp_json_is_text() {
        let text = include_str!("../../../../examples/mcp.json");
        assert!(is_text(text));
    }

    /// A fresh directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> TempDir {
            let dir =
                std::env::temp_dir().join(format!("toolnexus-input-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn read_error(path: &Path) -> ConfigError {
        read_file(path).unwrap_err()
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_fails_at_once_instead_of_waiting_for_a_writer() {
        let dir = TempDir::new("fifo");
        let fifo = dir.0.join("mcp.json");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c_path` is a valid C string for the call; mkfifo only reads it.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let started = std::time::Instant::now();
        let e = read_error(&fifo);
        assert_eq!(e.kind, ConfigErrorKind::Io);
        assert_eq!(
            e.message,
            format!(
                "toolnexus: cannot read MCP config {}: not a regular file (a FIFO)",
                fifo.display()
            )
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_directories_are_not_config_files() {
        let e = read_error(Path::new("/dev/zero"));
        assert_eq!(
            e.message,
            "toolnexus: cannot read MCP config /dev/zero: not a regular file (a character device)"
        );
        let dir = TempDir::new("dir");
        let e = read_error(&dir.0);
        assert!(
            e.message.ends_with(": not a regular file (a directory)"),
            "{}",
            e.message
        );
    }

    #[test]
    fn size_is_bounded_before_reading() {
        let dir = TempDir::new("size");
        let big = dir.0.join("big.json");
        // Sparse: 17 MiB claimed, nothing written.
        std::fs::File::create(&big)
            .unwrap()
            .set_len(17 * 1024 * 1024)
            .unwrap();
        let e = read_error(&big);
        assert_eq!(e.kind, ConfigErrorKind::Io);
        assert!(
            e.message
                .ends_with(": 17825792 bytes is too large (an MCP config may be at most 16 MiB)"),
            "{}",
            e.message
        );
        // At the bound it is read (and then fails as text: NUL bytes are not JSON).
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_CONFIG_BYTES)
            .unwrap();
        assert_eq!(read_file(&big).unwrap().len() as u64, MAX_CONFIG_BYTES);
    }

    #[test]
    fn not_utf8_is_a_syntax_error_and_symlinks_are_followed() {
        let dir = TempDir::new("utf8");
        let bad = dir.0.join("bad.json");
        std::fs::write(&bad, b"{\"a\": \"\xff\"}").unwrap();
        let e = read_error(&bad);
        assert_eq!(e.kind, ConfigErrorKind::Syntax);
        assert!(
            e.message.ends_with("bad.json: not UTF-8 text"),
            "{}",
            e.message
        );
        #[cfg(unix)]
        {
            let good = dir.0.join("good.json");
            std::fs::write(&good, "{}").unwrap();
            let link = dir.0.join("link.json");
            std::os::unix::fs::symlink(&good, &link).unwrap();
            assert_eq!(read_file(&link).unwrap(), "{}");
        }
    }

    #[test]
    fn inline_text_is_bounded_too() {
        let text = format!("{{\"pad\": \"{}\"}}", "x".repeat(MAX_CONFIG_BYTES as usize));
        let e = super::super::load(ConfigInput::Text(text)).unwrap_err();
        assert_eq!(e.kind, ConfigErrorKind::Syntax);
        assert_eq!(
            e.message,
            "toolnexus: invalid MCP config <inline JSON>: 16777227 bytes is too large (an MCP config may be at most 16 MiB)"
        );
    }

    #[test]
    fn a_long_path_is_shown_cut() {
        let long = "x".repeat(5000);
        let shown = shown_path(Path::new(&long));
        assert!(shown.ends_with('…'), "{shown}");
        assert!(shown.chars().count() <= QUOTE_CHARS + 1);
    }
}
