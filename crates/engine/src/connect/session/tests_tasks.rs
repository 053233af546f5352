//! 2026-07-28 tasks (the `io.modelcontextprotocol/tasks` extension) against a real rmcp server:
//! rmcp's `TaskManager` behind its streamable HTTP service on 127.0.0.1:0 (stateless, the
//! 2026-07-28 era), called through a loaded session as loadMcp calls it.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, ElicitRequest, ElicitRequestParams, GetTaskParams, GetTaskResult,
    InputRequest, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Map, json};
use tokio_util::sync::CancellationToken;

use super::{CallOpts, Session};
use crate::connect::client::ClientSide;
use crate::connect::inventory;
use crate::connect::relay::Front;
use crate::connect::relay::TaskUpdate;

/// Every tool call is a task: `slow` (a status message, then "slow done"), `ask` (asks for a
/// name by elicitation, in the task), `boom` (fails), `forever` (until cancelled).
#[derive(Clone, Default)]
struct TaskServer {
    tasks: Arc<TaskManager>,
    /// The ids of the tasks a client cancelled.
    cancelled: Arc<Mutex<Vec<String>>>,
}

impl ServerHandler for TaskServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = Arc::new(json!({"type": "object"}).as_object().unwrap().clone());
        let tools = ["slow", "ask", "boom", "forever"]
            .map(|name| Tool::new(name, name, schema.clone()))
            .to_vec();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let options = TaskOptions::new().with_poll_interval_ms(20);
        let task = match request.name.as_ref() {
            "slow" => self.tasks.spawn(options, |ctx| {
                Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(60)).await;
                    ctx.set_status_message("halfway");
                    tokio::time::sleep(Duration::from_millis(60)).await;
                    Ok(CallToolResult::success(vec![ContentBlock::text(
                        "slow done",
                    )]))
                })
            }),
            "ask" => self.tasks.spawn(options, |ctx| {
                Box::pin(async move {
                    let schema = rmcp::model::ElicitationSchema::builder()
                        .required_string("name")
                        .build()
                        .map_err(|e| TaskExit::Error(ErrorData::internal_error(e, None)))?;
                    let params = ElicitRequestParams::FormElicitationParams {
                        meta: None,
                        message: "Who are you?".into(),
                        requested_schema: schema,
                    };
                    let request = InputRequest::Elicitation(ElicitRequest::new(params));
                    let answer = ctx.request_input("who", request).await?;
                    let name = answer["content"]["name"].as_str().unwrap_or("nobody");
                    Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                        "hello {name}"
                    ))]))
                })
            }),
            "boom" => self.tasks.spawn(options, |_| {
                Box::pin(async move {
                    Err(TaskExit::Error(ErrorData::internal_error(
                        "the engine exploded",
                        None,
                    )))
                })
            }),
            _ => self.tasks.spawn(options, |ctx| {
                Box::pin(async move {
                    ctx.cancelled().await;
                    Err(TaskExit::Cancelled)
                })
            }),
        };
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.cancelled.lock().unwrap().push(request.task_id.clone());
        self.tasks.cancel_task(&request.task_id)
    }
}

/// The server on 127.0.0.1:0: its URL.
async fn start(server: TaskServer) -> String {
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        StreamableHttpServerConfig::default().disable_allowed_hosts(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = service.clone();
            tokio::spawn(async move {
                let handle = service_fn(move |req: hyper::Request<Incoming>| {
                    let service = service.clone();
                    async move { Ok::<_, Infallible>(service.handle(req).await) }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), handle)
                    .await;
            });
        }
    });
    url
}

async fn load(url: &str, client: ClientSide) -> Arc<Session> {
    let config =
        json!({"mcpServers": {"t": {"url": url, "protocol": "2026-07-28", "timeout": 10000}}});
    let config = crate::config::load(crate::config::ConfigInput::Value(config)).unwrap();
    let loaded = inventory::load_all(&config, &CancellationToken::new(), None, move |_| {
        client.clone()
    })
    .await
    .unwrap_or_else(|_| panic!("interrupted"));
    assert_eq!(loaded.servers[0].error, None);
    Arc::new(loaded.session)
}

/// A front that keeps the statuses it hears.
#[derive(Default)]
struct Statuses(Mutex<Vec<TaskUpdate>>);

#[allow(deprecated)] // the Front trait names logging and sampling (SEP-2577).
impl Front for Statuses {
    fn progress(&self, _: rmcp::model::ProgressNotificationParam) {}
    fn log(&self, _: rmcp::model::LoggingMessageNotificationParam) {}
    fn elicit(
        &self,
        _: ElicitRequestParams,
    ) -> futures::future::BoxFuture<'static, Option<rmcp::model::ElicitResult>> {
        Box::pin(async { None })
    }
    fn sample(
        &self,
        _: rmcp::model::CreateMessageRequestParams,
    ) -> futures::future::BoxFuture<'static, Option<rmcp::model::CreateMessageResult>> {
        Box::pin(async { None })
    }
    fn status(&self, update: &TaskUpdate) {
        self.0.lock().unwrap().push(update.clone());
    }
}

fn said(statuses: &Statuses) -> Vec<(&'static str, Option<String>)> {
    statuses
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|u| (u.status, u.status_message.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_tasks_are_followed_answered_failed_and_cancelled() {
    let server = TaskServer::default();
    let url = start(server.clone()).await;
    let elicitor: crate::connect::client::Elicitor = Arc::new(|request: ElicitRequestParams| {
        Box::pin(async move {
            let message = match &request {
                ElicitRequestParams::FormElicitationParams { message, .. } => message.clone(),
                _ => String::new(),
            };
            assert_eq!(message, "Who are you?");
            rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
                .with_content(json!({"name": "Ada"}))
        })
    });
    let session = load(
        &url,
        ClientSide::new(Default::default(), Some(elicitor), false),
    )
    .await;
    let live = session.servers[0].clone();
    let (cancel, closed) = (CancellationToken::new(), CancellationToken::new());
    let call = |tool: &'static str, opts: CallOpts, cancel: CancellationToken| {
        let live = live.clone();
        let closed = closed.clone();
        async move {
            let statuses = Arc::new(Statuses::default());
            let front: Arc<dyn Front> = statuses.clone();
            let out = live
                .call_with(tool, Map::new(), opts, &cancel, &closed, Some(front))
                .await;
            (out, statuses)
        }
    };

    let (slow, statuses) = call("slow", CallOpts::default(), cancel.clone()).await;
    assert_eq!((slow.output.as_str(), slow.is_error), ("slow done", false));
    assert_eq!(
        slow.raw.unwrap()["content"],
        json!([{"type": "text", "text": "slow done"}])
    );
    let heard = said(&statuses);
    assert_eq!(heard.first(), Some(&("working", None)));
    assert!(
        heard.contains(&("working", Some("halfway".into()))),
        "{heard:?}"
    );
    assert_eq!(heard.last(), Some(&("completed", Some("halfway".into()))));

    // An in-task input request, answered by the caller's elicitor through tasks/update.
    let (asked, statuses) = call("ask", CallOpts::default(), cancel.clone()).await;
    assert_eq!(
        (asked.output.as_str(), asked.is_error),
        ("hello Ada", false)
    );
    let heard: Vec<&str> = said(&statuses).iter().map(|(s, _)| *s).collect();
    assert!(heard.contains(&"input_required"), "{heard:?}");
    assert_eq!(heard.last(), Some(&"completed"));

    let (boom, _) = call("boom", CallOpts::default(), cancel.clone()).await;
    assert!(boom.is_error);
    assert!(
        boom.output.starts_with("MCP tool call failed: task \"")
            && boom.output.ends_with("\" failed: the engine exploded"),
        "{}",
        boom.output
    );

    // A timeout bounds the whole task, and cancels it.
    let opts = CallOpts {
        timeout: Some(Duration::from_millis(300)),
        task: false,
        meta: None,
    };
    let (timed, statuses) = call("forever", opts, cancel.clone()).await;
    assert_eq!(
        (timed.output.as_str(), timed.is_error),
        ("MCP tool call timed out after 300 ms", true)
    );
    let id = statuses.0.lock().unwrap()[0].task_id.clone();
    assert_eq!(server.cancelled.lock().unwrap().clone(), vec![id]);

    // So does an abort.
    let abort = CancellationToken::new();
    let aborting = abort.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        aborting.cancel();
    });
    let (aborted, statuses) = call("forever", CallOpts::default(), abort).await;
    assert_eq!(
        (aborted.output.as_str(), aborted.is_error),
        ("MCP tool call aborted", true)
    );
    let id = statuses.0.lock().unwrap()[0].task_id.clone();
    assert_eq!(server.cancelled.lock().unwrap().last(), Some(&id));
    assert_eq!(server.cancelled.lock().unwrap().len(), 2);
    session.close().await;
}
