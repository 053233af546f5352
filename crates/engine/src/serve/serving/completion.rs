//! `completion/complete` on the served surface: for a prompt or a resource template the caller
//! sees, the server's own completer or its upstream's.

use rmcp::ErrorData;
use rmcp::model::{CompleteRequestParams, CompleteResult, Reference};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};

use super::{envelope, invalid_result};
use crate::serve::ToolServer;
use crate::serve::auth::Kind;
use crate::serve::caller::Sight;
use crate::serve::context::CallContext;
use crate::serve::surface::Owner;
use crate::surface::completion;

impl ToolServer {
    pub(in crate::serve) async fn completion(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let surface = self.surface();
        // No suggestions for what the caller cannot see, as for what does not exist.
        let sight = Sight::of(&context);
        let seen = match &request.r#ref {
            Reference::Prompt(p) => sight.sees(Kind::Prompt, &p.name),
            Reference::Resource(r) => sight.sees(Kind::Resource, &r.uri),
            _ => true,
        };
        if !seen {
            return Ok(CompleteResult::default());
        }
        let (owner, reference) = match &request.r#ref {
            Reference::Prompt(p) => match surface.prompt(&p.name) {
                Some((_, owner, original)) => (
                    owner.clone(),
                    json!({"type": "ref/prompt", "name": original}),
                ),
                None => return Ok(CompleteResult::default()),
            },
            Reference::Resource(r) => match surface.template(&r.uri) {
                Some((_, owner)) => (owner.clone(), json!({"type": "ref/resource", "uri": r.uri})),
                None => return Ok(CompleteResult::default()),
            },
            _ => return Ok(CompleteResult::default()),
        };
        let argument = serde_json::to_value(&request.argument).unwrap_or_default();
        let context_value = request
            .context
            .as_ref()
            .and_then(|c| serde_json::to_value(c).ok());
        let (ctx, _asks) = CallContext::new(context, self.log_level.clone());
        let value = match owner {
            Owner::Own(item) => {
                let Some(completer) = item
                    .completer
                    .as_ref()
                    .filter(|_| item.completes.contains(&request.argument.name))
                else {
                    return Ok(CompleteResult::default());
                };
                let mut call = Map::new();
                call.insert("argument".into(), argument);
                if let Some(c) = context_value {
                    call.insert("context".into(), c);
                }
                let answered = envelope(completer.call(call, ctx).await)?;
                match answered {
                    Value::Array(values) => json!({ "completion": { "values": values } }),
                    Value::Object(info) => json!({ "completion": info }),
                    other => return Err(invalid_result("the completer", format!("{other}"))),
                }
            }
            // An upstream that declares no completions would answer -32601; the gateway
            // declares them for all, so it answers "no suggestions" for that one.
            Owner::Up(up) if !up.listing().declares_completions => {
                return Ok(CompleteResult::default());
            }
            Owner::Up(up) => up.complete(reference, argument, context_value, ctx).await?,
        };
        let result: CompleteResult =
            serde_json::from_value(value).map_err(|e| invalid_result("the completion", e))?;
        let info = result.completion;
        Ok(CompleteResult::new(completion(
            info.values,
            info.total,
            info.has_more,
        )))
    }
}
