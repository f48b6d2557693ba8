//! Tasks, projects, workspaces, executions and agent credentials.

use harness_core::{
    ids,
    model::ExecutionStatus,
    store::{NewExecution, NewProject, NewTask, StoreError},
};

use super::{Backend, support::*};

pub async fn workspaces_and_projects(b: &Backend) {
    let s = b.store.as_ref();
    let name = format!("ws-{}", ids::new_id());
    let first = s
        .ensure_workspace(&ids::new_id(), &name, now())
        .await
        .unwrap();
    let again = s
        .ensure_workspace(&ids::new_id(), &name, now())
        .await
        .unwrap();
    assert_eq!(first, again, "a workspace is found by name");
    let project = NewProject {
        id: ids::new_id(),
        workspace_id: first.clone(),
        workspace_name: name.clone(),
        name: "p".into(),
        path: "/tmp/p".into(),
        now: now(),
    };
    let created = s.create_project(project.clone()).await.unwrap();
    assert_eq!(
        (created.workspace.as_str(), created.path.as_str()),
        (name.as_str(), "/tmp/p")
    );
    let duplicate = s
        .create_project(NewProject {
            id: ids::new_id(),
            ..project.clone()
        })
        .await
        .unwrap_err();
    assert!(
        matches!(duplicate, StoreError::Duplicate(_)),
        "{duplicate:?}"
    );
    let listed = s.list_projects().await.unwrap();
    assert!(listed.iter().any(|p| p.id == created.id));
    let found = s.get_project(&created.id).await.unwrap().unwrap();
    assert_eq!(found, created);
    assert!(s.get_project(&ids::new_id()).await.unwrap().is_none());
    // Editing: rename and move; a taken name; a missing project.
    let other = s
        .create_project(NewProject {
            id: ids::new_id(),
            name: "q".into(),
            ..project.clone()
        })
        .await
        .unwrap();
    let moved = s
        .update_project(&created.id, "p2", "/tmp/p2")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (moved.name.as_str(), moved.path.as_str()),
        ("p2", "/tmp/p2")
    );
    assert_eq!(s.get_project(&created.id).await.unwrap().unwrap(), moved);
    let taken = s
        .update_project(&created.id, &other.name, "/tmp/p2")
        .await
        .unwrap_err();
    assert!(matches!(taken, StoreError::Duplicate(_)), "{taken:?}");
    assert!(
        s.update_project(&ids::new_id(), "x", "/tmp/x")
            .await
            .unwrap()
            .is_none()
    );
}

pub async fn tasks_round_trip(b: &Backend) {
    let s = b.store.as_ref();
    let older = new_task(s, "older").await;
    let newer = new_task(s, "newer").await;
    let view = s.get_task(&newer).await.unwrap().unwrap();
    assert_eq!(view.task.title, "newer");
    assert_eq!(view.task.agent, command_agent());
    assert!(view.execution.is_none() && !view.open_ask);
    let listed: Vec<String> = s
        .list_tasks(1000)
        .await
        .unwrap()
        .into_iter()
        .map(|v| v.task.id)
        .collect();
    let (i_new, i_old) = (
        listed.iter().position(|t| t == &newer).unwrap(),
        listed.iter().position(|t| t == &older).unwrap(),
    );
    assert!(i_new < i_old, "newest first");
    assert!(s.get_task(&ids::new_id()).await.unwrap().is_none());
}

pub async fn missing_project_is_a_missing_reference(b: &Backend) {
    let s = b.store.as_ref();
    let err = s
        .create_task(NewTask {
            id: ids::new_id(),
            title: "t".into(),
            description: None,
            project_id: Some(ids::new_id()),
            parent_task_id: None,
            agent: command_agent(),
            now: now(),
        })
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::MissingReference(_)), "{err:?}");
}

pub async fn unattended_flag(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    let on = s.set_unattended(&t, true, now()).await.unwrap().unwrap();
    assert!(on.task.unattended);
    assert!(s.unattended_task_ids().await.unwrap().contains(&t));
    s.set_unattended(&t, false, now()).await.unwrap().unwrap();
    assert!(!s.unattended_task_ids().await.unwrap().contains(&t));
    assert!(
        s.set_unattended(&ids::new_id(), true, now())
            .await
            .unwrap()
            .is_none()
    );
}

pub async fn execution_lifecycle(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    let hash = ids::token_hash("secret-token");
    let exec = s
        .create_execution(NewExecution {
            id: ids::new_id(),
            task_id: t.clone(),
            token_hash: hash.clone(),
            status: ExecutionStatus::Running,
            node_id: Some(NODE.into()),
            now: now(),
        })
        .await
        .unwrap();
    assert_eq!(
        s.execution_by_token_hash(&hash).await.unwrap().unwrap().id,
        exec.id
    );
    assert!(
        s.execution_by_token_hash(&ids::token_hash("other"))
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        s.set_session_id(&exec.id, "first")
            .await
            .unwrap()
            .as_deref(),
        Some("first")
    );
    assert_eq!(
        s.set_session_id(&exec.id, "second")
            .await
            .unwrap()
            .as_deref(),
        Some("first"),
        "the first session id wins"
    );
    assert!(
        s.set_session_id(&ids::new_id(), "x")
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(s.live_execution(&t).await.unwrap().unwrap().id, exec.id);
    let ended = s
        .finish_execution(
            &exec.id,
            ExecutionStatus::Completed,
            Some(0),
            "exited",
            now(),
        )
        .await
        .unwrap();
    assert!(ended);
    let again = s
        .finish_execution(&exec.id, ExecutionStatus::Failed, Some(1), "exited", now())
        .await
        .unwrap();
    assert!(!again, "only a live execution ends");
    assert!(s.live_execution(&t).await.unwrap().is_none());
    assert_eq!(
        execution_status(s, &t).await,
        Some(ExecutionStatus::Completed)
    );
    let t2 = new_task(s, "t2").await;
    new_execution(s, &t2).await.unwrap();
    // Another node's live execution is that node's business.
    let t3 = new_task(s, "t3").await;
    s.create_execution(NewExecution {
        id: ids::new_id(),
        task_id: t3.clone(),
        token_hash: ids::token_hash(&ids::new_id()),
        status: ExecutionStatus::Running,
        node_id: Some("node-b".into()),
        now: now(),
    })
    .await
    .unwrap();
    // A held execution (its agent outlived the server) is kept.
    let t4 = new_task(s, "t4").await;
    let held = new_execution(s, &t4).await.unwrap();
    let interrupted = s
        .interrupt_live_executions(NODE, std::slice::from_ref(&held), now())
        .await
        .unwrap();
    assert!(interrupted.contains(&t2) && !interrupted.contains(&t));
    assert!(!interrupted.contains(&t4), "a kept execution stays live");
    assert_eq!(
        execution_status(s, &t4).await,
        Some(ExecutionStatus::Running)
    );
    assert!(!interrupted.contains(&t3), "only this node's executions");
    assert_eq!(
        execution_status(s, &t3).await,
        Some(ExecutionStatus::Running)
    );
    assert_eq!(
        execution_status(s, &t2).await,
        Some(ExecutionStatus::Failed)
    );
}

pub async fn one_live_execution_per_task(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    let first = new_execution(s, &t).await.unwrap();
    let second = new_execution(s, &t).await.unwrap_err();
    assert!(matches!(second, StoreError::Duplicate(_)), "{second:?}");
    // Parked is live too.
    s.record_ask(ask(&t, "q?", now())).await.unwrap();
    assert_eq!(execution_status(s, &t).await, Some(ExecutionStatus::Paused));
    assert!(matches!(
        new_execution(s, &t).await,
        Err(StoreError::Duplicate(_))
    ));
    // Racing inserts: exactly one wins.
    let t2 = new_task(s, "t2").await;
    let mut racers = Vec::new();
    for _ in 0..16 {
        let store = b.store.clone();
        let t2 = t2.clone();
        racers.push(tokio::spawn(async move {
            new_execution(store.as_ref(), &t2).await
        }));
    }
    let mut won = 0;
    for r in racers {
        match r.await.unwrap() {
            Ok(_) => won += 1,
            Err(StoreError::Duplicate(_)) => {}
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(won, 1);
    // Once it ended, the task may run again.
    s.finish_execution(&first, ExecutionStatus::Stopped, None, "stopped", now())
        .await
        .unwrap();
    new_execution(s, &t).await.unwrap();
}
