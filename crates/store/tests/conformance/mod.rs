//! The store contract, written once against the `Store` port and run against
//! every backend: a backend's test file builds a [`Backend`] and expands
//! `conformance_suite!(factory)` (see `sqlite_conformance.rs`). A PostgreSQL
//! backend plugs in with its own factory; the cases do not change.
//!
//! Every case talks to the port only (`Arc<dyn Store>`, directly or through
//! a core `Harness` built over it): no SQL, no backend type. Time is passed
//! in (`now` arguments), never aged in the database. Every case uses fresh
//! ids, so a backend may share one database between cases; each gets its
//! own backend instance here.
//!
//! One file per area, each listed in `conformance_suite!`:
//! `tasks`, `reboot`, `messages`, `evidence`, `receipts`, `settings`, `sessions`, `nodes`, `deliveries`, `outbox`, `outbox_turns`,
//! `engine` (the owed-work engine's rules, once per kind: `work_kinds`),
//! `gateway`, `gateway_replies`, `gateway_routes`, `inbox`, `inbox_direct`, `reminders`, `escalations`, `approval_reminders`, `choices`, `choice_answers`, `messaging`, `stats`, `access`,
//! `ungated`, `reports`, `agent_states`, `agent_actions`, `races` (several connections racing on a multi-threaded runtime).
//!
//! Coverage: `every_port_method_has_a_case` (in `sqlite_conformance.rs`,
//! via [`coverage::uncovered_port_methods`]) fails when a method of the port
//! (`crates/core/src/store/*.rs`) is called by no case directly through a
//! store.

#![allow(dead_code)]

pub mod coverage;
pub mod support;

pub mod access;
pub mod agent_actions;
pub mod agent_states;
pub mod approval_reminders;
pub mod approvals;
pub mod choice_answers;
pub mod choices;
pub mod deliveries;
pub mod direct;
pub mod engine;
pub mod escalations;
pub mod evidence;
pub mod gateway;
pub mod gateway_replies;
pub mod gateway_routes;
pub mod inbox;
pub mod inbox_direct;
pub mod messages;
pub mod messaging;
pub mod nodes;
pub mod outbox;
pub mod outbox_turns;
pub mod races;
pub mod reboot;
pub mod receipts;
pub mod reminders;
pub mod reports;
pub mod sessions;
pub mod settings;
pub mod stats;
pub mod tasks;
pub mod ungated;
pub mod work_kinds;
pub mod work_steps;
pub mod work_views;

use std::{any::Any, future::Future, pin::Pin, sync::Arc};

use harness_core::store::Store;

/// Opens another store on the backend's database.
pub type Connect =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Arc<dyn Store>> + Send>> + Send + Sync>;

/// One backend under test: the port, a way to open more stores on the same
/// database (another process, another pool: several writers racing, or a
/// restart), and whatever must outlive them (a temp directory, a database
/// to drop).
pub struct Backend {
    pub store: Arc<dyn Store>,
    pub connect: Connect,
    pub _guard: Box<dyn Any + Send + Sync>,
}

impl Backend {
    /// Another store on the same database (its own connections).
    pub async fn another(&self) -> Arc<dyn Store> {
        (self.connect)().await
    }
}

/// What a factory answers: a backend, or `None` when its server is not
/// there (the case then passes; the factory says it was skipped).
pub trait MaybeBackend {
    fn backend(self) -> Option<Backend>;
}

impl MaybeBackend for Backend {
    fn backend(self) -> Option<Backend> {
        Some(self)
    }
}

impl MaybeBackend for Option<Backend> {
    fn backend(self) -> Option<Backend> {
        self
    }
}

/// Expands to one `#[tokio::test]` (multi-threaded: the races are real) per
/// case, each on a fresh backend from `$factory().await`, in one module per
/// area (`cargo test deliveries::`).
macro_rules! conformance_suite {
    ($factory:ident) => {
        conformance_suite!(@area $factory; tasks:
            workspaces_and_projects,
            tasks_round_trip,
            missing_project_is_a_missing_reference,
            unattended_flag,
            execution_lifecycle,
            one_live_execution_per_task,
        );
        conformance_suite!(@area $factory; reboot:
            an_interrupted_execution_is_claimed_once_and_reported_once,
            two_nodes_at_once_and_a_stopped_boot_resume_each_execution_once,
        );
        conformance_suite!(@area $factory; messages:
            ask_supersedes_and_parks,
            one_open_ask_per_task,
            answer_is_conditional,
            concurrent_answers_have_one_winner,
            notify_ignore_dismiss,
            cancel_and_expire,
            message_listing,
        );
        conformance_suite!(@area $factory; evidence:
            the_screen_is_stored_with_its_ask,
            a_rolled_back_ask_leaves_no_screen,
            an_approval_and_a_parents_question_keep_their_screen,
        );
        conformance_suite!(@area $factory; receipts:
            the_screen_after_an_answer_is_stored_once,
            a_pushed_asks_screen_is_added_once_and_chat_answers_are_known,
        );
        conformance_suite!(@area $factory; settings:
            settings_round_trip,
        );
        conformance_suite!(@area $factory; sessions:
            a_session_lives_until_it_expires_or_is_revoked,
            revoke_all_ends_every_live_session_and_purge_deletes_dead_rows,
        );
        conformance_suite!(@area $factory; nodes:
            a_heartbeat_is_an_upsert_timed_by_the_database,
            a_silent_node_is_dead_and_its_boot_is_recovered_once,
            a_dead_nodes_work_is_recovered_once_by_racing_survivors,
            a_fenced_boot_is_refused_and_a_new_boots_runs_are_kept,
            a_draining_nodes_runs_are_listed_and_it_claims_only_its_own_deliveries,
            a_node_is_named_by_its_latest_heartbeat_and_its_tasks_show_the_name,
        );
        conformance_suite!(@area $factory; deliveries:
            the_reply_row_is_written_by_the_answering_transaction,
            concurrent_claimers_on_two_connections_lease_each_row_once,
            leases_expire_steps_need_the_lease_and_other_nodes_rows_are_left_alone,
            a_row_found_writing_after_its_lease_is_unverified_and_never_claimed_again,
            clean_failures_back_off_two_four_eight_seconds_and_keep_the_error,
            start_up_releases_only_this_nodes_earlier_leases,
            one_idempotency_key_is_one_row_even_when_raced,
        );
        conformance_suite!(@area $factory; outbox:
            no_channel_and_work_without_destination_are_refused,
            enqueue_writes_message_and_row_and_delivery_activates_the_ask,
            explicit_keys_are_strict_and_implicit_keys_cover_one_ask_lifecycle,
            failures_back_off_then_die_and_a_person_can_retry,
            a_send_that_cannot_be_built_is_dead_at_once,
            unverified_is_never_resent_and_can_be_marked_delivered,
            expired_leases_and_earlier_boots_become_unverified,
            concurrent_enqueues_of_one_key_make_one_row,
            the_attempt_cap_is_configurable,
        );
        conformance_suite!(@area $factory; outbox_turns:
            one_turn_settles_every_outcome_and_leases_the_next_rows_in_one_transaction,
            two_sent_asks_of_one_task_in_one_turn_leave_the_later_one_open,
            two_rows_of_one_turn_with_one_platform_message_id_make_one_mapping,
            a_row_whose_lease_was_lost_is_left_alone_while_the_turn_settles_the_rest,
            rows_leased_ahead_and_never_started_are_released_not_marked_sent,
            started_marks_of_several_sends_commit_together_each_by_its_own_lease,
        );
        conformance_suite!(@area $factory; gateway:
            a_message_id_reused_in_another_chat_does_not_take_over_the_mapping,
            a_nonce_is_refused_until_it_expires_even_after_a_restart,
            inbound_rows_are_one_per_message_and_claimed_by_compare_and_set,
            a_continuation_claim_lapses_with_its_lease_or_its_holders_boot,
        );
        conformance_suite!(@area $factory; gateway_routes:
            a_routed_message_is_recorded_once_with_its_session_event_and_ack,
            admission_limits_refuse_without_writing_and_threads_bind_their_session,
            a_reply_binds_the_session_of_its_own_chat_only,
            a_created_task_is_linked_once_and_a_callback_settles_with_one_reply,
            a_recovery_mark_applies_only_to_the_state_it_saw,
        );
        conformance_suite!(@area $factory; engine:
            a_failed_attempt_backs_off_doubling_and_is_given_up_at_the_cap,
            a_crash_between_the_step_and_the_outcome_leaves_the_row_unverified,
            outcomes_map_to_states_once,
            a_released_row_is_due_at_once_with_its_attempts_unchanged,
            a_person_retries_what_was_given_up_and_marks_what_is_unverified,
        );
        conformance_suite!(@area $factory; agent_actions:
            an_action_is_planned_once_per_episode_and_replaces_the_executions_due_ones,
            racing_plans_of_one_episode_make_one_row,
            a_turn_claims_due_rows_of_its_node_and_settles_under_its_lease,
            only_due_actions_are_cancelled_and_only_of_the_named_execution,
        );
        conformance_suite!(@area $factory; gateway_replies:
            a_reply_is_written_with_its_inbound_row_once_per_key,
            a_reply_turn_settles_every_outcome_and_leases_due_rows,
            interrupted_replies_become_unverified_never_resent,
            a_persons_decision_moves_only_a_row_in_the_given_states,
        );
        conformance_suite!(@area $factory; inbox:
            one_review_per_execution_whoever_comes_first,
            racing_stop_and_fallback_on_two_connections_make_one_event,
            a_batch_is_high_first_and_a_failed_delivery_replays_the_same_batch_id,
            stale_reviews_are_consumed_not_delivered,
            expired_and_dead_boot_claims_return_to_pending_but_batched_ones_stay,
            exits_without_an_event_are_recovered_at_start_up_once,
            a_workbench_start_is_tried_once_per_window_across_nodes_and_restarts,
        );
        conformance_suite!(@area $factory; inbox_direct:
            the_inbox_transitions_one_by_one,
        );
        conformance_suite!(@area $factory; choices:
            choices_are_stored_with_the_ask_and_plain_asks_have_none,
            invalid_choices_write_nothing_and_name_the_field,
            default_after_deadline_answers_like_a_reply_and_is_marked,
            deadline_default_races_people_exactly_once,
        );
        conformance_suite!(@area $factory; choice_answers:
            a_reply_naming_an_option_records_its_label_and_index,
            pending_shows_the_open_asks_options_default_and_deadline,
            a_pushed_question_stores_its_choices_with_its_message,
            a_derived_childs_native_question_is_an_ask_and_one_parent_event,
        );
        conformance_suite!(@area $factory; messaging:
            ask_cancels_the_previous_open_ask_and_parks_running_executions,
            notify_lines_are_closed_and_never_pending,
            reply_answers_resumes_dedupes_and_refuses_without_open_ask,
            reply_without_execution_reports_not_running,
            fifty_concurrent_replies_exactly_one_wins,
            ignore_only_open_asks_and_dismiss_only_non_asks,
            sweep_expires_only_stale_open_asks,
            keyset_pages_cover_every_row_once_in_order,
            an_open_ask_survives_reopening_the_database,
            bad_inputs_are_rejected_with_the_field_and_nothing_written,
            tokens_bind_agents_to_their_task,
            derived_children_carry_the_source_marker,
            a_failed_ask_batch_rolls_back_and_the_writer_keeps_working,
        );
        conformance_suite!(@area $factory; stats:
            answer_histogram_counts_waits_into_buckets,
            ask_timings_cover_recent_and_open_asks,
            counts_include_outbox_rows_by_state_with_attempts,
        );
        conformance_suite!(@area $factory; access:
            agents_create_children_of_their_own_task_in_its_project,
            unattended_mode_needs_a_channel_that_reaches_a_human,
            the_notify_target_cache_is_invalidated_through_the_bus,
        );
        conformance_suite!(@area $factory; races:
            concurrent_outbox_claimers_lease_each_row_once,
            concurrent_inbox_claimers_take_each_event_once,
            racing_compare_and_set_has_one_winner_per_value,
            one_workbench_per_project_when_raced,
            racing_turns_and_asks_of_one_task_leave_one_open_ask,
        );
        conformance_suite!(@area $factory; approvals:
            a_decision_wins_once_answers_its_ask_and_its_grant_is_used_once,
            parking_is_conditional_and_a_parked_approval_survives_a_new_connection,
            racing_calls_use_one_grant_once,
            an_approval_and_its_ask_are_recorded_in_one_transaction,
            a_late_decision_and_its_typed_message_are_one_transaction,
            a_pending_approval_ends_with_its_ask,
            an_approval_is_pushed_to_chat_in_its_ask_transaction_and_an_unsent_push_dies_with_the_decision,
            an_approval_without_a_channel_is_not_pushed_and_a_failed_ask_writes_no_push,
            an_unused_grant_expires_with_a_newer_ask_or_the_end_of_its_execution,
            the_audit_pages_with_a_cursor_and_a_time_window,
        );
        conformance_suite!(@area $factory; reminders:
            a_reminder_is_written_once_and_only_while_its_ask_waits,
            a_reminder_not_sent_when_its_ask_is_answered_is_dropped,
            racing_writers_write_one_reminder_of_a_number,
            a_pass_reaches_every_waiting_ask_however_many_older_ones_wait,
        );
        conformance_suite!(@area $factory; escalations:
            an_ask_is_escalated_once_and_its_answer_notifies_every_chat_reached,
            an_ask_answered_without_escalation_writes_no_notice,
            a_leased_reminder_of_an_answered_ask_is_known_closed_and_skipped,
            chat_activity_is_the_last_inbound_and_the_newest_failure,
            an_answer_from_the_chat_is_recorded_with_it,
        );
        conformance_suite!(@area $factory; approval_reminders:
            a_pending_approval_whose_push_was_sent_is_reminded_until_it_is_decided,
            a_push_or_reminder_leased_before_the_approval_closed_is_skipped,
            an_escalated_approval_decided_tells_the_chat_of_its_push_and_the_escalation,
            an_approval_decided_in_the_chat_is_recorded_with_it,
        );
        conformance_suite!(@area $factory; ungated:
            checks_are_kept_once_per_task_and_call,
            an_execution_is_flagged_once_with_its_notice_and_push,
            racing_flags_of_one_execution_write_one_alert,
            the_watch_reads_this_nodes_live_and_recent_unflagged_executions,
            the_core_flags_an_unchecked_call_once_and_never_a_checked_one,
        );
        conformance_suite!(@area $factory; reports:
            a_windows_facts_are_read_with_how_each_was_answered,
            a_report_is_kept_with_its_items_and_its_chat_parts_in_one_transaction,
        );
        conformance_suite!(@area $factory; agent_states:
            a_state_is_one_row_written_with_its_push_and_parent_event_once,
            the_newest_hook_event_is_kept_per_execution,
            the_latest_runs_of_unattended_tasks_come_with_their_recorded_state,
        );
        conformance_suite!(@area $factory; direct:
            manual_delivery_actions_release_requeue_and_mark,
            an_ask_is_found_by_its_idempotency_key,
            outbox_activation_recovery_and_manual_actions,
            conditional_answers_of_choices_and_the_ask_for_a_parent,
        );
    };
    (@area $factory:ident; $area:ident: $($case:ident),+ $(,)?) => {
        mod $area {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $case() {
                    let Some(backend) =
                        crate::conformance::MaybeBackend::backend(super::$factory().await)
                    else {
                        return;
                    };
                    crate::conformance::$area::$case(&backend).await;
                }
            )+
        }
    };
}
