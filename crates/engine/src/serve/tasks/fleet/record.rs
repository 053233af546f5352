//! What the shared store keeps of a task (its record and its summary), as written by its
//! runner and read by any replica.

use rmcp::model::{DetailedTask, Task, TaskPayload};
use serde::{Deserialize, Serialize};

use crate::bounds::SERVE_STORE_TASK_BYTES as MAX_RECORD;
use crate::serve::store::TaskWrite;
use crate::serve::tasks::{error_object, now};

/// What the store keeps of a task: whose it is, and the task as `tasks/get` answers it.
#[derive(Serialize, Deserialize)]
pub(super) struct Record {
    #[serde(rename = "s")]
    pub(super) scope: String,
    #[serde(rename = "t")]
    pub(super) task: DetailedTask,
}

/// What `tasks/list` and a session's stream read of a task: whose it is, and the task without
/// its result.
#[derive(Serialize, Deserialize)]
pub(super) struct Summary {
    #[serde(rename = "s")]
    pub(super) scope: String,
    #[serde(rename = "t")]
    pub(super) task: Task,
}

/// What is written of a task: `task` as the store keeps it (one larger than the store keeps
/// ends `failed`, saying so), its record and its summary.
pub(super) struct Written {
    pub(super) task: DetailedTask,
    pub(super) record: Vec<u8>,
    summary: Vec<u8>,
}

impl Written {
    pub(super) fn of(scope: &str, task: &DetailedTask) -> Self {
        let record = |task: &DetailedTask| {
            serde_json::to_vec(&Record {
                scope: scope.to_string(),
                task: task.clone(),
            })
            .unwrap_or_default()
        };
        let mut bytes = record(task);
        let mut kept = task.clone();
        if bytes.len() > MAX_RECORD {
            let why = format!(
                "the task's {} ({} bytes) is larger than the state store keeps of a task (at \
                 most {} bytes)",
                match task.payload {
                    TaskPayload::Completed { .. } => "result",
                    TaskPayload::Failed { .. } => "failure",
                    _ => "input requests",
                },
                bytes.len(),
                MAX_RECORD
            );
            kept = failed(task, &why);
            bytes = record(&kept);
        }
        let summary = serde_json::to_vec(&Summary {
            scope: scope.to_string(),
            task: kept.task.clone(),
        })
        .unwrap_or_default();
        Self {
            task: kept,
            record: bytes,
            summary,
        }
    }

    pub(super) fn write(&self) -> TaskWrite<'_> {
        TaskWrite {
            record: &self.record,
            summary: &self.summary,
        }
    }

    pub(super) fn ends(&self) -> bool {
        self.task.task.status.is_terminal()
    }
}

pub(super) fn decode(bytes: &[u8]) -> Option<Record> {
    serde_json::from_slice(bytes).ok()
}

/// `task` ended `failed` for `why` (its status message too).
pub(super) fn failed(task: &DetailedTask, why: &str) -> DetailedTask {
    let mut ended = task.task.clone();
    ended.status_message = Some(why.to_string());
    ended.last_updated_at = now();
    DetailedTask::new(
        ended,
        TaskPayload::Failed {
            error: error_object(rmcp::model::ErrorCode::INTERNAL_ERROR.0, why),
        },
    )
}
