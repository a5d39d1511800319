//! OffsetCommit from a member of the group; OffsetFetch is answered from the store in
//! [`Coordinator::handle`].

use super::*;

impl Coordinator {
    pub(super) fn offset_commit(
        &mut self,
        cx: &mut Cx,
        from: ClientRef,
        member_id: &str,
        generation: i32,
        offsets: &[(usize, u64)],
    ) -> ErrorCode {
        // MUTANT(fenced-commit): a fenced member's commit (unknown member, old generation) is
        // written as if it were the owner's.
        let fenced_ok = self.config.mutant == Some(crate::scenario::Mutant::FencedCommit);
        if !self.members.contains_key(member_id) && !fenced_ok {
            return ErrorCode::UnknownMemberId;
        }
        if generation != self.generation && !fenced_ok {
            return ErrorCode::IllegalGeneration;
        }
        // Between the join phase and the leader's assignment the member may lose what it
        // commits for (`ClassicGroup.validateOffsetCommit`).
        if self.state == GroupState::CompletingRebalance {
            return ErrorCode::RebalanceInProgress;
        }
        Coordinator::write_commits(cx, from, offsets);
        ErrorCode::None
    }

    /// An accepted commit: each offset written to `__consumer_offsets`, and its fact.
    pub(super) fn write_commits(cx: &mut Cx, from: ClientRef, offsets: &[(usize, u64)]) {
        for &(partition, offset) in offsets {
            cx.out
                .push(CoordinatorEffect::CommitOffset { partition, offset });
            cx.fact(Fact::OffsetCommitted {
                member: from.member,
                partition,
                offset,
            });
        }
    }
}
