//! `[[members]]`: at least one member; a `count` family expanded into `name1..nameN`; every
//! member named once and every static `group_instance_id` used once (Kafka fences a second
//! member with the same one); each member built by `scenario::members::member_spec`.

use crate::scenario::file::MemberFile;
use crate::scenario::members::{member_spec, Invalid, MemberContext};
use crate::scenario::MemberSpec;
use std::collections::BTreeSet;
use toml::Spanned;

/// Each member's entry and its number in it (from 1), by member: a timeline restart's `set` is
/// read over the entry, and a static id template's `{n}` is the number.
pub(super) type EntryOf<'f> = Vec<(&'f MemberFile, usize)>;

/// The members, in file order (a family's in its order), and each one's entry. An error names
/// the entry.
pub(super) fn member_specs<'f>(
    entries: &'f [Spanned<MemberFile>],
    cx: &MemberContext,
) -> Result<(Vec<MemberSpec>, EntryOf<'f>), Invalid> {
    let mut members: Vec<MemberSpec> = Vec::new();
    let mut entry_of: EntryOf = Vec::new();
    let mut instance_ids = BTreeSet::new();
    // Every name so far: a group of a thousand members is checked in n log n, not n².
    let mut declared: BTreeSet<String> = BTreeSet::new();
    for entry in entries {
        let span = Some(entry.span());
        let m = entry.get_ref();
        let names: Vec<String> = match m.count {
            None => vec![m.name.clone()],
            Some(0) => {
                return Err((
                    span,
                    format!("member {:?}: count must be at least 1", m.name),
                ))
            }
            Some(n) => (1..=n).map(|i| format!("{}{i}", m.name)).collect(),
        };
        // With `count`, a static id is a template: `{n}` is each member's number (pod-{n}).
        let templated = m
            .group_instance_id
            .as_deref()
            .is_some_and(|id| id.contains("{n}"));
        if m.count.is_some() && m.group_instance_id.is_some() && !templated {
            return Err((
                span,
                format!(
                    "member {:?}: a group_instance_id cannot be shared by {} members (write it as a template, \"pod-{{n}}\")",
                    m.name,
                    names.len()
                ),
            ));
        }
        for (i, name) in names.into_iter().enumerate() {
            if !declared.insert(name.clone()) {
                return Err((span, format!("member {name:?} is declared twice")));
            }
            let spec = member_spec(m, name, i + 1, span.clone(), cx)?;
            if let Some(id) = &spec.group_instance_id {
                if !instance_ids.insert(id.clone()) {
                    return Err((span, format!("group_instance_id {id:?} is used twice")));
                }
            }
            members.push(spec);
            entry_of.push((m, i + 1));
        }
    }
    if members.is_empty() {
        return Err((
            None,
            "a scenario needs at least one [[members]] entry".into(),
        ));
    }
    Ok((members, entry_of))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::file::GroupFile;
    use crate::scenario::GroupSpec;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Doc {
        #[serde(default)]
        members: Vec<Spanned<MemberFile>>,
    }

    fn entries(text: &str) -> Vec<Spanned<MemberFile>> {
        toml::from_str::<Doc>(text)
            .expect("a valid snippet")
            .members
    }

    /// Kafka's default group settings, from an empty `[group]` (the group's own checks are
    /// `group.rs`'s).
    fn group() -> GroupSpec {
        super::super::group::group_spec(&GroupFile::default(), crate::scenario::Protocol::Classic)
            .expect("the defaults are valid")
    }

    /// Each member's name, static id and number in its entry, or the first refusal.
    fn built(text: &str) -> Result<Vec<(String, Option<String>, usize)>, Invalid> {
        let group = group();
        let group_assignors = ["range".to_string()];
        let cx = MemberContext {
            group: &group,
            group_assignors: &group_assignors,
            assignors_span: None,
            clear_member_assignors: false,
            topics: vec!["orders".into()],
        };
        let entries = entries(text);
        let (members, entry_of) = member_specs(&entries, &cx)?;
        assert_eq!(members.len(), entry_of.len());
        Ok(members
            .into_iter()
            .zip(entry_of)
            .map(|(m, (_, n))| (m.name, m.group_instance_id, n))
            .collect())
    }

    #[test]
    fn a_count_family_is_numbered_from_one_with_its_static_ids_filled_in() {
        let text = r#"
            [[members]]
            name = "solo"

            [[members]]
            name = "pod"
            count = 2
            group_instance_id = "pod-{n}"
        "#;
        assert_eq!(
            built(text).unwrap(),
            [
                ("solo".into(), None, 1),
                ("pod1".into(), Some("pod-1".into()), 1),
                ("pod2".into(), Some("pod-2".into()), 2),
            ]
        );
    }

    #[test]
    fn a_member_named_twice_is_refused_at_the_entry_that_repeats_it() {
        // `c` with count 2 makes c1 and c2: a member of its own named c2 clashes.
        let text = r#"
            [[members]]
            name = "c"
            count = 2

            [[members]]
            name = "c2"
        "#;
        let e = built(text).unwrap_err();
        assert_eq!(e.1, "member \"c2\" is declared twice");
        assert_eq!(e.0, Some(entries(text)[1].span()));
    }

    #[test]
    fn a_static_id_is_used_once() {
        let shared = "[[members]]\nname = \"pod\"\ncount = 3\ngroup_instance_id = \"pod\"\n";
        assert_eq!(
            built(shared).unwrap_err().1,
            "member \"pod\": a group_instance_id cannot be shared by 3 members (write it as a template, \"pod-{n}\")"
        );
        let twice = r#"
            [[members]]
            name = "a"
            group_instance_id = "x"

            [[members]]
            name = "b"
            group_instance_id = "x"
        "#;
        assert_eq!(
            built(twice).unwrap_err().1,
            "group_instance_id \"x\" is used twice"
        );
    }

    #[test]
    fn an_empty_family_or_no_member_at_all_is_refused() {
        assert_eq!(
            built("[[members]]\nname = \"c\"\ncount = 0\n")
                .unwrap_err()
                .1,
            "member \"c\": count must be at least 1"
        );
        assert_eq!(
            built("").unwrap_err(),
            (
                None,
                "a scenario needs at least one [[members]] entry".into()
            )
        );
    }

    #[test]
    fn a_members_own_error_names_its_entry() {
        // From `member_spec`: the member's own subscription is checked against the topics.
        let text = r#"
            [[members]]
            name = "a"

            [[members]]
            name = "b"
            topics = ["payments"]
        "#;
        let e = built(text).unwrap_err();
        assert_eq!(e.1, "member \"b\" subscribes to unknown topic \"payments\"");
        assert_eq!(e.0, Some(entries(text)[1].span()));
    }
}
