//! `tools/call` of a tool that supports tasks, answered with a task, and the task methods of
//! the 2026-07-28 extension (`io.modelcontextprotocol/tasks`) over [`super::tasks`].

use std::time::Instant;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, ClientCapabilities, CreateTaskResult, GetTaskResult, InputResponses,
};
use rmcp::service::{RequestContext, RoleServer};

use super::rounds::{Running, Subject};
use super::tasks::run::Ties;
use super::tasks::{Ended, Refusal, Scope, fleet};
use super::toolset::ToolSet;
use super::{ToolServer, input};

/// Marks the request context of a run served as a task.
#[derive(Clone)]
pub(super) struct InTask {
    pub(super) ttl: std::time::Duration,
    /// The task, once made (the run starts just before it is): where the run's status
    /// messages go.
    pub(super) at: std::sync::Arc<std::sync::OnceLock<TaskAt>>,
}

/// A served task: its server's tasks and its id.
pub(super) struct TaskAt {
    pub(super) tasks: std::sync::Weak<super::tasks::Tasks>,
    pub(super) id: String,
}

/// A tool's `execution.taskSupport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Support {
    Optional,
    Required,
}

/// What `tool`'s listing says of running it as a task (`forbidden` or none: never).
pub(super) fn support(set: &ToolSet, tool: &str) -> Option<Support> {
    match set.executions.get(tool)?.get("taskSupport")?.as_str()? {
        "optional" => Some(Support::Optional),
        "required" => Some(Support::Required),
        _ => None,
    }
}

/// Whether the client of `context` declared the tasks extension (at `initialize`, or in the
/// request's own `_meta` capabilities).
pub(super) fn declared(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|c| c.supports_tasks())
}

/// -32021, naming the tasks extension.
pub(super) fn tasks_required() -> ErrorData {
    ErrorData::missing_required_client_capability(
        ClientCapabilities::builder().enable_tasks().build(),
    )
}

fn refused(refusal: Refusal) -> ErrorData {
    refusal.error()
}

/// A task reserved for a call (see [`ToolServer::reserve_task`]).
pub(super) struct Reserved {
    task: rmcp::model::Task,
    /// The shared store its record is in, and whose it is there.
    shared: Option<(std::sync::Arc<dyn super::store::StateStore>, String)>,
}

impl ToolServer {
    /// Whose the tasks made by the request of `context` are: its principal's, and in the
    /// handshake era its session's too.
    pub(super) fn scope_of(&self, context: &RequestContext<RoleServer>) -> Scope {
        Scope {
            session: (!input::is_modern(context)).then_some(self.session),
            principal: super::caller::owner_of(context),
        }
    }

    /// Whether any tool served now may run as a task (then the tasks extension is declared).
    pub(super) fn serves_tasks(&self) -> bool {
        // Only tools listed with an `execution` can be task tools (usually none: no scan).
        let set = self.current();
        !set.executions.is_empty() && set.listed.iter().any(|t| support(&set, &t.name).is_some())
    }

    /// The task a call will run as, before its run starts: its id and ttl (`ttl` asked, in
    /// ms), and with a shared state store its record, written first. Refused in words when
    /// the caller has as many tasks as allowed, or the record cannot be written (`started`:
    /// whether the call's run had started already).
    pub(super) async fn reserve_task(
        &self,
        ttl: Option<u64>,
        context: &RequestContext<RoleServer>,
        started: bool,
    ) -> Result<Reserved, String> {
        let tasks = &self.shared.tasks;
        tasks.room_for(&self.scope_of(context))?;
        let task = tasks.new_task(tasks.ttl_for(ttl));
        let Some(store) = super::store::of(context) else {
            return Ok(Reserved { task, shared: None });
        };
        let scope = self.shared_scope(context);
        if let Err(e) = fleet::record_new(&*store, &scope, &task).await {
            let so = if started {
                "so its run was stopped"
            } else {
                "so its call was not started"
            };
            return Err(format!(
                "the task could not be recorded in the state store ({e}), {so}; call again"
            ));
        }
        Ok(Reserved {
            task,
            shared: Some((store, scope)),
        })
    }

    /// Whose a task of the shared store is (see [`fleet::shared_scope`]).
    fn shared_scope(&self, context: &RequestContext<RoleServer>) -> String {
        let session = (!input::is_modern(context)).then(|| {
            context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.headers.get("mcp-session-id"))
                .and_then(|v| v.to_str().ok())
                .map_or_else(|| format!("#{}", self.session), str::to_string)
        });
        fleet::shared_scope(
            session.as_deref(),
            super::caller::owner_of(context).as_deref(),
        )
    }

    /// Whether task `id` runs on this replica (its status notifications go out from here).
    pub(crate) fn runs_task(&self, id: &str) -> bool {
        self.shared.tasks.has(id)
    }

    /// Where the task methods of `context`'s request find tasks.
    pub(super) fn book(&self, context: &RequestContext<RoleServer>) -> fleet::Book<'_> {
        match super::store::of(context) {
            Some(store) => fleet::Book::Shared(store, self.shared_scope(context)),
            None => fleet::Book::Here(&self.shared.tasks, self.scope_of(context)),
        }
    }

    /// Runs `run` as the task `reserved` of the caller's, reported to `OnCall` when it ends.
    pub(super) async fn run_as_task(
        &self,
        run: Running,
        reserved: Reserved,
        context: &RequestContext<RoleServer>,
    ) -> Result<rmcp::model::Task, String> {
        let scope = self.scope_of(context);
        let (me, subject, principal) = (
            self.clone(),
            run.subject.clone(),
            super::caller::principal_of(context),
        );
        let started: Instant = run.started;
        let legacy = !input::is_modern(context);
        let tasks = &self.shared.tasks;
        let Reserved { task, shared } = reserved;
        let watch = legacy.then(|| status_notifications(context));
        let ties = match &shared {
            None => Ties {
                watch,
                // A handshake-era task is its session's: it ends with it.
                session: legacy.then(|| context.peer.clone()),
                mirror: None,
            },
            // In a shared store, the task's statuses are told as the store has them, and it
            // lives its ttl (its session goes on at other replicas; a DELETE cancels it).
            Some((store, scope)) => Ties {
                watch: None,
                session: None,
                mirror: Some(fleet::link(
                    store.clone(),
                    std::sync::Arc::downgrade(tasks),
                    &task,
                    scope.clone(),
                    watch,
                )),
            },
        };
        let made = tasks.create(
            scope,
            task.clone(),
            run,
            move |ended| {
                let is_error = match ended {
                    Ended::Result(result) => result.is_error.unwrap_or(false),
                    Ended::Failed(_) | Ended::Cancelled => true,
                };
                record(&me, &subject, started, is_error, principal);
            },
            ties,
        );
        let task = match made {
            Ok(task) => task,
            Err(why) => {
                if let Some((store, scope)) = &shared {
                    fleet::refuse(&**store, scope, &task, &why).await;
                }
                return Err(why);
            }
        };
        if let Some(in_task) = context.extensions.get::<InTask>() {
            let _ = in_task.at.set(TaskAt {
                tasks: std::sync::Arc::downgrade(tasks),
                id: task.task_id.clone(),
            });
        }
        Ok(task)
    }

    /// A 2026-07-28 task call: the task at once.
    pub(super) async fn answer_with_task(
        &self,
        run: Running,
        reserved: Reserved,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match self.run_as_task(run, reserved, context).await {
            Ok(task) => Ok(CallToolResponse::Task(CreateTaskResult::new(task))),
            Err(why) => Ok(CallToolResponse::Complete(crate::tool_result::text_result(
                why, true,
            ))),
        }
    }

    /// A run that asked to go on as a task (`ctx.startTask()`), handed to a new task of the
    /// caller's: the call is answered with it, and the run, still going, is driven by the task
    /// from now on (what it asks next is the task's input). Its cancellation is the task's
    /// from now on, not the call's. When no task can be made (as many as allowed exist, or the
    /// shared store failed), the call is answered with why and the run is dropped.
    pub(super) async fn escalate(
        &self,
        mut run: Running,
        reply: super::context::Escalation,
    ) -> CallToolResponse {
        run.forbid_task();
        let life = self.shared.tasks.ttl_for(None);
        let context = ToolServer::task_context(run.ctx.request(), life);
        run.ctx.follow(context.clone());
        let made = match self.reserve_task(None, &context, true).await {
            Ok(reserved) => self.run_as_task(run, reserved, &context).await,
            Err(why) => Err(why),
        };
        match made {
            Ok(task) => {
                let _ = reply.send(true);
                CallToolResponse::Task(CreateTaskResult::new(task))
            }
            Err(why) => CallToolResponse::Complete(crate::tool_result::text_result(why, true)),
        }
    }

    pub(super) async fn task_get(
        &self,
        task_id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let task = self.book(context).get(task_id).await.map_err(refused)?;
        Ok(GetTaskResult::new(task))
    }

    pub(super) async fn task_update(
        &self,
        task_id: &str,
        responses: InputResponses,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.book(context)
            .update(task_id, responses)
            .await
            .map_err(refused)
    }

    /// 2026-07-28: cancelling a task that already ended is acknowledged like any other.
    pub(super) async fn task_cancel(
        &self,
        task_id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        match self.book(context).cancel(task_id).await {
            Ok(_) | Err(Refusal::Terminal(_)) => Ok(()),
            Err(other) => Err(refused(other)),
        }
    }

    /// The run of a task call: like any call's, but its own cancellation (the request it came
    /// in ends at once; `tasks/cancel` ends the task).
    pub(super) fn task_context(
        context: RequestContext<RoleServer>,
        ttl: std::time::Duration,
    ) -> RequestContext<RoleServer> {
        let mut context = context;
        context.ct = tokio_util::sync::CancellationToken::new();
        // Its run knows it runs as a task, for how long at most (a gateway's relayed call then
        // runs as a task upstream too, bounded by this task's life).
        context.extensions.insert(InTask {
            ttl,
            at: Default::default(),
        });
        context
    }
}

/// 2025-11-25's `notifications/tasks/status` (optional in that era) to the client whose task
/// it is, in the order its status changed: the task's fields as `tasks/get` gives them. (The
/// 2026-07-28 extension's `notifications/tasks` goes only on a `subscriptions/listen` stream
/// that names the task, which rmcp's listen filter cannot carry: not sent.)
fn status_notifications(context: &RequestContext<RoleServer>) -> super::tasks::Watch {
    let peer = context.peer.clone();
    let (news, mut queue) = tokio::sync::mpsc::unbounded_channel::<serde_json::Value>();
    // Ends when the task is gone (its watch, holding `news`, with it) and all was sent.
    tokio::spawn(async move {
        while let Some(params) = queue.recv().await {
            let notification =
                rmcp::model::CustomNotification::new(super::task_legacy::STATUS, Some(params));
            let _ = peer
                .send_notification(rmcp::model::ServerNotification::CustomNotification(
                    notification,
                ))
                .await;
        }
    });
    std::sync::Arc::new(move |task: &rmcp::model::DetailedTask| {
        let _ = news.send(super::task_legacy::task_json(&task.task));
    })
}

fn record(
    server: &ToolServer,
    subject: &Subject,
    started: Instant,
    is_error: bool,
    principal: Option<std::sync::Arc<super::auth::Principal>>,
) {
    server.record(subject, started, is_error, principal);
}

/// What a run can know of the task it runs as.
impl super::context::CallContext {
    /// How long the task this call runs as may live, when it runs as one.
    pub(crate) fn task_life(&self) -> Option<std::time::Duration> {
        self.extension(|task: &InTask| task.ttl)
    }

    /// The run's status message, when it runs as a task (see [`super::tasks::Tasks::status_message`]);
    /// nothing otherwise.
    pub(crate) fn task_status(&self, message: &str) {
        let at = self.extension(|task: &InTask| task.at.clone());
        if let Some(at) = at.as_deref().and_then(std::sync::OnceLock::get)
            && let Some(tasks) = at.tasks.upgrade()
        {
            tasks.status_message(&at.id, message);
        }
    }
}
