//! `ClientState` (`SPA/ClientState.java`): one Kafka Streams instance as the leader's task
//! assignor sees it. Its capacity is its number of stream threads (one consumer each), its
//! previous tasks come from what its consumers own and report (STREAMS.md §3.3), its lags from
//! the reported offset sums against the changelogs' end (§3.4), and the assignor writes its new
//! active and standby tasks into it. Every set Kafka keeps here is a `TreeSet`, so `BTreeSet`
//! iterates as Java does.

use super::{ProcessId, TaskId, LATEST_OFFSET, UNKNOWN_OFFSET_SUM};
use crate::java::string_compare;
use std::collections::{BTreeMap, BTreeSet};

/// One stream thread's consumer as the leader reads its subscription.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Consumer {
    /// The consumer's member id: `<client.id>-StreamThread-<n>-consumer-<uuid>`.
    pub member_id: String,
    /// `ownedPartitions` of its subscription (COOPERATIVE): topic, partition.
    pub owned_partitions: Vec<(String, i32)>,
    /// `SubscriptionInfo.taskOffsetSums`: the checkpointed changelog offset sum of every task
    /// whose state it has, `LATEST_OFFSET` (-2) for a running active.
    pub task_offset_sums: BTreeMap<TaskId, i64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientState {
    pub process_id: ProcessId,
    /// `client.tag.*`, read by the tag-aware standby assignor.
    pub client_tags: BTreeMap<String, String>,
    /// The number of stream threads (`incrementCapacity` per consumer).
    pub capacity: i32,
    /// The consumers' member ids in Java `String` order (the leader's `TreeSet`): `…-10-…`
    /// before `…-2-…`.
    pub consumers: Vec<String>,
    /// The offset sums of all consumers together (`taskOffsetSums`, later consumers win).
    pub task_offset_sums: BTreeMap<TaskId, i64>,
    /// Per consumer, the tasks it reported offset sums for (`consumerToPreviousStatefulTaskIds`).
    pub prev_stateful_by_consumer: BTreeMap<String, BTreeSet<TaskId>>,
    /// Owned source partitions and their consumer (`ownedPartitions`, a `TreeMap` by topic then
    /// partition; a later consumer of the same partition wins).
    pub owned_partitions: BTreeMap<(String, i32), String>,
    /// `taskLagTotals`: the lag of every stateful task (§3.4).
    pub lags: BTreeMap<TaskId, i64>,
    pub prev_active: BTreeSet<TaskId>,
    pub prev_standby: BTreeSet<TaskId>,
    /// The assignor's answer: active tasks.
    pub active: BTreeSet<TaskId>,
    /// The assignor's answer: standby tasks, warm-ups included (a client receives a warm-up as a
    /// standby).
    pub standby: BTreeSet<TaskId>,
}

impl ClientState {
    /// `new ClientState(processId, clientTags)`: capacity 0 until its consumers are added.
    pub fn new(process_id: ProcessId, client_tags: BTreeMap<String, String>) -> ClientState {
        ClientState {
            process_id,
            client_tags,
            capacity: 0,
            consumers: Vec::new(),
            task_offset_sums: BTreeMap::new(),
            prev_stateful_by_consumer: BTreeMap::new(),
            owned_partitions: BTreeMap::new(),
            lags: BTreeMap::new(),
            prev_active: BTreeSet::new(),
            prev_standby: BTreeSet::new(),
            active: BTreeSet::new(),
            standby: BTreeSet::new(),
        }
    }

    /// `ClientMetadata.addConsumer` then `addPreviousTasksAndOffsetSums` (`SPA.java:163-171`):
    /// one more thread, its owned partitions, its offset sums.
    pub fn add_consumer(&mut self, consumer: &Consumer) {
        let at = self
            .consumers
            .binary_search_by(|c| string_compare(c, &consumer.member_id))
            .unwrap_or_else(|i| i);
        if self.consumers.get(at) != Some(&consumer.member_id) {
            self.consumers.insert(at, consumer.member_id.clone());
        }
        self.capacity += 1;
        for tp in &consumer.owned_partitions {
            self.owned_partitions
                .insert(tp.clone(), consumer.member_id.clone());
        }
        self.task_offset_sums
            .extend(consumer.task_offset_sums.iter().map(|(t, s)| (*t, *s)));
        self.prev_stateful_by_consumer.insert(
            consumer.member_id.clone(),
            consumer.task_offset_sums.keys().copied().collect(),
        );
    }

    /// `initializePrevTasks` (`SPA/ClientState.java:356-365, 526-560`): a task one of whose
    /// source partitions a consumer owns was active here; of the other tasks with an offset sum,
    /// a running one (`LATEST_OFFSET`) was active and the rest were standbys.
    pub fn initialize_prev_tasks(
        &mut self,
        task_for_partition: impl Fn(&str, i32) -> Option<TaskId>,
    ) {
        for (topic, partition) in self.owned_partitions.keys() {
            if let Some(task) = task_for_partition(topic, *partition) {
                self.prev_active.insert(task);
            }
        }
        for (task, sum) in &self.task_offset_sums {
            if self.prev_active.contains(task) {
                continue;
            }
            if *sum == LATEST_OFFSET {
                self.prev_active.insert(*task);
            } else {
                self.prev_standby.insert(*task);
            }
        }
    }

    /// `computeTaskLags` (`SPA/ClientState.java:382-407`), for every stateful task with its end
    /// offset sum: -2 for a running active, -3 when the sum is unknown, the end offset sum for a
    /// checkpoint past the end (corrupted: restore from scratch), else end - offset.
    pub fn compute_task_lags(&mut self, end_offset_sums: &BTreeMap<TaskId, i64>) {
        for (task, &end) in end_offset_sums {
            let offset = self.task_offset_sums.get(task).copied().unwrap_or(0);
            let lag = if offset == LATEST_OFFSET {
                LATEST_OFFSET
            } else if offset == UNKNOWN_OFFSET_SUM {
                UNKNOWN_OFFSET_SUM
            } else if end < offset {
                end
            } else {
                end - offset
            };
            self.lags.insert(*task, lag);
        }
    }

    /// `lagFor`: the task's lag; every stateful task has one.
    pub fn lag_for(&self, task: TaskId) -> i64 {
        *self
            .lags
            .get(&task)
            .unwrap_or_else(|| panic!("no lag for task {task}: it is not stateful"))
    }

    /// Whether the task is stateful (`isStateful`: it has a lag).
    pub fn is_stateful(&self, task: TaskId) -> bool {
        self.lags.contains_key(&task)
    }

    /// `assignActive`: Kafka throws if the client already has the task in any role.
    pub fn assign_active(&mut self, task: TaskId) {
        assert!(
            !self.has_assigned_task(task),
            "task {task} already assigned to {}",
            self.process_id
        );
        self.active.insert(task);
    }

    pub fn unassign_active(&mut self, task: TaskId) {
        assert!(
            self.active.remove(&task),
            "task {task} is not active on {}",
            self.process_id
        );
    }

    /// `assignStandby`: Kafka throws if the client already has the task in any role.
    pub fn assign_standby(&mut self, task: TaskId) {
        assert!(
            !self.has_assigned_task(task),
            "task {task} already assigned to {}",
            self.process_id
        );
        self.standby.insert(task);
    }

    pub fn unassign_standby(&mut self, task: TaskId) {
        assert!(
            self.standby.remove(&task),
            "task {task} is not a standby on {}",
            self.process_id
        );
    }

    pub fn has_active_task(&self, task: TaskId) -> bool {
        self.active.contains(&task)
    }

    pub fn has_standby_task(&self, task: TaskId) -> bool {
        self.standby.contains(&task)
    }

    pub fn has_assigned_task(&self, task: TaskId) -> bool {
        self.active.contains(&task) || self.standby.contains(&task)
    }

    pub fn active_task_count(&self) -> usize {
        self.active.len()
    }

    pub fn standby_task_count(&self) -> usize {
        self.standby.len()
    }

    pub fn assigned_task_count(&self) -> usize {
        self.active.len() + self.standby.len()
    }

    /// `activeTaskLoad`: active tasks per thread.
    pub fn active_task_load(&self) -> f64 {
        self.active.len() as f64 / f64::from(self.capacity)
    }

    /// `assignedTaskLoad`: active and standby tasks per thread.
    pub fn assigned_task_load(&self) -> f64 {
        self.assigned_task_count() as f64 / f64::from(self.capacity)
    }

    /// `reachedCapacity`: at least one task per thread.
    pub fn reached_capacity(&self) -> bool {
        self.assigned_task_count() >= self.capacity as usize
    }

    /// `hasUnfulfilledQuota`: fewer actives than `capacity * tasks_per_thread`.
    pub fn has_unfulfilled_quota(&self, tasks_per_thread: i32) -> bool {
        (self.active.len() as i64) < i64::from(self.capacity) * i64::from(tasks_per_thread)
    }

    /// `hasMoreAvailableCapacityThan` (`SPA/ClientState.java:451-470`): a lower load, ties to
    /// the larger capacity.
    pub fn has_more_available_capacity_than(&self, other: &ClientState) -> bool {
        let this_load = self.assigned_task_count() as f64 / f64::from(self.capacity);
        let other_load = other.assigned_task_count() as f64 / f64::from(other.capacity);
        if this_load < other_load {
            true
        } else if this_load > other_load {
            false
        } else {
            self.capacity > other.capacity
        }
    }

    /// `previouslyOwnedStandby`.
    pub fn previously_owned_standby(&self, task: TaskId) -> bool {
        self.prev_standby.contains(&task)
    }

    /// `prevTasksByLag(consumer)` (`SPA/ClientState.java:427-437`): the stateful tasks the
    /// consumer reported, by lag then task; tasks no longer in the topology are skipped.
    pub fn prev_tasks_by_lag(&self, consumer: &str) -> Vec<TaskId> {
        let mut tasks: Vec<TaskId> = self
            .prev_stateful_by_consumer
            .get(consumer)
            .into_iter()
            .flatten()
            .copied()
            .filter(|t| self.lags.contains_key(t))
            .collect();
        tasks.sort_by_key(|t| (self.lags[t], *t));
        tasks
    }
}
