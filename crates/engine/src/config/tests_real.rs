//! Every file of the real-world corpus (`__test__/real-configs`, copied from
//! `shared/testdata/real-configs`) normalised, asserted field by field. Nothing is launched.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::*;

fn dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("__test__/real-configs")
}

/// One line per server: `name | local | on | 30000 | argv... | env=K1,K2 | cwd=...`,
/// `name | remote | on | 30000 | transport | url | headers=K1`, or `name | invalid | reason`.
pub(super) fn summary(s: &ServerEntry) -> String {
    let on = if s.enabled { "on" } else { "off" };
    let keys = |pairs: &[(String, String)]| {
        pairs
            .iter()
            .map(|(k, _)| k.as_str())
            .collect::<Vec<_>>()
            .join(",")
    };
    match &s.spec {
        Ok(ServerSpec::Local {
            command,
            environment,
            cwd,
        }) => format!(
            "{} | local | {on} | {} | {} | env={} | cwd={}",
            s.name,
            s.timeout_ms,
            command.join(" "),
            keys(environment),
            cwd.as_deref().unwrap_or("-")
        ),
        Ok(ServerSpec::Remote {
            url,
            transport,
            headers,
        }) => format!(
            "{} | remote | {on} | {} | {} | {url} | headers={}",
            s.name,
            s.timeout_ms,
            transport.as_str(),
            keys(headers)
        ),
        Err(reason) => format!("{} | invalid | {reason}", s.name),
    }
}

const NPX_FS: &str = "npx -y @modelcontextprotocol/server-filesystem";

#[rustfmt::skip]
fn expected() -> Vec<(&'static str, Vec<String>, usize)> {
    let v = |lines: &[&str]| lines.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        ("amazonq.timeout-env.json", v(&[
            "cost-explorer | local | on | 60000 | uv run /Users/rfedayiz/Documents/Learning/bedrock-agent-workshop/cost-explorer-agent/mcp/src/cost-explorer-mcp-server/awslabs/cost_explorer_mcp_server/server.py | env=AWS_PROFILE | cwd=-",
        ]), 0),
        ("claude-code.disabledTools.json", v(&[
            "rust-mcp-server | local | on | 30000 | /usr/bin/mcp-rust-docs --log-file /home/stfu/.gemini/mcp-logs/rust-mcp-server.log | env= | cwd=-",
            "mcp-rust-docs | local | on | 30000 | mcp-rust-docs | env= | cwd=-",
        ]), 0),
        ("claude-code.empty-servers-comment-key.json", v(&[]), 0),
        ("claude-code.http-type.json", v(&[
            "supabase | remote | on | 30000 | streamable-http | https://mcp.supabase.com/mcp?project_ref=<PROJECT_REF> | headers=",
        ]), 0),
        ("claude-code.plugin-root-variable-cwd.json", v(&[
            "kimi-subagents | local | on | 30000 | node ${CLAUDE_PLUGIN_ROOT}/dist/server.mjs | env= | cwd=./",
        ]), 0),
        ("claude-code.venv-python-description-redacted.json", v(&[
            "athena-knowledge-base | local | on | 30000 | /Users/kelvinlomboy/tools/vex-rag/.venv/bin/python3 /Users/kelvinlomboy/tools/vex-rag/mcp_server/vex_kb_server.py | env=RAG_CONFIG,PYTHONPATH | cwd=-",
            "velociraptor | local | on | 30000 | /Users/kelvinlomboy/VERSANT/MCPs/velociraptor-mcp-venv/bin/python /Users/kelvinlomboy/VERSANT/MCPs/mcp-velociraptor-main/mcp_velociraptor_bridge.py | env= | cwd=-",
            "kali_external | local | on | 30000 | /Users/kelvinlomboy/VERSANT/MCPs/kali-linux-mcp-venv/bin/python /Users/kelvinlomboy/VERSANT/MCPs/mcp-kali-linux-main/mcp_server.py --server http://your-kali-host:5000/ | env= | cwd=-",
            "kali_internal | local | on | 30000 | /Users/kelvinlomboy/VERSANT/MCPs/kali-linux-mcp-venv/bin/python /Users/kelvinlomboy/VERSANT/MCPs/mcp-kali-linux-main/mcp_server.py --server http://your-internal-kali:5000/ | env=KALI_API_KEY | cwd=-",
            "playwright | local | on | 30000 | npx @playwright/mcp@latest --browser chromium --headless --viewport-size 1920x1080 --timeout-action 10000 | env= | cwd=-",
        ]), 0),
        ("claude-desktop.docker-and-nonstandard-url-transport.json", v(&[
            "book-api-mcp-server-dotnet | local | on | 30000 | docker run --rm -i --network book-api-mcp-bundle_default -e BookApi__BaseUrl=http://bookapi:8080 book-api-mcp-bundle-bookapi-mcp-server:latest | env= | cwd=-",
            "book-api-mcp-server-minikube | remote | on | 30000 | streamable-http | https://bookapi-mcp-server.default.svc.cluster.local/ | headers=",
        ]), 0),
        ("claude-desktop.placeholders-npx-docker.json", v(&[
            "brave-search | local | on | 30000 | npx @modelcontextprotocol/server-brave-search | env=BRAVE_API_KEY | cwd=-",
            &format!("filesystem | local | on | 30000 | {NPX_FS} /Users/YOUR_USERNAME/apps/MCP | env= | cwd=-"),
            "github | local | on | 30000 | npx -y @modelcontextprotocol/server-github | env=GITHUB_PERSONAL_ACCESS_TOKEN | cwd=-",
            "gdrive | local | on | 30000 | npx -y @modelcontextprotocol/server-gdrive | env=GOOGLE_CLIENT_ID,GOOGLE_CLIENT_SECRET | cwd=-",
            "google-workspace-mcp | local | on | 30000 | docker run --rm -i -v /Users/YOUR_USERNAME/.mcp/google-workspace-mcp:/app/config -v /Users/YOUR_USERNAME/Documents/workspace-mcp-files:/app/workspace -e GOOGLE_CLIENT_ID -e GOOGLE_CLIENT_SECRET -e LOG_MODE=strict ghcr.io/aaronsb/google-workspace-mcp:latest | env=GOOGLE_CLIENT_ID,GOOGLE_CLIENT_SECRET | cwd=-",
        ]), 0),
        ("claude-desktop.stdio-binary-env.json", v(&[
            "surreal-mind | local | on | 30000 | /Users/samuelatagana/Projects/LegacyMind/surreal-mind/target/release/surreal-mind | env=RUST_LOG | cwd=-",
        ]), 0),
        ("cline.cwd-disabled-autoApprove.json", v(&[
            "github.com/modelcontextprotocol/servers/tree/main/src/sequentialthinking | local | on | 30000 | node --no-warnings /home/node/Documents/Cline/MCP/sequentialthinking/node_modules/.bin/mcp-server-sequential-thinking | env= | cwd=/home/node/Documents/Cline/MCP/sequentialthinking",
            "github.com/upstash/context7-mcp | local | on | 30000 | npx -y @upstash/context7-mcp@1.0.6 | env=NODE_OPTIONS | cwd=-",
        ]), 0),
        ("cursor.env-interpolation.json", v(&[
            "agent-bridge | local | on | 30000 | agent-bridge-mcp | env=AGENT_BRIDGE_WORKSPACES,AGENT_BRIDGE_STATE_DIR | cwd=-",
        ]), 0),
        ("cursor.loopback-url-name-with-spaces.json", v(&[
            "Github PR Comments | remote | on | 30000 | auto | http://127.0.0.1:3001/mcp | headers=",
        ]), 0),
        // Negative case: no server map; the bare map's only key is a `tools` array.
        ("cursor.not-an-mcp-config.json", v(&[]), 1),
        ("cursor.npx-latest-empty-env.json", v(&[
            "eslint | local | on | 30000 | npx @eslint/mcp@latest | env= | cwd=-",
            "context7 | local | on | 30000 | npx -y @upstash/context7-mcp | env= | cwd=-",
        ]), 0),
        ("cursor.remote-url-only.json", v(&[
            "Sentry | remote | on | 30000 | auto | https://mcp.sentry.dev/mcp/renderiq/javascript-nextjs | headers=",
        ]), 0),
        ("cursor.secret-in-args-redacted.json", v(&[
            "supabase | local | on | 30000 | npx -y @supabase/mcp-server-supabase@latest --access-token <REDACTED> | env= | cwd=-",
        ]), 0),
        ("cursor.windows-paths.json", v(&[
            "codebase-memory-mcp | local | on | 30000 | C:/Users/Guang/AppData/Local/Programs/codebase-memory-mcp/codebase-memory-mcp.exe | env= | cwd=-",
            "gitnexus | local | on | 30000 | C:\\Users\\Guang\\AppData\\Roaming\\npm\\gitnexus.cmd mcp | env= | cwd=-",
        ]), 0),
        ("gemini-cli.sse-url-basic-auth-redacted.json", v(&[
            "liferay | remote | on | 30000 | auto | http://localhost:8080/o/mcp/sse | headers=Authorization",
        ]), 0),
        ("kiro.autoApprove-disabled.json", v(&[
            "XcodeBuildMCP | local | on | 30000 | npx -y xcodebuildmcp@latest | env= | cwd=-",
            "macos-ui-automation | local | on | 30000 | uv --directory /Users/seven/dev/macos-ui-automation-mcp run macos-ui-automation-mcp | env= | cwd=-",
        ]), 0),
        ("opencode.local-and-remote.json", v(&[
            "better-t-stack | local | on | 30000 | bunx create-better-t-stack@latest mcp | env= | cwd=-",
            "context7 | local | on | 30000 | npx -y @upstash/context7-mcp | env= | cwd=-",
            "cloudflare-docs | remote | on | 30000 | auto | https://docs.mcp.cloudflare.com/sse | headers=",
            "nuxt | remote | on | 30000 | auto | https://nuxt.com/mcp | headers=",
            "nuxt-ui | remote | on | 30000 | auto | https://ui.nuxt.com/mcp | headers=",
            "better-auth | remote | on | 30000 | auto | https://mcp.inkeep.com/better-auth/mcp | headers=",
            "expo-mcp | remote | on | 30000 | auto | https://mcp.expo.dev/mcp | headers=",
            "polar | remote | on | 30000 | auto | https://mcp.polar.sh/mcp/polar-mcp | headers=",
        ]), 0),
        ("opencode.oauth-timeout-disabled-docker.json", v(&[
            "atlassian-rovo | remote | off | 10000 | auto | https://mcp.atlassian.com/v1/mcp | headers=",
            "beads | local | off | 30000 | /Users/mohammad/.local/share/uv/tools/beads-mcp/bin/beads-mcp | env= | cwd=-",
            "chrome-devtools | local | off | 30000 | npx -y chrome-devtools-mcp@latest | env= | cwd=-",
            "gitlab | local | off | 30000 | glab mcp serve | env= | cwd=-",
            "google-cloud | local | off | 30000 | npx -y @google-cloud/gcloud-mcp | env= | cwd=-",
            "google-workspace | local | off | 30000 | gemini-workspace-server | env= | cwd=-",
            "sauron | local | on | 30000 | /Users/mohammad/.asdf/installs/golang/1.23.8/packages/bin/sauron mcp | env= | cwd=-",
            "slack | local | on | 30000 | docker run -i --rm -e SLACK_MCP_XOXC_TOKEN=REDACTED -e SLACK_MCP_XOXD_TOKEN=REDACTED -e SLACK_MCP_ADD_MESSAGE_TOOL=1 ghcr.io/korotovsky/slack-mcp-server:latest mcp-server --transport stdio | env= | cwd=-",
        ]), 0),
        ("roo.alwaysAllow.json", v(&[
            "smart-tree | local | on | 30000 | /home/hue/source/smart-tree/target/debug/st --mcp | env= | cwd=-",
        ]), 0),
        ("vscode.docker-stdio.json", v(&[
            "terraform-mcp | local | on | 30000 | docker run -i --rm hashicorp/terraform-mcp-server --stdio | env= | cwd=-",
        ]), 0),
        ("vscode.envFile.json", v(&[
            "nerdearla-mcp | local | on | 30000 | node ./dist/server.js | env= | cwd=-",
        ]), 0),
        ("vscode.inputs-sse-headers.json", v(&[
            "azure-function-mcp | remote | on | 30000 | sse | http://localhost:7071/runtime/webhooks/mcp/sse | headers=",
            "remote-mcp-azure-function | remote | on | 30000 | sse | https://${input:mcp-azure-function-name}.azurewebsites.net/runtime/webhooks/mcp/sse | headers=x-functions-key",
        ]), 0),
        ("vscode.mismatched-input-id.json", v(&[
            "github | local | on | 30000 | npx -y @modelcontextprotocol/server-github@2025.4.8 | env=GITHUB_PERSONAL_ACCESS_TOKEN | cwd=-",
        ]), 0),
        ("vscode.sse-and-stdio-input-env.json", v(&[
            "remote-mcp | remote | on | 30000 | sse | http://localhost:3001/sse | headers=",
            "stdio-mcp | local | on | 30000 | node mcp-stdio/build/index.js | env=YOUTUBE_API_KEY | cwd=-",
        ]), 0),
        ("vscode.url-without-type.json", v(&[
            "codemotion-mcp-server | remote | on | 30000 | auto | http://localhost:3000/mcp | headers=",
        ]), 0),
        ("vscode.windows-jar-sse-mixed.json", v(&[
            "LocalWorkflowManagerServer | local | on | 30000 | Java -jar D:\\UserData\\Learning\\AI\\mcp-spring-server-samples\\build\\libs\\service-0.0.1-SNAPSHOT.jar | env= | cwd=-",
            "RemoteWorkflowManagerServer | remote | on | 30000 | sse | http://localhost:8081/sse | headers=",
            &format!("filesystem | local | on | 30000 | {NPX_FS} D:\\UserData\\Learning\\AI\\mcp-spring-server-samples | env= | cwd=-"),
        ]), 0),
        ("windsurf.many-stdio-empty-env-value.json", v(&[
            "sequential-thinking | local | on | 30000 | npx -y @modelcontextprotocol/server-sequential-thinking | env= | cwd=-",
            &format!("filesystem | local | on | 30000 | {NPX_FS} /home/kblack0610/dev/Games/ /home/kblack0610/dev/Games/DodginBalls_root/DodginBalls/ /home/kblack0610/dev/Games/HistoryTime_root/history-time/history-time/ /home/kblack0610/.dotfiles/ | env= | cwd=-"),
            "mongodb-mcp-server | local | on | 30000 | npx -y mongodb-mcp-server | env=MDB_MCP_CONNECTION_STRING | cwd=-",
            "memory | local | on | 30000 | npx -y @modelcontextprotocol/server-memory | env=MEMORY_FILE_PATH | cwd=-",
            "git | local | on | 30000 | uvx mcp-server-git | env= | cwd=-",
            "mcp-playwright | local | on | 30000 | npx -y @executeautomation/playwright-mcp-server | env= | cwd=-",
        ]), 0),
    ]
}

fn load_file(file: &str) -> Config {
    load(ConfigInput::Path(dir().join(file))).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn every_real_config_normalises_as_expected() {
    let table = expected();
    let on_disk: BTreeSet<String> = std::fs::read_dir(dir())
        .expect("__test__/real-configs")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    let listed: BTreeSet<String> = table.iter().map(|(f, _, _)| f.to_string()).collect();
    assert_eq!(on_disk, listed, "every corpus file needs a row");
    assert_eq!(on_disk.len(), 30);

    for (file, lines, warnings) in table {
        let config = load_file(file);
        let got: Vec<String> = config.servers.iter().map(summary).collect();
        assert_eq!(got, lines, "{file}");
        assert_eq!(
            config.warnings.len(),
            warnings,
            "{file}: {:?}",
            config.warnings
        );
        assert!(config.servers.iter().all(|s| s.tools.is_none()), "{file}");
        // parseMcpConfig output loads back to the same entries.
        let again = load(ConfigInput::Value(normalised_json(&config))).unwrap();
        assert_eq!(again.servers, config.servers, "{file} round trip");
    }
}

#[test]
fn corpus_copy_matches_shared_testdata_when_present() {
    let shared = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("../shared/testdata/real-configs");
    let Ok(entries) = std::fs::read_dir(&shared) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let copy = dir().join(path.file_name().unwrap());
        assert_eq!(
            std::fs::read(&path).unwrap(),
            std::fs::read(&copy).unwrap(),
            "{}",
            copy.display()
        );
    }
}

fn local_env(config: &Config, server: &str) -> Vec<(String, String)> {
    match &config
        .servers
        .iter()
        .find(|s| s.name == server)
        .unwrap()
        .spec
    {
        Ok(ServerSpec::Local { environment, .. }) => environment.clone(),
        other => panic!("{server}: {other:?}"),
    }
}

#[test]
fn values_that_matter_survive_unexpanded() {
    let c = load_file("windsurf.many-stdio-empty-env-value.json");
    assert_eq!(
        local_env(&c, "memory"),
        [("MEMORY_FILE_PATH".to_string(), String::new())]
    );
    let c = load_file("cursor.env-interpolation.json");
    assert_eq!(
        local_env(&c, "agent-bridge"),
        [
            (
                "AGENT_BRIDGE_WORKSPACES".to_string(),
                "${workspaceFolder}".to_string()
            ),
            (
                "AGENT_BRIDGE_STATE_DIR".to_string(),
                "${env:HOME}/.agent-bridge-mcp/state".to_string()
            ),
        ]
    );
    let c = load_file("gemini-cli.sse-url-basic-auth-redacted.json");
    let Ok(ServerSpec::Remote { headers, .. }) = &c.servers[0].spec else {
        panic!()
    };
    assert_eq!(
        headers,
        &[("Authorization".to_string(), "Basic <REDACTED>".to_string())]
    );
}

#[test]
fn real_configs_expand_as_editors_would() {
    let lookup = |name: &str| match name {
        "HOME" => Some("/home/u".to_string()),
        "workspaceFolder" => Some("/proj".to_string()),
        _ => None,
    };
    let mut warnings = Vec::new();
    let c = load_file("cursor.env-interpolation.json");
    let spec =
        c.servers[0]
            .spec
            .as_ref()
            .unwrap()
            .expanded_with("agent-bridge", &lookup, &mut warnings);
    let ServerSpec::Local { environment, .. } = spec else {
        panic!()
    };
    assert_eq!(environment[0].1, "/proj");
    assert_eq!(environment[1].1, "/home/u/.agent-bridge-mcp/state");
    assert!(warnings.is_empty());

    let c = load_file("claude-code.plugin-root-variable-cwd.json");
    let spec =
        c.servers[0]
            .spec
            .as_ref()
            .unwrap()
            .expanded_with("kimi-subagents", &lookup, &mut warnings);
    let ServerSpec::Local { command, cwd, .. } = spec else {
        panic!()
    };
    assert_eq!(command, ["node", "/dist/server.mjs"]);
    assert_eq!(cwd.as_deref(), Some("./"));
    assert_eq!(
        warnings,
        [
            "toolnexus: environment variable CLAUDE_PLUGIN_ROOT is not set (server \"kimi-subagents\"); using \"\"",
        ]
    );

    // VS Code `${input:...}` belongs to the editor: kept literally, no warning.
    let mut warnings = Vec::new();
    let c = load_file("vscode.inputs-sse-headers.json");
    let spec = c.servers[1]
        .spec
        .as_ref()
        .unwrap()
        .expanded_with("r", &lookup, &mut warnings);
    assert_eq!(spec, c.servers[1].spec.clone().unwrap());
    assert!(warnings.is_empty());
}

#[test]
fn negative_corpus_file_warns_without_values() {
    let c = load_file("cursor.not-an-mcp-config.json");
    assert_eq!(
        c.warnings,
        ["toolnexus: skipped MCP server \"tools\" (tools): expected an object, got an array",]
    );
}
