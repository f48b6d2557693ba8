//! A question's evidence and receipt on the web (docs/evidence.md): the
//! browser-side copy of `harness_core::receipt::QuestionReceipt`, said in
//! the page's language on the server (`receipt_words`, server-only texts:
//! the browser's module carries no phrase of it), and the server function
//! over the core's `Reports::receipt` (the same call as
//! `GET /api/messages/{id}/receipt`).

use harness_types::{StepKind, StepStatus};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

/// One step of the timeline, in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepData {
    pub kind: StepKind,
    /// How far it got.
    pub status: StepStatus,
    /// The step and what its row holds, in the page's language.
    pub text: String,
    /// Unix milliseconds.
    pub at_ms: Option<i64>,
    /// The screen after the answer (redacted).
    pub screen: Option<String>,
}

/// The question's screen and timeline, in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptData {
    /// "The agent's screen when it asked".
    pub screen_title: String,
    /// The screen when it asked (redacted), or the words for none.
    pub screen: Option<String>,
    pub no_screen: String,
    /// "Receipt".
    pub title: String,
    pub steps: Vec<StepData>,
    /// "Stalled at: pushed", when a step stalled or failed.
    pub stalled: Option<String>,
    /// "The agent's screen after the answer".
    pub after_title: String,
}

/// The receipt of the question `id`.
#[server(prefix = "/sfn", endpoint = "question_receipt")]
pub async fn question_receipt(id: String) -> Result<ReceiptData, ServerFnError> {
    let h = ssr::harness()?;
    let r = h.reports().receipt(&id).await.map_err(ssr::to_sfn)?;
    Ok(super::receipt_words::receipt(
        crate::i18n::Locale::detect(),
        r,
        chrono::Utc::now(),
    ))
}
