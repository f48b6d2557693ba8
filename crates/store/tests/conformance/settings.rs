//! Settings: JSON values by key, and the compare-and-set.

use harness_core::ids;

use super::{Backend, support::*};

pub async fn settings_round_trip(b: &Backend) {
    let s = b.store.as_ref();
    let key = format!("test.{}", ids::new_id());
    assert!(s.get_setting(&key).await.unwrap().is_none());
    let v1 = serde_json::json!({"a": [1, 2, {"b": "ü"}]});
    s.put_setting(&key, &v1, now()).await.unwrap();
    assert_eq!(s.get_setting(&key).await.unwrap(), Some(v1));
    let v2 = serde_json::json!("replaced");
    s.put_setting(&key, &v2, now()).await.unwrap();
    assert_eq!(s.get_setting(&key).await.unwrap(), Some(v2));
}
