//! [`ToolServer`] as rmcp's `ServerHandler`: what it announces, `tools/list`, `tools/call`
//! (checked, then run or resumed by `rounds`), logging levels, list-changed subscriptions, and
//! the session hooks its transport asked for.

use rmcp::ErrorData;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestMethod, CompleteRequestParams,
    CompleteResult, GetPromptRequestMethod, GetPromptRequestParams, GetPromptResponse,
    Implementation, ListPromptsRequestMethod, ListPromptsResult,
    ListResourceTemplatesRequestMethod, ListResourceTemplatesResult, ListResourcesRequestMethod,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, PromptsCapability,
    ReadResourceRequestMethod, ReadResourceRequestParams, ReadResourceResponse,
    ResourcesCapability, ServerCapabilities, ServerConfig, SubscribeRequestMethod,
    SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer};

use super::auth::Kind;
use super::caller::Sight;
use super::surface::ListKind;
use super::{ToolServer, changes};

mod call;
mod observed;
mod policy;

use crate::telemetry::{Named, Op};
use observed::observed;

/// The items of a listing `sight` sees (all of them, uncopied, when it sees every one).
fn visible<T: Clone>(items: &[T], sight: &Sight, kind: Kind, name: impl Fn(&T) -> &str) -> Vec<T> {
    if sight.sees_all(kind) {
        return items.to_vec();
    }
    items
        .iter()
        .filter(|item| sight.sees(kind, name(item)))
        .cloned()
        .collect()
}

impl ServerHandler for ToolServer {
    #[allow(deprecated)] // logging is deprecated by SEP-2577 but still served.
    fn get_info(&self) -> ServerConfig {
        let identity = &self.shared.identity;
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging()
            .build();
        // Only what is served: a server of tools alone announces tools alone.
        let caps = self.surface_now().caps;
        let skills = self.offers_skills();
        if caps.resources {
            let mut resources = ResourcesCapability::default();
            resources.subscribe = Some(true);
            resources.list_changed = Some(true);
            capabilities.resources = Some(resources);
        } else if skills {
            // Skills alone: their files are resources, read and listed, nothing more.
            capabilities.resources = Some(ResourcesCapability::default());
        }
        if caps.prompts {
            let mut prompts = PromptsCapability::default();
            prompts.list_changed = Some(true);
            capabilities.prompts = Some(prompts);
        }
        if caps.completions {
            capabilities.completions = Some(Default::default());
        }
        if skills {
            // The skills extension (SEP-2640), with `resources/directory/read`.
            let settings = rmcp::model::SkillsCapability::new().with_directory_read();
            if let Ok(serde_json::Value::Object(settings)) = serde_json::to_value(settings) {
                capabilities
                    .extensions
                    .get_or_insert_with(Default::default)
                    .insert(rmcp::model::SKILLS_EXTENSION_ID.to_string(), settings);
            }
        }
        if self.serves_tasks() {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(
                    rmcp::model::TASKS_EXTENSION_ID.to_string(),
                    Default::default(),
                );
        }
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            identity.name.clone(),
            identity.version.clone(),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let (op, context) = Op::server("tools/list", Named::Nothing, context);
        observed(op, async { self.tools_listing(&context) }).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let (op, context) = Op::server("resources/list", Named::Nothing, context);
        observed(op, async { self.resources_listing(&context) }).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let (op, context) = Op::server("resources/templates/list", Named::Nothing, context);
        observed(op, async { self.templates_listing(&context) }).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let (op, context) = Op::server("prompts/list", Named::Nothing, context);
        observed(op, async { self.prompts_listing(&context) }).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let (op, context) = Op::server("resources/read", Named::Resource(&request.uri), context);
        observed(op, async move {
            if let Some(read) = self.skill_file(&request.uri, &context) {
                // The server's own skill file: its policy may refuse the read too.
                let subject = super::rounds::Subject {
                    kind: super::rounds::SubjectKind::Resource,
                    name: request.uri.clone(),
                    source: "own".into(),
                };
                self.before_call(&subject, None, &Default::default(), &context)
                    .await
                    .map_err(|stopped| stopped.error())?;
                return Ok(read.into());
            }
            if !self.surface_now().caps.resources {
                // Skills alone declare resources: any other URI is one nobody serves.
                if self.offers_skills() {
                    return Err(super::serving::not_found(&request.uri));
                }
                return Err(ErrorData::method_not_found::<ReadResourceRequestMethod>());
            }
            self.read(request, context).await
        })
        .await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let (op, context) = Op::server("prompts/get", Named::Prompt(&request.name), context);
        observed(op, async move {
            if !self.surface_now().caps.prompts {
                return Err(ErrorData::method_not_found::<GetPromptRequestMethod>());
            }
            self.get(request, context).await
        })
        .await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let (op, context) = Op::server("completion/complete", Named::Nothing, context);
        observed(op, async move {
            if !self.surface_now().caps.completions {
                return Err(ErrorData::method_not_found::<CompleteRequestMethod>());
            }
            self.completion(request, context).await
        })
        .await
    }

    #[allow(deprecated)] // resources/subscribe is the handshake era's; rmcp routes it so.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !self.surface_now().caps.resources {
            return Err(ErrorData::method_not_found::<SubscribeRequestMethod>());
        }
        // Served statelessly, nothing outlives the answer: an update would have nowhere to go.
        if super::caller::from_front::<super::caller::Stateless>(&context).is_some() {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "resources/subscribe is not offered by this stateless server: it keeps no \
                 stream to send updates on (read the resource again, or follow it with \
                 subscriptions/listen in protocol 2026-07-28)",
                None,
            ));
        }
        self.before_request("resources/subscribe", &request.uri, &context)
            .await?;
        self.follow(&request.uri, context).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.unfollow(&request.uri).await;
        Ok(())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        if self.search_mode().is_some()
            && let Some(meta) = super::search::meta_tools()
                .into_iter()
                .find(|t| t.name == name)
        {
            return Some(meta);
        }
        let set = self.current();
        set.by_name.get(name)?;
        set.listed.iter().find(|t| t.name == name).cloned()
    }

    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, ErrorData> {
        // rmcp's own initialize, plus telling the transport before the first call can come.
        context.peer.set_peer_info(request.clone());
        if let Some(hooks) = &self.hooks {
            hooks.initialized(&context, self.log_level.clone());
        }
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.shared.changes.register(context.peer);
    }

    async fn on_cancelled(
        &self,
        notification: rmcp::model::CancelledNotificationParam,
        _context: rmcp::service::NotificationContext<RoleServer>,
    ) {
        // rmcp cancels the calls its session loop runs; these are the ones `http` ran.
        if let (Some(hooks), Some(request)) = (&self.hooks, &notification.request_id) {
            hooks.cancelled(request);
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        Some(changes::ToolChanges::accepted(requested))
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), ErrorData> {
        self.listen_all(context).await
    }

    #[allow(deprecated)] // logging is deprecated by SEP-2577 but still served.
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level.set(request.level);
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (op, context) = Op::server("tools/call", Named::Tool(&request.name), context);
        observed(op, self.tools_call(request, context)).await
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListSkillsResult, ErrorData> {
        let (op, context) = Op::server("skills/list", Named::Nothing, context);
        observed(op, async { self.skills_listing(&context) }).await
    }

    async fn get_skill(
        &self,
        request: rmcp::model::GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetSkillResult, ErrorData> {
        let (op, context) = Op::server("skills/get", Named::Resource(&request.uri), context);
        observed(op, async {
            self.before_request("skills/get", &request.uri, &context)
                .await?;
            self.skill_entry(&request.uri, &context).await
        })
        .await
    }

    async fn read_resource_directory(
        &self,
        request: rmcp::model::ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceDirectoryResult, ErrorData> {
        let (op, context) = Op::server(
            "resources/directory/read",
            Named::Resource(&request.uri),
            context,
        );
        observed(op, async {
            self.before_request("resources/directory/read", &request.uri, &context)
                .await?;
            self.skill_directory(&request.uri, &context).await
        })
        .await
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        // An HTTP session's handshake-era task methods (see `task_legacy`).
        self.legacy_custom(request, &context).await
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        let (op, context) = Op::server("tasks/get", Named::Nothing, context);
        observed(op, async move {
            self.task_get(&request.task_id, &context).await
        })
        .await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let (op, context) = Op::server("tasks/update", Named::Nothing, context);
        observed(op, async move {
            self.task_update(&request.task_id, request.input_responses, &context)
                .await
        })
        .await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let (op, context) = Op::server("tasks/cancel", Named::Nothing, context);
        observed(op, async move {
            self.task_cancel(&request.task_id, &context).await
        })
        .await
    }
}

/// The listings, as the handler answers them inside their telemetry operation.
impl ToolServer {
    fn tools_listing(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let (ttl, scope) = self.list_hints(ListKind::Tools);
        let sight = Sight::of(context);
        let set = self.current();
        let items = match self.search_mode() {
            Some(mode) => super::search::listing(mode, &set, &sight),
            None => visible(&set.listed, &sight, Kind::Tool, |t| &t.name),
        };
        Ok(ListToolsResult::with_all_items(items)
            .with_ttl_ms(ttl)
            .with_cache_scope(scope))
    }

    fn resources_listing(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let surface = self.surface_now();
        let skills = self.skills_resources(context);
        if !surface.caps.resources && !self.offers_skills() {
            return Err(ErrorData::method_not_found::<ListResourcesRequestMethod>());
        }
        let (ttl, scope) = surface.hints(ListKind::Resources);
        let mut items: Vec<_> = visible(
            &surface.resources,
            &Sight::of(context),
            Kind::Resource,
            |(r, _)| &r.uri,
        )
        .into_iter()
        .map(|(r, _)| r)
        .collect();
        // The server's own skills win a clash with an upstream's re-rooted ones.
        if let Some(own) = skills {
            items.retain(|r| !own.iter().any(|o| o.uri == r.uri));
            items.extend(own);
        }
        Ok(ListResourcesResult::with_all_items(items)
            .with_ttl_ms(ttl)
            .with_cache_scope(scope))
    }

    fn templates_listing(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let surface = self.surface_now();
        if !surface.caps.resources {
            return Err(ErrorData::method_not_found::<
                ListResourceTemplatesRequestMethod,
            >());
        }
        let (ttl, scope) = surface.hints(ListKind::Templates);
        let items = visible(
            &surface.templates,
            &Sight::of(context),
            Kind::Resource,
            |(t, _)| &t.uri_template,
        )
        .into_iter()
        .map(|(t, _)| t)
        .collect();
        Ok(ListResourceTemplatesResult::with_all_items(items)
            .with_ttl_ms(ttl)
            .with_cache_scope(scope))
    }

    fn prompts_listing(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let surface = self.surface_now();
        if !surface.caps.prompts {
            return Err(ErrorData::method_not_found::<ListPromptsRequestMethod>());
        }
        let (ttl, scope) = surface.hints(ListKind::Prompts);
        let items = visible(
            &surface.prompts,
            &Sight::of(context),
            Kind::Prompt,
            |(p, _, _)| &p.name,
        )
        .into_iter()
        .map(|(p, _, _)| p)
        .collect();
        Ok(ListPromptsResult::with_all_items(items)
            .with_ttl_ms(ttl)
            .with_cache_scope(scope))
    }
}
