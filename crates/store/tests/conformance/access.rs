//! The core's access rules (`harness_core::access`) on the store:
//! the one implementation REST, MCP and server functions call.

use std::sync::Arc;

use harness_core::{
    CoreError, Harness, HarnessConfig,
    auth::Identity,
    ids,
    settings::NotifyTarget,
    tasks::{CreateProject, CreateTask},
};

use super::{Backend, support::ADMIN};

async fn harness(b: &Backend) -> Harness {
    Harness::new(
        b.another().await,
        HarnessConfig::new(ids::token_hash(ADMIN)),
    )
}

fn titled(title: &str) -> CreateTask {
    CreateTask {
        title: Some(title.into()),
        ..Default::default()
    }
}

pub async fn agents_create_children_of_their_own_task_in_its_project(b: &Backend) {
    let h = harness(b).await;
    // A project's directory must exist.
    let web = tempfile::tempdir().unwrap();
    let project = h
        .tasks()
        .create_project(CreateProject {
            name: Some("web".into()),
            path: Some(web.path().display().to_string()),
            workspace: None,
        })
        .await
        .unwrap();
    assert_eq!(h.tasks().project(&project.id).await.unwrap(), project);
    assert!(matches!(
        h.tasks().project(&ids::new_id()).await,
        Err(CoreError::NotFound(_))
    ));
    assert!(matches!(
        h.tasks().project("not an id").await,
        Err(CoreError::Invalid { .. })
    ));
    let parent = h
        .tasks()
        .create_task(CreateTask {
            project_id: Some(project.id.clone()),
            ..titled("parent")
        })
        .await
        .unwrap()
        .task
        .id;
    let (exec, _) = h.tasks().begin_execution(&parent).await.unwrap();
    let agent = Identity::Agent {
        task_id: parent.clone(),
        execution_id: exec.id,
    };
    let child = h
        .access()
        .create_task_as(&agent, titled("child"))
        .await
        .unwrap();
    assert_eq!(child.task.parent_task_id.as_deref(), Some(parent.as_str()));
    assert_eq!(child.task.project_id.as_deref(), Some(project.id.as_str()));
    let stranger = h
        .tasks()
        .create_task(titled("stranger"))
        .await
        .unwrap()
        .task
        .id;
    let refused = h
        .access()
        .create_task_as(
            &agent,
            CreateTask {
                parent_task_id: Some(stranger.clone()),
                ..titled("hijack")
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(refused, CoreError::Forbidden(_)), "{refused:?}");
    // Another project is refused, not quietly replaced; its own is fine.
    let elsewhere = tempfile::tempdir().unwrap();
    let other = h
        .tasks()
        .create_project(CreateProject {
            name: Some("other".into()),
            path: Some(elsewhere.path().display().to_string()),
            workspace: None,
        })
        .await
        .unwrap();
    let refused = h
        .access()
        .create_task_as(
            &agent,
            CreateTask {
                project_id: Some(other.id.clone()),
                ..titled("escape")
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(refused, CoreError::Forbidden(_)), "{refused:?}");
    assert!(refused.to_string().contains("projectId"), "{refused}");
    let same = h
        .access()
        .create_task_as(
            &agent,
            CreateTask {
                project_id: Some(project.id.clone()),
                ..titled("same")
            },
        )
        .await
        .unwrap();
    assert_eq!(same.task.project_id.as_deref(), Some(project.id.as_str()));
    // The admin is not defaulted.
    let free = h
        .access()
        .create_task_as(&Identity::Admin, titled("free"))
        .await
        .unwrap();
    assert_eq!(free.task.parent_task_id, None);

    // Reading and typing: own task and derived children only.
    assert_eq!(
        h.access().task_for(&agent, None).await.unwrap().task.id,
        parent
    );
    assert_eq!(
        h.access()
            .task_for(&agent, Some(&child.task.id))
            .await
            .unwrap()
            .task
            .id,
        child.task.id
    );
    assert!(matches!(
        h.access().task_for(&agent, Some(&stranger)).await,
        Err(CoreError::Forbidden(_))
    ));
    // Typing: into a derived child's terminal, never into its own (its CLI
    // reads the text as the user's input, outside the approval gate).
    let own = h
        .access()
        .authorize_terminal(&agent, &parent)
        .await
        .unwrap_err();
    assert!(matches!(own, CoreError::Forbidden(_)), "{own:?}");
    h.access()
        .authorize_terminal(&agent, &child.task.id)
        .await
        .unwrap();
    h.access()
        .authorize_terminal(&Identity::Admin, &stranger)
        .await
        .unwrap();
    for who in [&agent, &Identity::Browser] {
        assert!(matches!(
            h.access().authorize_terminal(who, &stranger).await,
            Err(CoreError::Forbidden(_))
        ));
    }
}

pub async fn unattended_mode_needs_a_channel_that_reaches_a_human(b: &Backend) {
    let h = harness(b).await;
    let t = h.tasks().create_task(titled("goal")).await.unwrap().task.id;
    let refused = h.tasks().set_unattended(&t, true).await.unwrap_err();
    assert_eq!(refused.http_status(), 409, "{refused}");
    let missing = h
        .tasks()
        .set_unattended(&ids::new_id(), true)
        .await
        .unwrap_err();
    assert_eq!(missing.http_status(), 404, "{missing}");
    // Off is always allowed.
    assert!(
        !h.tasks()
            .set_unattended(&t, false)
            .await
            .unwrap()
            .task
            .unattended
    );
    let target = |gateway: &str, scope: &str, active: bool| NotifyTarget {
        id: None,
        label: String::new(),
        gateway: gateway.into(),
        downstream: None,
        dest: None,
        profile: None,
        scope: scope.into(),
        active,
        include_screen: false,
        report_at: None,
        report_time_zone: None,
        report_since: None,
        language: None,
    };
    // Inactive or work-scoped channels do not count.
    h.settings()
        .set_notify_targets(vec![
            target("hermes", "unattended", false),
            target("openclaw", "work", true),
        ])
        .await
        .unwrap();
    assert!(h.tasks().set_unattended(&t, true).await.is_err());
    // The cached targets were invalidated through the event bus.
    h.settings()
        .set_notify_targets(vec![target("hermes", "unattended", true)])
        .await
        .unwrap();
    assert!(
        h.tasks()
            .set_unattended(&t, true)
            .await
            .unwrap()
            .task
            .unattended
    );
}

/// Another process (another `Harness` on the same database, its events
/// relayed by a shared bus) changes the targets: this process's cache sees it.
pub async fn the_notify_target_cache_is_invalidated_through_the_bus(b: &Backend) {
    let bus: Arc<dyn harness_core::EventBus> = Arc::new(harness_core::InProcessBus::default());
    let open = || async {
        Harness::with_bus(
            b.another().await,
            bus.clone(),
            HarnessConfig::new(ids::token_hash(ADMIN)),
        )
    };
    let (reader, writer) = (open().await, open().await);
    assert!(reader.settings().notify_targets().await.unwrap().is_empty());
    assert!(reader.asks().no_channel_configured().await.unwrap());
    let hermes = NotifyTarget {
        id: None,
        label: "team".into(),
        gateway: "hermes".into(),
        downstream: None,
        dest: None,
        profile: None,
        scope: "unattended".into(),
        active: true,
        include_screen: false,
        report_at: None,
        report_time_zone: None,
        report_since: None,
        language: None,
    };
    writer
        .settings()
        .set_notify_targets(vec![hermes.clone()])
        .await
        .unwrap();
    assert_eq!(
        reader.settings().notify_targets().await.unwrap(),
        vec![hermes]
    );
    // Without a shared bus the other handle keeps its cache: the bus is the
    // invalidation path, not a re-read on every call.
    let lonely = harness(b).await;
    assert_eq!(lonely.settings().notify_targets().await.unwrap().len(), 1);
    writer
        .settings()
        .set_notify_targets(Vec::new())
        .await
        .unwrap();
    assert!(reader.settings().notify_targets().await.unwrap().is_empty());
    assert_eq!(
        lonely.settings().notify_targets().await.unwrap().len(),
        1,
        "stale: not on the bus"
    );
}
