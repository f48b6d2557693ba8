//! The redaction table: one case per pattern, each a line as an agent's
//! screen could show it and what must be left of it.

use super::*;

/// `(pattern, input, expected)`.
const TABLE: &[(&str, &str, &str)] = &[
    (
        "anthropic key",
        "export ANTHROPIC=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx_yz0123456789",
        "export ANTHROPIC=sk-ant-[REDACTED]",
    ),
    (
        "openai project key",
        "key sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34 in use",
        "key sk-proj-[REDACTED] in use",
    ),
    (
        "openai key",
        "using sk-abcdefghijklmnopqrstuvwxyz012345.",
        "using sk-[REDACTED].",
    ),
    (
        "aws access key id",
        "aws_access_key AKIAIOSFODNN7EXAMPLE found",
        "aws_access_key AKIA[REDACTED] found",
    ),
    (
        "aws session key id",
        "(ASIAY34FZKBOKMUTVV7A)",
        "(ASIA[REDACTED])",
    ),
    (
        "github personal token",
        "remote: ghp_1234567890abcdefghijABCDEFGHIJ123456 ok",
        "remote: ghp_[REDACTED] ok",
    ),
    (
        "github oauth token",
        "gho_16C7e42F292c6912E7710c838347Ae178B4a",
        "gho_[REDACTED]",
    ),
    (
        "github fine-grained token",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "github_pat_[REDACTED]",
    ),
    (
        "slack bot token",
        "SLACK xoxb-123456789012-1234567890123-AbCdEfGhIjKl",
        "SLACK xoxb-[REDACTED]",
    ),
    (
        "slack user token",
        "xoxp-1234567890-0987654321-abcdef",
        "xoxp-[REDACTED]",
    ),
    (
        "bearer header",
        "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc' x",
        "curl -H 'Authorization: Bearer [REDACTED]' x",
    ),
    (
        "bearer lower case",
        "auth: bearer abcdefgh12345678",
        "auth: bearer [REDACTED]",
    ),
    (
        "harness admin key",
        "hxk_00112233445566778899aabbccddeeff",
        "hxk_[REDACTED]",
    ),
    (
        "harness agent token",
        "TOWER_API_TOKEN hxa_0123456789abcdef0123456789abcdef",
        "TOWER_API_TOKEN hxa_[REDACTED]",
    ),
    (
        "password assignment",
        "mysql --password=hunter2 -u root",
        "mysql --password=[REDACTED] -u root",
    ),
    (
        "token assignment",
        "GITHUB_TOKEN=abc123def456 make",
        "GITHUB_TOKEN=[REDACTED] make",
    ),
    (
        "secret assignment",
        "client_secret: s3cr3tvalue",
        "client_secret: [REDACTED]",
    ),
    (
        "quoted json secret",
        r#"{"password": "correct horse", "user": "bob"}"#,
        r#"{"password": "[REDACTED]", "user": "bob"}"#,
    ),
    (
        "url query token",
        "GET /cb?code=1&access_token=q1w2e3r4&x=2",
        "GET /cb?code=1&access_token=[REDACTED]&x=2",
    ),
];

#[test]
fn every_pattern_is_redacted() {
    for (name, input, expected) in TABLE {
        assert_eq!(redact(input, &[]), *expected, "pattern: {name}");
    }
}

#[test]
fn ordinary_text_is_untouched() {
    let text = "Should I keep the legacy invoice format?\n\
                ❯ 1. Yes  2. No\n\
                see https://example.com/a?b=c and x == y, a := b, skip-this-step\n\
                desk-lamp task-123 AKIA short ghp_short sk-short";
    assert_eq!(redact(text, &[]), text);
}

#[test]
fn a_key_inside_a_longer_word_is_not_a_word_of_its_own() {
    // `risk-…` contains `sk-` but does not start with it.
    let text = "risk-abcdefghijklmnopqrstuvwxyz0123";
    assert_eq!(redact(text, &[]), text);
}

#[test]
fn a_private_key_block_is_removed_whole() {
    let text = "cat id_rsa\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n\
                QyNTUxOQAAACBb\n-----END OPENSSH PRIVATE KEY-----\n$ ";
    assert_eq!(redact(text, &[]), "cat id_rsa\n[REDACTED]\n$ ");
}

#[test]
fn a_private_key_block_cut_by_the_screen_is_removed_to_its_edge() {
    let begun = "$ cat key.pem\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc";
    assert_eq!(redact(begun, &[]), "$ cat key.pem\n[REDACTED]");
    let ended = "MIIEpAIBAAKCAQEA\nabc\n-----END PRIVATE KEY-----\n$ ls";
    assert_eq!(redact(ended, &[]), "[REDACTED]\n$ ls");
}

#[test]
fn a_public_key_or_certificate_stays() {
    let text = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZI\n-----END PUBLIC KEY-----";
    assert_eq!(redact(text, &[]), text);
}

#[test]
fn the_environment_values_harness_gave_are_removed_wherever_they_stand() {
    let secrets = ["correct-horse-battery", "db-pass-42", "en"];
    let text = "echo $DB => db-pass-42\nurl=postgres://u:correct-horse-battery@h/db lang en";
    assert_eq!(
        redact(text, &secrets),
        "echo $DB => [REDACTED]\nurl=postgres://u:[REDACTED]@h/db lang en"
    );
}

#[test]
fn secret_env_values_keep_out_the_public_ones() {
    let env: std::collections::BTreeMap<String, String> = [
        ("PATH", "/usr/local/bin:/usr/bin"),
        ("TOWER_TASK_TITLE", "Invoice format"),
        ("TOWER_API_TOKEN", "hxa_0123456789abcdef"),
        ("OPENAI_API_KEY", "sk-local-test-key"),
        ("SHORT", "1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut values = secret_env_values(&env);
    values.sort();
    assert_eq!(values, ["hxa_0123456789abcdef", "sk-local-test-key"]);
}

#[test]
fn redaction_is_idempotent() {
    for (name, input, _) in TABLE {
        let once = redact(input, &[]);
        assert_eq!(redact(&once, &[]), once, "pattern: {name}");
    }
}
