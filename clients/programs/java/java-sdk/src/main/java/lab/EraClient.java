package lab;

import java.util.List;

/**
 * One protocol era's client of the SDK: the calls the app's steps make, whatever the era. The SDK
 * has one client per era: {@link LegacyClient} (io.modelcontextprotocol.client, 2025) and {@link
 * ModernClient} (io.modelcontextprotocol.modern.client, 2026-07-28).
 */
interface EraClient {
  /** What the SDK's hooks tell the app. */
  interface Hooks {
    /**
     * A resource was updated; {@code readBySdk} is its text where the SDK read it before calling
     * the app, else null.
     */
    void updated(String uri, String readBySdk);

    /**
     * A list changed; {@code listedBySdk} is the list where the SDK listed it again before calling
     * the app, else null.
     */
    void listChanged(String kind, List<String> listedBySdk);
  }

  /** Connects; the era it spoke, {@code 2025} or {@code 2026-07-28}. */
  String connect();

  /** A list's names (resources by URI). */
  List<String> list(String kind);

  /** The text of the resource's first content. */
  String read(String uri);

  /** Asks for the resource's updates (and, where the era needs it, the lists' changes). */
  void subscribe(String uri) throws InterruptedException;

  /** The subscribe call as the {@code subscribed} line names it. */
  String subscribeCall();

  /** The hook that gets the update, as {@code notification-received … via=} names it. */
  String updateVia();

  /** The hook that gets a list's change. */
  String changedVia(String kind);

  /** Calls a new tool, gets a new prompt or reads a new resource. */
  void use(String kind, String name);

  void close();
}
