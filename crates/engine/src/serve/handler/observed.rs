//! A served request inside its telemetry operation ([`crate::telemetry::Op`]): ended with the
//! convention's `error.type`, the JSON-RPC code of an error answer or `tool_error` for a tool
//! result with `isError`.

use std::future::Future;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, CompleteResult, GetPromptResponse, GetTaskResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, ReadResourceResponse,
};

use crate::telemetry::Op;

/// What an answer that is not an error says of failure.
pub(super) trait Outcome {
    fn error_type(&self) -> Option<&'static str> {
        None
    }
}

impl Outcome for CallToolResponse {
    fn error_type(&self) -> Option<&'static str> {
        match self {
            CallToolResponse::Complete(result) if result.is_error == Some(true) => {
                Some("tool_error")
            }
            _ => None,
        }
    }
}

impl Outcome for ListToolsResult {}
impl Outcome for ListResourcesResult {}
impl Outcome for ListResourceTemplatesResult {}
impl Outcome for ListPromptsResult {}
impl Outcome for ReadResourceResponse {}
impl Outcome for GetPromptResponse {}
impl Outcome for CompleteResult {}
impl Outcome for GetTaskResult {}
impl Outcome for rmcp::model::ListSkillsResult {}
impl Outcome for rmcp::model::GetSkillResult {}
impl Outcome for () {}

/// `answer`, inside `op` when telemetry records one.
pub(super) async fn observed<T: Outcome>(
    op: Option<Op>,
    answer: impl Future<Output = Result<T, ErrorData>>,
) -> Result<T, ErrorData> {
    let Some(op) = op else {
        return answer.await;
    };
    let result = answer.await;
    match &result {
        Ok(answer) => op.end(answer.error_type()),
        Err(error) => op.end(Some(&error.code.0.to_string())),
    }
    result
}
