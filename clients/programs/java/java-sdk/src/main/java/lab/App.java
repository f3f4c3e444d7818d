package lab;

import java.io.IOException;
import java.io.InputStream;
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
 * the same fact lines, one `key value` a line. The steps are this class's; each era's calls are its
 * client's (EraClient): 2025 on the SDK's io.modelcontextprotocol.client (LegacyClient), 2026-07-28
 * on its io.modelcontextprotocol.modern.client (ModernClient).
 *
 * <pre>
 *   java-sdk app --url URL [--era 2025|2026-07-28] [--wait SECONDS]
 *   java-sdk app --stdio [--era …] [--wait …] -- COMMAND [ARGS…]
 * </pre>
 *
 * <p>The catalog: it lists tools and prompts at connect (resources by the resource steps); once the
 * update has come, it uses what is new in each list that changed: as the SDK listed it again
 * (2025), or as the app lists it again (2026-07-28, whose events carry no list).
 */
public final class App implements EraClient.Hooks {
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

  /** The app as its clientInfo names it, in either era. */
  static final String CLIENT_NAME = "lab-library-java-sdk";

  static final String CLIENT_VERSION = "1.0.0";

  record Options(String url, String era, double waitSeconds, List<String> server) {}

  /** One step of the app: a call that may fail. */
  interface Step {
    void run() throws Exception;
  }

  private int status = 0;
  private final CountDownLatch updated = new CountDownLatch(1);

  /** The resource's text as the SDK read it on the update, where it read it (2025). */
  private final AtomicReference<String> updateText = new AtomicReference<>();

  private final Map<String, CountDownLatch> changed = new ConcurrentHashMap<>();

  /** Each list as the SDK listed it again after its list-changed notification (2025). */
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
    String mode = options.server() == null ? "http" : "stdio";
    EraClient client;
    try {
      client =
          options.era().equals("2025")
              ? new LegacyClient(options, this)
              : new ModernClient(options, this);
    } catch (RuntimeException e) {
      // The modern client's stdio transport starts the server as it is built.
      System.out.println("error connect " + show(messageOf(e)));
      return 1;
    }
    boolean connected =
        step(
            "connect",
            () -> {
              String spoken = client.connect();
              if (!spoken.equals(options.era())) {
                throw new IllegalStateException("asked for " + options.era() + ", spoke " + spoken);
              }
              System.out.println("connected " + mode + " " + spoken);
            });
    if (connected) {
      listCatalog(client);
      resourceSteps(client, options);
      catalogSteps(client);
    }
    step("close", client::close);
    return status;
  }

  /** The SDK's news of an updated resource: the lab's one marks the update as come. */
  @Override
  public void updated(String uri, String readBySdk) {
    if (RESOURCE.equals(uri)) {
      if (readBySdk != null) {
        updateText.compareAndSet(null, readBySdk);
      }
      updated.countDown();
    }
  }

  @Override
  public void listChanged(String kind, List<String> listedBySdk) {
    if (listedBySdk != null) {
      relisted.put(kind, listedBySdk);
    }
    changed.get(kind).countDown();
  }

  /** List, read, subscribe, wait for the update, read again. */
  private void resourceSteps(EraClient client, Options options) {
    step(
        "list",
        () -> {
          List<String> uris = list(client, "resources");
          System.out.println("resource-found " + (uris.contains(RESOURCE) ? RESOURCE : "none"));
        });
    step("read", () -> System.out.println("initial " + show(client.read(RESOURCE))));
    step(
        "subscribe",
        () -> {
          client.subscribe(RESOURCE);
          System.out.println("subscribed " + client.subscribeCall());
        });
    long waitMs = Math.round(options.waitSeconds() * 1000);
    boolean received = false;
    try {
      received = updated.await(waitMs, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (received) {
      System.out.println("notification-received " + RESOURCE + " via=" + client.updateVia());
      if (updateText.get() != null) {
        // The consumer got contents, not the notification: the SDK read them first.
        System.out.println("update-read-by-sdk " + show(updateText.get()));
      }
    } else {
      System.out.println("notification-received none after=" + wait(options.waitSeconds()) + "s");
    }
    step("reread", () -> System.out.println("final " + show(client.read(RESOURCE))));
  }

  /** Seconds as Go's %g and JavaScript print them: 8, not 8.0. */
  static String wait(double seconds) {
    return seconds == Math.rint(seconds) ? String.valueOf((long) seconds) : String.valueOf(seconds);
  }

  /** A list's names (resources by URI); the first time, kept. */
  private List<String> list(EraClient client, String kind) {
    List<String> names = client.list(kind);
    first.putIfAbsent(kind, names);
    return names;
  }

  /** Tools and prompts listed at connect, before anything changes. */
  private void listCatalog(EraClient client) {
    for (String kind : CATALOG_KINDS.subList(0, 2)) {
      step("list-" + kind, () -> System.out.println(kind + "-listed " + list(client, kind).size()));
    }
  }

  /** Each list changed since connect (or within the grace): what is new in it, used. */
  private void catalogSteps(EraClient client) {
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
      List<String> listedBySdk = relisted.get(kind);
      String listedBy = listedBySdk == null ? "app" : "sdk";
      System.out.println(
          kind + "-changed via=" + client.changedVia(kind) + " listed-by=" + listedBy);
      if (listedBySdk != null) {
        useNew(client, kind, listedBySdk);
      } else {
        // The event carries no list: the app lists again itself.
        step("relist-" + kind, () -> useNew(client, kind, client.list(kind)));
      }
    }
  }

  /** Whatever in the list was not there at first, used. */
  private void useNew(EraClient client, String kind, List<String> names) {
    List<String> before = first.getOrDefault(kind, List.of());
    for (String name : names) {
      if (before.contains(name)) {
        continue;
      }
      System.out.println(kind + "-new " + show(name));
      step(
          "use-" + kind,
          () -> {
            client.use(kind, name);
            System.out.println(kind + "-used " + show(name));
          });
    }
  }
}
