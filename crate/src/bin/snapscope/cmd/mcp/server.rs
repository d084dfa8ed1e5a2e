//! The MCP handler: tools, prompts and resources over rmcp, each call run on a blocking thread
//! (the engine's work is synchronous) with progress while it runs and cancellation honoured.

use super::access::{root_path, Access};
use super::tools::{self, Ctx};
use super::{prompts, resources};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorCode, GetPromptRequestParams, GetPromptResponse, Implementation,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use snapscope::codes::ErrorCode as Code;
use snapscope::{Error, Result};
use std::path::PathBuf;
use std::sync::Arc;

pub struct Server {
    access: Access,
    /// The client's roots: None = not asked yet; Some(None) = it declares none.
    roots: Arc<tokio::sync::RwLock<Option<Option<Vec<PathBuf>>>>>,
}

pub async fn serve(access: Access) -> Result<()> {
    let server = Server { access, roots: Default::default() };
    let running = server.serve(rmcp::transport::stdio()).await.map_err(|e| {
        Error::new(Code::McpError, format!("the client did not start a session: {e}"), "launch `snapscope mcp` from an MCP client")
    })?;
    running
        .waiting()
        .await
        .map_err(|e| Error::new(Code::McpError, format!("the session ended with an error: {e}"), "see the client's log"))?;
    Ok(())
}

/// A value of an rmcp model type from its JSON form (the types are non-exhaustive).
fn from_json<T: serde::de::DeserializeOwned>(v: Value) -> std::result::Result<T, McpError> {
    serde_json::from_value(v).map_err(|e| McpError::internal_error(format!("building a reply: {e}"), None))
}

/// A result from its JSON form, marked complete (SEP-2322: required from revision 2026-07-28 on;
/// rmcp drops it for peers on older revisions).
fn result<T: serde::de::DeserializeOwned>(mut v: Value) -> std::result::Result<T, McpError> {
    v["resultType"] = "complete".into();
    from_json(v)
}

pub fn error_json(e: &Error) -> Value {
    json!({"ok": false, "schema_version": snapscope::engine::ENVELOPE_VERSION, "error": {"code": e.code, "message": e.message, "hint": e.hint}})
}

impl Server {
    /// The folders files may be read from for this client. Roots are deprecated from protocol
    /// revision 2026-07-28 on (SEP-2577) but are what the clients of 2025-11-25 declare.
    #[allow(deprecated)]
    async fn bases(&self, peer: &Peer<RoleServer>) -> Vec<PathBuf> {
        if let Some(r) = self.roots.read().await.clone() {
            return self.access.bases(r.as_deref());
        }
        let declares = peer.peer_info().is_some_and(|i| i.capabilities.roots.is_some());
        let roots = if declares {
            match tokio::time::timeout(std::time::Duration::from_secs(10), peer.list_roots()).await {
                Ok(Ok(r)) => Some(r.roots.iter().filter_map(|x| root_path(&x.uri)).collect()),
                _ => Some(Vec::new()),
            }
        } else {
            None
        };
        *self.roots.write().await = Some(roots.clone());
        self.access.bases(roots.as_deref())
    }

    /// Run `f` on a blocking thread; progress every second while it runs (when the client asked
    /// for it); None when the request was cancelled first.
    async fn blocking<T: Send + 'static>(
        &self,
        context: &RequestContext<RoleServer>,
        what: String,
        f: impl FnOnce() -> Result<T> + Send + 'static,
    ) -> Option<Result<T>> {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let job = tokio::task::spawn_blocking(move || {
            // SQL on this thread stops when the request is cancelled (the engine lock is freed).
            snapscope::query::sql::cancel_with(Some(flag));
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            snapscope::query::sql::cancel_with(None);
            super::cache::release_held();
            r.unwrap_or_else(|p| {
                let why =
                    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                Err(Error::new(
                    Code::InternalError,
                    format!("the engine failed on this call: {why}"),
                    "report it with the file; the server goes on",
                ))
            })
        });
        let token = context.meta.get_progress_token();
        let peer = context.peer.clone();
        let ticker = token.map(|t| {
            tokio::spawn(async move {
                let start = std::time::Instant::now();
                let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
                let mut n = 0u32;
                loop {
                    tick.tick().await;
                    n += 1;
                    let p: std::result::Result<ProgressNotificationParam, _> = from_json(json!({
                        "progressToken": t, "progress": n,
                        "message": format!("{what}: {:.0} s", start.elapsed().as_secs_f64()),
                    }));
                    if let Ok(p) = p {
                        if peer.notify_progress(p).await.is_err() {
                            return;
                        }
                    }
                }
            })
        });
        let out = tokio::select! {
            _ = context.ct.cancelled() => {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                None
            }
            r = job => Some(r.unwrap_or_else(|e| Err(Error::new(Code::InternalError, format!("the call's thread ended: {e}"), "try again")))),
        };
        if let Some(t) = ticker {
            t.abort();
        }
        out
    }
}

fn cancelled() -> McpError {
    McpError::new(ErrorCode(-32800), "request cancelled", None)
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_prompts().enable_resources().build())
            .with_server_info(Implementation::new("snapscope", snapscope::VERSION))
            .with_instructions(
                "snapscope answers questions about PyTorch / torch_npu GPU memory snapshots (torch.cuda.memory._snapshot pickles) \
                 with exact figures from an allocator replay. Start with `overview` on the file, then `analyze` (mode oom, peak, \
                 leak, fragment, categories, steps), `holders` and `tree` at an event, `event` and `stack` for evidence, \
                 `simulate` or `analyze` mode tune for allocator settings, `compare` for two runs, `diff` for two runs step by step or two moments of one, `ranks` for many ranks, \
                 `query`/`sql` for anything else. Sizes are bytes, events are 0-based trace indices. Opened files are kept: \
                 later calls on the same file are fast. Prompts are the snapscope playbooks (OOM, peak, leak, fragmentation, preflight).",
            )
    }

    async fn list_tools(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, McpError> {
        let list: Vec<Value> = tools::defs()
            .into_iter()
            .map(|d| {
                json!({
                    "name": d.name,
                    "title": d.title,
                    "description": d.description,
                    "inputSchema": {"type": "object", "properties": d.properties, "required": d.required, "additionalProperties": false},
                    "outputSchema": super::schemas::output(d.name),
                    "annotations": {"title": d.title, "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
                })
            })
            .collect();
        result(json!({ "tools": list }))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if !tools::defs().iter().any(|d| d.name == name) {
            return Err(McpError::invalid_params(format!("no tool named {name:?}"), None));
        }
        let bases = self.bases(&context.peer).await;
        let access = self.access.clone();
        let args = request.arguments.unwrap_or_default();
        let what = format!("snapscope {name}");
        let r = self.blocking(&context, what, move || tools::call(&name, &args, &Ctx { access: &access, bases: &bases })).await;
        let result: CallToolResult = match r {
            None => return Err(cancelled()),
            Some(Ok(a)) => {
                result(json!({"content": [{"type": "text", "text": a.text}], "structuredContent": a.structured, "isError": false}))?
            }
            Some(Err(e)) => result(json!({
                "content": [{"type": "text", "text": format!("error {}: {}\nhint: {}", e.code, e.message, e.hint)}],
                "structuredContent": error_json(&e),
                "isError": true,
            }))?,
        };
        Ok(CallToolResponse::Complete(result))
    }

    async fn list_prompts(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> std::result::Result<ListPromptsResult, McpError> {
        result(json!({ "prompts": prompts::list() }))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> std::result::Result<GetPromptResponse, McpError> {
        let snapshot = request.arguments.as_ref().and_then(|a| a.get("snapshot")).and_then(Value::as_str).map(str::to_string);
        let v = prompts::get(&request.name, snapshot.as_deref())
            .ok_or_else(|| McpError::invalid_params(format!("no prompt named {:?}", request.name), None))?;
        Ok(GetPromptResponse::Complete(result(v)?))
    }

    async fn list_resources(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> std::result::Result<ListResourcesResult, McpError> {
        result(json!({ "resources": resources::list() }))
    }

    async fn list_resource_templates(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> std::result::Result<ListResourceTemplatesResult, McpError> {
        result(json!({ "resourceTemplates": resources::templates() }))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<ReadResourceResponse, McpError> {
        let bases = self.bases(&context.peer).await;
        let access = self.access.clone();
        let uri = request.uri.clone();
        let r = self.blocking(&context, format!("reading {uri}"), move || resources::read(&uri, &access, &bases)).await;
        match r {
            None => Err(cancelled()),
            Some(Ok(v)) => Ok(ReadResourceResponse::Complete(result(v)?)),
            Some(Err(e)) => Err(McpError::resource_not_found(format!("{}: {} ({})", e.code, e.message, e.hint), Some(error_json(&e)))),
        }
    }

    async fn on_roots_list_changed(&self, _c: NotificationContext<RoleServer>) {
        *self.roots.write().await = None;
    }
}
