// `toolnexus serve --help`: the usage text of bin/cli/serve.mjs.

export const SERVE_HELP = `Usage: toolnexus serve [<config>] [--addr 127.0.0.1:8808 | --stdio] [--watch]
                       [--tools a,b] [--name n] [--stateless]
                       [--allowed-hosts h1,h2] [--allowed-origins o1,o2]
                       [--session-idle-timeout ms] [--max-sessions n]
                       [--auth-token-env NAME]… [--auth-token-file PATH] [--auth-file PATH]
                       [--oauth-issuer URL [--oauth-audience URL] [--oauth-scopes a,b]
                       [--oauth-jwks-uri URL]] [--no-auth] [--access-log] [--metrics] [--log-calls]
                       [--state-key-file PATH | --state-key-env NAME…] [--replica-url URL]
                       [--state-store URL | --state-store-env NAME]
                       [--tool-search [--tool-search-limit n] [--tool-search-always a,b]]
                       [--skills DIR] [--hooks FILE] [--tools-config FILE]

Connects to every enabled server of <config> (without it, of the client configs
\`toolnexus configs\` finds) and serves the union of their tools as one MCP server:
over streamable HTTP (POST <url>/mcp), or with --stdio over stdin/stdout, so one
entry in Claude Desktop or Cursor stands for every server of the config:

  { "mcpServers": { "all": { "command": "npx", "args": ["toolnexus", "serve", "--stdio"] } } }

Tools are named <server>_<tool>, as loadMcp names them. Over HTTP, prints one line on
stdout once serving:

  toolnexus: serving <N> tools at http://127.0.0.1:8808/mcp

With --stdio nothing but the protocol goes to stdout. Server statuses go to stderr, and
one line per tool call when stderr is a terminal or with --log-calls. When a server's tools change, clients in a session are
sent notifications/tools/list_changed. SIGINT or SIGTERM (or, with --stdio, the end
of stdin) stops serving, closes every server (no child process is left) and exits 0.

Options:
  --addr host:port  address to listen on (default 127.0.0.1:8808; port 0 picks a free one)
  --stdio           serve over stdin/stdout instead of HTTP
  --watch           reload the config file(s) when they change: new servers are started,
                    removed ones closed, changed ones restarted, clients notified
  --tools a,b       expose only these tools (names as above; unknown names are ignored
                    with a warning)
  --name n          the server name announced to clients (default toolnexus)
  --stateless       no sessions for handshake-era clients either, so replicas can stand
                    behind a load balancer with no affinity (2026-07-28 clients are
                    always served statelessly)
  --allowed-hosts h1,h2
                    Host names clients use to reach the server, besides the loopback ones;
                    required when --addr is not a loopback address ("*" accepts any)
  --allowed-origins o1,o2
                    browser origins accepted besides the loopback ones (e.g.
                    https://app.example.com); other Origins are refused with 403
  --session-idle-timeout ms
                    a session no request names for this long expires and is answered 404
                    from then on, so its client opens a new one (default 300000: 5 minutes)
  --max-sessions n  sessions alive at once at most; a new one beyond it ends the idlest
                    (default 500)
  --auth-token-env NAME
                    accept \`Authorization: Bearer <token>\` with the token held by the
                    environment variable NAME (its subject is NAME); repeatable
  --auth-token-file PATH
                    accept the tokens of PATH, one per line (blank lines and # comments
                    ignored); tokens are never taken from the command line
  --auth-file PATH  JSON { tokens, oauth, tools, prompts, resources } as toolkit.serve's
                    auth option takes it (per-scope tool policy: "tools": { "<scope>":
                    ["github_*"] }); the flags above and below add to it
  --oauth-issuer URL
                    accept access tokens of this OAuth authorisation server (JWTs checked
                    against its keys) and serve /.well-known/oauth-protected-resource
  --oauth-audience URL
                    the audience tokens must name (default: the served URL, <url>/mcp;
                    behind a proxy, the public URL clients use)
  --oauth-scopes a,b
                    scopes every request needs (else 403 insufficient_scope)
  --oauth-jwks-uri URL
                    the issuer's key set (default: from the issuer's metadata)
  --no-auth         serve a non-loopback --addr without auth: anyone who can reach it may
                    use every tool (without auth flags, only loopback addresses serve)
  --log-calls       one line per tool call on stderr (name, ms) even when stderr is not a
                    terminal (on a terminal it is always written)
  --access-log      one JSON line per request on stderr (time, principal, method, tool,
                    status, ms, and the request's traceId; never arguments or tokens)
  --metrics         serve Prometheus text at /metrics (operation and session durations by
                    method, tool and error type), behind the same auth as /mcp. Traces and
                    metrics also go to an OpenTelemetry collector over OTLP/HTTP when
                    OTEL_EXPORTER_OTLP_ENDPOINT is set (see docs/telemetry.md)
  --skills DIR      serve the skills of DIR too (the skills extension, SEP-2640): each
                    folder within it that holds a SKILL.md is a skill, at skill://<its path>/;
                    a skill that breaks a rule (frontmatter, name, symlink, over 512 files or
                    16 MiB) stops the start, named. Files that change are served as they are
                    now (looked at, at most once a second)
  --hooks FILE      policy hooks from the JavaScript module FILE: its beforeCall and
                    afterCall exports (or its default export's), run on every tool call,
                    resource read and prompt get. beforeCall may refuse a call
                    ({ deny: "reason" }) or rewrite its arguments ({ arguments }); afterCall
                    may replace the result (see docs/gateway.md)
  --tools-config FILE
                    curate the served tools from the JSON file FILE: { "servers": { <server>:
                    { "prefix": "gh" | false } }, "tools": { <tool as listed>: { "rename",
                    "title", "description", "hide", "preset": {…}, "defaults": {…} } } }.
                    A preset argument is gone from the advertised schema and set on every
                    call. A tool no server has, a preset that does not fit its schema or two
                    tools under one name stop the start, in words. The file may also hold
                    "limits" (as serve's limits: { "callsPerMinute", "burst", "concurrent",
                    "overall", "tools" }), "resultLimits" ({ "maxBytes", "tools" }: larger
                    results are cut, with a marker) and "endpoints": { <name>: { "servers": [...],
                    "tools": ["gh_*"] } }, each served at <url>/mcp/<name> (a line each on
                    stdout) with the same auth and hooks
  --state-key-file PATH
                    the state key replicas share, so that any replica serves any request
                    (with --stateless, behind a load balancer with no affinity) even when a
                    tool asks the client for input: each line of PATH is one key (at least
                    16 bytes; \`openssl rand -base64 32\`; a line base64:<…> is the bytes it
                    encodes), the first sealing and every one opening, so a key rotates by
                    putting the new one first; blank lines and # comments are ignored. A file
                    of exactly 32 bytes that are not text is one raw key. Keys are never taken
                    from the command line
  --state-key-env NAME
                    the state key held by the environment variable NAME (removed from the
                    environment of the servers this command starts); repeatable, the first
                    sealing
  --replica-url URL the http(s) origin other replicas reach this one at (e.g.
                    http://10.0.0.5:8808), so an answer to its request that reaches another
                    replica is handed to it; needs a state key
  --state-store URL the Redis replicas share (redis://host:6379, rediss:// for TLS), so a
                    requestState is retried once across the fleet and a session ended by
                    DELETE is refused on every replica; needs a state key. A URL holding a
                    password is refused: use --state-store-env
  --state-store-env NAME
                    the store's URL, credentials included, held by the environment variable
                    NAME (removed from the environment of the servers this command starts)
  --tool-search     list two tools instead of the whole catalog: search_tools (query,
                    limit), which answers the best matches' names, descriptions and input
                    schemas, and call_tool (name, arguments), which calls one of them; every
                    tool stays callable by its own name, and auth policies still apply
  --tool-search-limit n
                    matches search_tools answers when the client names no limit (1 to 50,
                    default 5)
  --tool-search-always a,b
                    tools listed beside search_tools and call_tool (names as above)
  -h, --help        show this help

GET /healthz answers 200 while serving; GET /readyz 200 once every server is connected,
else 503. Both are outside auth.

Exit status: 0 stopped by a signal (or end of input), 1 could not start serving, 2
usage or config error.
`
