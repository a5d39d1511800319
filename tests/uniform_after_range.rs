//! Issue 67 item 3, through `cgsim assign`: the server `uniform` assignor after a `range` member
//! left a group whose previous target range made. Topic `orders` (6 partitions, the k* scripts'
//! topic id); range gave C orders 0-1, B 2-3 and A 4-5 (members sorted by id, C < B < A); B is
//! gone, so A and C come with their range-made targets as `owned` (Kafka's previous target
//! assignment, TargetAssignmentBuilder.java:463) and B's 2 and 3 are in nobody's.
//!
//! The `members` array is the order `TargetAssignmentBuilder.build` puts the member specs into
//! its `HashMap` (TargetAssignmentBuilder.java:456-466): `group.members()`'s order, Kafka's
//! `TimelineHashMap` of members, which for these ids is C before A although A joined first
//! (they share its slot 0, and its iterator hands out a slot's newest element first,
//! SnapshottableHashTable.java:172).
//! A and C share a bucket of that 16-bucket map, so the uniform assignor meets them in that
//! order (`memberIds()`, GroupSpecImpl.java:82) and the first with room takes partition 2
//! (UniformHomogeneousAssignmentBuilder.java:249-267). Every expected answer here is Kafka
//! 4.3.1's own classes' on JDK 17, fed as reference/README.md "How inputs are fed" says.
//! (cgsim's coordinator still fills its member specs in join order for members sharing a
//! bucket, A before C here: `group::consumer::target::member_spec_order`.)

use crate::cli::cgsim;

const A: &str = "v3uF8LhUKCbNhomp6bvBTQ";
const C: &str = "IyVCpZNiT9A5pPQTyH0DdQ";
/// k03's A and C: C < A too, but in different buckets (A 9, C 12), so uniform meets A first
/// whatever the order they come in.
const K03_A: &str = "tv8atg8DT7-EE-peyX3KCw";
const K03_C: &str = "7sB1rK2dRUeZkrOysdcRWA";

/// One `cgsim assign` line: `assignor` over `orders`, members (id, owned) in this order.
fn assign(assignor: &str, members: &[(&str, &[i32])]) -> String {
    let members: Vec<String> = members
        .iter()
        .map(|(id, owned)| {
            format!(r#"{{"member_id":"{id}","topics":["orders"],"owned":{{"orders":{owned:?}}}}}"#)
        })
        .collect();
    let line = format!(
        r#"{{"id":"issue-67-3","assignor":"{assignor}","topics":{{"orders":6}},"topic_ids":{{"orders":"JOf3PyY7QSq-_xHk7RU6Iw"}},"members":[{}]}}"#,
        members.join(",")
    );
    let out = cgsim(&["assign"], &format!("{line}\n"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .trim_end()
        .to_string()
}

fn answer(a: (&str, &str), c: (&str, &str), subscription_type: bool) -> String {
    // Members sorted by id in the output: C's ids sort first.
    let st = if subscription_type {
        r#","subscription_type":"Homogeneous""#
    } else {
        ""
    };
    format!(
        r#"{{"assignment":{{"{}":{{"orders":[{}]}},"{}":{{"orders":[{}]}}}},"id":"issue-67-3"{st}}}"#,
        c.0, c.1, a.0, a.1
    )
}

/// Kafka's answer in the issue: A orders 3, 4, 5 and C 0, 1, 2.
#[test]
fn uniform_in_kafkas_member_order_gives_c_the_first_freed_partition() {
    assert_eq!(
        assign("uniform", &[(C, &[0, 1]), (A, &[4, 5])]),
        answer((A, "3,4,5"), (C, "0,1,2"), true)
    );
}

/// The members in join order instead (A first): what cgsim's target builder used to hand
/// uniform, and what Kafka's uniform answers to that order too (the issue's cgsim answer).
#[test]
fn uniform_in_join_order_gives_a_the_first_freed_partition() {
    assert_eq!(
        assign("uniform", &[(A, &[4, 5]), (C, &[0, 1])]),
        answer((A, "2,4,5"), (C, "0,1,3"), true)
    );
}

/// With k03's ids uniform gives A 2 in either order; Kafka's answer in the issue is then
/// server range's (the target A's heartbeat computes when the 1:1 tie goes to A's `range`).
#[test]
fn with_ids_in_different_buckets_uniform_gives_a_2_and_range_gives_the_issues_answer() {
    for members in [
        [(K03_C, &[0, 1][..]), (K03_A, &[4, 5][..])],
        [(K03_A, &[4, 5][..]), (K03_C, &[0, 1][..])],
    ] {
        assert_eq!(
            assign("uniform", &members),
            answer((K03_A, "2,4,5"), (K03_C, "0,1,3"), true)
        );
        assert_eq!(
            assign("server-range", &members),
            answer((K03_A, "3,4,5"), (K03_C, "0,1,2"), true)
        );
    }
}
