//! Where OAuth credentials live: by default one file in the user's config directory
//! (`$XDG_CONFIG_HOME/toolnexus/credentials.json` on Linux, the platform equivalents elsewhere),
//! mode 0600, one record per canonical server URL, bound to the issuer that minted it; or an
//! app's own store (`opts.tokenStore`). Refreshes hold a cross-process lock per server, so two
//! agents refreshing one rotating token at once do not get its family revoked.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;

use serde_json::{Map, Value, json};

pub type StoreFuture<'a, T> = BoxFuture<'a, Result<T, String>>;

/// A place that keeps one JSON record per key (a canonical server URL).
pub trait TokenStore: Send + Sync {
    fn get(&self, key: &str) -> StoreFuture<'_, Option<Value>>;
    fn set(&self, key: &str, record: Value) -> StoreFuture<'_, ()>;
    fn delete(&self, key: &str) -> StoreFuture<'_, ()>;
    /// Held from loading a token to saving its refreshed successor.
    fn refresh_lock(&self, key: &str) -> StoreFuture<'_, Box<dyn Send>>;
}

/// The server URL as credentials are keyed: no userinfo, query or fragment; scheme and host
/// lower-cased and a default port dropped (the URL parser does both).
pub(crate) fn canonical_url(url: &str) -> String {
    crate::connect::reason::without_secrets(url).map_or_else(|| url.to_string(), String::from)
}

/// The default store: one JSON file, written whole (a temporary file renamed over it) under an
/// exclusive lock on a sibling lock file.
pub struct FileStore {
    dir: PathBuf,
}

const FILE: &str = "credentials.json";

impl FileStore {
    /// In the user's config directory; `None` when the platform has none (no home directory).
    pub fn default_location() -> Option<Self> {
        let base = directories::BaseDirs::new()?;
        Some(Self {
            dir: base.config_dir().join("toolnexus"),
        })
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    fn read_all(&self) -> Result<Map<String, Value>, String> {
        let text = match std::fs::read_to_string(self.path()) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
            Err(e) => return Err(format!("cannot read {}: {e}", self.path().display())),
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(mut file)) => match file.remove("servers") {
                Some(Value::Object(servers)) => Ok(servers),
                _ => Ok(Map::new()),
            },
            _ => Err(format!(
                "{} is not a toolnexus credentials file (remove it to start over)",
                self.path().display()
            )),
        }
    }

    fn lock_file(&self, name: &str) -> Result<std::fs::File, String> {
        create_private_dir(&self.dir)?;
        let path = self.dir.join(name);
        let file = private_options()
            .read(true)
            .write(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        file.lock()
            .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
        Ok(file)
    }

    /// Read, change and write the file under its lock.
    fn update(&self, change: impl FnOnce(&mut Map<String, Value>)) -> Result<(), String> {
        let _lock = self.lock_file("credentials.lock")?;
        let mut servers = self.read_all()?;
        change(&mut servers);
        let text = serde_json::to_string_pretty(&json!({ "version": 1, "servers": servers }))
            .map_err(|e| e.to_string())?;
        let temp = self.dir.join(format!("{FILE}.{}.tmp", std::process::id()));
        let written = private_options()
            .write(true)
            .truncate(true)
            .open(&temp)
            .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|_| f.sync_all()))
            .and_then(|_| std::fs::rename(&temp, self.path()));
        written.map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            format!("cannot write {}: {e}", self.path().display())
        })
    }

    /// Every stored record, keyed by server URL.
    pub fn all(&self) -> Result<Map<String, Value>, String> {
        self.read_all()
    }

    /// Removes the records whose key or server name is `which`; how many there were.
    pub fn remove_matching(&self, which: &str) -> Result<usize, String> {
        let mut removed = 0;
        self.update(|servers| {
            servers.retain(|key, record| {
                let hit = key == which
                    || record.get("server").and_then(Value::as_str) == Some(which)
                    || canonical_url(which) == *key;
                removed += usize::from(hit);
                !hit
            })
        })?;
        Ok(removed)
    }
}

fn private_options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
}

fn create_private_dir(dir: &std::path::Path) -> Result<(), String> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// A short, stable file-name-safe tag for a key (FNV-1a).
fn tag(key: &str) -> String {
    let mut hash: u64 = 0xcbf29ce484222325;
    for byte in key.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x100000001b3);
    }
    format!("{hash:016x}")
}

/// File work is blocking (a lock may wait for another process): it runs off the runtime.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|_| "the credential store task failed".to_string())?
}

impl TokenStore for Arc<FileStore> {
    fn get(&self, key: &str) -> StoreFuture<'_, Option<Value>> {
        let (store, key) = (self.clone(), key.to_string());
        Box::pin(blocking(move || Ok(store.read_all()?.remove(&key))))
    }

    fn set(&self, key: &str, record: Value) -> StoreFuture<'_, ()> {
        let (store, key) = (self.clone(), key.to_string());
        Box::pin(blocking(move || {
            store.update(|servers| {
                servers.insert(key, record);
            })
        }))
    }

    fn delete(&self, key: &str) -> StoreFuture<'_, ()> {
        let (store, key) = (self.clone(), key.to_string());
        Box::pin(blocking(move || {
            store.update(|servers| {
                servers.remove(&key);
            })
        }))
    }

    fn refresh_lock(&self, key: &str) -> StoreFuture<'_, Box<dyn Send>> {
        let (store, name) = (self.clone(), format!("refresh-{}.lock", tag(key)));
        Box::pin(blocking(move || {
            store
                .lock_file(&name)
                .map(|file| Box::new(file) as Box<dyn Send>)
        }))
    }
}

/// What `toolnexus auth --list` shows of a record: never a token or secret.
pub fn summary(key: &str, record: &Value) -> Value {
    let credentials = record.get("credentials");
    let token = credentials.and_then(|c| c.get("token_response"));
    let received = credentials
        .and_then(|c| c.get("token_received_at"))
        .and_then(Value::as_u64);
    let expires_in = token
        .and_then(|t| t.get("expires_in"))
        .and_then(Value::as_u64);
    let access = token
        .and_then(|t| t.get("access_token"))
        .and_then(Value::as_str);
    let id_token = token
        .and_then(|t| t.get("id_token"))
        .and_then(Value::as_str);
    json!({
        "server": record.get("server"),
        "url": key,
        "issuer": record.get("issuer"),
        "clientId": credentials.and_then(|c| c.get("client_id")),
        "scopes": credentials.and_then(|c| c.get("granted_scopes")),
        "expiresAt": received.zip(expires_in).map(|(at, within)| (at + within) * 1000),
        "refreshable": token.is_some_and(|t| t.get("refresh_token").is_some_and(|r| !r.is_null())),
        "subject": record
            .get("subject")
            .and_then(Value::as_str)
            .map(String::from)
            .or_else(|| id_token.or(access).and_then(jwt_subject)),
    })
}

/// The `sub` (or `email`, `preferred_username`) claim of a JWT, read without verifying it: it
/// only says whom a server was authorised as. `None` for an opaque token.
pub(crate) fn jwt_subject(token: &str) -> Option<String> {
    use base64::Engine;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    ["email", "preferred_username", "sub"]
        .iter()
        .find_map(|k| claims.get(*k).and_then(Value::as_str))
        .map(|s| crate::config::quote::shorten(s, 200))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_url_drops_what_is_not_the_server() {
        assert_eq!(
            canonical_url("HTTPS://User:pw@Example.COM:443/mcp?token=x#f"),
            "https://example.com/mcp"
        );
    }

    #[test]
    fn subject_comes_from_a_jwt_and_never_from_an_opaque_token() {
        // {"sub":"ada"} as base64url
        assert_eq!(
            jwt_subject("h.eyJzdWIiOiJhZGEifQ.s").as_deref(),
            Some("ada")
        );
        assert_eq!(jwt_subject("opaque-token"), None);
    }

    #[tokio::test]
    async fn file_store_is_private_and_round_trips() {
        let dir = std::env::temp_dir().join(format!("toolnexus-store-{}", std::process::id()));
        let store = Arc::new(FileStore { dir: dir.clone() });
        store
            .set("https://a/mcp", json!({"server": "a"}))
            .await
            .unwrap();
        assert_eq!(
            store.get("https://a/mcp").await.unwrap(),
            Some(json!({"server": "a"}))
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(store.remove_matching("a").unwrap(), 1);
        assert_eq!(store.get("https://a/mcp").await.unwrap(), None);
        let _ = std::fs::remove_dir_all(dir);
    }
}
