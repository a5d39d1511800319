//! The table's command-line options: `--joins` histories, `--topics`, `--members`,
//! `--member-ids`, `--topic-ids`, and the section they describe.

use super::{check_topic_name, GroupPlan, Section, MAX_MEMBERS};
use crate::assignor::Topic;
use crate::java::Uuid;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

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

    /// How the group formed, in words (the block header).
    pub fn describe(&self) -> String {
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
        let total: u64 = out.iter().map(|&(_, c)| c as u64).sum();
        if total > crate::assignor::MAX_PARTITIONS {
            return Err(format!(
                "--topics entry {item:?} makes {total} partitions in all, above the limit of {}",
                crate::assignor::MAX_PARTITIONS
            ));
        }
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

/// Topics with their ids: the given one, else [`derived_topic_id`].
pub fn topics_with_ids(topics: Vec<(String, i32)>, ids: &BTreeMap<String, Uuid>) -> Vec<Topic> {
    topics
        .into_iter()
        .map(|(name, partitions)| Topic {
            id: Some(
                ids.get(&name)
                    .copied()
                    .unwrap_or_else(|| derived_topic_id(&name)),
            ),
            name,
            partitions,
        })
        .collect()
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
    let topics = topics_with_ids(topics, &topic_ids);
    let groups = counts
        .iter()
        .map(|&n| {
            let history = joins.for_count(n).clone();
            history
                .batches(n)
                .map_err(|e| format!("{n} members: {e}"))?;
            Ok(GroupPlan::new(ids.for_count(n)?, history))
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
        assert!(parse_topics("t=2000000000")
            .unwrap_err()
            .contains("above the limit of 10000000"));
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
}
