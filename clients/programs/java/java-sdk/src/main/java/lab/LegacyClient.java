package lab;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.util.List;
import java.util.Map;

/**
 * The 2025 era: the SDK's io.modelcontextprotocol.client, which speaks up to 2025-11-25 (an
 * initialize). McpSyncClient.subscribeResource sends resources/subscribe; on
 * notifications/resources/updated the SDK reads the resource itself and hands what it read to the
 * resourcesUpdateConsumer, so the lab sees that read before the app's own second one. On
 * notifications/…/list_changed the SDK lists again and hands the new list to the matching consumer.
 */
final class LegacyClient implements EraClient {
  private final McpSyncClient client;

  LegacyClient(App.Options options, Hooks hooks) {
    McpClientTransport transport =
        options.server() == null ? httpTransport(options.url()) : stdioTransport(options.server());
    client =
        McpClient.sync(transport)
            .clientInfo(new McpSchema.Implementation(App.CLIENT_NAME, App.CLIENT_VERSION))
            .requestTimeout(App.REQUEST_TIMEOUT)
            .resourcesUpdateConsumer(
                contents -> {
                  for (McpSchema.ResourceContents content : contents) {
                    hooks.updated(content.uri(), textOf(content));
                  }
                })
            .toolsChangeConsumer(
                tools ->
                    hooks.listChanged("tools", tools.stream().map(McpSchema.Tool::name).toList()))
            .promptsChangeConsumer(
                prompts ->
                    hooks.listChanged(
                        "prompts", prompts.stream().map(McpSchema.Prompt::name).toList()))
            .resourcesChangeConsumer(
                resources ->
                    hooks.listChanged(
                        "resources", resources.stream().map(McpSchema.Resource::uri).toList()))
            .build();
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

  static String textOf(McpSchema.ResourceContents content) {
    return content instanceof McpSchema.TextResourceContents text ? text.text() : "";
  }

  @Override
  public String connect() {
    McpSchema.InitializeResult result = client.initialize();
    return result.protocolVersion().compareTo("2026-07-28") >= 0 ? "2026-07-28" : "2025";
  }

  @Override
  public List<String> list(String kind) {
    return switch (kind) {
      case "tools" -> client.listTools().tools().stream().map(McpSchema.Tool::name).toList();
      case "prompts" ->
          client.listPrompts().prompts().stream().map(McpSchema.Prompt::name).toList();
      default -> client.listResources().resources().stream().map(McpSchema.Resource::uri).toList();
    };
  }

  @Override
  public String read(String uri) {
    List<McpSchema.ResourceContents> contents =
        client.readResource(new McpSchema.ReadResourceRequest(uri)).contents();
    return contents == null || contents.isEmpty() ? "" : textOf(contents.get(0));
  }

  @Override
  public void subscribe(String uri) {
    client.subscribeResource(new McpSchema.SubscribeRequest(uri));
  }

  @Override
  public String subscribeCall() {
    return "client.subscribeResource(new McpSchema.SubscribeRequest(uri))";
  }

  @Override
  public String updateVia() {
    return "McpClient.SyncSpec.resourcesUpdateConsumer";
  }

  @Override
  public String changedVia(String kind) {
    return "McpClient.SyncSpec." + kind + "ChangeConsumer";
  }

  @Override
  public void use(String kind, String name) {
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

  @Override
  public void close() {
    if (!client.closeGracefully()) {
      throw new IllegalStateException("the SDK did not close gracefully");
    }
  }
}
