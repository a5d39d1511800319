//! The classic group's members, and beside them each protocol's count over the members'
//! protocol lists, as Kafka's `ClassicGroup` keeps `supportedProtocols` up to date in `add`,
//! `remove` and `updateMember`. A JoinGroup asks whether a protocol is listed by every member
//! (`supportsProtocols`) and the selection votes among those: with the counts at hand both are
//! a lookup, not a walk over the whole group at every join (a million string comparisons per
//! rebalance of a thousand members).
//!
//! Reading goes through the map itself (`Deref`); every change of who is a member or what they
//! list goes through here, so the counts cannot drift. The map is a Java `HashMap` on the
//! broker: its order is the JoinGroup response's member order and picks a new leader.

use super::{GroupMember, JoinProtocol};
use crate::java::{Capacity, JavaHashMap};
use std::collections::BTreeMap;
use std::ops::Deref;

pub(super) struct Members {
    map: JavaHashMap<String, GroupMember>,
    /// Protocol name -> how many times the members' lists name it.
    listed: BTreeMap<String, usize>,
}

impl Default for Members {
    fn default() -> Self {
        Members {
            map: JavaHashMap::new(Capacity::Default),
            listed: BTreeMap::new(),
        }
    }
}

impl Deref for Members {
    type Target = JavaHashMap<String, GroupMember>;

    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl Members {
    /// `ClassicGroup.add` (or a member moved to a new id): its protocols are counted.
    pub(super) fn insert(&mut self, id: String, member: GroupMember) {
        count(&mut self.listed, &member.protocols);
        if let Some(old) = self.map.insert(id, member) {
            uncount(&mut self.listed, &old.protocols);
        }
    }

    /// `ClassicGroup.remove`: its protocols are no longer counted.
    pub(super) fn remove(&mut self, id: &str) -> Option<GroupMember> {
        let member = self.map.remove(id)?;
        uncount(&mut self.listed, &member.protocols);
        Some(member)
    }

    /// `updateMember`: the member's protocols are now `protocols`.
    pub(super) fn set_protocols(&mut self, id: &str, protocols: Vec<JoinProtocol>) {
        let Some(member) = self.map.get_mut(id) else {
            return;
        };
        uncount(&mut self.listed, &member.protocols);
        member.protocols = protocols;
        count(&mut self.listed, &member.protocols);
    }

    /// A member to change in place. Its protocols change only through
    /// [`Members::set_protocols`] (debug builds check the counts against them).
    pub(super) fn get_mut(&mut self, id: &str) -> Option<&mut GroupMember> {
        self.map.get_mut(id)
    }

    pub(super) fn values_mut(&mut self) -> impl Iterator<Item = &mut GroupMember> {
        self.map.values_mut()
    }

    /// How many times the members' lists name protocol `name` (Kafka's `supportedProtocols`:
    /// a member naming it twice counts twice).
    pub(super) fn listed(&self, name: &str) -> usize {
        self.listed.get(name).copied().unwrap_or(0)
    }

    /// Debug builds: the kept counts are what counting the members afresh gives.
    pub(super) fn check_counts(&self) {
        debug_assert_eq!(
            self.listed,
            self.recount(),
            "protocol counts out of step with the members"
        );
    }

    /// The counts from scratch, to check the kept ones.
    fn recount(&self) -> BTreeMap<String, usize> {
        let mut listed = BTreeMap::new();
        count(&mut listed, self.map.values().flat_map(|m| &m.protocols));
        listed
    }
}

fn count<'a>(
    listed: &mut BTreeMap<String, usize>,
    protocols: impl IntoIterator<Item = &'a JoinProtocol>,
) {
    for p in protocols {
        match listed.get_mut(&p.name) {
            Some(n) => *n += 1,
            None => {
                listed.insert(p.name.clone(), 1);
            }
        }
    }
}

fn uncount(listed: &mut BTreeMap<String, usize>, protocols: &[JoinProtocol]) {
    for p in protocols {
        if let Some(n) = listed.get_mut(&p.name) {
            *n -= 1;
            if *n == 0 {
                listed.remove(&p.name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{ClientRef, Subscription};

    fn member(protocols: &[&str]) -> GroupMember {
        let client = ClientRef {
            member: 0,
            incarnation: 0,
        };
        GroupMember {
            client,
            group_instance_id: None,
            protocols: protocols
                .iter()
                .map(|name| JoinProtocol {
                    name: name.to_string(),
                    metadata: Subscription {
                        topics: vec!["t".into()],
                        owned: Vec::new(),
                        previous_assignment: Vec::new(),
                        generation: None,
                        assigned_generation: None,
                        user_data: None,
                        rack_id: None,
                    },
                })
                .collect(),
            rebalance_timeout_ms: 1,
            session_timeout_ms: 1,
            awaiting_join: None,
            awaiting_sync: None,
            is_new: false,
            assignment: None,
            session: None,
        }
    }

    /// The kept counts follow every way the members change, and always equal a recount
    /// (what `supportsProtocols` walked the group for before).
    #[test]
    fn protocol_counts_follow_joins_rejoins_replacements_and_leaves() {
        let mut members = Members::default();
        let counts = |m: &Members| {
            m.check_counts();
            ["range", "cooperative-sticky", "roundrobin"].map(|p| m.listed(p))
        };
        members.insert("a".into(), member(&["range", "cooperative-sticky"]));
        members.insert("b".into(), member(&["cooperative-sticky"]));
        assert_eq!(counts(&members), [1, 2, 0]);
        // A rejoin with other protocols (`updateMember`).
        members.set_protocols("a", member(&["roundrobin", "cooperative-sticky"]).protocols);
        assert_eq!(counts(&members), [0, 2, 1]);
        // The same id again replaces the member (a static member moved to its new id).
        members.insert("b".into(), member(&["range"]));
        assert_eq!(counts(&members), [1, 1, 1]);
        // A member naming a protocol twice counts twice, as Kafka's map does.
        members.insert("c".into(), member(&["range", "range"]));
        assert_eq!(counts(&members), [3, 1, 1]);
        members.remove("a");
        members.remove("missing");
        assert_eq!(counts(&members), [3, 0, 0]);
        assert!(
            members.listed.keys().all(|p| p == "range"),
            "zero counts go"
        );
    }
}
