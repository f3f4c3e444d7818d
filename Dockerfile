# The lab in a container: official Deno image, dependencies cached at build
# time, non-root user, listening on all interfaces inside the container.
#
#   docker build -t mcp-subscription-lab .
#   docker run --rm -p 127.0.0.1:8089:8089 mcp-subscription-lab
#
# The image holds the probe too, for a server the container can reach:
#   docker run --rm mcp-subscription-lab \
#     deno run -A --cached-only probe.ts --url http://server:8080/mcp --uri …
#
# Clients in other containers use a name the DNS-rebinding check must allow:
#   docker run --rm --network lab-net --name lab \
#     -e MCP_TEST_ALLOWED_HOSTS=lab mcp-subscription-lab
FROM denoland/deno:2.9.6

WORKDIR /app
COPY --chown=deno:deno deno.json deno.lock main.ts probe.ts ./
# The image's "deno" user owns DENO_DIR, so the cache written here is the
# one it reads at run time, with no network needed.
USER deno
RUN deno cache main.ts probe.ts

ENV MCP_TEST_HOST=0.0.0.0 \
    MCP_TEST_PORT=8089
EXPOSE 8089
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["deno", "eval", "const r = await fetch(`http://127.0.0.1:${Deno.env.get('MCP_TEST_PORT')}/healthz`); Deno.exit(r.ok ? 0 : 1);"]
CMD ["deno", "run", "-P", "--cached-only", "main.ts"]
