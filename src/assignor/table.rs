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

use super::{
    by_name, AssignError, AssignResult, Assignor, GroupSpec, Member, MemberPartitions, Topic,
    TopicPartition, ASSIGNOR_NAMES,
};
use crate::java::{string_compare, Uuid};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Most members one table group may have (one-by-one formation runs the assignor once per
/// member).
pub const MAX_MEMBERS: usize = 10_000;
/// Most partitions one table section may have in total.
pub const MAX_PARTITIONS: i64 = 1_000_000;
/// Follow-up rebalances a cooperative-sticky step may take before the table gives up (Kafka's
/// reference converged within 2 on every case).
pub const MAX_FOLLOWUPS: usize = 8;

/// How a group of N members formed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JoinHistory {
    /// Every member joined a fresh group together: one assignor run.
    All,
    /// The first member alone, then one more at a time, each rebalance fed the previous result.
    OneByOne,
    /// Batches joining in turn: `3+1` is three members together, then one more.
    Batches(Vec<usize>),
}

impl JoinHistory {
    /// `all`, `one-by-one`, or `A+B[+C...]` (positive sizes).
    pub fn parse(text: &str) -> Result<JoinHistory, String> {
        match text.trim() {
            "all" => Ok(JoinHistory::All),
            "one-by-one" => Ok(JoinHistory::OneByOne),
            t if t.contains('+') => {
                let mut sizes = Vec::new();
                for part in t.split('+') {
                    let n: usize = part.trim().parse().map_err(|_| {
                        format!(
                            "join history {t:?}: {part:?} is not a member count (expected \
                             \"all\", \"one-by-one\" or sizes like \"3+1\")"
                        )
                    })?;
                    if n == 0 {
                        return Err(format!("join history {t:?}: a batch of 0 members"));
                    }
                    sizes.push(n);
                }
                Ok(JoinHistory::Batches(sizes))
            }
            t => Err(format!(
                "unknown join history {t:?} (expected \"all\", \"one-by-one\" or sizes like \
                 \"3+1\")"
            )),
        }
    }

    /// Sizes of the batches that join in turn, for a group of `members`.
    pub fn batches(&self, members: usize) -> Result<Vec<usize>, String> {
        match self {
            JoinHistory::All => Ok(vec![members]),
            JoinHistory::OneByOne => Ok(vec![1; members]),
            JoinHistory::Batches(sizes) => {
                let sum: usize = sizes.iter().sum();
                if sum != members {
                    return Err(format!(
                        "join history {} adds up to {sum} members, not {members}",
                        self.label()
                    ));
                }
                Ok(sizes.clone())
            }
        }
    }

    /// The spec text: `all`, `one-by-one`, `3+1`.
    pub fn label(&self) -> String {
        match self {
            JoinHistory::All => "all".into(),
            JoinHistory::OneByOne => "one-by-one".into(),
            JoinHistory::Batches(sizes) => sizes
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join("+"),
        }
    }

    fn describe(&self) -> String {
        match self {
            JoinHistory::All => "all joined a fresh group together".into(),
            JoinHistory::OneByOne => "joined one by one".into(),
            JoinHistory::Batches(sizes) => {
                let mut parts = vec![format!("{} joined together", sizes[0])];
                parts.extend(sizes[1..].iter().map(|n| format!("then {n} more")));
                parts.join(", ")
            }
        }
    }
}

/// `--joins`: a history per member count, `2=one-by-one,3=all,4=3+1`; a bare history sets the
/// default for counts not named (itself `all` when absent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinSpec {
    pub default: JoinHistory,
    pub per_count: BTreeMap<usize, JoinHistory>,
}

impl Default for JoinSpec {
    fn default() -> Self {
        JoinSpec {
            default: JoinHistory::All,
            per_count: BTreeMap::new(),
        }
    }
}

impl JoinSpec {
    pub fn parse(text: &str) -> Result<JoinSpec, String> {
        let mut default = None;
        let mut per_count = BTreeMap::new();
        for item in text.split(',') {
            let item = item.trim();
            if item.is_empty() {
                return Err(format!("--joins {text:?}: empty entry"));
            }
            match item.split_once('=') {
                Some((count, history)) => {
                    let n: usize = count.trim().parse().map_err(|_| {
                        format!("--joins entry {item:?}: {count:?} is not a member count")
                    })?;
                    if n == 0 {
                        return Err(format!("--joins entry {item:?}: a group of 0 members"));
                    }
                    let history = JoinHistory::parse(history)?;
                    history
                        .batches(n)
                        .map_err(|e| format!("--joins {n}: {e}"))?;
                    if per_count.insert(n, history).is_some() {
                        return Err(format!("--joins names {n} members twice"));
                    }
                }
                None => {
                    if default.replace(JoinHistory::parse(item)?).is_some() {
                        return Err(format!(
                            "--joins {text:?}: more than one default history (write N=HISTORY \
                             for a member count)"
                        ));
                    }
                }
            }
        }
        Ok(JoinSpec {
            default: default.unwrap_or(JoinHistory::All),
            per_count,
        })
    }

    pub fn for_count(&self, members: usize) -> &JoinHistory {
        self.per_count.get(&members).unwrap_or(&self.default)
    }
}

/// The first 16 bytes of SHA-256 of the topic name, as a Kafka `Uuid` (shown in URL-safe base64
/// without padding, like every Kafka topic id): a stable stand-in for the random id a broker
/// would give the topic.
pub fn derived_topic_id(name: &str) -> Uuid {
    let digest = Sha256::digest(name.as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Uuid::from_bytes(bytes)
}

/// One group of the table: who its members are (in JoinGroup order) and how it formed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupPlan {
    pub member_ids: Vec<String>,
    pub history: JoinHistory,
}

impl GroupPlan {
    /// Members `c1..cN`.
    pub fn default_ids(members: usize, history: JoinHistory) -> GroupPlan {
        GroupPlan {
            member_ids: (1..=members).map(|i| format!("c{i}")).collect(),
            history,
        }
    }
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
            g.history
                .batches(n)
                .map_err(|e| format!("{n} members: {e}"))?;
        }
        Ok(Section { topics, groups })
    }

    fn label(&self) -> String {
        let total: i64 = self.topics.iter().map(|t| i64::from(t.partitions)).sum();
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
    let subscription: Vec<String> = topics.iter().map(|t| t.name.clone()).collect();
    let topic_idxs: Vec<u32> = (0..topics.len() as u32).collect();
    let member = |id: &String, owned: Vec<TopicPartition>, generation: Option<i32>| Member {
        member_id: id.clone(),
        group_instance_id: None,
        subscription: subscription.clone(),
        topics: topic_idxs.clone(),
        owned,
        generation,
    };
    let mut rebalances: Vec<Rebalance> = Vec::new();
    // What each member holds after the latest rebalance, and that rebalance's generation.
    let mut held: MemberPartitions = Vec::new();
    let mut generation = 0i32;
    let mut joined = 0usize;
    for (step, &batch) in batches.iter().enumerate() {
        let before = joined;
        joined += batch;
        if joined > member_ids.len() {
            return Err(AssignError(format!(
                "join batches add up to {joined}, but there are {} member ids",
                member_ids.len()
            )));
        }
        let mut followup = 0;
        loop {
            let members = member_ids[..joined]
                .iter()
                .enumerate()
                .map(|(i, id)| {
                    if i < before || followup > 0 {
                        let mut owned = held[i].clone();
                        owned.sort_unstable();
                        member(id, owned, Some(generation))
                    } else {
                        member(id, Vec::new(), None)
                    }
                })
                .collect();
            let group = GroupSpec {
                topics: topics.to_vec(),
                members,
                protocol: assignor.default_protocol(),
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
    if joined != member_ids.len() {
        return Err(AssignError(format!(
            "join batches add up to {joined}, but there are {} member ids",
            member_ids.len()
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
            let mut columns = Vec::with_capacity(ASSIGNOR_NAMES.len());
            for &name in ASSIGNOR_NAMES {
                let assignor = by_name(name)?;
                let formation = form_group(assignor, &section.topics, &plan.member_ids, &batches)?;
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

/// `t3a:0,1;t3b:2` (the `kafka-consumer-groups.sh --describe --members --verbose` form), `-`
/// for nothing.
pub fn partitions_text(topics: &[Topic], parts: &[TopicPartition]) -> String {
    let mut by_topic: BTreeMap<u32, Vec<i32>> = BTreeMap::new();
    for tp in parts {
        by_topic.entry(tp.topic).or_default().push(tp.partition);
    }
    if by_topic.is_empty() {
        return "-".into();
    }
    by_topic
        .into_iter()
        .map(|(t, mut ps)| {
            ps.sort_unstable();
            let list = ps.iter().map(i32::to_string).collect::<Vec<_>>().join(",");
            format!("{}:{list}", topics[t as usize].name)
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// The table as text: per section a header, then one block per group with a row per member
/// (JoinGroup order), a column per assignor, then the idle members and the rebalances each
/// assignor took to get there. With `detail`, cells list the partitions too.
pub fn render(tables: &[SectionTable], detail: bool) -> String {
    let mut out = String::new();
    for (i, table) in tables.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let section = &table.section;
        let _ = writeln!(out, "{}", section.label());
        let ids = section
            .topics
            .iter()
            .map(|t| {
                format!(
                    "{}={}",
                    t.name,
                    t.id.map(|u| u.to_string()).unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join(",");
        let _ = writeln!(out, "topic ids (uniform): {ids}");
        for block in &table.blocks {
            out.push('\n');
            render_block(&mut out, section, block, detail);
        }
    }
    out
}

fn render_block(out: &mut String, section: &Section, block: &Block, detail: bool) {
    let n = block.plan.member_ids.len();
    let _ = writeln!(
        out,
        "{n} member{}, {}",
        if n == 1 { "" } else { "s" },
        block.plan.history.describe()
    );
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header = vec!["member".to_string()];
    header.extend(block.columns.iter().map(|c| c.assignor.to_string()));
    rows.push(header);
    for (m, id) in block.plan.member_ids.iter().enumerate() {
        let mut row = vec![id.clone()];
        for c in &block.columns {
            let parts = &c.formation.final_assignment()[m];
            row.push(if detail {
                format!(
                    "{} {}",
                    parts.len(),
                    partitions_text(&section.topics, parts)
                )
            } else {
                parts.len().to_string()
            });
        }
        rows.push(row);
    }
    let mut idle = vec!["idle members".to_string()];
    idle.extend(block.columns.iter().map(|c| c.idle().to_string()));
    rows.push(idle);
    let mut runs = vec!["rebalances".to_string()];
    runs.extend(
        block
            .columns
            .iter()
            .map(|c| c.formation.rebalances.len().to_string()),
    );
    rows.push(runs);

    let widths: Vec<usize> = (0..rows[0].len())
        .map(|col| {
            rows.iter()
                .map(|r| r[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &rows {
        let mut line = String::new();
        for (col, cell) in row.iter().enumerate() {
            let pad = widths[col] - cell.chars().count();
            if col == 0 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str("  ");
                if detail {
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad));
                } else {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                }
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// Topic ids and member ids of the reference `a-table-*` cases (the Kafka runs behind seed 001).
mod seed_001 {
    pub const T3: [(&str, i32, &str); 3] = [
        ("t3a", 3, "jMdmEWaRDT79HRSo1WuUPg"),
        ("t3b", 3, "abPeRiJIgZ5fX_ih8Ogt8g"),
        ("t3c", 3, "Z4p1dmjb3DLA4B3Hilb4Ow"),
    ];
    pub const U1U5: [(&str, i32, &str); 2] = [
        ("u1", 1, "r_v3nkNB399RZ2JGPHnaDg"),
        ("u5", 5, "BeSwdqOkUkatYPjKhj5bWA"),
    ];
    pub const SINGLE: [(&str, i32, &str); 1] = [("t", 3, "0Uho--4r0Wr5mEDYQw0H8g")];
    /// `a-t3x3-4c-3then1-*`: three start together, then `m-369` joins (JoinGroup order).
    pub const RECONSTRUCT_4: [&str; 4] = [
        "consumer-grp-32-98184deb-2dd2-406b-b98e-e103d590349f",
        "m-668",
        "consumer-svc-24-77cec4ca-fe56-4dbb-ac53-2193995da10d",
        "m-369",
    ];
}

/// Names `--preset` accepts.
pub const PRESETS: &[&str] = &["seed-001"];

/// A built-in table. `seed-001`: the seed's three topics x 3 with 2, 3, 4 and 10 consumers, the
/// skewed `u1`(1) + `u5`(5) pair and the single topic `t` of 3 with 2 consumers, formed the way
/// the published layouts were (reference/README.md "The seed 001 table and join history"): 2
/// consumers one by one, 3 together, 4 as three then one with the realistic member ids of the
/// `a-table-reconstruct` cases, 10 together; the topic ids Kafka gave those topics.
pub fn preset(name: &str) -> Result<Vec<Section>, String> {
    match name {
        "seed-001" => {
            let topics = |list: &[(&str, i32, &str)]| -> Vec<Topic> {
                list.iter()
                    .map(|(n, p, id)| Topic {
                        name: n.to_string(),
                        partitions: *p,
                        id: Some(Uuid::parse(id).expect("preset topic id")),
                    })
                    .collect()
            };
            let reconstruct = GroupPlan {
                member_ids: seed_001::RECONSTRUCT_4
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                history: JoinHistory::Batches(vec![3, 1]),
            };
            Ok(vec![
                Section::new(
                    topics(&seed_001::T3),
                    vec![
                        GroupPlan::default_ids(2, JoinHistory::OneByOne),
                        GroupPlan::default_ids(3, JoinHistory::All),
                        reconstruct,
                        GroupPlan::default_ids(10, JoinHistory::All),
                    ],
                )?,
                Section::new(
                    topics(&seed_001::U1U5),
                    vec![GroupPlan::default_ids(2, JoinHistory::OneByOne)],
                )?,
                Section::new(
                    topics(&seed_001::SINGLE),
                    vec![GroupPlan::default_ids(2, JoinHistory::OneByOne)],
                )?,
            ])
        }
        other => Err(format!(
            "unknown preset {other:?} (known: {})",
            PRESETS.join(", ")
        )),
    }
}

/// `--topics t3a=3,t3b=3`: names and partition counts, in the order given.
pub fn parse_topics(text: &str) -> Result<Vec<(String, i32)>, String> {
    let mut out = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        let (name, count) = item.split_once('=').ok_or_else(|| {
            format!("--topics entry {item:?}: expected NAME=PARTITIONS, like t3a=3")
        })?;
        let name = name.trim();
        check_topic_name(name).map_err(|e| format!("--topics entry {item:?}: {e}"))?;
        let count: i32 = count
            .trim()
            .parse()
            .map_err(|_| format!("--topics entry {item:?}: {count:?} is not a partition count"))?;
        if count < 1 {
            return Err(format!(
                "--topics entry {item:?}: a topic has at least 1 partition"
            ));
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(format!("--topics names {name:?} twice"));
        }
        out.push((name.to_string(), count));
    }
    Ok(out)
}

/// `--members 2,3,4,10`: the group sizes, in the order given.
pub fn parse_member_counts(text: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        let n: usize = item
            .parse()
            .map_err(|_| format!("--members entry {item:?} is not a member count"))?;
        if n == 0 {
            return Err("--members: a group needs at least 1 member (got 0)".into());
        }
        if n > MAX_MEMBERS {
            return Err(format!(
                "--members {n}: the table takes at most {MAX_MEMBERS} members"
            ));
        }
        if out.contains(&n) {
            return Err(format!("--members names {n} twice"));
        }
        out.push(n);
    }
    Ok(out)
}

/// `--topic-ids t3a=BASE64,...`: ids for some topics (the rest are derived from their names).
pub fn parse_topic_ids(text: &str) -> Result<BTreeMap<String, Uuid>, String> {
    let mut out = BTreeMap::new();
    for item in text.split(',') {
        let item = item.trim();
        let (name, id) = item.split_once('=').ok_or_else(|| {
            format!("--topic-ids entry {item:?}: expected TOPIC=ID (a 22-character Kafka Uuid)")
        })?;
        let uuid = Uuid::parse(id.trim()).map_err(|e| format!("--topic-ids: {e}"))?;
        if out.insert(name.trim().to_string(), uuid).is_some() {
            return Err(format!("--topic-ids names {:?} twice", name.trim()));
        }
    }
    Ok(out)
}

/// `--member-ids`, each value either `ID,ID,...` (every group takes the first N) or
/// `N=ID,ID,...` (exactly the ids of the N-member group).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemberIds {
    pub default: Option<Vec<String>>,
    pub per_count: BTreeMap<usize, Vec<String>>,
}

impl MemberIds {
    pub fn parse(values: &[String]) -> Result<MemberIds, String> {
        let mut out = MemberIds::default();
        for value in values {
            let (count, list) = match value.split_once('=') {
                Some((n, list)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => {
                    let n: usize = n
                        .parse()
                        .map_err(|_| format!("--member-ids {value:?}: bad member count {n:?}"))?;
                    (Some(n), list)
                }
                _ => (None, value.as_str()),
            };
            let ids: Vec<String> = list.split(',').map(|s| s.trim().to_string()).collect();
            if ids.iter().any(String::is_empty) {
                return Err(format!("--member-ids {value:?}: an empty member id"));
            }
            match count {
                Some(n) => {
                    if ids.len() != n {
                        return Err(format!(
                            "--member-ids {value:?}: {} ids for a group of {n}",
                            ids.len()
                        ));
                    }
                    if out.per_count.insert(n, ids).is_some() {
                        return Err(format!("--member-ids names the {n}-member group twice"));
                    }
                }
                None => {
                    if out.default.replace(ids).is_some() {
                        return Err(
                            "--member-ids: more than one default list (write N=ID,... for one \
                             group size)"
                                .into(),
                        );
                    }
                }
            }
        }
        Ok(out)
    }

    /// The ids of the `n`-member group, in JoinGroup order.
    pub fn for_count(&self, n: usize) -> Result<Vec<String>, String> {
        if let Some(ids) = self.per_count.get(&n) {
            return Ok(ids.clone());
        }
        match &self.default {
            Some(ids) if ids.len() >= n => Ok(ids[..n].to_vec()),
            Some(ids) => Err(format!(
                "--member-ids lists {} ids, but a group has {n} members",
                ids.len()
            )),
            None => Ok((1..=n).map(|i| format!("c{i}")).collect()),
        }
    }
}

/// The section `--topics/--members/--joins/--member-ids/--topic-ids` describe.
pub fn section_from_args(
    topics: &str,
    members: &str,
    joins: Option<&str>,
    member_ids: &[String],
    topic_ids: Option<&str>,
) -> Result<Section, String> {
    let topics = parse_topics(topics)?;
    let counts = parse_member_counts(members)?;
    let joins = joins.map(JoinSpec::parse).transpose()?.unwrap_or_default();
    for n in joins.per_count.keys() {
        if !counts.contains(n) {
            return Err(format!(
                "--joins gives a history for {n} members, but --members has no group of {n}"
            ));
        }
    }
    let ids = MemberIds::parse(member_ids)?;
    for n in ids.per_count.keys() {
        if !counts.contains(n) {
            return Err(format!(
                "--member-ids gives ids for {n} members, but --members has no group of {n}"
            ));
        }
    }
    let topic_ids = topic_ids
        .map(parse_topic_ids)
        .transpose()?
        .unwrap_or_default();
    for name in topic_ids.keys() {
        if !topics.iter().any(|(n, _)| n == name) {
            return Err(format!(
                "--topic-ids names {name:?}, which is not in --topics"
            ));
        }
    }
    let topics = topics
        .into_iter()
        .map(|(name, partitions)| Topic {
            id: Some(
                topic_ids
                    .get(&name)
                    .copied()
                    .unwrap_or_else(|| derived_topic_id(&name)),
            ),
            name,
            partitions,
        })
        .collect();
    let groups = counts
        .iter()
        .map(|&n| {
            let history = joins.for_count(n).clone();
            history
                .batches(n)
                .map_err(|e| format!("{n} members: {e}"))?;
            Ok(GroupPlan {
                member_ids: ids.for_count(n)?,
                history,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Section::new(topics, groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_histories_parse() {
        assert_eq!(JoinHistory::parse("all"), Ok(JoinHistory::All));
        assert_eq!(JoinHistory::parse("one-by-one"), Ok(JoinHistory::OneByOne));
        assert_eq!(
            JoinHistory::parse("3+1"),
            Ok(JoinHistory::Batches(vec![3, 1]))
        );
        assert!(JoinHistory::parse("3+0").is_err());
        assert!(JoinHistory::parse("sometimes")
            .unwrap_err()
            .contains("unknown join history"));
        assert_eq!(JoinHistory::OneByOne.batches(3), Ok(vec![1, 1, 1]));
        assert!(JoinHistory::Batches(vec![3, 2])
            .batches(4)
            .unwrap_err()
            .contains("adds up to 5"));
    }

    #[test]
    fn join_specs_parse_per_count_and_default() {
        let spec = JoinSpec::parse("2=one-by-one,3=all,4=3+1").unwrap();
        assert_eq!(spec.for_count(2), &JoinHistory::OneByOne);
        assert_eq!(spec.for_count(4), &JoinHistory::Batches(vec![3, 1]));
        assert_eq!(spec.for_count(10), &JoinHistory::All);
        let spec = JoinSpec::parse("one-by-one,4=2+2").unwrap();
        assert_eq!(spec.for_count(10), &JoinHistory::OneByOne);
        assert_eq!(spec.for_count(4), &JoinHistory::Batches(vec![2, 2]));
        assert!(JoinSpec::parse("4=3+2")
            .unwrap_err()
            .contains("adds up to 5"));
        assert!(JoinSpec::parse("2=all,2=all")
            .unwrap_err()
            .contains("twice"));
        assert!(JoinSpec::parse("all,one-by-one").is_err());
        assert!(JoinSpec::parse("x=all").is_err());
        assert!(JoinSpec::parse("2=wobbly").is_err());
    }

    #[test]
    fn topics_and_counts_parse_or_say_why_not() {
        assert_eq!(
            parse_topics("t3a=3,t3b=3").unwrap(),
            vec![("t3a".to_string(), 3), ("t3b".to_string(), 3)]
        );
        assert!(parse_topics("t3a:3")
            .unwrap_err()
            .contains("NAME=PARTITIONS"));
        assert!(parse_topics("t=0").unwrap_err().contains("at least 1"));
        assert!(parse_topics("t=x").is_err());
        assert!(parse_topics("a b=1").unwrap_err().contains("legal"));
        assert!(parse_topics("t=1,t=2").unwrap_err().contains("twice"));
        assert_eq!(parse_member_counts("2,3,4,10").unwrap(), vec![2, 3, 4, 10]);
        assert!(parse_member_counts("2,0")
            .unwrap_err()
            .contains("at least 1"));
        assert!(parse_member_counts("two").is_err());
    }

    #[test]
    fn member_ids_default_to_c1_and_take_lists() {
        let ids = MemberIds::parse(&[]).unwrap();
        assert_eq!(ids.for_count(3).unwrap(), ["c1", "c2", "c3"]);
        let ids = MemberIds::parse(&["a,b,c".into(), "2=x,y".into()]).unwrap();
        assert_eq!(ids.for_count(3).unwrap(), ["a", "b", "c"]);
        assert_eq!(ids.for_count(2).unwrap(), ["x", "y"]);
        assert!(ids.for_count(4).is_err());
        assert!(MemberIds::parse(&["2=x".into()]).is_err());
    }

    #[test]
    fn derived_topic_ids_are_sha256_prefixes() {
        // sha256("t3a") starts 2c2bc1f1...; the id is its first 16 bytes in URL-safe base64.
        let id = derived_topic_id("t3a");
        let digest = Sha256::digest(b"t3a");
        assert_eq!(id.to_bytes(), digest[..16]);
        assert_eq!(id.to_string().len(), 22);
        assert_ne!(derived_topic_id("t3a"), derived_topic_id("t3b"));
    }

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
