//! After a reboot (`harness_core::reboot`): an interrupted execution is
//! owed one decision, claimed by one boot of one node (a conditional
//! update, raced here on several connections), reported once with the
//! claims' end in one transaction; a boot that stopped before reporting
//! leaves its claims to the next boot of its node, which never resumes
//! them — nor the execution their resume started — again.

use std::{collections::HashSet, sync::Arc};

use harness_core::{
    Harness, ids,
    model::ExecutionStatus,
    reboot::{Outcome, Reason},
    settings::NotifyTarget,
    store::{Dedup, NewExecution, NewOutbound, RebootState, Store},
    tasks::CreateTask,
};

use super::{Backend, support::*};

/// A RUNNING execution of `task` on `node` (`None`: no recorded node).
async fn running(s: &dyn Store, task: &str, node: Option<&str>) -> String {
    s.create_execution(NewExecution {
        id: ids::new_id(),
        task_id: task.into(),
        token_hash: ids::token_hash(&ids::new_id()),
        status: ExecutionStatus::Running,
        node_id: node.map(str::to_string),
        now: now(),
    })
    .await
    .unwrap()
    .id
}

fn report(owner: &str, text: &str) -> NewOutbound {
    NewOutbound {
        id: ids::new_id(),
        message_id: None,
        task_id: None,
        dedup: Dedup::Explicit(format!("reboot:{owner}")),
        gateway: "hermes".into(),
        downstream: Some("feishu".into()),
        dest: None,
        requested_to: None,
        profile: None,
        scope: "unattended".into(),
        expect_reply: false,
        message: text.into(),
        presentation: None,
        now: now(),
        choices: None,
    }
}

pub async fn an_interrupted_execution_is_claimed_once_and_reported_once(b: &Backend) {
    let s = b.store.as_ref();
    let node = format!("reboot-{}", ids::new_id());
    let t = new_task(s, "rebooted").await;
    let e1 = running(s, &t, Some(&node)).await;
    // Not owed a decision before an interruption; another node's neither.
    let other = new_task(s, "elsewhere").await;
    let elsewhere = running(s, &other, Some("another-node")).await;
    let rows = s.reboot_rows(&node).await.unwrap();
    assert!(!rows.iter().any(|r| r.execution.id == e1));
    s.interrupt_live_executions(&node, &[], now())
        .await
        .unwrap();
    let rows = s.reboot_rows(&node).await.unwrap();
    let mine = rows.iter().find(|r| r.execution.id == e1).unwrap();
    assert_eq!(mine.state, RebootState::Pending);
    assert_eq!(mine.execution.status, ExecutionStatus::Failed);
    assert_eq!((mine.previous_state, mine.owner.as_deref()), (None, None));
    assert!(!rows.iter().any(|r| r.execution.id == elsewhere));

    // Boots of two nodes race on several connections: one claim wins.
    let mut stores: Vec<Arc<dyn Store>> = vec![b.store.clone()];
    for _ in 0..3 {
        stores.push(b.another().await);
    }
    let mut racers = Vec::new();
    for i in 0..12 {
        let store = stores[i % stores.len()].clone();
        let (e1, owner) = (e1.clone(), format!("{node}:boot-{i}"));
        racers.push(tokio::spawn(async move {
            let won = store.claim_reboot(&e1, None, &owner, None).await.unwrap();
            won.then_some(owner)
        }));
    }
    let mut winners = Vec::new();
    for r in racers {
        winners.extend(r.await.unwrap());
    }
    assert_eq!(winners.len(), 1, "one claim wins: {winners:?}");
    let winner = winners.remove(0);
    let claimed = s.reboot_rows(&node).await.unwrap();
    let mine = claimed.iter().find(|r| r.execution.id == e1).unwrap();
    assert_eq!(mine.state, RebootState::Claimed);
    assert_eq!(mine.owner.as_deref(), Some(winner.as_str()));

    // A loser cannot finish it: nothing ends, no report.
    let notes = vec![(e1.clone(), "resumed session s-1".to_string())];
    let loser = format!("{node}:not-the-winner");
    let none = s
        .finish_reboot(&loser, &notes, &[report(&loser, "x")])
        .await
        .unwrap();
    assert!(none.is_empty());
    // The winner's report: the claim ends and its row is queued, once.
    let written = s
        .finish_reboot(&winner, &notes, &[report(&winner, "Resumed (1)")])
        .await
        .unwrap();
    assert_eq!(written.len(), 1);
    assert_eq!(written[0].dedup_key, format!("reboot:{winner}"));
    assert_eq!(written[0].task_id, None);
    let again = s
        .finish_reboot(&winner, &notes, &[report(&winner, "Resumed (1)")])
        .await
        .unwrap();
    assert!(again.is_empty(), "a finished claim is not reported twice");
    assert!(
        !s.reboot_rows(&node)
            .await
            .unwrap()
            .iter()
            .any(|r| r.execution.id == e1)
    );
    assert!(
        !s.claim_reboot(&e1, None, &winner, None).await.unwrap(),
        "a reported decision is never claimed again"
    );

    // The execution the resume started, interrupted in turn, knows it.
    let e2 = running(s, &t, Some(&node)).await;
    s.interrupt_live_executions(&node, &[], now())
        .await
        .unwrap();
    let rows = s.reboot_rows(&node).await.unwrap();
    let next = rows.iter().find(|r| r.execution.id == e2).unwrap();
    assert_eq!(next.previous_state, Some(RebootState::Done));
    assert_eq!(next.previous_note.as_deref(), Some("resumed session s-1"));

    // A boot that stopped before reporting: the next boot of its node takes
    // its claim over (once), the earlier boot cannot any more.
    let (boot1, boot2) = (format!("{node}:b1"), format!("{node}:b2"));
    assert!(s.claim_reboot(&e2, None, &boot1, None).await.unwrap());
    assert!(
        s.claim_reboot(&e2, Some(&boot1), &boot2, Some("stopped"))
            .await
            .unwrap()
    );
    assert!(
        !s.claim_reboot(&e2, Some(&boot1), &boot2, Some("stopped"))
            .await
            .unwrap()
    );
    let rows = s.reboot_rows(&node).await.unwrap();
    let taken = rows.iter().find(|r| r.execution.id == e2).unwrap();
    assert_eq!(
        (taken.owner.as_deref(), taken.note.as_deref()),
        (Some(boot2.as_str()), Some("stopped"))
    );
    let notes = vec![(e2.clone(), "not resumed: stopped".to_string())];
    s.finish_reboot(&boot1, &notes, &[]).await.unwrap();
    let rows = s.reboot_rows(&node).await.unwrap();
    let kept = rows.iter().find(|r| r.execution.id == e2).unwrap();
    assert_eq!(
        kept.state,
        RebootState::Claimed,
        "the earlier boot's finish changes nothing"
    );
    s.finish_reboot(&boot2, &notes, &[]).await.unwrap();
    assert!(
        !s.reboot_rows(&node)
            .await
            .unwrap()
            .iter()
            .any(|r| r.execution.id == e2)
    );
}

fn unattended_target() -> NotifyTarget {
    NotifyTarget {
        id: None,
        label: "unattended chat".into(),
        gateway: "hermes".into(),
        downstream: Some("feishu".into()),
        dest: None,
        profile: None,
        scope: "unattended".into(),
        active: true,
        include_screen: false,
        report_at: None,
        report_time_zone: None,
        report_since: None,
        language: None,
    }
}

/// An unattended Claude Code task through the core.
async fn unattended(h: &Harness, title: &str) -> String {
    let id = h
        .tasks()
        .create_task(CreateTask {
            title: Some(title.into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .task
        .id;
    h.tasks().set_unattended(&id, true).await.unwrap();
    id
}

pub async fn two_nodes_at_once_and_a_stopped_boot_resume_each_execution_once(b: &Backend) {
    let (sa, sb) = (b.another().await, b.another().await);
    let (na, nb) = (
        format!("na-{}", ids::new_id()),
        format!("nb-{}", ids::new_id()),
    );
    let (ha, hb) = (harness_on(sa.clone(), &na), harness_on(sb.clone(), &nb));
    ha.settings()
        .set_notify_targets(vec![unattended_target()])
        .await
        .unwrap();
    // Executions of no recorded node: both nodes may interrupt and decide them.
    let mut tasks = Vec::new();
    for i in 0..6 {
        let t = unattended(&ha, &format!("shared {i}")).await;
        running(sa.as_ref(), &t, None).await;
        tasks.push(t);
    }
    let attended = core_task(&ha, "attended", None).await;
    running(sa.as_ref(), &attended, None).await;
    let (ta, tb) = (ha.tasks(), hb.tasks());
    let (ia, ib) = tokio::join!(
        ta.interrupt_orphaned_executions(&[]),
        tb.interrupt_orphaned_executions(&[])
    );
    assert!(
        ia.unwrap() + ib.unwrap() > tasks.len(),
        "the attended one too"
    );
    let (oa, ob) = (format!("{na}:boot"), format!("{nb}:boot"));
    let (aa, ab) = (ha.agents(), hb.agents());
    let (ra, rb) = tokio::join!(aa.take_reboot_resumes(&oa), ab.take_reboot_resumes(&ob));
    let (mut ra, mut rb) = (ra.unwrap(), rb.unwrap());
    let ids_a: HashSet<String> = ra.resumes.iter().map(|r| r.view.task.id.clone()).collect();
    let ids_b: HashSet<String> = rb.resumes.iter().map(|r| r.view.task.id.clone()).collect();
    assert!(ids_a.is_disjoint(&ids_b), "{ids_a:?} / {ids_b:?}");
    let all: HashSet<String> = ids_a.union(&ids_b).cloned().collect();
    assert_eq!(all, tasks.iter().cloned().collect::<HashSet<_>>());
    assert!(!all.contains(&attended), "an attended task is not touched");
    for r in ra.resumes.clone() {
        ra.record(
            &r,
            Outcome::Resumed {
                session_id: "s".into(),
            },
        );
    }
    for r in rb.resumes.clone() {
        rb.record(&r, Outcome::NotResumed(Reason::NoSession));
    }
    let (wa, wb) = tokio::join!(aa.report_reboot_resumes(ra), ab.report_reboot_resumes(rb));
    // One report per boot that had something to say.
    assert_eq!(
        wa.unwrap() + wb.unwrap(),
        usize::from(!ids_a.is_empty()) + usize::from(!ids_b.is_empty())
    );
    // Nothing is owed any more: the next starts decide nothing.
    for (h, owner) in [(&ha, format!("{na}:boot2")), (&hb, format!("{nb}:boot2"))] {
        let next = h.agents().take_reboot_resumes(&owner).await.unwrap();
        assert!(next.is_empty(), "{:?}", next.entries());
        assert_eq!(h.agents().report_reboot_resumes(next).await.unwrap(), 0);
    }

    // A boot stops after its claim, while its resume had started the agent.
    let node = format!("nc-{}", ids::new_id());
    let sc = b.another().await;
    let hc = harness_on(sc.clone(), &node);
    let t = unattended(&hc, "stopped mid-resume").await;
    running(sc.as_ref(), &t, Some(&node)).await;
    hc.tasks().interrupt_orphaned_executions(&[]).await.unwrap();
    let boot1 = hc
        .agents()
        .take_reboot_resumes(&format!("{node}:b1"))
        .await
        .unwrap();
    assert_eq!(boot1.resumes.len(), 1);
    hc.tasks().begin_execution(&t).await.unwrap();
    drop(boot1); // the crash: nothing recorded, nothing reported
    // The next boot: the resumed execution is interrupted, and not resumed.
    hc.tasks().interrupt_orphaned_executions(&[]).await.unwrap();
    let boot2 = hc
        .agents()
        .take_reboot_resumes(&format!("{node}:b2"))
        .await
        .unwrap();
    assert!(boot2.resumes.is_empty());
    let entries: Vec<_> = boot2.entries().iter().map(|e| e.outcome.clone()).collect();
    assert_eq!(
        entries,
        vec![Outcome::NotResumed(Reason::StoppedDuringResume)],
        "one line for the task"
    );
    assert_eq!(hc.agents().report_reboot_resumes(boot2).await.unwrap(), 1);
    let boot3 = hc
        .agents()
        .take_reboot_resumes(&format!("{node}:b3"))
        .await
        .unwrap();
    assert!(boot3.is_empty());
}
