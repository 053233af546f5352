use super::*;
use serde_json::json;

fn parsed(v: Value) -> Result<Option<OAuthSettings>, Invalid> {
    parse(v.as_object().unwrap(), "mcpServers.a")
}

fn refused(v: Value) -> String {
    parsed(v).unwrap_err().0
}

#[test]
fn reads_every_field_and_cursor_spelling() {
    let s = parsed(json!({"auth": {"CLIENT_ID": "id", "clientSecret": "${S}", "scopes": ["a", "b"], "redirectPort": 8787}}))
        .unwrap()
        .unwrap();
    assert_eq!(s.client_id.as_deref(), Some("id"));
    assert_eq!(s.client_secret.as_deref(), Some("${S}"));
    assert_eq!(s.scopes, ["a", "b"]);
    assert_eq!(s.redirect_port, Some(8787));
    assert_eq!(s.grant, Grant::AuthorizationCode);
    assert_eq!(
        parsed(json!({"auth": {"scopes": "x y"}}))
            .unwrap()
            .unwrap()
            .scopes,
        ["x", "y"]
    );
    assert_eq!(parsed(json!({})).unwrap(), None);
}

#[test]
fn bad_fields_are_named_without_their_values() {
    assert_eq!(
        refused(json!({"auth": {"clientSecret": 12345}})),
        "mcpServers.a.auth.clientSecret must be a non-empty string"
    );
    assert_eq!(
        refused(json!({"auth": {"redirectPort": 70000}})),
        "mcpServers.a.auth.redirectPort must be a port number (1 to 65535)"
    );
    assert_eq!(
        refused(json!({"auth": true})),
        "mcpServers.a.auth must be an object"
    );
    assert_eq!(
        refused(json!({"auth": {"clientSecrett": "s3cr3t"}})),
        "mcpServers.a.auth has an unknown field \"clientSecrett\""
    );
}

#[test]
fn machine_grants_read_their_secrets_from_any_source() {
    let s = parsed(json!({"auth": {"grant": "client_credentials", "clientId": "svc", "privateKeyFile": "/k.pem", "signingAlgorithm": "ES256", "dpop": true}}))
        .unwrap()
        .unwrap();
    assert_eq!(s.grant, Grant::ClientCredentials);
    assert_eq!(s.private_key, Some(Secret::File("/k.pem".into())));
    assert_eq!(s.dpop, Some(true));
    let s = parsed(json!({"auth": {"grant": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertionEnv": "TOKEN"}}))
        .unwrap()
        .unwrap();
    assert_eq!(s.grant, Grant::JwtBearer);
    assert_eq!(s.assertion, Some(Secret::Env("TOKEN".into())));
    let s = parsed(json!({"auth": {"clientId": "as-client", "clientSecret": "${S}", "enterprise": {
        "idpIssuer": "https://idp", "idpTokenEndpoint": "https://idp/token", "idpClientId": "c", "idTokenFile": "/id"}}}))
    .unwrap()
    .unwrap();
    assert_eq!(s.grant, Grant::Enterprise);
    assert_eq!(
        s.enterprise.as_ref().unwrap().id_token,
        Secret::File("/id".into())
    );
    // parseMcpConfig's shape reads back as the same settings.
    let again = parse(
        json!({"auth": s.to_json()}).as_object().unwrap(),
        "mcpServers.a",
    )
    .unwrap()
    .unwrap();
    assert_eq!(again, s);
}

#[test]
fn conflicting_or_missing_fields_are_refused_in_words() {
    let cases = [
        (
            json!({"grant": "client_credentials", "clientId": "c"}),
            "mcpServers.a.auth: grant \"client_credentials\" needs clientSecret or privateKey",
        ),
        (
            json!({"grant": "client_credentials", "clientId": "c", "clientSecret": "s", "privateKey": "k"}),
            "mcpServers.a.auth: give clientSecret or privateKey, not both",
        ),
        (
            json!({"grant": "client_credentials", "clientSecret": "s"}),
            "mcpServers.a.auth.clientId is required by grant \"client_credentials\"",
        ),
        (
            json!({"grant": "jwt-bearer"}),
            "mcpServers.a.auth: grant \"jwt-bearer\" needs the workload's token: assertion, assertionFile or assertionEnv",
        ),
        (
            json!({"grant": "jwt-bearer", "assertion": "a", "assertionFile": "/f"}),
            "mcpServers.a.auth: give only one of assertion, assertionFile",
        ),
        (
            json!({"grant": "jwt-bearer", "assertion": "a", "redirectPort": 8080}),
            "mcpServers.a.auth.redirectPort is not used by grant \"jwt-bearer\" (no browser)",
        ),
        (
            json!({"privateKey": "k"}),
            "mcpServers.a.auth.privateKey is only for grant \"client_credentials\"",
        ),
        (
            json!({"assertion": "a"}),
            "mcpServers.a.auth.assertion is only for grant \"jwt-bearer\"",
        ),
        (
            json!({"grant": "password"}),
            "mcpServers.a.auth.grant must be \"authorization_code\", \"client_credentials\" or \"jwt-bearer\"",
        ),
        (
            json!({"grant": "client_credentials", "enterprise": {}}),
            "mcpServers.a.auth.enterprise.idpIssuer is required",
        ),
        (
            json!({"clientId": "c", "enterprise": {"idpIssuer": "i", "idpTokenEndpoint": "t", "idpClientId": "c"}}),
            "mcpServers.a.auth.enterprise needs the user's ID token: idToken, idTokenFile or idTokenEnv",
        ),
        (
            json!({"grant": "client_credentials", "clientId": "c", "enterprise": {"idpIssuer": "i", "idpTokenEndpoint": "t", "idpClientId": "c", "idToken": "x"}}),
            "mcpServers.a.auth: enterprise implies its own grant; remove grant",
        ),
        (
            json!({"grant": "client_credentials", "clientId": "c", "privateKey": "k", "signingAlgorithm": "HS256"}),
            "mcpServers.a.auth.signingAlgorithm must be one of ES256, ES384, RS256, RS384, RS512, PS256, PS384, PS512",
        ),
        (
            json!({"dpop": "yes"}),
            "mcpServers.a.auth.dpop must be true or false",
        ),
    ];
    for (auth, words) in cases {
        assert_eq!(refused(json!({ "auth": auth })), words);
    }
}

#[test]
fn secrets_are_read_when_used_and_never_quoted() {
    let dir = std::env::temp_dir().join(format!("toolnexus-secret-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("token");
    std::fs::write(&file, "  eyJ.secret.sig\n").unwrap();
    let path = file.display().to_string();
    assert_eq!(
        Secret::File(path.clone()).read("the workload token"),
        Ok("eyJ.secret.sig".to_string())
    );
    std::fs::write(&file, "").unwrap();
    assert_eq!(
        Secret::File(path.clone()).read("the workload token"),
        Err(format!("the workload token file {path} is empty"))
    );
    std::fs::remove_file(&file).unwrap();
    assert_eq!(
        Secret::File(path.clone()).read("the workload token"),
        Err(format!("the workload token file {path} is missing"))
    );
    assert_eq!(
        Secret::Env("TOOLNEXUS_TEST_UNSET_VAR".into()).read("the ID token"),
        Err("the ID token variable TOOLNEXUS_TEST_UNSET_VAR is not set".to_string())
    );
    let _ = std::fs::remove_dir_all(dir);
}
