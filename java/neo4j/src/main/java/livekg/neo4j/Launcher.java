package livekg.neo4j;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;

/**
 * The local Neo4j Community server of livekg: the embedded DBMS with its Bolt connector,
 * configured by a neo4j.conf that ops/neo4j_server.py writes.
 *
 * <p>Usage: {@code java -cp 'lib/*' livekg.neo4j.Launcher HOME CONF}. With auth enabled, the
 * password of the configured user comes from the environment ({@code LIVEKG_NEO4J_USER},
 * {@code LIVEKG_NEO4J_PASSWORD}), never from the command line (visible in ps). Prints
 * {@code livekg-neo4j ready} once the default database answers; SIGTERM shuts the DBMS
 * down cleanly (checkpoint), SIGKILL is a crash it recovers from on the next start.
 */
public final class Launcher {
  private Launcher() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: Launcher HOME NEO4J_CONF");
      System.exit(2);
    }
    Path home = Path.of(args[0]).toAbsolutePath();
    Path conf = Path.of(args[1]).toAbsolutePath();
    Files.createDirectories(home);
    long started = System.nanoTime();
    DatabaseManagementService dbms =
        new DatabaseManagementServiceBuilder(home).loadPropertiesFromFile(conf).build();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  dbms.shutdown();
                  stopped.countDown();
                },
                "livekg-neo4j-shutdown"));
    setPassword(dbms);
    GraphDatabaseService db = dbms.database("neo4j");
    db.executeTransactionally("RETURN 1");
    System.out.printf(
        "livekg-neo4j ready in %.1f s%n", (System.nanoTime() - started) / 1e9);
    System.out.flush();
    stopped.await();
  }

  /** The configured user gets the configured password (created if absent), no change asked. */
  private static void setPassword(DatabaseManagementService dbms) {
    String password = System.getenv("LIVEKG_NEO4J_PASSWORD");
    if (password == null || password.isEmpty()) {
      return; // auth disabled (loopback only): see ops/neo4j_server.py
    }
    String user = System.getenv().getOrDefault("LIVEKG_NEO4J_USER", "neo4j");
    if (!user.matches("[A-Za-z0-9_]+")) {
      throw new IllegalArgumentException("user name must be [A-Za-z0-9_]+: " + user);
    }
    GraphDatabaseService system = dbms.database("system");
    Map<String, Object> params = Map.of("pw", password);
    system.executeTransactionally(
        "CREATE USER " + user + " IF NOT EXISTS SET PASSWORD $pw CHANGE NOT REQUIRED", params);
    try {
      system.executeTransactionally(
          "ALTER USER " + user + " SET PASSWORD $pw CHANGE NOT REQUIRED", params);
    } catch (RuntimeException sameAsBefore) {
      // Neo4j refuses setting the password it already has: nothing to do.
    }
  }
}
