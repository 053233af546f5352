//! A listed tool's `execution` (`taskSupport`) and a task's status, as the wire names them.
//! (rmcp 3.11 drops a listing's `execution`: see [`crate::compat::execution`].)

#[cfg(test)]
use serde_json::Value;

#[cfg(test)]
/// Whether a listing says the tool can only be called as a task.
pub(crate) fn task_required(listing: &Value) -> bool {
    listing.get("execution").is_some_and(requires_task)
}

#[cfg(test)]
/// Whether a tool's `execution` says it can only be called as a task.
pub(crate) fn requires_task(execution: &Value) -> bool {
    execution.get("taskSupport").and_then(Value::as_str) == Some("required")
}

/// A task status as the wire names it.
pub(crate) fn status_name(status: rmcp::model::TaskStatus) -> &'static str {
    use rmcp::model::TaskStatus;
    match status {
        TaskStatus::Working => "working",
        TaskStatus::InputRequired => "input_required",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
        // rmcp's enum is open to later revisions' statuses: one not known here is still going.
        _ => "working",
    }
}
