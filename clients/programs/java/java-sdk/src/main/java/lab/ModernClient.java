package lab;

import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.client.McpClient;
import io.modelcontextprotocol.modern.client.McpSyncClient;
import io.modelcontextprotocol.modern.client.McpSyncSubscriptionListener;
import io.modelcontextprotocol.modern.client.SubscriptionEvent;
import io.modelcontextprotocol.modern.client.transport.HttpClientMcpTransport;
import io.modelcontextprotocol.modern.client.transport.McpClientTransport;
import io.modelcontextprotocol.modern.client.transport.StdioMcpClientTransport;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The 2026-07-28 era: the SDK's io.modelcontextprotocol.modern.client, which speaks 2026-07-28
 * only, with no initialize and no session: connect is its server/discover. The subscribe step opens
 * one subscriptions/listen (McpSyncClient.listen()) whose filter names the resource and the three
 * lists' changes, and waits for the server's acknowledgement; the SDK hands its events to the
 * listener on a thread of its own: ResourceUpdated carries the URI only (the SDK reads nothing), a
 * list's change carries no list (the app lists again). When the server ends the listen the SDK
 * calls onComplete (a result) or onError (McpSubscriptionLostException: the stream ended without
 * one) and opens no other: neither does the app.
 */
final class ModernClient implements EraClient {
  private final Hooks hooks;
  private final McpSyncClient client;

  /** Over stdio the server's process, ended by close; null over HTTP. */
  private final StdioMcpClientTransport stdio;

  /** The subscribe step's listen, once opened. */
  private McpSyncClient.Listening listening;

  ModernClient(App.Options options, Hooks hooks) {
    this.hooks = hooks;
    McpClientTransport transport;
    if (options.server() == null) {
      stdio = null;
      transport = HttpClientMcpTransport.builder(options.url()).build();
    } else {
      List<String> server = options.server();
      stdio =
          StdioMcpClientTransport.builder(
                  ServerParameters.builder(server.get(0))
                      .args(server.subList(1, server.size()))
                      .build())
              .start();
      transport = stdio;
    }
    client =
        McpClient.sync(transport)
            .clientInfo(
                McpSchema.Implementation.builder(App.CLIENT_NAME, App.CLIENT_VERSION).build())
            .callTimeout(App.REQUEST_TIMEOUT)
            .build();
  }

  static String textOf(McpSchema.ResourceContents content) {
    return content instanceof McpSchema.TextResourceContents text ? text.text() : "";
  }

  @Override
  public String connect() {
    List<String> offered = client.discover().supportedVersions();
    if (offered == null || !offered.contains(McpSchema.LATEST_PROTOCOL_VERSION)) {
      throw new IllegalStateException("the server offers " + offered);
    }
    return McpSchema.LATEST_PROTOCOL_VERSION;
  }

  @Override
  public List<String> list(String kind) {
    return switch (kind) {
      case "tools" -> client.tools().list().tools().stream().map(McpSchema.Tool::name).toList();
      case "prompts" ->
          client.prompts().list().prompts().stream().map(McpSchema.Prompt::name).toList();
      default ->
          client.resources().list().resources().stream().map(McpSchema.Resource::uri).toList();
    };
  }

  @Override
  public String read(String uri) {
    List<McpSchema.ResourceContents> contents = client.resource(uri).read().contents();
    return contents == null || contents.isEmpty() ? "" : textOf(contents.get(0));
  }

  /**
   * Opens the listen and waits for its acknowledgement: a refusal, or a listen that ends first,
   * fails the step with what the SDK said.
   */
  @Override
  public void subscribe(String uri) throws InterruptedException {
    CompletableFuture<SubscriptionEvent.Subscribed> acknowledged = new CompletableFuture<>();
    listening =
        client
            .listen()
            .resourceUpdates(uri)
            .toolsChanged()
            .promptsChanged()
            .resourcesChanged()
            .open(new Listener(acknowledged));
    SubscriptionEvent.Subscribed subscribed;
    try {
      subscribed = acknowledged.get(App.REQUEST_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new IllegalStateException("the listen failed", e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException(
          "no acknowledgement within " + App.REQUEST_TIMEOUT.toSeconds() + " s");
    }
    // A narrowed acknowledgement is a fact of the run; the SDK logs it and keeps the listen.
    if (!subscribed.missing().isEmpty()) {
      System.out.println(
          "acknowledgement-missing " + App.show(String.valueOf(subscribed.missing().fields())));
    }
  }

  /** The listen's events as the SDK hands them, and how the listen ended. */
  private final class Listener implements McpSyncSubscriptionListener {
    private final CompletableFuture<SubscriptionEvent.Subscribed> acknowledged;

    Listener(CompletableFuture<SubscriptionEvent.Subscribed> acknowledged) {
      this.acknowledged = acknowledged;
    }

    @Override
    public void onEvent(SubscriptionEvent event) {
      if (event instanceof SubscriptionEvent.Subscribed subscribed) {
        acknowledged.complete(subscribed);
      } else if (event instanceof SubscriptionEvent.ResourceUpdated updated) {
        hooks.updated(updated.uri(), null);
      } else if (event instanceof SubscriptionEvent.ToolsListChanged) {
        hooks.listChanged("tools", null);
      } else if (event instanceof SubscriptionEvent.PromptsListChanged) {
        hooks.listChanged("prompts", null);
      } else if (event instanceof SubscriptionEvent.ResourcesListChanged) {
        hooks.listChanged("resources", null);
      }
    }

    @Override
    public void onError(Throwable error) {
      if (!acknowledged.completeExceptionally(error)) {
        System.out.println("listen-ended error " + App.show(App.messageOf(error)));
      }
    }

    @Override
    public void onComplete() {
      if (!acknowledged.completeExceptionally(
          new IllegalStateException("the listen ended before its acknowledgement"))) {
        System.out.println("listen-ended result");
      }
    }
  }

  @Override
  public String subscribeCall() {
    return "client.listen().resourceUpdates(uri).toolsChanged().promptsChanged()"
        + ".resourcesChanged().open(listener)";
  }

  @Override
  public String updateVia() {
    return "McpSyncSubscriptionListener.onEvent(SubscriptionEvent.ResourceUpdated)";
  }

  @Override
  public String changedVia(String kind) {
    String event = kind.substring(0, 1).toUpperCase() + kind.substring(1) + "ListChanged";
    return "McpSyncSubscriptionListener.onEvent(SubscriptionEvent." + event + ")";
  }

  @Override
  public void use(String kind, String name) {
    switch (kind) {
      case "tools" -> {
        McpSchema.CallToolResult result = client.tool(name).arguments(Map.of()).call();
        if (Boolean.TRUE.equals(result.isError())) {
          throw new IllegalStateException("the tool answered with isError");
        }
      }
      case "prompts" -> client.prompt(name).arguments(Map.of()).get();
      default -> client.resource(name).read();
    }
  }

  /** Closes the listen (the SDK cancels its stream), then ends the server's process over stdio. */
  @Override
  public void close() {
    if (listening != null) {
      listening.close();
    }
    if (stdio != null) {
      stdio.close();
    }
  }
}
