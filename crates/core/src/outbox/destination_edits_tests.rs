use super::*;

fn entry(
    alias: Option<&str>,
    gateway: Option<&str>,
    platform: Option<&str>,
    dest: &str,
) -> Destination {
    Destination {
        id: None,
        alias: alias.map(Into::into),
        label: None,
        gateway: gateway.map(Into::into),
        platform: platform.map(Into::into),
        dest: dest.into(),
        scope: None,
    }
}

fn field_of(err: CoreError) -> Option<&'static str> {
    err.field()
}

#[test]
fn one_entry_names_the_bad_field() {
    let cases = [
        (entry(None, None, None, "x"), "alias"),
        (entry(Some("  "), None, None, "x"), "alias"),
        (entry(Some("a"), None, None, " "), "dest"),
        (entry(Some("a"), Some("sms"), None, "x"), "gateway"),
        (entry(Some(&"a".repeat(201)), None, None, "x"), "alias"),
        (
            entry(Some("a"), None, Some(&"p".repeat(65)), "x"),
            "platform",
        ),
        (entry(Some("a"), None, None, &"d".repeat(1025)), "dest"),
        (
            Destination {
                label: Some("l".repeat(201)),
                ..entry(Some("a"), None, None, "x")
            },
            "label",
        ),
        (
            Destination {
                scope: Some("sometimes".into()),
                ..entry(Some("a"), None, None, "x")
            },
            "scope",
        ),
    ];
    for (mut d, field) in cases {
        let err = check_new_destination(&mut d).unwrap_err();
        assert_eq!(field_of(err), Some(field), "{d:?}");
    }
    let mut ok = Destination {
        label: Some(" ".into()),
        scope: Some(" unattended ".into()),
        ..entry(
            Some(" Ops "),
            Some("OpenClaw"),
            Some("Telegram"),
            " telegram:-1 ",
        )
    };
    check_new_destination(&mut ok).unwrap();
    assert_eq!(
        ok,
        Destination {
            scope: Some("unattended".into()),
            ..entry(
                Some("Ops"),
                Some("openclaw"),
                Some("telegram"),
                "telegram:-1"
            )
        }
    );
    // A list written whole may hold entries without an alias (matched by label or dest).
    let mut no_alias = entry(None, None, None, "x");
    check_destination(&mut no_alias).unwrap();
}

#[test]
fn an_alias_is_unique_per_gateway_platform_and_scope() {
    let list = vec![
        entry(
            Some("ops"),
            Some("openclaw"),
            Some("telegram"),
            "telegram:-1",
        ),
        // Same alias under `normalize_name` (quotes, 群, case), same key.
        entry(
            Some("「OPS群」"),
            Some("OpenClaw"),
            Some("Telegram"),
            "telegram:-2",
        ),
    ];
    let err = validate_destinations(list.clone()).unwrap_err();
    assert_eq!(err.field(), Some("alias"));
    assert!(err.to_string().contains("already exists"), "{err}");
    assert_eq!(
        check_unique(&list, 1).unwrap_err().field(),
        Some("alias"),
        "the same rule one entry at a time"
    );
    // Another gateway, platform or scope is another alias; entries without an
    // alias never clash.
    let fine = vec![
        entry(
            Some("ops"),
            Some("openclaw"),
            Some("telegram"),
            "telegram:-1",
        ),
        entry(Some("ops"), None, Some("telegram"), "telegram:-1"),
        entry(Some("ops"), Some("openclaw"), Some("slack"), "C1"),
        Destination {
            scope: Some("unattended".into()),
            ..entry(
                Some("ops"),
                Some("openclaw"),
                Some("telegram"),
                "telegram:-1",
            )
        },
        entry(None, None, None, "x"),
        entry(None, None, None, "y"),
    ];
    assert_eq!(validate_destinations(fine).unwrap().len(), 6);
    // `work` is the default scope: an explicit `work` is the same key.
    let same = vec![
        entry(Some("ops"), None, None, "a"),
        Destination {
            scope: Some("work".into()),
            ..entry(Some("ops"), None, None, "b")
        },
    ];
    assert!(validate_destinations(same).is_err());
    // No id twice in a whole list.
    let twice = vec![
        Destination {
            id: Some("c1".into()),
            ..entry(Some("a"), None, None, "x")
        },
        Destination {
            id: Some("c1".into()),
            ..entry(Some("b"), None, None, "y")
        },
    ];
    assert_eq!(
        validate_destinations(twice).unwrap_err().field(),
        Some("id")
    );
}

#[test]
fn entries_are_addressed_by_id_else_position() {
    let list = vec![
        entry(Some("a"), None, None, "x"),
        Destination {
            id: Some("cabc".into()),
            ..entry(Some("b"), None, None, "y")
        },
        entry(Some("c"), None, None, "z"),
    ];
    assert_eq!(position(&list, "0"), Some(0));
    assert_eq!(position(&list, "cabc"), Some(1));
    assert_eq!(
        position(&list, "1"),
        None,
        "an entry with an id has no position"
    );
    assert_eq!(position(&list, "2"), Some(2));
    assert_eq!(position(&list, "cnope"), None);
}

#[test]
fn a_cached_hit_replacing_an_entry_keeps_its_id() {
    let mut list = vec![Destination {
        id: Some("cold".into()),
        ..entry(
            Some("ops"),
            Some("openclaw"),
            Some("telegram"),
            "telegram:-1",
        )
    }];
    upsert(
        &mut list,
        Destination {
            id: Some("cnew".into()),
            ..entry(
                Some("Ops"),
                Some("openclaw"),
                Some("telegram"),
                "telegram:-2",
            )
        },
    );
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].id.as_deref(), Some("cold"));
    assert_eq!(list[0].dest, "telegram:-2");
    upsert(
        &mut list,
        Destination {
            id: Some("cnew".into()),
            ..entry(
                Some("dev"),
                Some("openclaw"),
                Some("telegram"),
                "telegram:-3",
            )
        },
    );
    assert_eq!(list[1].id.as_deref(), Some("cnew"));
}
