//! A sprint board on the Rust SDK's server (the `rmcp` crate), for the probe:
//! the Rust counterpart of clients/programs/python/board_server.py.
//!
//! The board resource (`board://sprint`) changes when the `complete_task`
//! tool marks a task done; `enable_reports` adds a `sprint_report` tool.
//! rmcp's `ServerHandler` lists tools by a method of the server's own, so a
//! tool can be added while it runs. Changes reach 2026-07-28 clients through
//! the `SubscriptionSink` of each `subscriptions/listen` (`ServerHandler::listen`),
//! and 2025 clients through their session's `Peer`: resources/updated to
//! those that sent resources/subscribe, tools/list_changed to every session.
//!
//! ```text
//! rmcp-server stdio
//! rmcp-server http PORT   (Streamable HTTP on 127.0.0.1:PORT/mcp)
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::service::{SubscriptionSendError, SubscriptionSink};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use tokio::sync::Mutex;

const BOARD_URI: &str = "board://sprint";
const BOARD_NAME: &str = "sprint";

/// A 2025 session: its peer, and whether it subscribed to the board.
struct Session {
    peer: Peer<RoleServer>,
    subscribed: AtomicBool,
}

/// The board every session sees, and who is told of its changes.
struct Board {
    tasks: std::sync::Mutex<Vec<(&'static str, bool)>>,
    reports: AtomicBool,
    /// 2025 sessions, from their first request on.
    sessions: Mutex<Vec<Arc<Session>>>,
    /// 2026-07-28 listens, each granted its own filter.
    listens: Mutex<Vec<SubscriptionSink>>,
}

impl Board {
    fn new() -> Self {
        let tasks = ["design", "build", "ship"].map(|task| (task, false));
        Self {
            tasks: std::sync::Mutex::new(tasks.to_vec()),
            reports: AtomicBool::new(false),
            sessions: Mutex::new(Vec::new()),
            listens: Mutex::new(Vec::new()),
        }
    }

    fn text(&self) -> String {
        let tasks = self.tasks.lock().expect("the board's lock");
        let lines: Vec<String> = tasks
            .iter()
            .map(|(task, done)| format!("[{}] {task}", if *done { "x" } else { " " }))
            .collect();
        lines.join("\n")
    }

    /// Marks a task done; false for a board or task it does not have.
    fn complete(&self, board: &str, task: &str) -> bool {
        let mut tasks = self.tasks.lock().expect("the board's lock");
        match tasks.iter_mut().find(|(name, _)| *name == task) {
            Some((_, done)) if board == BOARD_NAME => {
                *done = true;
                true
            }
            _ => false,
        }
    }

    /// Tells every listen that accepted the board, and each 2025 session
    /// that subscribed to it; forgets those that have gone.
    async fn board_changed(&self) {
        let mut sessions = self.sessions.lock().await;
        let mut gone = Vec::new();
        for (index, session) in sessions.iter().enumerate() {
            if session.subscribed.load(Ordering::SeqCst) {
                let update = ResourceUpdatedNotificationParam::new(BOARD_URI);
                if session.peer.notify_resource_updated(update).await.is_err() {
                    gone.push(index);
                }
            }
        }
        for index in gone.into_iter().rev() {
            sessions.remove(index);
        }
        drop(sessions);
        let mut listens = self.listens.lock().await;
        let mut open = Vec::new();
        for sink in listens.drain(..) {
            if still_open(sink.notify_resource_updated(BOARD_URI).await) {
                open.push(sink);
            }
        }
        *listens = open;
    }

    /// Tells every listen that asked for it, and every 2025 session.
    async fn tools_changed(&self) {
        let mut sessions = self.sessions.lock().await;
        let mut open = Vec::new();
        for session in sessions.drain(..) {
            if session.peer.notify_tool_list_changed().await.is_ok() {
                open.push(session);
            }
        }
        *sessions = open;
        drop(sessions);
        let mut listens = self.listens.lock().await;
        let mut open = Vec::new();
        for sink in listens.drain(..) {
            if still_open(sink.notify_tool_list_changed().await) {
                open.push(sink);
            }
        }
        *listens = open;
    }
}

/// Whether a listen stays after a send: a filter that left the change out
/// keeps it; a closed one is dropped.
fn still_open(sent: Result<(), SubscriptionSendError>) -> bool {
    !matches!(
        sent,
        Err(SubscriptionSendError::SubscriptionClosed | SubscriptionSendError::Service(_))
    )
}

/// One connection's handler (an HTTP session gets its own) on the shared board.
struct BoardServer {
    board: Arc<Board>,
    session: Mutex<Option<Arc<Session>>>,
}

impl BoardServer {
    fn new(board: Arc<Board>) -> Self {
        Self {
            board,
            session: Mutex::new(None),
        }
    }

    /// This connection's 2025 session, registered with the board once.
    async fn session(&self, peer: &Peer<RoleServer>) -> Arc<Session> {
        let mut session = self.session.lock().await;
        if let Some(session) = session.as_ref() {
            return session.clone();
        }
        let created = Arc::new(Session {
            peer: peer.clone(),
            subscribed: AtomicBool::new(false),
        });
        self.board.sessions.lock().await.push(created.clone());
        *session = Some(created.clone());
        created
    }

    fn tools(&self) -> Vec<Tool> {
        let schema = |properties: serde_json::Value, required: &[&str]| -> JsonObject {
            let schema = serde_json::json!({
                "type": "object",
                "properties": properties,
                "required": required,
            });
            serde_json::from_value(schema).expect("a JSON object")
        };
        let mut tools = vec![
            Tool::new(
                "complete_task",
                "Mark a task on a board done.",
                schema(
                    serde_json::json!({
                        "board": { "type": "string" },
                        "task": { "type": "string" },
                    }),
                    &["board", "task"],
                ),
            ),
            Tool::new(
                "enable_reports",
                "Add the sprint_report tool.",
                schema(serde_json::json!({}), &[]),
            ),
        ];
        if self.board.reports.load(Ordering::SeqCst) {
            tools.push(Tool::new(
                "sprint_report",
                "How many tasks are done.",
                schema(serde_json::json!({}), &[]),
            ));
        }
        tools
    }

    async fn complete_task(&self, arguments: Option<&JsonObject>) -> CallToolResult {
        let argument = |name: &str| {
            arguments
                .and_then(|arguments| arguments.get(name))
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let (board, task) = (argument("board"), argument("task"));
        if !self.board.complete(&board, &task) {
            let message = "no such board or task".to_owned();
            return CallToolResult::error(vec![ContentBlock::text(message)]);
        }
        self.board.board_changed().await;
        CallToolResult::success(vec![ContentBlock::text(format!("{task}: done"))])
    }

    async fn enable_reports(&self) -> CallToolResult {
        self.board.reports.store(true, Ordering::SeqCst);
        self.board.tools_changed().await;
        CallToolResult::success(vec![ContentBlock::text("reporting is live")])
    }

    fn sprint_report(&self) -> CallToolResult {
        let tasks = self.board.tasks.lock().expect("the board's lock");
        let done = tasks.iter().filter(|(_, done)| *done).count();
        CallToolResult::success(vec![ContentBlock::text(format!("{done} task(s) done"))])
    }
}

impl ServerHandler for BoardServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("rmcp-board-server", "1.0.0"))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.session(&context.peer).await;
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let board = Resource::new(BOARD_URI, "sprint board").with_mime_type("text/plain");
        Ok(ListResourcesResult::with_all_items(vec![board]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != BOARD_URI {
            return Err(ErrorData::resource_not_found("no such resource", None));
        }
        let contents = ResourceContents::text(self.board.text(), BOARD_URI);
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if request.uri != BOARD_URI {
            return Err(ErrorData::resource_not_found("no such resource", None));
        }
        let session = self.session(&context.peer).await;
        session.subscribed.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if request.uri == BOARD_URI {
            let session = self.session(&context.peer).await;
            session.subscribed.store(false, Ordering::SeqCst);
        }
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // The SDK keeps what was both asked for and offered here.
        let offered = SubscriptionFilter::builder()
            .tools_list_changed()
            .resource_subscription(BOARD_URI)
            .build();
        Some(offered)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.board.listens.lock().await.push(context.sink().clone());
        context.cancelled().await;
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().into_iter().find(|tool| tool.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let result = match request.name.as_ref() {
            "complete_task" => self.complete_task(request.arguments.as_ref()).await,
            "enable_reports" => self.enable_reports().await,
            "sprint_report" if self.board.reports.load(Ordering::SeqCst) => self.sprint_report(),
            _ => return Err(ErrorData::invalid_params("no such tool", None)),
        };
        Ok(result.into())
    }
}

/// Streamable HTTP on 127.0.0.1:PORT, one handler per session, HTTP/1.1.
async fn serve_http(port: u16, board: Arc<Board>) -> std::io::Result<()> {
    let service = StreamableHttpService::new(
        move || Ok(BoardServer::new(board.clone())),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        let service = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            // A connection that fails ends alone; the server goes on.
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            let _ = connection.await;
        });
    }
}

async fn serve_stdio(board: Arc<Board>) -> Result<(), String> {
    let running = BoardServer::new(board)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| error.to_string())?;
    running.waiting().await.map_err(|error| error.to_string())?;
    Ok(())
}

fn usage() -> ! {
    eprintln!("usage: rmcp-server stdio | http PORT");
    std::process::exit(2);
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let board = Arc::new(Board::new());
    let served = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["stdio"] => serve_stdio(board).await,
        ["http", port] => {
            let port = port.parse::<u16>().unwrap_or_else(|_| usage());
            serve_http(port, board)
                .await
                .map_err(|error| error.to_string())
        }
        _ => usage(),
    };
    if let Err(error) = served {
        eprintln!("rmcp-server: {error}");
        std::process::exit(1);
    }
}
