//! The online migration between the classic and the consumer protocol, as the report lists it:
//! each conversion of the group, when, what triggered it, and the members it carried over
//! (a refused conversion is the joining member's error, in `errors[]`).

use super::*;
use serde::Serialize;

/// One conversion of the group (`GroupMetadataManager.convertToConsumerGroup` or
/// `convertToClassicGroup`).
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    pub at_ms: u64,
    /// `consumer` (a classic group upgraded) or `classic` (downgraded back).
    pub to: &'static str,
    /// The member whose join (to consumer) or departure (to classic) converted it.
    pub by: Option<String>,
    /// The generation (to consumer) or group epoch (to classic) carried over.
    pub epoch: i32,
    /// The members carried over, who go on in the converted group: classic members bridged
    /// into a consumer group, or classic members told to rejoin the classic group.
    pub members: Vec<String>,
}

impl Metrics {
    pub(super) fn group_converted(&mut self, now: SimTime, fact: &Fact) {
        let Fact::GroupConverted {
            to_consumer,
            by,
            epoch,
            members,
        } = fact
        else {
            return;
        };
        let name = |m: usize| self.member_names[m].clone();
        let mut members: Vec<String> = members.iter().map(|&m| name(m)).collect();
        members.sort();
        self.migrations.push(Migration {
            at_ms: ms(now),
            to: if *to_consumer { "consumer" } else { "classic" },
            by: by.map(name),
            epoch: *epoch,
            members,
        });
    }
}
