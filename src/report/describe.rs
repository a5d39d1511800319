//! `cgsim run --describe`: the group at the run's end in the shapes of Kafka 4.x's
//! `kafka-consumer-groups --describe --members --verbose` and `--describe --offsets`
//! (`tools/.../consumer/group/ConsumerGroupCommand.java`: `printMembers`, `printOffsets`,
//! `getAssignmentString`), column widths, order and all, so the tables diff against the real
//! tool's. cgsim has no network addresses: HOST is `/` and the member's scenario name where
//! Kafka prints `/` and the client's IP.

use super::{GroupDescription, PartitionOffsets};
use crate::assignor::assignment_text;
use crate::java::string_compare;
use std::collections::BTreeMap;

/// What the tool prints for a missing value.
const MISSING: &str = "-";

/// One of the tool's outputs: what it prints on stderr first (a group that is rebalancing or
/// empty), then its table on stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The command it stands for, for a title.
    pub command: String,
    pub stderr: String,
    pub stdout: String,
}

/// Both tables: `--members --verbose`, then `--offsets`.
pub fn render_describe(g: &GroupDescription) -> [ToolOutput; 2] {
    [members_verbose(g), offsets(g)]
}

/// Java's `%-Ns`: left-aligned, padded to at least `width` characters.
fn left(out: &mut String, s: &str, width: usize) {
    out.push_str(s);
    for _ in s.chars().count()..width {
        out.push(' ');
    }
}

/// `shouldPrintMemberState`: the message for the group's state (on stderr, an error on stdout)
/// and whether the table's rows are printed.
fn state_notice(g: &GroupDescription, rows: usize) -> (String, String, bool) {
    let id = &g.group_id;
    let (stderr, stdout) = match g.state.as_str() {
        "Dead" => (
            String::new(),
            format!("\nError: Consumer group '{id}' does not exist.\n"),
        ),
        "Empty" => (
            format!("\nConsumer group '{id}' has no active members.\n"),
            String::new(),
        ),
        "PreparingRebalance" | "CompletingRebalance" | "Assigning" | "Reconciling" => (
            format!("\nWarning: Consumer group '{id}' is rebalancing.\n"),
            String::new(),
        ),
        _ => (String::new(), String::new()),
    };
    (stderr, stdout, g.state != "Dead" && rows > 0)
}

fn host(name: &str) -> String {
    format!("/{name}")
}

/// `--describe --members --verbose`: a row per member in the coordinator's order. A classic
/// group has no member epochs or target assignments (KIP-848's), so those columns read `-`;
/// a consumer group's show each member's epoch and the group's target assignment epoch
/// (KIP-1099).
fn members_verbose(g: &GroupDescription) -> ToolOutput {
    let (stderr, mut out, print) = state_notice(g, g.members.len());
    let text =
        |parts: &[(String, u32)]| assignment_text(parts.iter().map(|(t, p)| (t.as_str(), *p)));
    let assignments: Vec<String> = g.members.iter().map(|m| text(&m.assignment)).collect();
    let targets: Vec<String> = g
        .members
        .iter()
        .map(|m| {
            m.epochs
                .as_ref()
                .map_or(MISSING.to_string(), |e| text(&e.target_assignment))
        })
        .collect();
    let (mut w_group, mut w_id, mut w_instance, mut w_host, mut w_client) = (15, 15, 17, 15, 15);
    let (mut w_current, mut w_target) = (20, 20);
    let mut with_instance = false;
    if print {
        for ((m, current), target) in g.members.iter().zip(&assignments).zip(&targets) {
            w_target = w_target.max(target.chars().count());
            w_group = w_group.max(g.group_id.chars().count());
            w_id = w_id.max(m.consumer_id.chars().count());
            let instance = m.group_instance_id.as_deref().unwrap_or("");
            w_instance = w_instance.max(instance.chars().count());
            w_host = w_host.max(host(&m.name).chars().count());
            w_client = w_client.max(m.client_id.chars().count());
            with_instance |= !instance.is_empty();
            w_current = w_current.max(current.chars().count());
        }
    }
    let line = |out: &mut String, cells: [&str; 10]| {
        let [group, id, instance, host, client, count, epoch, current, target_epoch, target] =
            cells;
        left(out, group, w_group);
        out.push(' ');
        left(out, id, w_id);
        out.push(' ');
        if with_instance {
            left(out, instance, w_instance);
            out.push(' ');
        }
        left(out, host, w_host);
        out.push(' ');
        left(out, client, w_client);
        out.push(' ');
        left(out, count, 15);
        out.push(' ');
        left(out, epoch, 15);
        out.push(' ');
        left(out, current, w_current);
        out.push(' ');
        left(out, target_epoch, 15);
        out.push(' ');
        left(out, target, w_target);
        out.push('\n');
    };
    out.push('\n');
    line(
        &mut out,
        [
            "GROUP",
            "CONSUMER-ID",
            "GROUP-INSTANCE-ID",
            "HOST",
            "CLIENT-ID",
            "#PARTITIONS",
            "CURRENT-EPOCH",
            "CURRENT-ASSIGNMENT",
            "TARGET-EPOCH",
            "TARGET-ASSIGNMENT",
        ],
    );
    for ((m, current), target) in g.members.iter().zip(&assignments).zip(&targets) {
        let count = m.assignment.len().to_string();
        let (epoch, target_epoch) = m.epochs.as_ref().map_or_else(
            || (MISSING.to_string(), MISSING.to_string()),
            |e| (e.member_epoch.to_string(), e.target_epoch.to_string()),
        );
        line(
            &mut out,
            [
                &g.group_id,
                &m.consumer_id,
                m.group_instance_id.as_deref().unwrap_or(""),
                &host(&m.name),
                &m.client_id,
                &count,
                &epoch,
                current,
                &target_epoch,
                target,
            ],
        );
    }
    ToolOutput {
        command: format!(
            "kafka-consumer-groups --describe --group {} --members --verbose",
            g.group_id
        ),
        stderr,
        stdout: out,
    }
}

/// `--describe --offsets` (the tool's default view): a row per assigned partition, members with
/// the most partitions first (ties in the coordinator's order), each member's partitions by
/// topic and number; then the partitions with a committed offset that nobody is assigned
/// (CONSUMER-ID `-`). CURRENT-OFFSET is the group's committed offset, LAG the log end offset
/// minus it.
fn offsets(g: &GroupDescription) -> ToolOutput {
    let by_partition: BTreeMap<(&str, u32), &PartitionOffsets> = g
        .partitions
        .iter()
        .map(|p| ((p.topic.as_str(), p.partition), p))
        .collect();
    struct Row {
        topic: String,
        partition: String,
        offset: String,
        log_end: String,
        lag: String,
        consumer_id: String,
        host: String,
        client_id: String,
    }
    let row = |topic: &str, partition: u32, consumer: Option<(&str, String, &str)>| {
        let p = by_partition.get(&(topic, partition));
        let committed = p.and_then(|p| p.committed);
        let log_end = p.map(|p| p.log_end_offset);
        let (consumer_id, host, client_id) = consumer.map_or(
            (
                MISSING.to_string(),
                MISSING.to_string(),
                MISSING.to_string(),
            ),
            |(id, host, client)| (id.to_string(), host, client.to_string()),
        );
        Row {
            topic: topic.to_string(),
            partition: partition.to_string(),
            offset: committed.map_or(MISSING.to_string(), |o| o.to_string()),
            log_end: log_end.map_or(MISSING.to_string(), |o| o.to_string()),
            lag: match (committed, log_end) {
                (Some(c), Some(e)) => (e as i64 - c as i64).to_string(),
                _ => MISSING.to_string(),
            },
            consumer_id,
            host,
            client_id,
        }
    };
    let by_topic_then_partition =
        |a: &(String, u32), b: &(String, u32)| string_compare(&a.0, &b.0).then(a.1.cmp(&b.1));
    let mut rows = Vec::new();
    let mut assigned: Vec<&(String, u32)> = Vec::new();
    let mut members: Vec<_> = g
        .members
        .iter()
        .filter(|m| !m.assignment.is_empty())
        .collect();
    // A stable sort: equal sizes keep the coordinator's order.
    members.sort_by_key(|m| std::cmp::Reverse(m.assignment.len()));
    for m in members {
        let mut parts = m.assignment.clone();
        parts.sort_by(by_topic_then_partition);
        for (topic, p) in &parts {
            rows.push(row(
                topic,
                *p,
                Some((m.consumer_id.as_str(), host(&m.name), m.client_id.as_str())),
            ));
        }
        assigned.extend(m.assignment.iter());
    }
    let mut unassigned: Vec<(String, u32)> = g
        .partitions
        .iter()
        .filter(|p| p.committed.is_some())
        .map(|p| (p.topic.clone(), p.partition))
        .filter(|k| !assigned.contains(&k))
        .collect();
    unassigned.sort_by(by_topic_then_partition);
    for (topic, p) in &unassigned {
        rows.push(row(topic, *p, None));
    }
    let (stderr, mut out, print) = state_notice(g, rows.len());
    if print {
        let (mut w_group, mut w_topic, mut w_id, mut w_host) = (15, 15, 15, 15);
        for r in &rows {
            w_group = w_group.max(g.group_id.chars().count());
            w_topic = w_topic.max(r.topic.chars().count());
            w_id = w_id.max(r.consumer_id.chars().count());
            w_host = w_host.max(r.host.chars().count());
        }
        let line = |out: &mut String, cells: [&str; 9]| {
            out.push('\n');
            let widths = [w_group, w_topic, 10, 15, 15, 15, w_id, w_host];
            for (cell, w) in cells.iter().zip(widths) {
                left(out, cell, w);
                out.push(' ');
            }
            out.push_str(cells[8]);
        };
        line(
            &mut out,
            [
                "GROUP",
                "TOPIC",
                "PARTITION",
                "CURRENT-OFFSET",
                "LOG-END-OFFSET",
                "LAG",
                "CONSUMER-ID",
                "HOST",
                "CLIENT-ID",
            ],
        );
        for r in &rows {
            line(
                &mut out,
                [
                    &g.group_id,
                    &r.topic,
                    &r.partition,
                    &r.offset,
                    &r.log_end,
                    &r.lag,
                    &r.consumer_id,
                    &r.host,
                    &r.client_id,
                ],
            );
        }
        out.push('\n');
    }
    ToolOutput {
        command: format!(
            "kafka-consumer-groups --describe --group {} --offsets",
            g.group_id
        ),
        stderr,
        stdout: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::DescribedMember;

    fn group(state: &str) -> GroupDescription {
        GroupDescription {
            group_id: "g".into(),
            state: state.into(),
            at_ms: 1000,
            members: vec![
                DescribedMember {
                    name: "c1".into(),
                    consumer_id: "consumer-g-1-aaaa".into(),
                    group_instance_id: None,
                    client_id: "consumer-g-1".into(),
                    assignment: vec![("t".into(), 1)],
                    epochs: None,
                },
                DescribedMember {
                    name: "c2".into(),
                    consumer_id: "consumer-g-1-bbbb".into(),
                    group_instance_id: None,
                    client_id: "consumer-g-1".into(),
                    assignment: vec![("t".into(), 2), ("t".into(), 0)],
                    epochs: None,
                },
            ],
            partitions: (0..4)
                .map(|p| PartitionOffsets {
                    topic: "t".into(),
                    partition: p,
                    committed: (p != 1).then_some(10 * u64::from(p)),
                    log_end_offset: 40,
                })
                .collect(),
        }
    }

    #[test]
    fn offsets_rows_go_by_member_size_then_partition_with_unassigned_commits_last() {
        let [_, offsets] = render_describe(&group("Stable"));
        let lines: Vec<&str> = offsets.stdout.lines().collect();
        assert_eq!(lines[0], "");
        assert_eq!(
            lines[1],
            "GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID       HOST            CLIENT-ID"
        );
        assert_eq!(
            lines[2],
            "g               t               0          0               40              40              consumer-g-1-bbbb /c2             consumer-g-1"
        );
        assert!(lines[3].starts_with(
            "g               t               2          20              40              20 "
        ));
        // No committed offset: CURRENT-OFFSET and LAG are `-`.
        assert!(lines[4].starts_with(
            "g               t               1          -               40              -  "
        ));
        // Committed, but nobody's: no consumer.
        assert_eq!(
            lines[5],
            "g               t               3          30              40              10              -                 -               -"
        );
        assert_eq!(lines.len(), 6);
        assert!(offsets.stderr.is_empty());
    }

    #[test]
    fn members_verbose_lists_each_members_assignment() {
        let [members, _] = render_describe(&group("Stable"));
        let lines: Vec<&str> = members.stdout.lines().collect();
        assert_eq!(lines[0], "");
        assert_eq!(
            lines[1],
            "GROUP           CONSUMER-ID       HOST            CLIENT-ID       #PARTITIONS     CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT   "
        );
        assert_eq!(
            lines[3],
            "g               consumer-g-1-bbbb /c2             consumer-g-1    2               -               t:0,2                -               -                   "
        );
    }

    #[test]
    fn a_rebalancing_group_warns_on_stderr() {
        let mut g = group("PreparingRebalance");
        for m in &mut g.members {
            m.assignment.clear();
        }
        let [members, offsets] = render_describe(&g);
        assert_eq!(
            members.stderr,
            "\nWarning: Consumer group 'g' is rebalancing.\n"
        );
        assert!(members.stdout.contains("consumer-g-1-aaaa"));
        // Nobody is assigned anything: every committed partition is a row without a consumer.
        assert_eq!(offsets.stdout.lines().count(), 5);
        let dead = render_describe(&GroupDescription {
            state: "Dead".into(),
            members: Vec::new(),
            partitions: Vec::new(),
            ..group("Dead")
        });
        assert_eq!(
            dead[1].stdout,
            "\nError: Consumer group 'g' does not exist.\n"
        );
    }
}
