//! An app on the official Rust SDK's client (the `rmcp` crate), the Rust
//! counterpart of clients/programs/go/go-sdk/main.go: it connects over
//! Streamable HTTP (or starts the server over stdio), lists, reads,
//! subscribes, waits for notifications/resources/updated and reads again,
//! printing the same fact lines, one `key value` a line.
//!
//! ```text
//! rmcp app --url URL [--era 2025|2026-07-28] [--wait SECONDS]
//! rmcp app --stdio [--era …] [--wait …] -- COMMAND [ARGS…]
//! ```
//!
//! 2025: `ClientLifecycleMode::Initialize` at 2025-11-25 (a plain
//! initialize), then `Peer::subscribe`, a resources/subscribe;
//! `ClientHandler::on_resource_updated` and the `on_*_list_changed`
//! callbacks get the notifications. 2026-07-28: `ClientLifecycleMode::Discover`
//! (server/discover), and `Peer::listen` opens subscriptions/listen: one at
//! connect asking for the three list-changed notifications, one at the
//! subscribe step naming the URI. The SDK hands a listen's notifications to
//! its `Subscription` (`next`), not to the handler.
//!
//! The catalog: tools and prompts are listed at connect, resources by the
//! resource steps; a list whose change was notified (by the update, or
//! within a grace after it) is listed again and what is new in it used.

use std::collections::HashMap;
use std::fmt::Display;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, GetPromptRequestParams,
    Implementation, JsonObject, ProtocolVersion, ReadResourceRequestParams, ResourceContents,
    ResourceUpdatedNotificationParam, ServerNotification, SubscribeRequestParams,
    SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RunningService, Subscription};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient};
use tokio::sync::watch;
use tokio::time::Instant;

/// The lab's resource.
const URI: &str = "test://review/status";
/// How long a list-changed notification gets to follow the update: the lab
/// sends it right after notifications/resources/updated.
const LIST_CHANGED_GRACE: Duration = Duration::from_secs(2);
/// The lists the app watches, in the lab's order.
const KINDS: [&str; 3] = ["tools", "prompts", "resources"];
/// The lock file this binary was built from: it names rmcp's version.
const LOCK_FILE: &str = include_str!("../Cargo.lock");

/// Server text JSON-quoted (no raw control characters), cut to 200.
fn show(value: &str) -> String {
    let quoted = serde_json::to_string(value).unwrap_or_default();
    quoted.chars().take(200).collect()
}

/// rmcp's version as the lock file pins it.
fn library_version() -> &'static str {
    LOCK_FILE
        .split("[[package]]")
        .find(|entry| entry.contains("\nname = \"rmcp\"\n"))
        .and_then(|entry| {
            entry
                .lines()
                .find_map(|line| line.strip_prefix("version = \""))
        })
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or("unknown")
}

struct Options {
    url: String,
    era: String,
    wait: Duration,
    server: Vec<String>,
}

fn usage() -> ! {
    eprintln!("usage: rmcp app --url URL [--era 2025|2026-07-28] [--wait S]");
    eprintln!("       rmcp app --stdio [--era …] [--wait S] -- COMMAND [ARG…]");
    std::process::exit(2);
}

fn parse_options(args: &[String]) -> Options {
    if args.first().map(String::as_str) != Some("app") {
        usage();
    }
    let (mut url, mut era, mut wait) = (String::new(), "2025".to_owned(), 15.0);
    let (mut stdio, mut server) = (false, Vec::new());
    let mut rest = args[1..].iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--url" => url = rest.next().cloned().unwrap_or_else(|| usage()),
            "--era" => era = rest.next().cloned().unwrap_or_else(|| usage()),
            "--wait" => {
                wait = rest
                    .next()
                    .and_then(|value| value.parse::<f64>().ok())
                    .unwrap_or_else(|| usage())
            }
            "--stdio" => stdio = true,
            "--" => server = rest.by_ref().cloned().collect(),
            _ => usage(),
        }
    }
    let usable = (!url.is_empty() && !stdio) || (stdio && url.is_empty() && !server.is_empty());
    let eras = ["2025", "2026-07-28"];
    if !(usable && eras.contains(&era.as_str()) && wait > 0.0 && wait < 3600.0) {
        usage();
    }
    let wait = Duration::from_secs_f64(wait);
    Options {
        url,
        era,
        wait,
        server,
    }
}

/// A notification's arrival, set once however often it comes, with the
/// path it came by.
#[derive(Clone)]
struct Signal(watch::Sender<Option<&'static str>>);

impl Signal {
    fn new() -> Self {
        Self(watch::channel(None).0)
    }

    fn fire(&self, via: &'static str) {
        self.0
            .send_if_modified(|arrived| arrived.replace(via).is_none());
    }

    /// The path it came by, if it came before `deadline`.
    async fn by(&self, deadline: Instant) -> Option<&'static str> {
        let mut receiver = self.0.subscribe();
        let arrived = tokio::time::timeout_at(deadline, receiver.wait_for(Option::is_some));
        match arrived.await {
            Ok(Ok(via)) => *via,
            _ => None,
        }
    }
}

/// What the server has notified: the update, and each list's change.
#[derive(Clone)]
struct Notices {
    updated: Signal,
    changed: HashMap<&'static str, Signal>,
}

impl Notices {
    /// Marks what a notification tells, whichever path brought it.
    fn mark(&self, notification: &ServerNotification, via: &'static str) {
        match notification {
            ServerNotification::ResourceUpdatedNotification(update) if update.params.uri == URI => {
                self.updated.fire(via)
            }
            ServerNotification::ToolListChangedNotification(_) => self.changed["tools"].fire(via),
            ServerNotification::PromptListChangedNotification(_) => {
                self.changed["prompts"].fire(via)
            }
            ServerNotification::ResourceListChangedNotification(_) => {
                self.changed["resources"].fire(via)
            }
            _ => {}
        }
    }
}

/// The client's handler: 2025's notifications arrive here.
struct LabHandler(Notices);

impl ClientHandler for LabHandler {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if params.uri == URI {
            self.0.updated.fire("ClientHandler::on_resource_updated");
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.changed["tools"].fire("ClientHandler::on_tool_list_changed");
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.changed["prompts"].fire("ClientHandler::on_prompt_list_changed");
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.changed["resources"].fire("ClientHandler::on_resource_list_changed");
    }

    fn get_info(&self) -> ClientConfig {
        // The version an initialize asks for; Discover names its own.
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("lab-library-rmcp", "1.0.0"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
}

type Client = RunningService<RoleClient, LabHandler>;

/// One run's state: its exit status, the notices, what each list held first.
struct App {
    status: i32,
    notices: Notices,
    first: HashMap<&'static str, Vec<String>>,
    listeners: Vec<tokio::task::JoinHandle<()>>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let status = run_app(parse_options(&args)).await;
    std::process::exit(status);
}

async fn run_app(options: Options) -> i32 {
    let notices = Notices {
        updated: Signal::new(),
        changed: KINDS.iter().map(|kind| (*kind, Signal::new())).collect(),
    };
    let mut app = App {
        status: 0,
        notices: notices.clone(),
        first: HashMap::new(),
        listeners: Vec::new(),
    };
    println!("library rmcp@{}", library_version());
    let connected = connect(&options, LabHandler(notices)).await;
    let Some(client) = app.step("connect", connected) else {
        return app.status;
    };
    if options.era == "2026-07-28" {
        let lists = SubscriptionFilter::builder()
            .tools_list_changed()
            .prompts_list_changed()
            .resources_list_changed()
            .build();
        let listened = client.listen(lists).await;
        if let Some(subscription) = app.step("listen-lists", listened) {
            app.forward(subscription);
        }
    }
    app.list_catalog(&client).await;
    app.resource_steps(&client, &options).await;
    app.catalog_steps(&client).await;
    for listener in &app.listeners {
        listener.abort();
    }
    let closed = client.cancel().await;
    app.step("close", closed);
    app.status
}

/// Connects in the era asked for; says which transport and era it speaks.
async fn connect(options: &Options, handler: LabHandler) -> Result<Client, String> {
    let lifecycle = if options.era == "2025" {
        ClientLifecycleMode::Initialize
    } else {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        }
    };
    let (client, transport) = if options.server.is_empty() {
        let transport = StreamableHttpClientTransport::from_uri(options.url.as_str());
        let client = handler.serve_with_lifecycle(transport, lifecycle).await;
        (client.map_err(|error| error.to_string())?, "http")
    } else {
        let mut command = tokio::process::Command::new(&options.server[0]);
        command.args(&options.server[1..]);
        let transport = TokioChildProcess::new(command).map_err(|error| error.to_string())?;
        let client = handler.serve_with_lifecycle(transport, lifecycle).await;
        (client.map_err(|error| error.to_string())?, "stdio")
    };
    let modern = client
        .peer_info()
        .is_some_and(|info| info.protocol_version >= ProtocolVersion::V_2026_07_28);
    let spoken = if modern { "2026-07-28" } else { "2025" };
    if spoken != options.era {
        return Err(format!("asked for {}, spoke {spoken}", options.era));
    }
    println!("connected {transport} {spoken}");
    Ok(client)
}

impl App {
    /// A step's value, or `None` after printing `error <name> …`.
    fn step<T, E: Display>(&mut self, name: &str, result: Result<T, E>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.status = 1;
                println!("error {name} {}", show(&error.to_string()));
                None
            }
        }
    }

    /// Reads a listen's notifications until it ends, marking each.
    fn forward(&mut self, mut subscription: Subscription) {
        let notices = self.notices.clone();
        self.listeners.push(tokio::spawn(async move {
            while let Ok(Some(notification)) = subscription.next().await {
                notices.mark(&notification, "Subscription::next");
            }
        }));
    }

    /// List, read, subscribe, wait for the update, read again.
    async fn resource_steps(&mut self, client: &Client, options: &Options) {
        let listed = self.list(client, "resources").await;
        if let Some(uris) = self.step("list", listed) {
            let found = if uris.iter().any(|uri| uri == URI) {
                URI
            } else {
                "none"
            };
            println!("resource-found {found}");
        }
        self.read(client, "read", "initial").await;
        self.subscribe(client, &options.era).await;
        match self.notices.updated.by(Instant::now() + options.wait).await {
            Some(via) => println!("notification-received {URI} via={via}"),
            None => println!(
                "notification-received none after={}s",
                options.wait.as_secs_f64()
            ),
        }
        self.read(client, "reread", "final").await;
    }

    async fn read(&mut self, client: &Client, step: &str, label: &str) {
        let read = client
            .read_resource(ReadResourceRequestParams::new(URI))
            .await;
        if let Some(result) = self.step(step, read) {
            let text = match result.contents.first() {
                Some(ResourceContents::TextResourceContents { text, .. }) => text.as_str(),
                _ => "",
            };
            println!("{label} {}", show(text));
        }
    }

    /// 2025: resources/subscribe; 2026-07-28: a listen naming the URI.
    async fn subscribe(&mut self, client: &Client, era: &str) {
        if era == "2025" {
            // Deprecated in rmcp as legacy-only: it is the 2025 era's call.
            #[allow(deprecated)]
            let subscribed = client.subscribe(SubscribeRequestParams::new(URI)).await;
            if self.step("subscribe", subscribed).is_some() {
                println!("subscribed peer.subscribe(SubscribeRequestParams::new(URI))");
            }
            return;
        }
        let filter = SubscriptionFilter::builder()
            .resource_subscription(URI)
            .build();
        if let Some(subscription) = self.step("subscribe", client.listen(filter).await) {
            println!(
                "subscribed peer.listen(SubscriptionFilter::builder().resource_subscription(URI).build())"
            );
            self.forward(subscription);
        }
    }

    /// A list's names (resources by URI); the first time, kept.
    async fn list(&mut self, client: &Client, kind: &'static str) -> Result<Vec<String>, String> {
        let names: Vec<String> = match kind {
            "tools" => client.list_all_tools().await.map(|tools| {
                tools
                    .into_iter()
                    .map(|tool| tool.name.into_owned())
                    .collect()
            }),
            "prompts" => client
                .list_all_prompts()
                .await
                .map(|prompts| prompts.into_iter().map(|prompt| prompt.name).collect()),
            _ => client
                .list_all_resources()
                .await
                .map(|resources| resources.into_iter().map(|resource| resource.uri).collect()),
        }
        .map_err(|error| error.to_string())?;
        self.first.entry(kind).or_insert_with(|| names.clone());
        Ok(names)
    }

    /// Tools and prompts at connect, before anything changes.
    async fn list_catalog(&mut self, client: &Client) {
        for kind in &KINDS[..2] {
            let listed = self.list(client, kind).await;
            if let Some(names) = self.step(&format!("list-{kind}"), listed) {
                println!("{kind}-listed {}", names.len());
            }
        }
    }

    /// Each list changed since connect (or within the grace), listed again,
    /// and whatever is new in it used.
    async fn catalog_steps(&mut self, client: &Client) {
        let deadline = Instant::now() + LIST_CHANGED_GRACE;
        for kind in KINDS {
            let Some(via) = self.notices.changed[kind].by(deadline).await else {
                println!("{kind}-changed none");
                continue;
            };
            println!("{kind}-changed via={via}");
            let relisted = self.list(client, kind).await;
            let Some(names) = self.step(&format!("relist-{kind}"), relisted) else {
                continue;
            };
            let first = self.first[kind].clone();
            for name in names.iter().filter(|name| !first.contains(name)) {
                println!("{kind}-new {}", show(name));
                let used = use_item(client, kind, name).await;
                if self.step(&format!("use-{kind}"), used).is_some() {
                    println!("{kind}-used {}", show(name));
                }
            }
        }
    }
}

/// Calls a new tool, gets a new prompt or reads a new resource.
async fn use_item(client: &Client, kind: &str, name: &str) -> Result<(), String> {
    match kind {
        "tools" => {
            let call =
                CallToolRequestParams::new(name.to_owned()).with_arguments(JsonObject::new());
            let result = client
                .call_tool(call)
                .await
                .map_err(|error| error.to_string())?;
            if result.is_error == Some(true) {
                return Err("the tool answered with isError".to_owned());
            }
            Ok(())
        }
        "prompts" => client
            .get_prompt(GetPromptRequestParams::new(name))
            .await
            .map(drop)
            .map_err(|error| error.to_string()),
        _ => client
            .read_resource(ReadResourceRequestParams::new(name))
            .await
            .map(drop)
            .map_err(|error| error.to_string()),
    }
}
