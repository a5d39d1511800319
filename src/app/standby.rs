//! Where a standby replica lives (Kafka Streams' `num.standby.replicas = 1`), and who owned a
//! partition before: the state recovery's own record, fed by the facts of the run (who is in
//! the group under which member id, who was last assigned each partition). Members read it; it
//! reads nothing of theirs.

use crate::facts::{Fact, MemberIds};

pub struct StandbyPlacement {
    member_ids: MemberIds,
    in_group: Vec<bool>,
    /// The member each partition was last assigned to.
    last_owner: Vec<Option<usize>>,
}

impl StandbyPlacement {
    pub fn new(members: usize, partitions: usize) -> Self {
        StandbyPlacement {
            member_ids: MemberIds::default(),
            in_group: vec![false; members],
            last_owner: vec![None; partitions],
        }
    }

    pub fn observe(&mut self, fact: &Fact) {
        match fact {
            Fact::MemberAdded { member, .. } | Fact::MemberReplaced { member, .. } => {
                // Only its current process's id (not an earlier one's late add) puts it in.
                let current = self.member_ids.observe(fact);
                self.in_group[*member] |= current;
            }
            Fact::MemberRemoved { member, member_id }
                if self.member_ids.current(*member) == Some(member_id.as_str()) =>
            {
                self.in_group[*member] = false;
            }
            Fact::Assigned { member, partitions } | Fact::Kept { member, partitions } => {
                self.acquired(*member, partitions)
            }
            _ => {}
        }
    }

    /// `member` was assigned `partitions`.
    fn acquired(&mut self, member: usize, partitions: &[usize]) {
        for &p in partitions {
            self.last_owner[p] = Some(member);
        }
    }

    /// The member the partition was last assigned to (before the assignment being handled).
    pub fn last_owner(&self, p: usize) -> Option<usize> {
        self.last_owner[p]
    }

    /// Who holds the standby replica of a partition last owned by `owner`: the member that
    /// follows the owner in member-id order (Java `String` order, as Kafka sorts members),
    /// among those in the group, wrapping around. Range's contiguous layout shifts partitions
    /// to that neighbour when the group grows, so it is where a warm replica pays off most
    /// often.
    pub fn standby_holder(&self, owner: Option<usize>) -> Option<usize> {
        let owner = owner?;
        let mut members: Vec<usize> = (0..self.in_group.len())
            .filter(|&m| self.in_group[m] || m == owner)
            .collect();
        members.sort_by(|&a, &b| {
            let id = |m: usize| self.member_ids.current(m).unwrap_or_default();
            crate::java::string_compare(id(a), id(b))
        });
        let at = members.iter().position(|&m| m == owner)?;
        (1..members.len())
            .map(|k| members[(at + k) % members.len()])
            .find(|&m| m != owner && self.in_group[m])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standby_follows_the_owner_in_member_id_order_among_live_members() {
        let mut s = StandbyPlacement::new(3, 2);
        for (member, id) in [(0, "c-b"), (1, "c-c"), (2, "c-a")] {
            s.observe(&Fact::MemberAdded {
                member,
                incarnation: 0,
                member_id: id.into(),
            });
        }
        // Sorted: c-a (2), c-b (0), c-c (1).
        assert_eq!(s.standby_holder(Some(0)), Some(1));
        assert_eq!(s.standby_holder(Some(1)), Some(2));
        s.observe(&Fact::MemberRemoved {
            member: 1,
            member_id: "c-c".into(),
        });
        assert_eq!(s.standby_holder(Some(0)), Some(2));
        assert_eq!(s.standby_holder(None), None);
        s.observe(&Fact::Assigned {
            member: 2,
            partitions: vec![1],
        });
        assert_eq!((s.last_owner(0), s.last_owner(1)), (None, Some(2)));
    }
}
