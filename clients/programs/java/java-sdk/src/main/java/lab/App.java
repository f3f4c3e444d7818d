package lab;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An app on the official Java MCP SDK client (io.modelcontextprotocol.sdk:mcp), the Java
 * counterpart of clients/programs/go/go-sdk/main.go: it connects over Streamable HTTP (or starts
 * the server over stdio), lists, reads, subscribes, waits for the update and reads again, printing
 * the same fact lines, one `key value` a line.
 *
 * <pre>
 *   java-sdk app --url URL [--era 2025|2026-07-28] [--wait SECONDS]
 *   java-sdk app --stdio [--era …] [--wait …] -- COMMAND [ARGS…]
 * </pre>
 *
 * <p>The SDK speaks MCP up to 2025-11-25 and has no option for 2026-07-28: asked for it, the app
 * connects as the SDK does and says which era it spoke. McpSyncClient.subscribeResource sends
 * resources/subscribe; on notifications/resources/updated the SDK reads the resource itself and
 * hands what it read to the resourcesUpdateConsumer, so the lab sees that read before the app's
 * own second one.
 *
 * <p>The catalog: it lists tools and prompts at connect (resources by the resource steps); on
 * notifications/…/list_changed the SDK lists again and hands the new list to the matching
 * consumer, and once the update has come the app uses what is new in each changed list.
 */
public final class App {
  static final String SDK = "io.modelcontextprotocol.sdk:mcp";
  /** The lab's resource. */
  static final String RESOURCE = "test://review/status";
  /** How long a list-changed notification gets to follow the update. */
  static final long LIST_CHANGED_GRACE_MS = 2_000;
  /** The lists the app watches, in the lab's order. */
  static final List<String> CATALOG_KINDS = List.of("tools", "prompts", "resources");
  /**
   * A request's limit (the SDK's is 20 s): the lab answers at once, and an app whose requests all
   * go unanswered still ends, with its errors, within the harness's two minutes.
   */
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

  record Options(String url, String era, double waitSeconds, List<String> server) {}

  /** One step of the app: a call that may fail. */
  interface Step {
    void run() throws Exception;
  }

  private int status = 0;
  private final CountDownLatch updated = new CountDownLatch(1);
  private final AtomicReference<String> updateText = new AtomicReference<>();
  private final Map<String, CountDownLatch> changed = new ConcurrentHashMap<>();
  /** Each list as the SDK listed it again after its list-changed notification. */
  private final Map<String, List<String>> relisted = new ConcurrentHashMap<>();
  /** Each list as first listed. */
  private final Map<String, List<String>> first = new ConcurrentHashMap<>();

  private App() {
    for (String kind : CATALOG_KINDS) {
      changed.put(kind, new CountDownLatch(1));
    }
  }

  public static void main(String[] args) {
    // The SDK logs through SLF4J: its warnings, not its chatter, on stderr.
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
    Options options = parseOptions(args);
    int status = new App().run(options);
    System.out.flush();
    // The SDK's reactor threads would keep the JVM alive past the app.
    System.exit(status);
  }

  /** Server text, JSON-quoted (no raw control characters), cut to 200. */
  static String show(String value) {
    StringBuilder quoted = new StringBuilder("\"");
    for (char c : String.valueOf(value).toCharArray()) {
      switch (c) {
        case '"' -> quoted.append("\\\"");
        case '\\' -> quoted.append("\\\\");
        case '\n' -> quoted.append("\\n");
        case '\r' -> quoted.append("\\r");
        case '\t' -> quoted.append("\\t");
        default -> {
          if (c < 0x20 || c == 0x7f) {
            quoted.append(String.format("\\u%04x", (int) c));
          } else {
            quoted.append(c);
          }
        }
      }
    }
    quoted.append('"');
    return quoted.length() > 200 ? quoted.substring(0, 200) : quoted.toString();
  }

  /** The SDK's version, from its artifact's Maven properties on the class path. */
  static String sdkVersion() {
    String path = "/META-INF/maven/io.modelcontextprotocol.sdk/mcp/pom.properties";
    try (InputStream in = App.class.getResourceAsStream(path)) {
      if (in == null) {
        return "unknown";
      }
      Properties properties = new Properties();
      properties.load(in);
      return properties.getProperty("version", "unknown");
    } catch (IOException e) {
      return "unknown";
    }
  }

  static void usage() {
    System.err.println("usage: java-sdk app --url URL [--era 2025|2026-07-28] [--wait S]");
    System.err.println("       java-sdk app --stdio [--era …] [--wait S] -- COMMAND [ARG…]");
    System.exit(2);
  }

  static Options parseOptions(String[] args) {
    if (args.length < 1 || !args[0].equals("app")) {
      usage();
    }
    String url = null;
    String era = "2025";
    String wait = "15";
    boolean stdio = false;
    List<String> server = new ArrayList<>();
    for (int i = 1; i < args.length; i++) {
      String arg = args[i];
      if (arg.equals("--")) {
        server.addAll(List.of(args).subList(i + 1, args.length));
        break;
      } else if (arg.equals("--stdio")) {
        stdio = true;
      } else if (i + 1 < args.length && List.of("--url", "--era", "--wait").contains(arg)) {
        String value = args[++i];
        switch (arg) {
          case "--url" -> url = value;
          case "--era" -> era = value;
          default -> wait = value;
        }
      } else {
        usage();
      }
    }
    double waitSeconds = 0;
    try {
      waitSeconds = Double.parseDouble(wait);
    } catch (NumberFormatException e) {
      usage();
    }
    boolean usable = (url != null && !stdio && server.isEmpty()) || (stdio && !server.isEmpty());
    if (!usable || !List.of("2025", "2026-07-28").contains(era) || !(waitSeconds > 0)) {
      usage();
    }
    return new Options(url, era, waitSeconds, stdio ? server : null);
  }

  /** Runs one step, printing `error <name> …` when it fails. */
  private boolean step(String name, Step run) {
    try {
      run.run();
      return true;
    } catch (Exception e) {
      status = 1;
      System.out.println("error " + name + " " + show(messageOf(e)));
      return false;
    }
  }

  /** An exception's message, with its causes' where it wraps some (the SDK wraps a refusal). */
  static String messageOf(Throwable error) {
    StringBuilder message = new StringBuilder(String.valueOf(error.getMessage()));
    for (Throwable cause = error.getCause();
        cause != null && cause != error && message.length() < 400;
        cause = cause.getCause()) {
      String said = cause.getMessage() == null ? cause.getClass().getName() : cause.getMessage();
      if (message.indexOf(said) < 0) {
        message.append(": ").append(said);
      }
    }
    return message.toString();
  }

  private int run(Options options) {
    System.out.println("library " + SDK + "@" + sdkVersion());
    McpClientTransport transport =
        options.server() == null ? httpTransport(options.url()) : stdioTransport(options.server());
    String mode = options.server() == null ? "http" : "stdio";
    McpSyncClient client = newClient(transport);
    boolean connected =
        step(
            "connect",
            () -> {
              McpSchema.InitializeResult result = client.initialize();
              String spoken =
                  result.protocolVersion().compareTo("2026-07-28") >= 0 ? "2026-07-28" : "2025";
              if (!spoken.equals(options.era())) {
                throw new IllegalStateException(
                    "asked for " + options.era() + ", spoke " + spoken);
              }
              System.out.println("connected " + mode + " " + spoken);
            });
    if (connected) {
      listCatalog(client);
      resourceSteps(client, options);
      catalogSteps(client);
    }
    step(
        "close",
        () -> {
          if (!client.closeGracefully()) {
            throw new IllegalStateException("the SDK did not close gracefully");
          }
        });
    return status;
  }

  /** Streamable HTTP to the URL: the SDK takes its origin and its path apart. */
  static McpClientTransport httpTransport(String url) {
    URI parsed = URI.create(url);
    String endpoint = parsed.getRawPath().isEmpty() ? "/" : parsed.getRawPath();
    if (parsed.getRawQuery() != null) {
      endpoint += "?" + parsed.getRawQuery();
    }
    return HttpClientStreamableHttpTransport.builder(
            parsed.getScheme() + "://" + parsed.getRawAuthority())
        .endpoint(endpoint)
        .build();
  }

  static McpClientTransport stdioTransport(List<String> server) {
    ServerParameters parameters =
        ServerParameters.builder(server.get(0)).args(server.subList(1, server.size())).build();
    return new StdioClientTransport(parameters, McpJsonDefaults.getMapper());
  }

  private McpSyncClient newClient(McpClientTransport transport) {
    return McpClient.sync(transport)
        .clientInfo(new McpSchema.Implementation("lab-library-java-sdk", "1.0.0"))
        .requestTimeout(REQUEST_TIMEOUT)
        .resourcesUpdateConsumer(this::onResourceUpdated)
        .toolsChangeConsumer(
            tools -> onListChanged("tools", tools.stream().map(McpSchema.Tool::name).toList()))
        .promptsChangeConsumer(
            prompts ->
                onListChanged("prompts", prompts.stream().map(McpSchema.Prompt::name).toList()))
        .resourcesChangeConsumer(
            resources ->
                onListChanged(
                    "resources", resources.stream().map(McpSchema.Resource::uri).toList()))
        .build();
  }

  /** The SDK's read of an updated resource: the lab's one marks the update as come. */
  private void onResourceUpdated(List<McpSchema.ResourceContents> contents) {
    for (McpSchema.ResourceContents content : contents) {
      if (RESOURCE.equals(content.uri())) {
        updateText.compareAndSet(null, textOf(content));
        updated.countDown();
      }
    }
  }

  private void onListChanged(String kind, List<String> names) {
    relisted.put(kind, names);
    changed.get(kind).countDown();
  }

  static String textOf(McpSchema.ResourceContents content) {
    return content instanceof McpSchema.TextResourceContents text ? text.text() : "";
  }

  private String read(McpSyncClient client) {
    List<McpSchema.ResourceContents> contents =
        client.readResource(new McpSchema.ReadResourceRequest(RESOURCE)).contents();
    return contents == null || contents.isEmpty() ? "" : textOf(contents.get(0));
  }

  /** List, read, subscribe, wait for the update, read again. */
  private void resourceSteps(McpSyncClient client, Options options) {
    step(
        "list",
        () -> {
          List<String> uris = list(client, "resources");
          System.out.println("resource-found " + (uris.contains(RESOURCE) ? RESOURCE : "none"));
        });
    step("read", () -> System.out.println("initial " + show(read(client))));
    step(
        "subscribe",
        () -> {
          client.subscribeResource(new McpSchema.SubscribeRequest(RESOURCE));
          System.out.println(
              "subscribed client.subscribeResource(new McpSchema.SubscribeRequest(uri))");
        });
    long waitMs = Math.round(options.waitSeconds() * 1000);
    boolean received = false;
    try {
      received = updated.await(waitMs, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (received) {
      System.out.println(
          "notification-received " + RESOURCE + " via=McpClient.SyncSpec.resourcesUpdateConsumer");
      // The consumer gets contents, not the notification: the SDK read them first.
      System.out.println("update-read-by-sdk " + show(updateText.get()));
    } else {
      System.out.println("notification-received none after=" + wait(options.waitSeconds()) + "s");
    }
    step("reread", () -> System.out.println("final " + show(read(client))));
  }

  /** Seconds as Go's %g and JavaScript print them: 8, not 8.0. */
  static String wait(double seconds) {
    return seconds == Math.rint(seconds) ? String.valueOf((long) seconds) : String.valueOf(seconds);
  }

  /** A list's names (resources by URI); the first time, kept. */
  private List<String> list(McpSyncClient client, String kind) {
    List<String> names =
        switch (kind) {
          case "tools" -> client.listTools().tools().stream().map(McpSchema.Tool::name).toList();
          case "prompts" ->
              client.listPrompts().prompts().stream().map(McpSchema.Prompt::name).toList();
          default ->
              client.listResources().resources().stream().map(McpSchema.Resource::uri).toList();
        };
    first.putIfAbsent(kind, names);
    return names;
  }

  /** Tools and prompts listed at connect, before anything changes. */
  private void listCatalog(McpSyncClient client) {
    for (String kind : CATALOG_KINDS.subList(0, 2)) {
      step(
          "list-" + kind,
          () -> System.out.println(kind + "-listed " + list(client, kind).size()));
    }
  }

  /** Each list changed since connect (or within the grace): what is new in it, used. */
  private void catalogSteps(McpSyncClient client) {
    long deadline = System.currentTimeMillis() + LIST_CHANGED_GRACE_MS;
    for (String kind : CATALOG_KINDS) {
      boolean came = false;
      try {
        long left = Math.max(0, deadline - System.currentTimeMillis());
        came = changed.get(kind).await(left, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (!came) {
        System.out.println(kind + "-changed none");
        continue;
      }
      // The SDK listed again before calling the consumer: the app uses that list.
      System.out.println(
          kind + "-changed via=McpClient.SyncSpec." + kind + "ChangeConsumer listed-by=sdk");
      List<String> before = first.getOrDefault(kind, List.of());
      for (String name : relisted.get(kind)) {
        if (before.contains(name)) {
          continue;
        }
        System.out.println(kind + "-new " + show(name));
        step(
            "use-" + kind,
            () -> {
              use(client, kind, name);
              System.out.println(kind + "-used " + show(name));
            });
      }
    }
  }

  /** Calls a new tool, gets a new prompt or reads a new resource. */
  static void use(McpSyncClient client, String kind, String name) {
    switch (kind) {
      case "tools" -> {
        McpSchema.CallToolResult result =
            client.callTool(new McpSchema.CallToolRequest(name, Map.of()));
        if (Boolean.TRUE.equals(result.isError())) {
          throw new IllegalStateException("the tool answered with isError");
        }
      }
      case "prompts" -> client.getPrompt(new McpSchema.GetPromptRequest(name, Map.of()));
      default -> client.readResource(new McpSchema.ReadResourceRequest(name));
    }
  }
}
