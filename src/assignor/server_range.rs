//! The KIP-848 server-side `RangeAssignor` (`group.remote.assignor = "range"`) as of Kafka 4.3.1:
//! per topic, contiguous ranges over its subscribers, static members first by instance id, then
//! by member id (compared as strings, even for KIP-848's base64 Uuids). It does not look at the
//! previous assignment (ALGORITHMS.md 7.3), so it is not sticky, and topic ids do not matter.

use super::range::assign_ranges;
use super::uniform::subscription_type;
use super::{AssignError, AssignResult, Assignor, GroupSpec, RebalanceProtocol};

pub struct ServerRangeAssignor;

impl Assignor for ServerRangeAssignor {
    fn name(&self) -> &'static str {
        "server-range"
    }

    fn supported_protocols(&self) -> &'static [RebalanceProtocol] {
        // Server assignors reconcile incrementally per member; for the simulator's purposes
        // nothing is revoked group-wide.
        &[RebalanceProtocol::Cooperative]
    }

    fn is_server_side(&self) -> bool {
        true
    }

    fn assign(&self, group: &GroupSpec) -> Result<AssignResult, AssignError> {
        // Homogeneous and heterogeneous builders give the same ranges: a homogeneous group is
        // the case where every topic's subscribers are all members.
        let same_topics = group.same_topics();
        Ok(AssignResult {
            subscription_type: Some(subscription_type(group, same_topics)),
            ..AssignResult::plain(assign_ranges(group, same_topics))
        })
    }
}
