//! The receipt in the morning report (docs/morning-report.md): over
//! the seeded night of `morning_report`, the question answered from chat
//! whose answer was typed into its terminal carries its receipt — in the
//! report's JSON (`receipt`: by whom, where, how fast, typed once, where
//! it stalled) and its text, in English and Chinese; the report sent to a
//! `zh` chat says it in Chinese, and a reply to that report is answered
//! back in Chinese.

use chrono::{Duration, Utc};
use harness_core::{
    auth::Identity,
    deliveries::DeliveryState,
    ladder::Lang,
    report::{NoWork, text::in_lang},
    store::ReportChannel,
};

use crate::morning_report::{night, reply, sent_to_chat_in, t};

const ASK: &str = "caskdb000000000000000";

#[tokio::test]
async fn an_answered_question_shows_its_receipt_in_the_json_and_the_chat_text() {
    let n = night().await;
    // Its answer typed into the terminal once, a minute after it came.
    let d = n
        .store
        .delivery_for_message(ASK)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("the answer of {ASK} owes a delivery to its terminal"));
    let owner = "node-a:typing";
    let now = Utc::now();
    let claimed = n
        .store
        .claim_deliveries(owner, "node-a", true, now, now + Duration::minutes(5), 10)
        .await
        .unwrap();
    assert!(claimed.rows.iter().any(|r| r.id == d.id), "{claimed:?}");
    n.store
        .advance_delivery(
            &d.id,
            owner,
            DeliveryState::Writing,
            now + Duration::minutes(5),
            t(20, 43),
        )
        .await
        .unwrap()
        .unwrap();
    n.store
        .complete_delivery(&d.id, owner, t(20, 43))
        .await
        .unwrap()
        .unwrap();

    let report =
        n.h.reports()
            .report_at(
                &Identity::Admin,
                Some(t(19, 0)),
                ReportChannel::Api,
                &NoWork,
                t(7, 0),
            )
            .await
            .unwrap();
    let json = serde_json::to_value(&report).unwrap();
    let asked: Vec<&serde_json::Value> = json["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["asked"].as_array().unwrap().iter())
        .collect();
    let answered = asked
        .iter()
        .find(|a| a["id"] == ASK)
        .unwrap_or_else(|| panic!("{ASK} in {json}"));
    let receipt = &answered["receipt"];
    assert_eq!(receipt["by"], "person", "{receipt}");
    assert_eq!(receipt["surface"], "chat", "{receipt}");
    assert_eq!(receipt["afterMinutes"], 12, "{receipt}");
    assert_eq!(receipt["typed"], "done", "{receipt}");
    assert_eq!(receipt["deliveryId"], d.id.as_str(), "{receipt}");
    // Nothing seen of the agent since: it stalled there, and says so.
    assert_eq!(receipt["resumed"], "stalled", "{receipt}");
    assert_eq!(receipt["stalled"]["step"], "resumed", "{receipt}");
    let line = "receipt: answered in the chat after 12 min · typed once · stalled: typed 10 h 17 \
                min ago, the agent has not been seen going on since";
    assert_eq!(receipt["text"], line, "{receipt}");
    assert!(
        report.text.lines().any(|l| l == format!("    {line}")),
        "{}",
        report.text
    );
    // Only answered questions carry one: the open ones and the approval not.
    let with: Vec<&str> = asked
        .iter()
        .filter(|a| !a["receipt"].is_null())
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert_eq!(with, [ASK]);

    // In Chinese: the same receipt, said in Chinese.
    let zh = in_lang(report, Lang::Zh);
    let line_zh = "回执：在聊天中回答，用时 12 分钟 · 已输入终端一次 · 卡住：输入已过 10 小时 17 \
                   分钟，此后未见智能体继续";
    assert!(
        zh.text.lines().any(|l| l == format!("    {line_zh}")),
        "{}",
        zh.text
    );

    // Sent to a zh chat: the chat text carries it in Chinese.
    let sent = sent_to_chat_in(&n, Some("zh")).await;
    let chat: String = sent.parts.iter().map(|p| p.message.as_str()).collect();
    assert!(
        chat.contains("    回执：在聊天中回答，用时 12 分钟 · 已输入终端一次 · 卡住：输入已过 "),
        "{chat}"
    );
    assert!(!chat.contains("receipt:"), "{chat}");
    // A reply to it is answered back in Chinese.
    let out =
        n.h.gateway()
            .route_gateway_message(&reply("in-zh", "pm-0", "99 B"))
            .await
            .unwrap();
    assert_eq!(out["mode"], "report_answered", "{out}");
    assert_eq!(
        out["acknowledgement"], "未采纳（1）：\n99：本报告中没有第 99 项",
        "{out}"
    );
    let out =
        n.h.gateway()
            .route_gateway_message(&reply("in-zh2", "pm-0", "hello"))
            .await
            .unwrap();
    assert_eq!(out["mode"], "report_reply_malformed", "{out}");
    assert!(
        out["acknowledgement"]
            .as_str()
            .unwrap_or_default()
            .starts_with("没有回答任何一项：“hello”没有以项目编号开头"),
        "{out}"
    );
}
