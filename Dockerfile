# The lab in a container: official Deno image, dependencies cached at build
# time, non-root user, listening on all interfaces inside the container.
#
#   docker build -t mcp-subscription-lab .
#   docker run --rm -p 127.0.0.1:8089:8089 mcp-subscription-lab
#
# Another port: set it with the variable, not with --port, so the healthcheck
# (which reads MCP_TEST_PORT) follows it:
#   docker run --rm -p 127.0.0.1:9000:9000 -e MCP_TEST_PORT=9000 mcp-subscription-lab
#
# The report file (MCP_TEST_REPORT_FILE) may be written under /reports only,
# a folder the image's deno user (uid 1993) owns. A named volume keeps that
# owner; a host folder mounted there needs a user that can write it, such as
# your own (the cache is readable by any user):
#   docker run --rm -p 127.0.0.1:8089:8089 -v lab-reports:/reports \
#     -e MCP_TEST_REPORT_FILE=/reports/report.md mcp-subscription-lab
#   mkdir -p reports && docker run --rm -p 127.0.0.1:8089:8089 \
#     --user "$(id -u):$(id -g)" -v "$PWD/reports:/reports" \
#     -e MCP_TEST_REPORT_FILE=/reports/report.md mcp-subscription-lab
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
RUN mkdir /reports && chown deno:deno /reports
COPY --chown=deno:deno deno.json deno.lock main.ts probe.ts bus.ts stdio.ts ./
# deno.lock also pins the tests' packages (fast-check, playwright-core,
# xmldom), and Deno installs every npm package of the lockfile unless npm
# caching is lazy: then only what main.ts and the files beside it import is
# cached, and --cached-only runs need nothing else. Integrity is still
# checked against deno.lock, which stays frozen.
ENV DENO_UNSTABLE_NPM_LAZY_CACHING=1
# The image's "deno" user owns DENO_DIR, so the cache written here is the
# one it reads at run time, with no network needed.
USER deno
RUN deno cache main.ts probe.ts bus.ts stdio.ts

ENV MCP_TEST_HOST=0.0.0.0 \
    MCP_TEST_PORT=8089
EXPOSE 8089
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["deno", "eval", "const r = await fetch(`http://127.0.0.1:${Deno.env.get('MCP_TEST_PORT')}/healthz`); Deno.exit(r.ok ? 0 : 1);"]
# deno.json's permissions (-P), plus the report folder: a flag replaces the
# config's list of its kind, so read repeats probe.ts, bus.ts and stdio.ts
# (for `main.ts probe`, `--bus` and `--stdio`).
# The report is written to a temporary file beside it, then renamed, which
# needs read and write there.
CMD ["deno", "run", "-P", "--allow-read=probe.ts,bus.ts,stdio.ts,/reports", "--allow-write=/reports", "--cached-only", "main.ts"]
