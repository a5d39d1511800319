//! The online migration between the classic and the consumer protocol, as the report lists it:
//! each conversion of the group, when, what triggered it, and the members it carried over
//! (a refused conversion is the joining member's error, in `errors[]`).

use super::*;
use crate::history::Conversion;
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
    /// What it did: `joined` (to consumer), `left` (to classic: the last consumer-protocol
    /// member left or was fenced) or `replaced` (to classic: a static member's new process,
    /// on the classic protocol, took over the entry of the last consumer-protocol member).
    pub trigger: &'static str,
    /// The generation (to consumer) or group epoch (to classic) carried over.
    pub epoch: i32,
    /// The members carried over, who go on in the converted group: classic members bridged
    /// into a consumer group, or classic members told to rejoin the classic group.
    pub members: Vec<String>,
}

impl Migration {
    /// The protocol the group spoke before.
    pub fn from(&self) -> &'static str {
        match self.to {
            "consumer" => "classic",
            _ => "consumer",
        }
    }

    /// What `by` did, in words.
    pub fn why(&self) -> &'static str {
        match self.trigger {
            "replaced" => "came back on the classic protocol",
            other => other,
        }
    }
}

impl Metrics {
    pub(super) fn group_converted(&mut self, c: &Conversion) {
        let Conversion {
            at,
            to_consumer,
            by,
            replaced,
            epoch,
            members,
        } = c;
        let name = |m: usize| self.member_names[m].clone();
        let mut members: Vec<String> = members.iter().map(|&m| name(m)).collect();
        members.sort();
        self.migrations.push(Migration {
            at_ms: ms(*at),
            to: if *to_consumer { "consumer" } else { "classic" },
            by: by.map(name),
            trigger: match (to_consumer, replaced) {
                (true, _) => "joined",
                (false, false) => "left",
                (false, true) => "replaced",
            },
            epoch: *epoch,
            members,
        });
    }
}
