//! OffsetCommit from a member of the group (`ClassicGroup.validateOffsetCommit`); OffsetFetch
//! needs no group and is answered by the dispatcher.

use super::*;
use crate::messages::OffsetCommitRequest;

impl ClassicGroup {
    pub(in crate::group) fn offset_commit(
        &mut self,
        cx: &mut Cx,
        from: ClientRef,
        req: &OffsetCommitRequest,
    ) -> ErrorCode {
        let (member_id, generation) = (req.member_id.as_str(), req.generation);
        // MUTANT(fenced-commit): a fenced member's commit (unknown member, old generation) is
        // written as if it were the owner's.
        if self.state == ClassicGroupState::Dead {
            return ErrorCode::CoordinatorNotAvailable;
        }
        let fenced_ok = self.config.accepts_fenced_commits();
        if !self.members.contains_key(member_id) && !fenced_ok {
            return ErrorCode::UnknownMemberId;
        }
        if generation != self.generation && !fenced_ok {
            return ErrorCode::IllegalGeneration;
        }
        // Between the join phase and the leader's assignment the member may lose what it
        // commits for (`ClassicGroup.validateOffsetCommit`).
        if self.state == ClassicGroupState::CompletingRebalance {
            return ErrorCode::RebalanceInProgress;
        }
        cx.write_commits(from, &req.offsets);
        ErrorCode::None
    }
}
