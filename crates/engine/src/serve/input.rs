//! What a running call may ask of its client (elicitation, sampling, roots) and one such
//! request waiting for its answer: the pieces both eras share (`context` asks, `rounds` parks
//! and answers), kept here so neither needs the other.
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still served.

use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ListRootsResult,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// What a running call may ask of its client: the user (elicitation), the client's model
/// (sampling), or its roots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    Elicit,
    Sample,
    Roots,
}

impl InputKind {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "elicit" => Some(Self::Elicit),
            "sample" => Some(Self::Sample),
            "roots" => Some(Self::Roots),
            _ => None,
        }
    }

    pub(crate) fn method(self) -> &'static str {
        match self {
            Self::Elicit => "elicitation/create",
            Self::Sample => "sampling/createMessage",
            Self::Roots => "roots/list",
        }
    }

    /// The client capability it needs, which is also what it is called in messages.
    pub(crate) fn capability(self) -> &'static str {
        match self {
            Self::Elicit => "elicitation",
            Self::Sample => "sampling",
            Self::Roots => "roots",
        }
    }

    pub(super) fn declared(self, capabilities: &ClientCapabilities) -> bool {
        match self {
            Self::Elicit => capabilities.elicitation.is_some(),
            Self::Sample => capabilities.sampling.is_some(),
            Self::Roots => capabilities.roots.is_some(),
        }
    }
}

/// One thing a run asks for; `key` names it in a 2026-07-28 input-required result.
#[derive(Debug, Clone)]
pub struct InputAsk {
    pub kind: InputKind,
    pub params: Value,
    pub key: Option<String>,
}

/// Whether a request was made in the 2026-07-28 era (no server-to-client requests).
pub(crate) fn is_modern(request: &RequestContext<RoleServer>) -> bool {
    request
        .protocol_version()
        .is_some_and(|v| v.as_str() >= "2026-07-28")
}

/// One input request of a run, waiting for the client's answer.
pub(crate) struct Pending {
    pub(crate) key: String,
    kind: InputKind,
    params: Value,
    answer: oneshot::Sender<Value>,
}

impl Pending {
    pub(crate) fn new(
        key: String,
        kind: InputKind,
        params: Value,
    ) -> (Self, oneshot::Receiver<Value>) {
        let (answer, receiver) = oneshot::channel();
        let pending = Self {
            key,
            kind,
            params,
            answer,
        };
        (pending, receiver)
    }

    /// Takes `response` as the answer when it is one for this kind of request; an answer of
    /// the wrong shape leaves the request pending (it is asked for again).
    pub(super) fn accept(self, response: &Value) -> Result<(), Self> {
        if check_answer(self.kind, response) {
            let _ = self.answer.send(response.clone());
            Ok(())
        } else {
            Err(self)
        }
    }

    pub(super) fn request(&self) -> Value {
        json!({ "method": self.kind.method(), "params": self.params })
    }
}

/// Whether `params` are valid for the kind of request they are meant for.
pub(crate) fn check_params(kind: InputKind, params: &Value) -> Result<(), String> {
    let problem = match kind {
        InputKind::Elicit => serde_json::from_value::<ElicitRequestParams>(params.clone()).err(),
        InputKind::Sample => {
            serde_json::from_value::<CreateMessageRequestParams>(params.clone()).err()
        }
        InputKind::Roots => None,
    };
    match problem {
        Some(e) => Err(format!("{} request is not valid: {e}", kind.capability())),
        None => Ok(()),
    }
}

fn check_answer(kind: InputKind, answer: &Value) -> bool {
    match kind {
        InputKind::Elicit => serde_json::from_value::<ElicitResult>(answer.clone()).is_ok(),
        InputKind::Sample => serde_json::from_value::<CreateMessageResult>(answer.clone()).is_ok(),
        InputKind::Roots => serde_json::from_value::<ListRootsResult>(answer.clone()).is_ok(),
    }
}
