//! A list stored under one setting (the notify targets, the destination
//! aliases), edited one entry at a time: a compare-and-set on the stored
//! list, retried when another writer changed it in between, so concurrent
//! edits of different entries all stand.

use crate::settings::Settings;
use chrono::Utc;
use serde::{Serialize, de::DeserializeOwned};

use crate::{CoreError, CoreResult, events::HarnessEvent};

/// Attempts of one edit. Each failed attempt means another edit stood in
/// between, so this bounds only a sustained stream of writers (a burst of a
/// few dozen concurrent edits all get through).
const ATTEMPTS: usize = 64;

/// Entries that carry an id; one without (a list written whole by an older
/// client) is addressed by its position.
pub trait ListEntry {
    fn entry_id(&self) -> Option<&str>;
}

/// The index of the entry `id` names: its id, else its position.
pub fn position<T: ListEntry>(list: &[T], id: &str) -> Option<usize> {
    list.iter()
        .enumerate()
        .position(|(i, e)| match e.entry_id() {
            Some(own) => own == id,
            None => i.to_string() == id,
        })
}

impl Settings<'_> {
    /// Read-modify-write of the list under `key`. `edit` changes the list
    /// and answers what it changed, or `None` to leave it as it is (nothing
    /// is written); `check` runs on the edited list before the write. An
    /// unreadable stored value reads as empty (and is replaced). `what`
    /// names the list in the conflict error.
    pub(crate) async fn edit_setting_list<T, R, F>(
        &self,
        key: &str,
        what: &str,
        check: impl Fn(&[T]) -> CoreResult<()>,
        mut edit: F,
    ) -> CoreResult<Option<R>>
    where
        T: Serialize + DeserializeOwned,
        F: FnMut(&mut Vec<T>) -> CoreResult<Option<R>>,
    {
        for _ in 0..ATTEMPTS {
            let stored = self.h.store().get_setting(key).await?;
            let mut list: Vec<T> = match stored.clone() {
                None => Vec::new(),
                Some(value) => serde_json::from_value(value).unwrap_or_else(|err| {
                    tracing::warn!(%err, key, "a stored list is unreadable; replacing it");
                    Vec::new()
                }),
            };
            let Some(changed) = edit(&mut list)? else {
                return Ok(None);
            };
            check(&list)?;
            let value = serde_json::to_value(&list)
                .map_err(|e| CoreError::invalid_body(format!("{what}: {e}")))?;
            if self
                .h
                .store()
                .replace_setting(key, stored.as_ref(), &value, Utc::now())
                .await?
            {
                self.h
                    .publish(HarnessEvent::SettingChanged { key: key.into() });
                return Ok(Some(changed));
            }
            tokio::task::yield_now().await;
        }
        Err(CoreError::Conflict(format!(
            "the {what} keep changing; try again"
        )))
    }
}
