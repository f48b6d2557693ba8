//! State shared by the table and the dialog, kept across view changes:
//! drafts, the result line, the open dialog and the three actions.

use std::collections::HashMap;

use leptos::prelude::*;

use crate::{
    api::{DismissMessage, IgnoreAsk, ReplyAsk, ReplyResult},
    components::{Notice, error_text},
    i18n::{Locale, use_locale},
};

#[derive(Clone, Copy)]
pub struct Shared {
    /// Reply drafts by message id: (task id, text).
    pub drafts: RwSignal<HashMap<String, (String, String)>>,
    pub notice: RwSignal<Option<Notice>>,
    /// Message id of the row whose dialog is open.
    pub selected: RwSignal<Option<String>>,
    /// Focus the reply box when the dialog opens ("Handle").
    pub focus_reply: RwSignal<bool>,
    /// Moves after every finished action: the table reloads.
    pub changed: RwSignal<u64>,
    /// The person reached for the table (a pointer down or the focus in
    /// it): the dialog body's chunk is fetched then, not on every load.
    pub intent: RwSignal<bool>,
    pub reply: ServerAction<ReplyAsk>,
    pub ignore: ServerAction<IgnoreAsk>,
    pub dismiss: ServerAction<DismissMessage>,
}

/// The notice for a failed action, with the server's error text.
fn failure(l: Locale, e: &ServerFnError) -> Notice {
    Notice {
        ok: false,
        text: format!("{} {}", l.t("result.failed"), error_text(e)),
    }
}

fn success(text: String) -> Notice {
    Notice { ok: true, text }
}

pub fn reply_text(l: Locale, r: &ReplyResult) -> String {
    if r.deduped {
        return l.t("result.deduped").to_string();
    }
    use harness_types::ResumeMode;
    l.t(match r.mode {
        ResumeMode::Continued => "result.resumed",
        ResumeMode::AlreadyRunning => "result.already_running",
        ResumeMode::NotRunning | ResumeMode::Started => "result.not_running",
    })
    .to_string()
}

impl Shared {
    pub fn provide() -> Self {
        let l = use_locale();
        let shared = Self {
            drafts: RwSignal::new(HashMap::new()),
            notice: RwSignal::new(None),
            selected: RwSignal::new(None),
            focus_reply: RwSignal::new(false),
            changed: RwSignal::new(0),
            intent: RwSignal::new(false),
            reply: ServerAction::new(),
            ignore: ServerAction::new(),
            dismiss: ServerAction::new(),
        };
        provide_context(shared);
        let s = shared;
        let finish = move |notice: Notice, close: bool| {
            if close {
                s.selected.set(None);
            }
            s.notice.set(Some(notice));
            s.changed.update(|c| *c += 1);
        };
        Effect::new(move |_| {
            let Some(result) = s.reply.value().get() else {
                return;
            };
            match result {
                Ok(r) => {
                    s.drafts
                        .update(|d| d.retain(|_, (task, _)| *task != r.task_id));
                    finish(
                        Notice {
                            ok: true,
                            text: reply_text(l, &r),
                        },
                        true,
                    );
                }
                Err(e) => finish(failure(l, &e), false),
            }
        });
        Effect::new(move |_| {
            let Some(result) = s.ignore.value().get() else {
                return;
            };
            match result {
                Ok(_) => finish(success(l.t("result.ignored").into()), true),
                Err(e) => finish(failure(l, &e), false),
            }
        });
        Effect::new(move |_| {
            let Some(result) = s.dismiss.value().get() else {
                return;
            };
            match result {
                Ok(_) => finish(success(l.t("result.dismissed").into()), true),
                Err(e) => finish(failure(l, &e), false),
            }
        });
        shared
    }

    /// Note that the person reached for the table (once).
    pub fn reach(&self) {
        if !self.intent.get_untracked() {
            self.intent.set(true);
        }
    }

    pub fn open(&self, id: &str, focus_reply: bool) {
        self.focus_reply.set(focus_reply);
        self.selected.set(Some(id.to_string()));
    }

    pub fn draft(&self, id: &str) -> String {
        self.drafts
            .with_untracked(|d| d.get(id).map(|(_, t)| t.clone()))
            .unwrap_or_default()
    }

    pub fn set_draft(&self, id: &str, task_id: &str, text: String) {
        self.drafts.update(|d| {
            d.insert(id.to_string(), (task_id.to_string(), text));
        });
    }
}
