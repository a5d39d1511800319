//! The assignment table (`cgsim assign --table`): every assignor's answer for the same topics
//! and member counts, side by side, with the member counts per assignor and idle members counted.
//!
//! The sticky family (and uniform) answer from history, so the table does not simply run each
//! assignor once: it forms each group the way it says it was formed (`--joins`), feeding every
//! rebalance the ownership a real group would send:
//! * a fresh group's first rebalance: no member owns anything, no generation (Kafka's -1);
//! * every later rebalance: each member that took part in the previous one claims what it was
//!   given then (`owned`) with that rebalance's generation; members that just joined claim
//!   nothing. The `cgsim assign` input feeding then turns this into what each assignor reads:
//!   sticky's userData, cooperative-sticky's owned partitions, uniform's previous target
//!   assignment; range, roundrobin, server-range and co-partition ignore it;
//! * cooperative-sticky withholds partitions that still have another owner (KIP-429), and a
//!   member that revoked something asks for a follow-up rebalance; the table runs those
//!   follow-ups (generation + 1 each, ownership = what each member now holds) until nobody
//!   revokes, and shows the converged assignment, as the reference's `followup_rounds` do.
//!
//! Generations count rebalances from 1, so a group formed one by one reports generation k at its
//! (k+1)-th rebalance, and a cooperative follow-up takes a generation of its own, exactly like
//! the reference `a-table-sequential` cases.
//!
//! Topic ids (only uniform looks at them) default to [`derived_topic_id`]: the first 16 bytes of
//! SHA-256 of the topic name, as a Kafka `Uuid`. Member ids default to `c1..cN`.
//!
//! Files: `spec` parses the command line's table options, `preset` holds the seed 001 table,
//! `render` prints it; this file forms the groups.

mod co_location;
mod preset;
mod render;
mod spec;
pub mod streams;

pub use co_location::{co_location, CoLocation};

pub use preset::{preset, PRESETS};
pub use render::{partitions_text, render};
pub use spec::{
    derived_topic_id, parse_member_counts, parse_topic_ids, parse_topics, section_from_args,
    topics_with_ids, JoinHistory, JoinSpec, MemberIds,
};

use super::{
    by_name, AssignError, AssignResult, Assignor, GroupSpec, Member, MemberPartitions, Topic,
    TopicIdx, TopicPartition, ASSIGNOR_NAMES,
};
use crate::java::string_compare;
use std::collections::{BTreeMap, BTreeSet};

/// Most members one table group may have (one-by-one formation runs the assignor once per
/// member).
pub const MAX_MEMBERS: usize = 10_000;
/// Most partitions one table section may have in total.
pub const MAX_PARTITIONS: i64 = 1_000_000;
/// Follow-up rebalances a cooperative-sticky step may take before the table gives up (Kafka's
/// reference converged within 2 on every case).
pub const MAX_FOLLOWUPS: usize = 8;

/// One group of the table: who its members are (in JoinGroup order) and how it formed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupPlan {
    pub member_ids: Vec<String>,
    pub history: JoinHistory,
    /// `group.instance.id` of the static members (KIP-345), by member id.
    pub static_ids: BTreeMap<String, String>,
    /// Members that subscribe to some of the topics only, by member id (the rest subscribe to
    /// every topic).
    pub subscriptions: BTreeMap<String, Vec<String>>,
}

impl GroupPlan {
    /// Dynamic members with these ids, each subscribed to every topic.
    pub fn new(member_ids: Vec<String>, history: JoinHistory) -> GroupPlan {
        GroupPlan {
            member_ids,
            history,
            static_ids: BTreeMap::new(),
            subscriptions: BTreeMap::new(),
        }
    }

    /// Members `c1..cN`.
    pub fn default_ids(members: usize, history: JoinHistory) -> GroupPlan {
        GroupPlan::new((1..=members).map(|i| format!("c{i}")).collect(), history)
    }

    /// Static ids name members of the group, each id one member's (a second JoinGroup with the
    /// same `group.instance.id` fences the first).
    pub fn check_static_ids(&self) -> Result<(), String> {
        let mut instances = BTreeSet::new();
        for (member, instance) in &self.static_ids {
            if !self.member_ids.contains(member) {
                return Err(format!(
                    "static id {instance:?} is given to {member:?}, which is not a member"
                ));
            }
            if instance.is_empty() {
                return Err(format!("member {member:?} has an empty group.instance.id"));
            }
            if !instances.insert(instance) {
                return Err(format!(
                    "group.instance.id {instance:?} is given to two members (a static id \
                     belongs to one member)"
                ));
            }
        }
        Ok(())
    }

    /// Subscriptions name members of the group and some of `topics`, at least one each.
    pub fn check_subscriptions(&self, topics: &[Topic]) -> Result<(), String> {
        for (member, names) in &self.subscriptions {
            if !self.member_ids.contains(member) {
                return Err(format!(
                    "a subscription is given to {member:?}, which is not a member"
                ));
            }
            if names.is_empty() {
                return Err(format!("member {member:?} subscribes to no topic"));
            }
            if let Some(name) = names.iter().find(|n| !topics.iter().any(|t| &t.name == *n)) {
                return Err(format!(
                    "member {member:?} subscribes to {name:?}, which is not one of the topics"
                ));
            }
        }
        Ok(())
    }

    /// The members as they join, in JoinGroup order.
    pub fn members(&self, topics: &[Topic]) -> Vec<PlannedMember> {
        self.member_ids
            .iter()
            .map(|id| {
                let topics = match self.subscriptions.get(id) {
                    Some(names) => topics
                        .iter()
                        .enumerate()
                        .filter(|(_, t)| names.contains(&t.name))
                        .map(|(i, _)| i as TopicIdx)
                        .collect(),
                    None => (0..topics.len() as TopicIdx).collect(),
                };
                PlannedMember {
                    member_id: id.clone(),
                    group_instance_id: self.static_ids.get(id).cloned(),
                    topics,
                }
            })
            .collect()
    }
}

/// A member as it joins the group: its ids and the topics it subscribes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    /// Indexes into the section's topics, ascending.
    pub topics: Vec<TopicIdx>,
}

/// Topics and the groups that read them, every member subscribed to every topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// Sorted by name (Java order), each with its id.
    pub topics: Vec<Topic>,
    pub groups: Vec<GroupPlan>,
}

impl Section {
    /// Checks names, counts, ids and plans; sorts the topics.
    pub fn new(mut topics: Vec<Topic>, groups: Vec<GroupPlan>) -> Result<Section, String> {
        if topics.is_empty() {
            return Err("no topics".into());
        }
        topics.sort_by(|a, b| string_compare(&a.name, &b.name));
        for pair in topics.windows(2) {
            if pair[0].name == pair[1].name {
                return Err(format!("topic {:?} is given twice", pair[0].name));
            }
        }
        let mut ids = BTreeSet::new();
        let mut total = 0i64;
        for t in &topics {
            check_topic_name(&t.name)?;
            if t.partitions < 1 {
                return Err(format!(
                    "topic {:?}: {} partitions (a topic has at least 1)",
                    t.name, t.partitions
                ));
            }
            total += i64::from(t.partitions);
            let id =
                t.id.ok_or_else(|| format!("topic {:?} has no topic id", t.name))?;
            if !ids.insert(id.to_string()) {
                return Err(format!("topic id {id} is given to two topics"));
            }
        }
        if total > MAX_PARTITIONS {
            return Err(format!(
                "{total} partitions in all: the table takes at most {MAX_PARTITIONS}"
            ));
        }
        if groups.is_empty() {
            return Err("no member counts".into());
        }
        for g in &groups {
            let n = g.member_ids.len();
            if n == 0 {
                return Err("a group of 0 members".into());
            }
            if n > MAX_MEMBERS {
                return Err(format!(
                    "a group of {n} members: the table takes at most {MAX_MEMBERS}"
                ));
            }
            let mut seen = BTreeSet::new();
            for id in &g.member_ids {
                if id.is_empty() {
                    return Err("an empty member id".into());
                }
                if !seen.insert(id) {
                    return Err(format!("member id {id:?} is given twice in one group"));
                }
            }
            g.check_static_ids()?;
            g.check_subscriptions(&topics)?;
            g.history
                .batches(n)
                .map_err(|e| format!("{n} members: {e}"))?;
        }
        Ok(Section { topics, groups })
    }

    pub fn label(&self) -> String {
        let total = super::total_partitions(&self.topics);
        let list = self
            .topics
            .iter()
            .map(|t| format!("{}={}", t.name, t.partitions))
            .collect::<Vec<_>>()
            .join(",");
        format!(
            "topics {list} ({total} partition{})",
            if total == 1 { "" } else { "s" }
        )
    }
}

/// Kafka's legal topic names: 1-249 characters of `[a-zA-Z0-9._-]`.
fn check_topic_name(name: &str) -> Result<(), String> {
    let legal = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty()
        || name.len() > 249
        || !name.chars().all(legal)
        || name == "."
        || name == ".."
    {
        return Err(format!(
            "{name:?} is not a legal Kafka topic name (1-249 characters of a-z, A-Z, 0-9, '.', \
             '_', '-')"
        ));
    }
    Ok(())
}

/// One assignor run while a group forms.
#[derive(Clone, Debug)]
pub struct Rebalance {
    /// Which join batch it belongs to (0 = the group's first rebalance).
    pub step: usize,
    /// 0 for the rebalance the join caused; 1, 2, ... for cooperative follow-ups.
    pub followup: usize,
    /// The generation this rebalance creates; members claim ownership from `generation - 1`.
    pub generation: i32,
    pub group: GroupSpec,
    pub result: AssignResult,
}

/// Every rebalance of one group's formation under one assignor, in order.
#[derive(Clone, Debug)]
pub struct Formation {
    pub rebalances: Vec<Rebalance>,
}

impl Formation {
    /// What each member (in JoinGroup order) ends up with.
    pub fn final_assignment(&self) -> &MemberPartitions {
        &self
            .rebalances
            .last()
            .expect("a formation has a rebalance")
            .result
            .assignment
    }
}

/// Runs `assignor` through the formation of a group reading `topics` (sorted, every member
/// subscribed to all), its members joining in `batches`.
pub fn form_group(
    assignor: &dyn Assignor,
    topics: &[Topic],
    member_ids: &[String],
    batches: &[usize],
) -> Result<Formation, AssignError> {
    let members = GroupPlan::new(member_ids.to_vec(), JoinHistory::All).members(topics);
    form_members(assignor, topics, &members, batches)
}

/// Runs `assignor` through the formation of a group of `planned` members (JoinGroup order)
/// reading `topics` (sorted), joining in `batches`.
pub fn form_members(
    assignor: &dyn Assignor,
    topics: &[Topic],
    planned: &[PlannedMember],
    batches: &[usize],
) -> Result<Formation, AssignError> {
    let member = |p: &PlannedMember, owned: Vec<TopicPartition>, generation: Option<i32>| Member {
        member_id: p.member_id.clone(),
        group_instance_id: p.group_instance_id.clone(),
        subscription: p
            .topics
            .iter()
            .map(|&t| topics[t as usize].name.clone())
            .collect(),
        topics: p.topics.clone(),
        owned,
        generation,
        subscription_generation: generation,
        rack: None,
    };
    let mut rebalances: Vec<Rebalance> = Vec::new();
    // What each member holds after the latest rebalance, and that rebalance's generation.
    let mut held: MemberPartitions = Vec::new();
    let mut generation = 0i32;
    let mut joined = 0usize;
    for (step, &batch) in batches.iter().enumerate() {
        let before = joined;
        joined += batch;
        if joined > planned.len() {
            return Err(AssignError(format!(
                "join batches add up to {joined}, but there are {} member ids",
                planned.len()
            )));
        }
        let mut followup = 0;
        loop {
            let members = planned[..joined]
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    if i < before || followup > 0 {
                        let mut owned = held[i].clone();
                        owned.sort_unstable();
                        member(p, owned, Some(generation))
                    } else {
                        member(p, Vec::new(), None)
                    }
                })
                .collect();
            let group = GroupSpec {
                topics: topics.to_vec(),
                members,
                protocol: assignor.default_protocol(),
                racks: Default::default(),
            };
            let result = assignor.assign(&group)?;
            generation += 1;
            held = result.assignment.clone();
            let revoked = result
                .cooperative
                .as_ref()
                .is_some_and(|c| !c.rejoin_requested_by.is_empty());
            rebalances.push(Rebalance {
                step,
                followup,
                generation,
                group,
                result,
            });
            if !revoked {
                break;
            }
            // A member that revoked partitions calls requestRejoin: one more rebalance, in which
            // the withheld partitions are free.
            followup += 1;
            if followup > MAX_FOLLOWUPS {
                return Err(AssignError(format!(
                    "{}: members still revoke after {MAX_FOLLOWUPS} follow-up rebalances",
                    assignor.name()
                )));
            }
        }
    }
    if joined != planned.len() {
        return Err(AssignError(format!(
            "join batches add up to {joined}, but there are {} member ids",
            planned.len()
        )));
    }
    Ok(Formation { rebalances })
}

/// One assignor's column of a block.
#[derive(Clone, Debug)]
pub struct Column {
    pub assignor: &'static str,
    pub formation: Formation,
}

impl Column {
    /// Partitions per member, in JoinGroup order.
    pub fn counts(&self) -> Vec<usize> {
        self.formation
            .final_assignment()
            .iter()
            .map(Vec::len)
            .collect()
    }

    /// Counts, largest first: the shape of the division, which does not depend on member ids.
    pub fn sorted_counts(&self) -> Vec<usize> {
        let mut c = self.counts();
        c.sort_unstable_by(|a, b| b.cmp(a));
        c
    }

    /// Members given nothing.
    pub fn idle(&self) -> usize {
        self.counts().iter().filter(|&&c| c == 0).count()
    }
}

/// One group of the table: every assignor on it.
#[derive(Clone, Debug)]
pub struct Block {
    pub plan: GroupPlan,
    pub columns: Vec<Column>,
}

impl Block {
    pub fn column(&self, assignor: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.assignor == assignor)
    }
}

/// A section's blocks, one per group.
#[derive(Clone, Debug)]
pub struct SectionTable {
    pub section: Section,
    pub blocks: Vec<Block>,
}

impl SectionTable {
    /// The block of the group with `members` members (the first, if several).
    pub fn block(&self, members: usize) -> Option<&Block> {
        self.blocks
            .iter()
            .find(|b| b.plan.member_ids.len() == members)
    }
}

/// Runs every assignor of [`ASSIGNOR_NAMES`] on every group of every section.
pub fn build(sections: &[Section]) -> Result<Vec<SectionTable>, AssignError> {
    let mut out = Vec::with_capacity(sections.len());
    for section in sections {
        let mut blocks = Vec::with_capacity(section.groups.len());
        for plan in &section.groups {
            let batches = plan
                .history
                .batches(plan.member_ids.len())
                .map_err(AssignError)?;
            let members = plan.members(&section.topics);
            let mut columns = Vec::with_capacity(ASSIGNOR_NAMES.len());
            for &name in ASSIGNOR_NAMES {
                let assignor = by_name(name)?;
                let formation = form_members(assignor, &section.topics, &members, &batches)?;
                columns.push(Column {
                    assignor: assignor.name(),
                    formation,
                });
            }
            blocks.push(Block {
                plan: plan.clone(),
                columns,
            });
        }
        out.push(SectionTable {
            section: section.clone(),
            blocks,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cooperative_sticky_converges_through_a_followup() {
        let section = section_from_args("t=3", "2", Some("one-by-one"), &[], None).unwrap();
        let assignor = by_name("cooperative-sticky").unwrap();
        let f = form_group(
            assignor,
            &section.topics,
            &section.groups[0].member_ids,
            &[1, 1],
        )
        .unwrap();
        // c1 alone, c2 joins (c1 revokes t-2, withheld), the follow-up hands t-2 to c2.
        assert_eq!(f.rebalances.len(), 3);
        assert_eq!(
            f.rebalances
                .iter()
                .map(|r| r.generation)
                .collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert_eq!(f.rebalances[2].group.members[1].generation, Some(2));
        let counts: Vec<usize> = f.final_assignment().iter().map(Vec::len).collect();
        assert_eq!(counts, [2, 1]);
    }
}
