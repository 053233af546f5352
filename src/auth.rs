//! OAuth at the JavaScript boundary: `opts.authorize(url)` and `opts.tokenStore` turned into the
//! engine's `AuthContext`, and the stored credentials the `toolnexus auth` command lists and
//! removes.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use super::callback::{JsCallback, js_callback};
use super::options::{Answer, CallOptions};
use engine::config::ConfigInput;
use engine::connect::auth::store::{self, FileStore, StoreFuture, TokenStore};
use engine::connect::auth::{AuthContext, Authorize};

/// An app's function, callable from any thread; it may answer with a value or a promise of one.
type JsFn<A> = JsCallback<A, Answer>;

/// Calls `f` and waits for its promise; a throw or a rejection is its message.
async fn settle<A: 'static + Send + JsValuesTupleIntoVec>(
    f: &JsFn<A>,
    args: A,
) -> std::result::Result<Value, String> {
    match f.call_async_catch(args).await {
        Err(e) => Err(e.reason.clone()),
        Ok(Either::A(promise)) => promise.await.map(|v| v.0).map_err(|e| e.reason.clone()),
        Ok(Either::B(value)) => Ok(value.0),
    }
}

/// `opts.authorize` and `opts.tokenStore` (checked and bound by lib/options.js); `input` names
/// the config in the `toolnexus auth` command a failure suggests.
pub fn auth_context(opts: Option<CallOptions>, input: &ConfigInput) -> Result<AuthContext> {
    let config = match input {
        ConfigInput::Path(path) => Some(path.display().to_string()),
        _ => None,
    };
    let Some(opts) = opts else {
        return Ok(AuthContext {
            config,
            ..Default::default()
        });
    };
    let authorize = opts.authorize.map(js_callback).transpose()?.map(|f| {
        let f = Arc::new(f);
        Arc::new(move |url: String| {
            let f = f.clone();
            let asked: futures::future::BoxFuture<'static, std::result::Result<(), String>> =
                Box::pin(async move { settle(&f, url).await.map(|_| ()) });
            asked
        }) as Authorize
    });
    let store = match opts.token_store {
        None => None,
        Some(store) => Some(Arc::new(JsStore {
            get: js_callback(store.get)?,
            set: js_callback(store.set)?,
            delete: js_callback(store.delete)?,
            locks: Default::default(),
        }) as Arc<dyn TokenStore>),
    };
    Ok(AuthContext {
        authorize,
        store,
        config,
    })
}

/// An app's store: `get(key)` resolves the record or undefined, `set(key, record)` and
/// `delete(key)` resolve when done. Refreshes are serialised within this process.
struct JsStore {
    get: JsFn<String>,
    set: JsFn<FnArgs<(String, Value)>>,
    delete: JsFn<String>,
    locks: std::sync::Mutex<std::collections::HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

fn store_failed(what: &str, e: String) -> String {
    format!(
        "opts.tokenStore.{what} failed: {}",
        engine::config::quote::shorten(&e, 200)
    )
}

impl TokenStore for JsStore {
    fn get(&self, key: &str) -> StoreFuture<'_, Option<Value>> {
        let key = key.to_string();
        Box::pin(async move {
            match settle(&self.get, key).await {
                Ok(Value::Null) => Ok(None),
                Ok(Value::String(text)) => Ok(serde_json::from_str(&text).ok()),
                Ok(record) => Ok(Some(record)),
                Err(e) => Err(store_failed("get", e)),
            }
        })
    }

    fn set(&self, key: &str, record: Value) -> StoreFuture<'_, ()> {
        let args = FnArgs::from((key.to_string(), record));
        Box::pin(async move {
            settle(&self.set, args)
                .await
                .map(|_| ())
                .map_err(|e| store_failed("set", e))
        })
    }

    fn delete(&self, key: &str) -> StoreFuture<'_, ()> {
        let key = key.to_string();
        Box::pin(async move {
            settle(&self.delete, key)
                .await
                .map(|_| ())
                .map_err(|e| store_failed("delete", e))
        })
    }

    fn refresh_lock(&self, key: &str) -> StoreFuture<'_, Box<dyn Send>> {
        let lock = self
            .locks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key.to_string())
            .or_default()
            .clone();
        Box::pin(async move { Ok(Box::new(lock.lock_owned().await) as Box<dyn Send>) })
    }
}

fn default_store() -> Result<FileStore> {
    FileStore::default_location().ok_or_else(|| {
        Error::from_reason("toolnexus: this system has no config directory for stored tokens")
    })
}

/// Credentials in the default store (the user's config directory), without their secrets:
/// `{ server, url, issuer, clientId, scopes, expiresAt, refreshable, subject }` per server.
#[napi(
    ts_return_type = "Array<{ server: string | null; url: string; issuer: string | null; clientId: string | null; scopes: string[] | null; expiresAt: number | null; refreshable: boolean; subject: string | null }>"
)]
pub fn stored_credentials<'env>(env: &'env Env) -> Result<Unknown<'env>> {
    super::convert::contain(|| {
        let store = default_store()?;
        let all = store.all().map_err(Error::from_reason)?;
        let list: Vec<Value> = all.iter().map(|(key, r)| store::summary(key, r)).collect();
        super::convert::parse_json(env, &Value::Array(list).to_string())
    })
}

/// Removes stored credentials by server name or URL from the default store; how many went.
#[napi]
pub fn forget_credentials(which: String) -> Result<u32> {
    let store = default_store()?;
    store
        .remove_matching(&which)
        .map(|n| n as u32)
        .map_err(Error::from_reason)
}

/// Where the default store keeps its file.
#[napi]
pub fn credentials_path() -> Result<String> {
    Ok(default_store()?.path().display().to_string())
}
