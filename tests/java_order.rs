//! The Java collection emulation against orders printed by a real JDK 17 (`java Orders`, a
//! small program that builds each collection the same way and prints it).

use cgsim::java::{Capacity, JavaHashMap, JavaHashSet};

fn set_of_strings(cap: Capacity, items: &[&str]) -> Vec<String> {
    let mut s = JavaHashSet::new(cap);
    for i in items {
        s.insert(i.to_string());
    }
    s.iter().cloned().collect()
}

#[test]
fn short_member_ids_c1_to_c10() {
    let ids: Vec<String> = (1..=10).map(|i| format!("c{i}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    assert_eq!(
        set_of_strings(Capacity::Default, &refs),
        ["c3", "c4", "c5", "c6", "c10", "c7", "c8", "c9", "c1", "c2"]
    );
}

#[test]
fn a_map_of_fourteen_member_ids_resizes_to_32() {
    let ids = [
        "consumer-grp-1-5f0c2a2e-6f1b-4c1e-9a57-0d2a3b4c5d6e",
        "consumer-grp-2-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9",
        "consumer-grp-3-ffeeddcc-bbaa-9988-7766-554433221100",
        "pod-1-3e7a9d42-1c2b-4f5e-8d6c-7b8a9f0e1d2c",
        "pod-2-9c8b7a6f-5e4d-3c2b-1a09-f8e7d6c5b4a3",
        "member-x",
        "member-y",
        "Aa",
        "BB",
        "c10",
        "c2",
        "c3",
        "c4",
        "t3a",
    ];
    let mut m = JavaHashMap::new(Capacity::Default);
    for id in ids {
        m.insert(id.to_string(), 0);
    }
    let keys: Vec<&str> = m.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "Aa",
            "BB",
            "consumer-grp-2-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9",
            "consumer-grp-3-ffeeddcc-bbaa-9988-7766-554433221100",
            "c10",
            "t3a",
            "consumer-grp-1-5f0c2a2e-6f1b-4c1e-9a57-0d2a3b4c5d6e",
            "member-y",
            "pod-2-9c8b7a6f-5e4d-3c2b-1a09-f8e7d6c5b4a3",
            "member-x",
            "c2",
            "c3",
            "c4",
            "pod-1-3e7a9d42-1c2b-4f5e-8d6c-7b8a9f0e1d2c",
        ]
    );
    assert_eq!(m.capacity(), 32);
}

#[test]
fn copy_constructor_sizes_as_jdk17() {
    let l = [31, 15, 47, 0, 16, 32, 1, 17, 33, 2, 18, 34];
    // 12 elements: capacity 32 on JDK 17 (16 on JDK 21+).
    let s = JavaHashSet::copy_of(l.iter().copied());
    assert_eq!(
        s.iter().copied().collect::<Vec<i32>>(),
        [0, 32, 1, 33, 2, 34, 15, 47, 16, 17, 18, 31]
    );
    let s = JavaHashSet::copy_of(l[..11].iter().copied());
    assert_eq!(
        s.iter().copied().collect::<Vec<i32>>(),
        [0, 16, 32, 1, 17, 33, 2, 18, 31, 15, 47]
    );
}

#[test]
fn growth_past_twelve_keeps_bucket_chains_in_insertion_order() {
    let mut s = JavaHashSet::new(Capacity::Default);
    for x in [40, 8, 24, 56, 72, 3, 19, 35, 51, 67, 83, 99, 115] {
        s.insert(x);
    }
    assert_eq!(
        s.iter().copied().collect::<Vec<i32>>(),
        [3, 35, 67, 99, 40, 8, 72, 19, 51, 83, 115, 24, 56]
    );
}

#[test]
fn remove_then_add_goes_to_the_tail_of_its_bucket() {
    let mut s = JavaHashSet::copy_of(["BB", "Aa", "C#"].map(String::from));
    s.remove(&"BB".to_string());
    s.insert("BB".to_string());
    assert_eq!(s.iter().cloned().collect::<Vec<_>>(), ["Aa", "C#", "BB"]);
}

#[test]
fn assignor_names() {
    let names = [
        "range",
        "roundrobin",
        "sticky",
        "cooperative-sticky",
        "uniform",
    ];
    assert_eq!(
        set_of_strings(Capacity::CopyOfSet(5), &names),
        [
            "uniform",
            "sticky",
            "range",
            "roundrobin",
            "cooperative-sticky"
        ]
    );
}
