//! A tool call: which way it goes (as a task, a direct request, or rmcp's service), and why it
//! got no result, in words.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::failure::{self, NoResult};
use super::{CallOpts, CallOutcome, LiveServer};
use crate::connect::road::Road;

impl LiveServer {
    /// Whether a call of `tool` asks the server for a task: in the handshake era, when its
    /// listing says it must run as one, or may and `task` asks. (In 2026-07-28 the server
    /// decides which calls become tasks, and the call follows them.)
    fn asks_for_task(&self, tool: &str, task: bool) -> bool {
        let extension_era =
            self.protocol.as_ref() == Some(&rmcp::model::ProtocolVersion::V_2026_07_28);
        !extension_era
            && match self.task_support(tool).as_deref() {
                Some("required") => true,
                Some("optional") => task,
                _ => false,
            }
    }

    /// Starts a call on the direct road when it takes it, on the caller's thread (see
    /// [`LiveServer::start_call`]): a plain call (not a task) that nobody hears mid-call
    /// (`heard`: a front for its progress or status), of a stdio server with direct requests.
    /// Otherwise `done` and the arguments come back, for [`LiveServer::call_with`].
    pub fn start_plain_call(
        self: &Arc<Self>,
        tool: &str,
        arguments: Map<String, Value>,
        (opts, heard): (&CallOpts, bool),
        closed: &CancellationToken,
        done: super::direct_call::Done,
    ) -> Result<super::direct_call::DirectCall, (super::direct_call::Done, Map<String, Value>)>
    {
        if heard || self.asks_for_task(tool, opts.task) {
            return Err((done, arguments));
        }
        self.start_call(
            tool,
            arguments,
            (opts.timeout, opts.meta.clone()),
            closed,
            done,
        )
    }

    /// Calls `tool` (its original name). Never fails: failures are `is_error` outcomes with a
    /// short human message. `timeout` overrides the server's; each progress notification
    /// restarts it. `cancel` aborts the call and tells the server with `notifications/cancelled`.
    /// `front`, when the call is forwarded for another client, gets the server's progress, log
    /// messages and elicitations while the call runs.
    #[cfg(test)]
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        timeout: Option<std::time::Duration>,
        cancel: &CancellationToken,
        closed: &CancellationToken,
        front: Option<Arc<dyn crate::connect::relay::Front>>,
    ) -> CallOutcome {
        let opts = CallOpts {
            timeout,
            task: false,
            meta: None,
        };
        self.call_with(tool, arguments, opts, cancel, closed, front)
            .await
    }

    /// [`LiveServer::call`], run as a task when the tool's listing says it must be, or may be
    /// and `opts.task` asks (see [`super::task_call`]): its timeout then bounds the whole task, and
    /// `front` hears each change of the task's status ([`crate::connect::relay::Front::status`]).
    pub async fn call_with(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        opts: CallOpts,
        cancel: &CancellationToken,
        closed: &CancellationToken,
        front: Option<Arc<dyn crate::connect::relay::Front>>,
    ) -> CallOutcome {
        let started = Instant::now();
        if closed.is_cancelled() {
            return CallOutcome::failure("not connected (source closed)", started)
                .typed(NoResult::SourceClosed.error_type());
        }
        let timeout = opts.timeout.unwrap_or(self.timeout);
        let as_task = self.asks_for_task(tool, opts.task);
        let meta = super::call_meta(opts.meta, front.as_ref());
        let call = (tool, arguments, meta);
        // Both roads give an outcome or why there is none, worded once below.
        let outcome = match self.road() {
            _ if as_task => {
                self.call_as_task(call, timeout, (cancel, closed), front, started)
                    .await
            }
            Road::Direct(direct) => {
                self.call_direct(direct, call, timeout, (cancel, closed), front, started)
                    .await
            }
            Road::Rmcp(_) => {
                self.call_service(call, timeout, (cancel, closed), front, started)
                    .await
            }
        };
        match outcome {
            Ok(outcome) => outcome,
            Err(why) => {
                let error_type = why.error_type();
                CallOutcome::failure(self.explain(why, closed).await, started).typed(error_type)
            }
        }
    }

    /// Why a call got no result, in words.
    async fn explain(&self, why: NoResult, closed: &CancellationToken) -> String {
        self.explain_as(failure::CALL, why, closed).await
    }

    /// Why a request that is `what` got no result, in words.
    pub(super) async fn explain_as(
        &self,
        what: &str,
        why: NoResult,
        closed: &CancellationToken,
    ) -> String {
        match why.words_of(what, closed) {
            Some(words) => words,
            None => self.describe_closed(closed).await,
        }
    }

    /// Why the connection ended mid-call: the framing the server broke, its exit, or a close.
    pub(super) async fn describe_closed(&self, closed: &CancellationToken) -> String {
        if closed.is_cancelled() {
            return "not connected (source closed)".to_string();
        }
        let mut guard = self.connection.lock().await;
        if let Some(violation) = guard.as_ref().and_then(|c| c.protocol_violation()) {
            return format!("server {:?} {violation}", self.name);
        }
        let exit = match guard.as_mut() {
            Some(conn) => {
                conn.exit_description(crate::bounds::EXIT_WAIT_MID_CALL)
                    .await
            }
            None => None,
        };
        match exit {
            Some(exit) => format!("server {:?} {exit}", self.name),
            None => format!("server {:?} closed the connection", self.name),
        }
    }
}
