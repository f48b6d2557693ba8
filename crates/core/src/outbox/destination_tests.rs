use std::sync::Mutex;

use super::*;
use crate::outbox::destination_edits::validate_destinations;

/// Answers the directory CLI with a fixed output and records the argv.
struct Fake {
    out: Result<String, String>,
    calls: Mutex<Vec<Vec<String>>>,
}

impl Fake {
    fn new(out: Result<&str, &str>) -> Self {
        Self {
            out: out.map(str::to_string).map_err(str::to_string),
            calls: Mutex::new(Vec::new()),
        }
    }
    fn calls(&self) -> usize {
        self.calls.lock().map(|c| c.len()).unwrap_or(0)
    }
}

#[async_trait]
impl DirectoryLookup for Fake {
    async fn run_directory(&self, argv: Vec<String>) -> Result<String, String> {
        if let Ok(mut c) = self.calls.lock() {
            c.push(argv);
        }
        self.out.clone()
    }
}

fn req<'a>(
    gateway: &'a str,
    platform: Option<&'a str>,
    scope: &'a str,
    to: Option<&'a str>,
) -> Request<'a> {
    Request {
        gateway,
        platform,
        scope,
        requested: to,
    }
}

fn dest(
    alias: &str,
    label: Option<&str>,
    gateway: Option<&str>,
    platform: Option<&str>,
    d: &str,
    scope: Option<&str>,
) -> Destination {
    Destination {
        id: None,
        alias: Some(alias.into()),
        label: label.map(Into::into),
        gateway: gateway.map(Into::into),
        platform: platform.map(Into::into),
        dest: d.into(),
        scope: scope.map(Into::into),
    }
}

fn block<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map(|rt| rt.block_on(f))
        .unwrap()
}

#[test]
fn normalize_name_strips_quotes_group_suffix_and_case() {
    assert_eq!(normalize_name("  「Ops 群」 "), "ops");
    assert_eq!(normalize_name("\"Team-A\""), "team-a");
    assert_eq!(normalize_name("'Ops群群'"), "ops群");
    assert_eq!(normalize_name("Dev"), "dev");
}

#[test]
fn id_like_and_scheme() {
    for id in [
        "oc_abc",
        "ou_1",
        "on_x",
        "C01234567",
        "G12345678X",
        "-1001234567",
        "123456",
        "120363abc.def-1@g.us",
    ] {
        assert!(is_id_like(id), "{id}");
    }
    for name in ["ops", "C0123", "12345", "Dev team", "x@g.us!"] {
        assert!(!is_id_like(name), "{name}");
    }
    assert!(has_scheme("feishu:oc_1") && has_scheme("tg-2:x"));
    assert!(!has_scheme("Feishu:oc_1") && !has_scheme("oc_1") && !has_scheme("1a:b"));
}

#[test]
fn normalize_platform_dest_rules() {
    assert_eq!(
        normalize_platform_dest("slack:C1", Some("telegram")),
        "slack:C1"
    );
    assert_eq!(
        normalize_platform_dest("oc_9", Some("Feishu")),
        "feishu:oc_9"
    );
    assert_eq!(
        normalize_platform_dest("wxid_1", Some("wechat")),
        "weixin:wxid_1"
    );
    assert_eq!(
        normalize_platform_dest("-1001234567", Some("telegram")),
        "telegram:-1001234567"
    );
    assert_eq!(
        normalize_platform_dest("C01234567", Some("slack")),
        "slack:C01234567"
    );
    assert_eq!(
        normalize_platform_dest("Ops room", Some("slack")),
        "Ops room"
    );
    assert_eq!(normalize_platform_dest("-1001234567", None), "-1001234567");
}

#[test]
fn alias_rules_gateway_platform_scope_and_ambiguity() {
    let list = vec![
        dest(
            "ops",
            Some("Ops Room"),
            Some("openclaw"),
            Some("telegram"),
            "telegram:-100",
            None,
        ),
        dest("ops", None, Some("hermes"), None, "feishu:oc_h", None),
        dest(
            "night",
            None,
            None,
            None,
            "telegram:-200",
            Some("unattended"),
        ),
        dest("dup", None, None, None, "x:1", None),
        dest("dup", None, None, None, "x:2", None),
        dest("same", None, None, None, "x:3", None),
        dest("same", Some("Same"), None, None, "x:3", None),
    ];
    let oc = req("openclaw", Some("telegram"), "work", None);
    assert_eq!(
        alias_match(&list, &oc, "「OPS群」").as_deref(),
        Some("telegram:-100")
    );
    assert_eq!(
        alias_match(&list, &oc, "ops room").as_deref(),
        Some("telegram:-100")
    );
    assert_eq!(
        alias_match(&list, &oc, "telegram:-100").as_deref(),
        Some("telegram:-100")
    );
    // Another platform: the entry's platform does not match.
    assert_eq!(
        alias_match(&list, &req("openclaw", Some("slack"), "work", None), "ops"),
        None
    );
    // The gateway decides between two "ops".
    assert_eq!(
        alias_match(&list, &req("hermes", Some("feishu"), "work", None), "ops").as_deref(),
        Some("feishu:oc_h")
    );
    // Scope: a missing scope is work.
    assert_eq!(alias_match(&list, &oc, "night"), None);
    assert_eq!(
        alias_match(
            &list,
            &req("openclaw", Some("telegram"), "unattended", None),
            "night"
        )
        .as_deref(),
        Some("telegram:-200")
    );
    assert_eq!(alias_match(&list, &oc, "dup"), None, "two dests: ambiguous");
    assert_eq!(alias_match(&list, &oc, "same").as_deref(), Some("x:3"));
}

#[test]
fn hermes_directory_file_match() {
    let dir = serde_json::json!({"platforms": {"Feishu": [
        {"id": "oc_a", "name": "Ops", "type": "group"},
        {"id": "oc_b", "name": "Dev", "type": "group"},
        {"id": "oc_c", "name": "Dev", "type": "group"}
    ]}});
    assert_eq!(
        hermes_directory_match(&dir, "feishu", "ops群").as_deref(),
        Some("feishu:oc_a")
    );
    assert_eq!(
        hermes_directory_match(&dir, "feishu", "oc_b").as_deref(),
        Some("feishu:oc_b")
    );
    assert_eq!(
        hermes_directory_match(&dir, "feishu", "dev"),
        None,
        "two ids: ambiguous"
    );
    assert_eq!(hermes_directory_match(&dir, "slack", "ops"), None);
}

#[test]
fn openclaw_directory_output_match() {
    let out = "[info] loading\n{\"groups\": [{\"id\": \"-1001\", \"name\": \"Ops\"}, {\"id\": \"-1002\", \"name\": \"Ops Team\"}]}";
    assert_eq!(
        openclaw_directory_match(out, "ops"),
        Some(("-1001".into(), Some("Ops".into())))
    );
    assert_eq!(
        openclaw_directory_match("[{\"id\":\"C1\",\"name\":\"a\"}]", "C1")
            .map(|m| m.0)
            .as_deref(),
        Some("C1")
    );
    assert_eq!(openclaw_directory_match("not json", "ops"), None);
    assert!(
        openclaw_lookup_applies("Ops")
            && !openclaw_lookup_applies("telegram:1")
            && !openclaw_lookup_applies("-1001234567")
    );
    assert_eq!(
        openclaw_directory_argv("telegram", "Ops")[..3],
        ["directory", "groups", "list"]
    );
}

#[test]
fn resolve_home_route_and_empty_destination() {
    let none = Fake::new(Err("unused"));
    let h = HermesDirectory::default();
    let r = block(resolve(
        &req("hermes", Some("wechat"), "unattended", Some("someone")),
        &[],
        &h,
        &none,
    ))
    .unwrap();
    assert_eq!((r.dest, r.via), (None, Via::HomeRoute));
    let r = block(resolve(
        &req("hermes", Some("Telegram"), "unattended", None),
        &[],
        &h,
        &none,
    ))
    .unwrap();
    assert_eq!(r.dest.as_deref(), Some("telegram"));
    let e = block(resolve(
        &req("openclaw", Some("telegram"), "work", Some("  ")),
        &[],
        &h,
        &none,
    ))
    .unwrap_err();
    assert!(e.contains("Work messages require a destination"), "{e}");
    let e = block(resolve(
        &req("openclaw", Some("telegram"), "unattended", None),
        &[],
        &h,
        &none,
    ))
    .unwrap_err();
    assert_eq!(e, "Destination is required");
    assert_eq!(none.calls(), 0);
}

#[test]
fn resolve_alias_wins_before_directories() {
    let fake = Fake::new(Ok("[{\"id\":\"-999\",\"name\":\"ops\"}]"));
    let list = vec![dest("ops", None, None, None, "telegram:-100", None)];
    let r = block(resolve(
        &req("openclaw", Some("telegram"), "work", Some("Ops")),
        &list,
        &HermesDirectory::default(),
        &fake,
    ))
    .unwrap();
    assert_eq!(
        (r.dest.as_deref(), r.via),
        (Some("telegram:-100"), Via::Alias)
    );
    assert_eq!(fake.calls(), 0, "no directory lookup for an alias");
}

#[test]
fn resolve_hermes_directory_file() {
    let home = std::env::temp_dir().join(format!("harness-dest-{}", std::process::id()));
    let path = hermes_directory_path(&home, "work");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        r#"{"platforms":{"feishu":[{"id":"oc_z","name":"Ops","type":"group"}]}}"#,
    )
    .unwrap();
    let none = Fake::new(Err("unused"));
    let with = HermesDirectory {
        home: Some(home.clone()),
        profile: Some("work".into()),
    };
    let r = block(resolve(
        &req("hermes", Some("feishu"), "work", Some("ops")),
        &[],
        &with,
        &none,
    ))
    .unwrap();
    assert_eq!(
        (r.dest.as_deref(), r.via),
        (Some("feishu:oc_z"), Via::HermesDirectory)
    );
    // No profile: the file is not read; the raw name falls through.
    let without = HermesDirectory {
        home: Some(home.clone()),
        profile: None,
    };
    let r = block(resolve(
        &req("hermes", Some("feishu"), "work", Some("ops")),
        &[],
        &without,
        &none,
    ))
    .unwrap();
    assert_eq!((r.dest.as_deref(), r.via), (Some("ops"), Via::Fallback));
    let _ = std::fs::remove_dir_all(home);
}

#[test]
fn resolve_openclaw_directory_caches_and_falls_back() {
    let fake = Fake::new(Ok("{\"groups\":[{\"id\":\"-1001234\",\"name\":\"Ops\"}]}"));
    let h = HermesDirectory::default();
    let r = block(resolve(
        &req("openclaw", Some("telegram"), "work", Some("ops")),
        &[],
        &h,
        &fake,
    ))
    .unwrap();
    assert_eq!(
        (r.dest.as_deref(), r.via),
        (Some("telegram:-1001234"), Via::OpenClawDirectory)
    );
    let cache = r.cache.unwrap();
    assert_eq!(cache.alias.as_deref(), Some("ops"));
    assert_eq!(cache.label.as_deref(), Some("Ops"));
    assert_eq!(cache.dest, "telegram:-1001234");
    // With the cached entry the next send is an alias hit (no CLI).
    let mut list = Vec::new();
    upsert(&mut list, cache.clone());
    upsert(&mut list, cache);
    assert_eq!(list.len(), 1, "upsert by gateway+platform+scope+alias");
    let r = block(resolve(
        &req("openclaw", Some("telegram"), "work", Some("Ops")),
        &list,
        &h,
        &fake,
    ))
    .unwrap();
    assert_eq!(r.via, Via::Alias);
    assert_eq!(fake.calls(), 1);
    // id-like and scheme: values skip the directory.
    let r = block(resolve(
        &req("openclaw", Some("telegram"), "work", Some("-1009876543")),
        &[],
        &h,
        &fake,
    ))
    .unwrap();
    assert_eq!(
        (r.dest.as_deref(), r.via),
        (Some("telegram:-1009876543"), Via::Fallback)
    );
    assert_eq!(fake.calls(), 1);
    // A failing directory: the raw value.
    let broken = Fake::new(Err("exit 1"));
    let r = block(resolve(
        &req("openclaw", Some("telegram"), "work", Some("Ops")),
        &[],
        &h,
        &broken,
    ))
    .unwrap();
    assert_eq!((r.dest.as_deref(), r.via), (Some("Ops"), Via::Fallback));
}

#[test]
fn destinations_are_validated() {
    let ok = validate_destinations(vec![dest(
        " ops ",
        Some(" "),
        Some("OpenClaw"),
        Some("Telegram"),
        " telegram:-1 ",
        None,
    )])
    .unwrap();
    assert_eq!(ok[0].alias.as_deref(), Some("ops"));
    assert_eq!(ok[0].label, None);
    assert_eq!(ok[0].gateway.as_deref(), Some("openclaw"));
    assert_eq!(ok[0].dest, "telegram:-1");
    let err =
        validate_destinations(vec![dest("a", None, Some("sms"), None, "x", None)]).unwrap_err();
    assert!(err.to_string().contains("gateway"), "{err}");
    let err = validate_destinations(vec![dest("a", None, None, None, " ", None)]).unwrap_err();
    assert!(err.to_string().contains("dest"), "{err}");
}
