//! Unit tests for the orders the uniform assignor inherits from Kafka's Java collections, and
//! for the builders' steps. Uuids `{msb: 0, lsb: k}` (small k) hash to `k`, so their bucket in a
//! table of 16 is `k % 16`; member ids "c1" and "c3" hash to buckets 14 and 0, so `memberIds()`
//! iterates c3 before c1.

use super::heterogeneous::topic_order;
use super::homogeneous::subscribed_topic_set;
use super::*;
use crate::assignor::test_support::{group, named};
use crate::assignor::TopicPartition;
use proptest::prelude::*;
use std::cmp::Ordering;

fn uuid(lsb: i64) -> Uuid {
    Uuid { msb: 0, lsb }
}

/// A group whose topics get the given ids (by name).
fn group_with_ids(
    topics: &[(&str, i32, Uuid)],
    members: &[(&str, &[&str])],
) -> crate::assignor::GroupSpec {
    let plain: Vec<(&str, i32)> = topics.iter().map(|(n, p, _)| (*n, *p)).collect();
    let mut g = group(&plain, members);
    for (name, _, id) in topics {
        let t = g.topic_index(name).unwrap();
        g.topics[t as usize].id = Some(*id);
    }
    g
}

fn ids_of(g: &crate::assignor::GroupSpec) -> Vec<Option<Uuid>> {
    let (previous, _) = PreviousOwners::new(g, g.same_topics(), None).unwrap();
    topic_ids(g, subscription_type(g, g.same_topics()), &previous).unwrap()
}

fn own(g: &mut crate::assignor::GroupSpec, member: &str, topic: &str, parts: &[i32]) {
    let t = g.topic_index(topic).unwrap();
    let m = g
        .members
        .iter_mut()
        .find(|m| m.member_id == member)
        .unwrap();
    m.owned
        .extend(parts.iter().map(|&p| TopicPartition::new(t, p)));
}

fn run(g: &crate::assignor::GroupSpec) -> Vec<(String, Vec<String>)> {
    let r = UniformAssignor.assign(g).unwrap();
    named(g, &r.assignment)
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn member_ids_iterate_in_java_hash_map_order() {
    let g = group(
        &[("t", 1)],
        &[("c1", &["t"]), ("c2", &["t"]), ("c3", &["t"])],
    );
    // Buckets: c1 14, c2 15, c3 0.
    assert_eq!(member_ids_order(&g.members), [2, 0, 1]);
}

#[test]
fn homogeneous_unassigned_partitions_follow_the_topic_id_set_order() {
    // b's id lands in bucket 2, a's in bucket 5: the HashSet<Uuid> iterates b first, so b-0
    // heads the unassigned list and goes to the first member in memberIds() order, c3.
    let g = group_with_ids(
        &[("a", 1, uuid(5)), ("b", 1, uuid(2))],
        &[("c1", &["a", "b"]), ("c3", &["a", "b"])],
    );
    assert_eq!(
        run(&g),
        [
            ("c1".to_string(), names(&["a-0"])),
            ("c3".to_string(), names(&["b-0"]))
        ]
    );
    let g = group_with_ids(
        &[("a", 1, uuid(2)), ("b", 1, uuid(5))],
        &[("c1", &["a", "b"]), ("c3", &["a", "b"])],
    );
    assert_eq!(
        run(&g),
        [
            ("c1".to_string(), names(&["b-0"])),
            ("c3".to_string(), names(&["a-0"]))
        ]
    );
}

#[test]
fn homogeneous_topic_set_is_sized_by_subscribed_names_including_missing_topics() {
    // TopicIds.size() counts every subscribed name, so a subscription of 12 names (10 of them
    // missing from the metadata) makes `new HashSet<>(topicIds)` a table of 32 on JDK 17, where
    // the id hashing to 17 comes after the one hashing to 3; in a table of 16 it would come
    // first (bucket 1).
    let subs: Vec<String> = (0..10).map(|i| format!("gone{i}")).collect();
    let mut all: Vec<&str> = subs.iter().map(String::as_str).collect();
    all.extend(["x", "y"]);
    let g = group_with_ids(
        &[("x", 1, uuid(17)), ("y", 1, uuid(3))],
        &[("c1", &all), ("c3", &all)],
    );
    let ids = ids_of(&g);
    let set: Vec<&str> = subscribed_topic_set(&g, &ids, 0)
        .into_iter()
        .map(|t| g.topic(t).name.as_str())
        .collect();
    assert_eq!(set, ["y", "x"]);

    let g = group_with_ids(
        &[("x", 1, uuid(17)), ("y", 1, uuid(3))],
        &[("c1", &["x", "y"]), ("c3", &["x", "y"])],
    );
    let set: Vec<&str> = subscribed_topic_set(&g, &ids, 0)
        .into_iter()
        .map(|t| g.topic(t).name.as_str())
        .collect();
    assert_eq!(set, ["x", "y"]);
}

#[test]
fn homogeneous_member_over_quota_keeps_the_first_partitions_in_hash_set_order() {
    // 18 partitions over 3 members: quota 6 each. c3 (first in memberIds order) held 7, listed
    // as [17, 16, 5, 4, 3, 2, 1]: `new HashSet<>(that)` has 16 buckets and iterates
    // 16, 17, 1, 2, 3, 4, 5 (17 and 1 share bucket 1, in insertion order). It keeps the first 6
    // and gives up 5, not 17; 5 joins the end of the unassigned list.
    let mut g = group_with_ids(
        &[("t", 18, uuid(1))],
        &[("c1", &["t"]), ("c2", &["t"]), ("c3", &["t"])],
    );
    own(&mut g, "c3", "t", &[17, 16, 5, 4, 3, 2, 1]);
    let got = run(&g);
    let t = |ps: &[i32]| -> Vec<String> {
        let mut v: Vec<i32> = ps.to_vec();
        v.sort();
        v.iter().map(|p| format!("t-{p}")).collect()
    };
    // memberIds order c3, c1, c2: c1 then c2 fill from [0, 6..=15, 5].
    assert_eq!(
        got,
        [
            ("c1".to_string(), t(&[0, 6, 7, 8, 9, 10])),
            ("c2".to_string(), t(&[11, 12, 13, 14, 15, 5])),
            ("c3".to_string(), t(&[16, 17, 1, 2, 3, 4])),
        ]
    );
}

#[test]
fn homogeneous_over_quota_member_walks_its_topics_in_id_bucket_order() {
    // c3 held a (id bucket 9) and b (bucket 4), listed a first; the map iterates b first, so
    // with a quota of 2 it keeps b's two partitions and gives up a's.
    let mut g = group_with_ids(
        &[("a", 2, uuid(9)), ("b", 2, uuid(4))],
        &[("c1", &["a", "b"]), ("c3", &["a", "b"])],
    );
    own(&mut g, "c3", "a", &[0, 1]);
    own(&mut g, "c3", "b", &[0, 1]);
    assert_eq!(
        run(&g),
        [
            ("c1".to_string(), names(&["a-0", "a-1"])),
            ("c3".to_string(), names(&["b-0", "b-1"]))
        ]
    );
}

#[test]
fn homogeneous_balanced_previous_assignment_stays_put_whoever_holds_the_extra() {
    // 7 partitions, 3 members: one extra. The last member in memberIds order (c2) holds it;
    // since KAFKA-18688 the earlier members give the extra slot back instead of forcing a move.
    let mut g = group_with_ids(
        &[("t", 7, uuid(1))],
        &[("c1", &["t"]), ("c2", &["t"]), ("c3", &["t"])],
    );
    own(&mut g, "c3", "t", &[0, 1]);
    own(&mut g, "c1", "t", &[2, 3]);
    own(&mut g, "c2", "t", &[4, 5, 6]);
    assert_eq!(
        run(&g),
        [
            ("c1".to_string(), names(&["t-2", "t-3"])),
            ("c2".to_string(), names(&["t-4", "t-5", "t-6"])),
            ("c3".to_string(), names(&["t-0", "t-1"]))
        ]
    );
}

#[test]
fn homogeneous_last_members_must_take_the_extras() {
    // 8 partitions, 3 members, 2 extras. c3 holds 2 and gives its extra slot back (two members
    // remain for two extras); c1 holds 1 and c2 nothing: both must take an extra, so they end
    // with 3 each, c1 taking the first two free partitions.
    let mut g = group_with_ids(
        &[("t", 8, uuid(1))],
        &[("c1", &["t"]), ("c2", &["t"]), ("c3", &["t"])],
    );
    own(&mut g, "c3", "t", &[0, 1]);
    own(&mut g, "c1", "t", &[7]);
    assert_eq!(
        run(&g),
        [
            ("c1".to_string(), names(&["t-2", "t-3", "t-7"])),
            ("c2".to_string(), names(&["t-4", "t-5", "t-6"])),
            ("c3".to_string(), names(&["t-0", "t-1"]))
        ]
    );
}

#[test]
fn heterogeneous_topic_order_is_ratio_desc_then_subscribers_asc_then_uuid_asc() {
    let g = group_with_ids(
        &[
            ("w", 10, uuid(1)),
            ("x", 6, uuid(2)),
            ("y", 3, uuid(3)),
            // Negative msb: first in Uuid.compareTo (signed), though last as unsigned bytes.
            ("z", 3, Uuid { msb: -5, lsb: 0 }),
        ],
        &[("c1", &["w", "x", "y", "z"]), ("c2", &["w", "x"])],
    );
    let ids = ids_of(&g);
    let mut subscribers = vec![Vec::new(); 4];
    for (i, m) in g.members.iter().enumerate() {
        for &t in &m.topics {
            subscribers[t as usize].push(i as u32);
        }
    }
    let mut topics: Vec<TopicIdx> = vec![0, 1, 2, 3];
    topics.sort_by(|&a, &b| topic_order(&g, &ids, &subscribers, a, b));
    let order: Vec<&str> = topics.iter().map(|&t| g.topic(t).name.as_str()).collect();
    // w: 5 per subscriber; x: 3 with 2 subscribers; y and z: 3 with 1 subscriber, so before x;
    // z's id sorts before y's.
    assert_eq!(order, ["w", "z", "y", "x"]);
    assert_eq!(
        topic_order(&g, &ids, &subscribers, 0, 0),
        Ordering::Equal,
        "a total order"
    );
}

#[test]
fn heterogeneous_equal_loads_go_to_the_earlier_member_in_member_ids_order() {
    // t (3 partitions, c1 and c3) comes before u (1 partition, c1 only): 1.5 > 1 per subscriber.
    // Equally loaded, c3 (index 0 in memberIds order) is served first: t-0 and t-2.
    let g = group_with_ids(
        &[("t", 3, uuid(1)), ("u", 1, uuid(2))],
        &[("c1", &["t", "u"]), ("c3", &["t"])],
    );
    let r = UniformAssignor.assign(&g).unwrap();
    assert_eq!(r.subscription_type, Some(SubscriptionType::Heterogeneous));
    assert_eq!(
        named(&g, &r.assignment),
        [
            ("c1".to_string(), names(&["t-1", "u-0"])),
            ("c3".to_string(), names(&["t-0", "t-2"]))
        ]
    );
}

#[test]
fn heterogeneous_balance_moves_the_donors_highest_partitions() {
    // c1 keeps all of t and gets u (its own topic): 7 against 0. Balancing t moves t-5, t-4,
    // t-3 to c3 and stops once the levels are within one (4 against 3).
    let mut g = group_with_ids(
        &[("t", 6, uuid(1)), ("u", 1, uuid(2))],
        &[("c1", &["t", "u"]), ("c3", &["t"])],
    );
    own(&mut g, "c1", "t", &[0, 1, 2, 3, 4, 5]);
    assert_eq!(
        run(&g),
        [
            ("c1".to_string(), names(&["t-0", "t-1", "t-2", "u-0"])),
            ("c3".to_string(), names(&["t-3", "t-4", "t-5"]))
        ]
    );
}

#[test]
fn heterogeneous_drops_partitions_of_topics_no_longer_subscribed() {
    let mut g = group_with_ids(
        &[("t", 2, uuid(1)), ("u", 2, uuid(2))],
        &[("c1", &["t"]), ("c3", &["t", "u"])],
    );
    // c1 no longer subscribes to u: it keeps t-1 only. u (2 per subscriber) is handed out
    // before t (1 per subscriber): c3 takes u-0 and u-1, and is then the more loaded of t's
    // subscribers, so t-0 goes to c1.
    own(&mut g, "c1", "u", &[0, 1]);
    own(&mut g, "c1", "t", &[1]);
    assert_eq!(
        run(&g),
        [
            ("c1".to_string(), names(&["t-0", "t-1"])),
            ("c3".to_string(), names(&["u-0", "u-1"]))
        ]
    );
}

#[test]
fn refuses_topics_without_ids_and_double_claims() {
    let g = group(&[("orders", 2)], &[("c1", &["orders"])]);
    let err = UniformAssignor.assign(&g).unwrap_err();
    assert!(err.0.contains("\"orders\""), "{err}");

    let mut g = group_with_ids(&[("t", 2, uuid(1))], &[("c1", &["t"]), ("c3", &["t"])]);
    own(&mut g, "c1", "t", &[0]);
    own(&mut g, "c3", "t", &[0]);
    let err = UniformAssignor.assign(&g).unwrap_err();
    assert!(err.0.contains("t-0") && err.0.contains("c3"), "{err}");

    let g = group_with_ids(
        &[("a", 1, uuid(1)), ("b", 1, uuid(1))],
        &[("c1", &["a", "b"])],
    );
    assert!(UniformAssignor.assign(&g).is_err());

    let mut g = group_with_ids(&[("t", 2, uuid(1))], &[("c1", &["t"])]);
    g.members[0].owned.push(TopicPartition::new(0, 2));
    assert!(UniformAssignor.assign(&g).is_err());
}

#[test]
fn fast_subscription_type_agrees_with_the_name_based_rule() {
    let cases: [&[(&str, &[&str])]; 4] = [
        &[("c1", &["a", "b"]), ("c3", &["a", "b"])],
        &[("c1", &["a", "b"]), ("c3", &["a"])],
        // Same topics in the metadata, different names: heterogeneous in Kafka.
        &[("c1", &["a", "gone"]), ("c3", &["a"])],
        &[("c1", &["a", "gone"]), ("c3", &["a", "gone"])],
    ];
    for members in cases {
        let g = group_with_ids(&[("a", 1, uuid(1)), ("b", 1, uuid(2))], members);
        assert_eq!(
            subscription_type(&g, g.same_topics()),
            SubscriptionType::of(&g),
            "{members:?}"
        );
    }
}

#[test]
fn empty_group_and_empty_subscriptions_assign_nothing() {
    let g = group_with_ids(&[("t", 2, uuid(1))], &[]);
    let r = UniformAssignor.assign(&g).unwrap();
    assert!(r.assignment.is_empty());
    let g = group_with_ids(
        &[("t", 2, uuid(1))],
        &[("c1", &["gone"]), ("c3", &["gone"])],
    );
    let r = UniformAssignor.assign(&g).unwrap();
    assert_eq!(r.subscription_type, Some(SubscriptionType::Homogeneous));
    assert!(r.assignment.iter().all(Vec::is_empty));
}

/// A random group: up to 5 topics (some possibly unsubscribed, one subscribed name missing from
/// the metadata), up to 8 members, and a random valid previous target assignment (each
/// partition to at most one member, possibly of a topic that member dropped).
fn arb_group() -> impl Strategy<Value = crate::assignor::GroupSpec> {
    (1usize..=5, 1usize..=8, any::<bool>()).prop_flat_map(|(nt, nm, same)| {
        (
            proptest::collection::vec(0i32..=12, nt),
            proptest::collection::vec(any::<(i64, i64)>(), nt),
            proptest::collection::vec(proptest::collection::vec(any::<bool>(), nt + 1), nm),
            proptest::collection::vec(proptest::collection::vec(0usize..=2 * nm, 13), nt),
            Just(same),
        )
            .prop_map(move |(counts, idbits, subs, owners, same)| {
                let names: Vec<String> = (0..nt).map(|i| format!("topic-{i}")).collect();
                let member_ids: Vec<String> = (0..nm).map(|i| format!("m-{i}")).collect();
                let subs: Vec<Vec<String>> = (0..nm)
                    .map(|m| {
                        let row = if same { &subs[0] } else { &subs[m] };
                        let mut s: Vec<String> = (0..nt)
                            .filter(|&t| row[t])
                            .map(|t| names[t].clone())
                            .collect();
                        if row[nt] {
                            s.push("missing".into());
                        }
                        s
                    })
                    .collect();
                let topics: Vec<(&str, i32)> = names
                    .iter()
                    .zip(&counts)
                    .map(|(n, &c)| (n.as_str(), c))
                    .collect();
                let sub_refs: Vec<Vec<&str>> = subs
                    .iter()
                    .map(|s| s.iter().map(String::as_str).collect())
                    .collect();
                let members: Vec<(&str, &[&str])> = member_ids
                    .iter()
                    .zip(&sub_refs)
                    .map(|(m, s)| (m.as_str(), s.as_slice()))
                    .collect();
                let mut g = group(&topics, &members);
                for (i, name) in names.iter().enumerate() {
                    let t = g.topic_index(name).unwrap() as usize;
                    // Distinct ids: the low bits carry the topic number.
                    let (msb, lsb) = idbits[i];
                    g.topics[t].id = Some(Uuid {
                        msb,
                        lsb: (lsb & !0xff) | i as i64,
                    });
                }
                for (i, name) in names.iter().enumerate() {
                    let t = g.topic_index(name).unwrap();
                    for p in 0..counts[i] {
                        let o = owners[i][p as usize];
                        if o < nm {
                            g.members[o].owned.push(TopicPartition::new(t, p));
                        }
                    }
                }
                g
            })
    })
}

proptest! {
    #[test]
    fn every_subscribed_partition_goes_to_exactly_one_subscriber(g in arb_group()) {
        let r = UniformAssignor.assign(&g).unwrap();
        prop_assert_eq!(r.assignment.len(), g.members.len());
        let mut seen = std::collections::BTreeSet::new();
        for (m, parts) in g.members.iter().zip(&r.assignment) {
            for tp in parts {
                prop_assert!(m.subscribes(tp.topic), "{} got unsubscribed {:?}", m.member_id, tp);
                prop_assert!(seen.insert(*tp), "{:?} assigned twice", tp);
            }
        }
        let subscribed = g.subscribed_topics();
        let expected: usize = subscribed.iter().map(|&t| g.topic(t).partitions as usize).sum();
        prop_assert_eq!(seen.len(), expected);
        if r.subscription_type == Some(SubscriptionType::Homogeneous) {
            let sizes: Vec<usize> = r.assignment.iter().map(Vec::len).collect();
            let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            prop_assert!(hi - lo <= 1, "homogeneous sizes {:?}", sizes);
        }
    }

    #[test]
    fn homogeneous_result_fed_back_as_previous_target_stays_put(g in arb_group()) {
        // KAFKA-18688: a balanced previous assignment is kept, whoever holds the extras.
        let first = UniformAssignor.assign(&g).unwrap();
        prop_assume!(first.subscription_type == Some(SubscriptionType::Homogeneous));
        let mut again = g.clone();
        for (m, parts) in again.members.iter_mut().zip(&first.assignment) {
            m.owned = parts.clone();
        }
        let second = UniformAssignor.assign(&again).unwrap();
        prop_assert_eq!(named(&g, &first.assignment), named(&g, &second.assignment));
    }
}

proptest! {
    /// The homogeneous builder gives the same lists whether they start as the claim pass's
    /// copies of what each member held or are built from `owned` as it goes, including members
    /// over quota and members that held topics they dropped.
    #[test]
    fn homogeneous_copied_lists_match_lists_built_as_it_goes(g in arb_group()) {
        prop_assume!(subscription_type(&g, g.same_topics()) == SubscriptionType::Homogeneous);
        let (plain, _) = PreviousOwners::new(&g, g.same_topics(), None).unwrap();
        let ids = topic_ids(&g, SubscriptionType::Homogeneous, &plain).unwrap();
        let order = member_ids_order(&g.members);
        let built = homogeneous::assign(&g, &ids, &order, &plain, Vec::new()).unwrap();
        let capacity = homogeneous::quota_bound(&g);
        let (copying, kept) = PreviousOwners::new(&g, g.same_topics(), capacity).unwrap();
        prop_assert_eq!(kept.len(), g.members.len());
        let copied = homogeneous::assign(&g, &ids, &order, &copying, kept).unwrap();
        prop_assert_eq!(built, copied);
    }
}
