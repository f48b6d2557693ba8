//! The alias list `harness.destinations` (docs/tower-messaging.md §6.2) edited:
//! whole (the reference's `PUT`), one entry at a time, and a directory hit
//! remembered by the sender. The per-entry edits and the cache write are a
//! compare-and-set on the stored list (like the notify targets), so two
//! concurrent edits of different entries, or an edit during a send that
//! caches a directory hit, all stand. Every rule of an entry lives here,
//! each error naming its field (the settings form shows it by that input).

use std::collections::HashSet;

use chrono::Utc;

use super::destination::{DESTINATIONS_KEY, Destination, MAX_DESTINATIONS, alias_key, upsert};
use crate::outbox::Outbox;
use crate::{
    CoreError, CoreResult,
    events::HarnessEvent,
    ids,
    setting_lists::{ListEntry, position},
};

impl ListEntry for Destination {
    fn entry_id(&self) -> Option<&str> {
        self.id.as_deref()
    }
}

/// The longest alias (the name a send's `to` uses).
pub const MAX_ALIAS_CHARS: usize = 200;
/// The longest label of an entry.
pub const MAX_LABEL_CHARS: usize = 200;
/// The longest platform name of an entry.
pub const MAX_PLATFORM_CHARS: usize = 64;

fn clean(v: &mut Option<String>, field: &'static str, max: usize) -> CoreResult<()> {
    *v = v
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    if v.as_ref().is_some_and(|s| s.chars().count() > max) {
        return Err(CoreError::invalid(
            field,
            format!("{field} too long (at most {max} characters)"),
        ));
    }
    Ok(())
}

/// Tidy one entry (blank optional fields dropped, gateway and platform
/// lower-cased) and check it: a known gateway (or none: any) and scope
/// (none means `work`), a destination, and the lengths.
pub fn check_destination(d: &mut Destination) -> CoreResult<()> {
    clean(&mut d.alias, "alias", MAX_ALIAS_CHARS)?;
    clean(&mut d.label, "label", MAX_LABEL_CHARS)?;
    clean(&mut d.gateway, "gateway", 32)?;
    clean(&mut d.platform, "platform", MAX_PLATFORM_CHARS)?;
    clean(&mut d.scope, "scope", 20)?;
    d.gateway = d.gateway.take().map(|g| g.to_ascii_lowercase());
    d.platform = d.platform.take().map(|p| p.to_ascii_lowercase());
    if d.gateway
        .as_deref()
        .is_some_and(|g| g != "hermes" && g != "openclaw")
    {
        return Err(CoreError::invalid(
            "gateway",
            "gateway must be \"hermes\" or \"openclaw\" (or none: any gateway)",
        ));
    }
    if d.scope
        .as_deref()
        .is_some_and(|s| s != "work" && s != "unattended")
    {
        return Err(CoreError::invalid(
            "scope",
            "scope must be \"work\" or \"unattended\"",
        ));
    }
    d.dest = d.dest.trim().to_string();
    if d.dest.is_empty() {
        return Err(CoreError::invalid(
            "dest",
            "dest is required (a chat id such as telegram:-100123 or feishu:oc_…)",
        ));
    }
    if d.dest.chars().count() > super::MAX_DEST_CHARS {
        return Err(CoreError::invalid(
            "dest",
            format!(
                "dest too long (at most {} characters)",
                super::MAX_DEST_CHARS
            ),
        ));
    }
    Ok(())
}

/// [`check_destination`] for an entry added or edited one at a time: it
/// also needs its alias (the name a send's `to` uses).
pub fn check_new_destination(d: &mut Destination) -> CoreResult<()> {
    clean(&mut d.alias, "alias", MAX_ALIAS_CHARS)?;
    if d.alias.is_none() {
        return Err(CoreError::invalid(
            "alias",
            "alias is required (the name a message's destination uses)",
        ));
    }
    check_destination(d)
}

fn duplicate_alias(d: &Destination) -> CoreError {
    let alias = d.alias.as_deref().unwrap_or_default();
    let gateway = d.gateway.as_deref().unwrap_or("any");
    let platform = d.platform.as_deref().unwrap_or("any");
    let scope = d.scope.as_deref().unwrap_or("work");
    CoreError::invalid(
        "alias",
        format!(
            "the alias \"{alias}\" already exists for gateway {gateway}, platform {platform}, scope {scope}"
        ),
    )
}

/// The entry at `at` must not repeat another's alias for the same gateway +
/// platform + scope (the resolution could not tell them apart).
fn check_unique(list: &[Destination], at: usize) -> CoreResult<()> {
    let key = alias_key(&list[at]);
    if key.3.is_none() {
        return Ok(());
    }
    if list
        .iter()
        .enumerate()
        .any(|(i, d)| i != at && alias_key(d) == key)
    {
        return Err(duplicate_alias(&list[at]));
    }
    Ok(())
}

/// Validate and tidy a whole alias list: every entry by
/// [`check_destination`], no alias twice for the same gateway + platform +
/// scope, no id twice.
pub fn validate_destinations(mut list: Vec<Destination>) -> CoreResult<Vec<Destination>> {
    if list.len() > MAX_DESTINATIONS {
        return Err(CoreError::invalid(
            "destinations",
            format!("at most {MAX_DESTINATIONS} destinations"),
        ));
    }
    for d in &mut list {
        check_destination(d)?;
    }
    let mut keys = HashSet::new();
    let mut ids = HashSet::new();
    for d in &list {
        let key = alias_key(d);
        if key.3.is_some() && !keys.insert(key) {
            return Err(duplicate_alias(d));
        }
        if let Some(id) = d.id.as_deref()
            && !ids.insert(id)
        {
            return Err(CoreError::invalid(
                "id",
                format!("two destinations have the id {id}"),
            ));
        }
    }
    Ok(list)
}

impl Outbox<'_> {
    /// One compare-and-set edit of the alias list ([`Settings::edit_setting_list`]).
    async fn edit_destinations<R, F>(&self, edit: F) -> CoreResult<Option<R>>
    where
        F: FnMut(&mut Vec<Destination>) -> CoreResult<Option<R>>,
    {
        let check = |list: &[Destination]| {
            if list.len() > MAX_DESTINATIONS {
                return Err(CoreError::invalid(
                    "destinations",
                    format!("at most {MAX_DESTINATIONS} destinations"),
                ));
            }
            Ok(())
        };
        self.h
            .settings()
            .edit_setting_list(DESTINATIONS_KEY, "destination aliases", check, edit)
            .await
    }

    /// Replace the alias list (validated; the reference's whole-list write).
    pub async fn set_destinations(&self, list: Vec<Destination>) -> CoreResult<Vec<Destination>> {
        let list = validate_destinations(list)?;
        let value = serde_json::to_value(&list)
            .map_err(|e| CoreError::invalid_body(format!("destinations: {e}")))?;
        self.h
            .store()
            .put_setting(DESTINATIONS_KEY, &value, Utc::now())
            .await?;
        self.h.publish(HarnessEvent::SettingChanged {
            key: DESTINATIONS_KEY.into(),
        });
        Ok(list)
    }

    /// Append one alias (it gets an id); the other entries are untouched.
    pub async fn add_destination(&self, mut entry: Destination) -> CoreResult<Destination> {
        check_new_destination(&mut entry)?;
        entry.id = Some(ids::new_id());
        self.edit_destinations(|list| {
            list.push(entry.clone());
            check_unique(list, list.len() - 1)?;
            Ok(Some(entry.clone()))
        })
        .await?
        .ok_or_else(|| CoreError::Conflict("destination not added".into()))
    }

    /// Replace one alias by id (or position, for entries without one); its
    /// id stays (an entry without one gets one).
    pub async fn update_destination(
        &self,
        id: &str,
        mut entry: Destination,
    ) -> CoreResult<Destination> {
        check_new_destination(&mut entry)?;
        let id = id.trim().to_string();
        self.edit_destinations(|list| {
            let at = position(list, &id)
                .ok_or_else(|| CoreError::NotFound("Destination not found".into()))?;
            let mut d = entry.clone();
            d.id = list[at].id.clone().or_else(|| Some(ids::new_id()));
            list[at] = d.clone();
            check_unique(list, at)?;
            Ok(Some(d))
        })
        .await?
        .ok_or_else(|| CoreError::NotFound("Destination not found".into()))
    }

    /// Remove one alias by id (or position, for entries without one).
    pub async fn remove_destination(&self, id: &str) -> CoreResult<()> {
        let id = id.trim().to_string();
        self.edit_destinations(|list| {
            let at = position(list, &id)
                .ok_or_else(|| CoreError::NotFound("Destination not found".into()))?;
            Ok(Some(list.remove(at)))
        })
        .await
        .map(|_| ())
    }

    /// Upsert a directory hit into the stored list (docs/tower-messaging.md §6.2 rule 6; a new
    /// entry gets an id, a replaced one keeps its own). An entry the rules
    /// refuse is not cached.
    pub(crate) async fn remember_destination(&self, mut entry: Destination) -> CoreResult<()> {
        if let Err(err) = check_destination(&mut entry) {
            tracing::debug!(%err, "a directory hit is not cached");
            return Ok(());
        }
        entry.id = Some(ids::new_id());
        self.edit_destinations(|list| {
            let before = list.clone();
            upsert(list, entry.clone());
            Ok((*list != before).then_some(()))
        })
        .await
        .map(|_| ())
    }
}

#[cfg(test)]
#[path = "destination_edits_tests.rs"]
mod tests;
