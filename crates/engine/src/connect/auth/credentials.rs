//! One server's credentials in a [`TokenStore`], as rmcp's `CredentialStore`. rmcp loads the
//! credentials before every request; they are kept in memory between loads, and read from the
//! store again under the refresh lock, where another process may have just refreshed them.

use std::sync::{Arc, Mutex};

use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde_json::json;

use super::dpop::Dpop;
use super::store::TokenStore;

#[derive(Clone)]
pub(crate) struct ServerCredentials {
    pub(crate) key: String,
    pub(crate) server: String,
    pub(crate) store: Arc<dyn TokenStore>,
    /// The last credentials read or written; `None` until read, and after a refresh lock is
    /// taken (the refresh must see what another process stored).
    cache: Arc<Mutex<Option<Option<StoredCredentials>>>>,
    /// The server's DPoP key: kept in the record with the tokens bound to it, and taken up
    /// again from a record that has one.
    dpop: Option<Arc<Dpop>>,
}

fn store_error(e: String) -> AuthError {
    AuthError::CredentialStoreError(e)
}

impl ServerCredentials {
    pub(crate) fn new(
        key: String,
        server: String,
        store: Arc<dyn TokenStore>,
        dpop: Option<Arc<Dpop>>,
    ) -> Self {
        Self {
            key,
            server,
            store,
            cache: Default::default(),
            dpop,
        }
    }

    fn cached(&self) -> Option<Option<StoredCredentials>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn remember(&self, credentials: Option<Option<StoredCredentials>>) {
        *self.cache.lock().unwrap_or_else(|e| e.into_inner()) = credentials;
    }

    /// The stored credentials, read from the store, if a record holds any.
    pub(crate) async fn stored(&self) -> Result<Option<StoredCredentials>, String> {
        let Some(record) = self.store.get(&self.key).await? else {
            self.remember(Some(None));
            return Ok(None);
        };
        let credentials: Option<StoredCredentials> = record
            .get("credentials")
            .cloned()
            .and_then(|c| serde_json::from_value(c).ok());
        // A token bound to a key is used only with that key: taken up with it, and never sent
        // without it (with `dpop: false`, such a record counts as absent).
        let bound = credentials
            .as_ref()
            .and_then(|c| c.token_response.as_ref())
            .is_some_and(super::dpop::bound_token);
        if let (true, Some(key)) = (bound, record.get("dpopKey").and_then(|k| k.as_str())) {
            match &self.dpop {
                Some(dpop) => dpop.restore(key)?,
                None => {
                    self.remember(Some(None));
                    return Ok(None);
                }
            }
        }
        self.remember(Some(credentials.clone()));
        Ok(credentials)
    }

    /// Records whom the credentials were granted to (shown by `toolnexus auth --list`).
    pub(crate) async fn note_subject(&self, subject: &str) -> Result<(), String> {
        let Some(mut record) = self.store.get(&self.key).await? else {
            return Ok(());
        };
        if let Some(record) = record.as_object_mut() {
            record.insert("subject".into(), subject.into());
        }
        self.store.set(&self.key, record).await
    }
}

#[async_trait::async_trait]
impl CredentialStore for ServerCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        match self.cached() {
            Some(credentials) => Ok(credentials),
            None => self.stored().await.map_err(store_error),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        // A refresh keeps whom the grant was for (the same issuer's grant, refreshed).
        let subject = match self.store.get(&self.key).await {
            Ok(Some(old)) if old.get("issuer") == Some(&json!(credentials.issuer)) => {
                old.get("subject").cloned()
            }
            _ => None,
        };
        let mut record = json!({
            "server": self.server,
            "url": self.key,
            "issuer": credentials.issuer,
            "savedAt": std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            "credentials": serde_json::to_value(&credentials)
                .map_err(|e| store_error(e.to_string()))?,
        });
        if let Some(record) = record.as_object_mut() {
            if let Some(subject) = subject {
                record.insert("subject".into(), subject);
            }
            let bound = credentials
                .token_response
                .as_ref()
                .is_some_and(super::dpop::bound_token);
            if let (true, Some(key)) = (bound, self.dpop.as_ref().and_then(|d| d.stored())) {
                record.insert("dpopKey".into(), key.into());
            }
        }
        self.remember(None);
        self.store
            .set(&self.key, record)
            .await
            .map_err(store_error)?;
        self.remember(Some(Some(credentials)));
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.remember(None);
        self.store.delete(&self.key).await.map_err(store_error)
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let guard = self
            .store
            .refresh_lock(&self.key)
            .await
            .map_err(store_error)?;
        self.remember(None);
        Ok(Some(CredentialRefreshGuard::new(guard)))
    }
}
