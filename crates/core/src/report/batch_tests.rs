use std::collections::BTreeMap;

use serde_json::json;

use super::*;

fn choices(labels: &[&str], multi: bool) -> Choices {
    serde_json::from_value(json!({
        "options": labels.iter().map(|l| json!({"label": l})).collect::<Vec<_>>(),
        "multiSelect": multi,
        "default": null,
        "deadlineAt": null,
        "urgency": "normal",
    }))
    .unwrap()
}

fn report() -> BTreeMap<u32, Item> {
    BTreeMap::from([
        (
            1,
            Item::Question {
                choices: Some(choices(&["A", "B", "Later"], false)),
            },
        ),
        (2, Item::Approval),
        (3, Item::Approval),
        (4, Item::Question { choices: None }),
        (5, Item::Agent),
        (
            6,
            Item::Question {
                choices: Some(choices(&["Postgres", "SQLite", "Both"], true)),
            },
        ),
    ])
}

fn answers(reply: &str) -> Vec<(u32, Result<Answer, Refusal>)> {
    plan(&report(), &parse(reply).unwrap())
}

#[test]
fn the_issues_example_on_one_line() {
    let got = answers("1 B · 2 approve · 3 deny: not on Friday · 4 later");
    assert_eq!(
        got,
        [
            (
                1,
                Ok(Answer::Options {
                    picked: vec![1],
                    text: "B".into()
                })
            ),
            (2, Ok(Answer::Approve)),
            (
                3,
                Ok(Answer::Deny {
                    reason: Some("not on Friday".into())
                })
            ),
            (4, Ok(Answer::Later)),
        ]
    );
}

#[test]
fn one_item_per_line_with_the_usual_number_forms() {
    let got = answers("#1. 2\r\n2) yes\n\n  5 restart \n6 1, 3\n4: keep the legacy format");
    assert_eq!(got.len(), 5, "{got:?}");
    assert_eq!(
        got[0],
        (
            1,
            Ok(Answer::Options {
                picked: vec![1],
                text: "B".into()
            })
        )
    );
    assert_eq!(got[1], (2, Ok(Answer::Approve)));
    assert_eq!(got[2], (5, Ok(Answer::Resume)));
    assert_eq!(
        got[3],
        (
            6,
            Ok(Answer::Options {
                picked: vec![0, 2],
                text: "Postgres, Both".into()
            })
        )
    );
    assert_eq!(
        got[4],
        (4, Ok(Answer::Text("keep the legacy format".into())))
    );
}

#[test]
fn free_text_after_a_colon_is_never_an_option_or_a_keyword() {
    let parts = parse("1: B · 4 : later").unwrap();
    assert!(parts.iter().all(|p| p.free_text));
    let got = plan(&report(), &parts);
    assert_eq!(got[0], (1, Ok(Answer::Text("B".into()))));
    assert_eq!(got[1], (4, Ok(Answer::Text("later".into()))));
}

#[test]
fn an_option_labelled_like_a_keyword_is_the_option() {
    let got = answers("1 later · 4 later");
    assert_eq!(
        got[0],
        (
            1,
            Ok(Answer::Options {
                picked: vec![2],
                text: "Later".into()
            })
        )
    );
    assert_eq!(got[1], (4, Ok(Answer::Later)));
}

#[test]
fn each_item_stands_alone_with_its_reason() {
    let got = answers("1 C · 2 maybe · 9 approve · 5 delete it · 3 · 4 ok");
    assert!(matches!(
        &got[0],
        (1, Err(Refusal::NotUnderstood { text, .. })) if text == "C"
    ));
    assert!(matches!(&got[1], (2, Err(Refusal::NotUnderstood { .. }))));
    assert_eq!(got[2], (9, Err(Refusal::UnknownNumber(9))));
    assert!(matches!(&got[3], (5, Err(Refusal::NotUnderstood { .. }))));
    assert_eq!(got[4], (3, Err(Refusal::NoAnswer(3))));
    assert_eq!(got[5], (4, Ok(Answer::Text("ok".into()))));
    assert_eq!(
        got[1].1.clone().unwrap_err().to_string(),
        "2: “maybe” is not approve, or deny with a reason (deny: why)"
    );
}

#[test]
fn a_number_given_twice_is_ambiguous_and_neither_is_applied() {
    let got = answers("2 approve · 1 A · 2 deny");
    assert_eq!(got[0], (2, Err(Refusal::Ambiguous(2))));
    assert!(got[1].1.is_ok());
    assert_eq!(got.len(), 2);
}

#[test]
fn a_malformed_reply_is_refused_whole() {
    assert_eq!(parse("  \n · "), Err(Malformed::Empty));
    assert_eq!(
        parse("1 B · and thanks!"),
        Err(Malformed::NotNumbered("and thanks!".into()))
    );
    assert!(matches!(parse("12abc"), Err(Malformed::NotNumbered(_))));
    assert!(matches!(parse("123456 A"), Err(Malformed::NotNumbered(_))));
    let long = format!("x{}", "y".repeat(100));
    match parse(&long) {
        Err(Malformed::NotNumbered(shown)) => assert_eq!(shown.chars().count(), 60),
        other => panic!("{other:?}"),
    }
}

#[test]
fn approvals_deny_with_and_without_a_reason_and_agents_stop() {
    let got = answers("2 no · 3 Deny - touches prod · 5 STOP");
    assert_eq!(got[0], (2, Ok(Answer::Deny { reason: None })));
    assert_eq!(
        got[1],
        (
            3,
            Ok(Answer::Deny {
                reason: Some("touches prod".into())
            })
        )
    );
    assert_eq!(got[2], (5, Ok(Answer::Stop)));
}
