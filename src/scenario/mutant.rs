//! Test-only: deliberately broken behaviours (`mutant = "NAME"`, a hidden top-level scenario
//! key; `cgsim fuzz --mutant NAME`). Each breaks one rule Kafka relies on, at one place in one
//! model marked `MUTANT(name)`, so that the fuzzer and the checkers can be shown to catch it (a
//! checker that never fails proves nothing). No real scenario sets one; `cgsim fuzz
//! --list-mutants` lists them.

/// A deliberately broken behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mutant {
    /// A cooperative member skips the revocation `onJoinComplete` owes: it never runs
    /// `onPartitionsRevoked` for what it lost and keeps processing it, while its next JoinGroup
    /// no longer reports it as owned (KIP-429 relies on that revocation).
    SkipRevocation,
    /// A member keeps fetching and processing partitions after its `onPartitionsRevoked` (or
    /// `onPartitionsLost`) ran for them.
    ProcessAfterRevoke,
    /// The KIP-848 coordinator hands a partition to its new owner before the old owner's
    /// heartbeat stopped reporting it (no UNRELEASED_PARTITIONS wait).
    EarlyAssign,
    /// The coordinator accepts an OffsetCommit from a fenced member (an unknown member id or
    /// an old generation / member epoch), and a member that left on a poll timeout still
    /// commits its zombie batch with the generation it had.
    FencedCommit,
}

impl Mutant {
    pub const ALL: [Mutant; 4] = [
        Mutant::SkipRevocation,
        Mutant::ProcessAfterRevoke,
        Mutant::EarlyAssign,
        Mutant::FencedCommit,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mutant::SkipRevocation => "skip-revocation",
            Mutant::ProcessAfterRevoke => "process-after-revoke",
            Mutant::EarlyAssign => "early-assign",
            Mutant::FencedCommit => "fenced-commit",
        }
    }

    /// What it breaks, in one line.
    pub fn what(self) -> &'static str {
        match self {
            Mutant::SkipRevocation => {
                "a cooperative member skips onPartitionsRevoked for what it lost and keeps it (classic, cooperative)"
            }
            Mutant::ProcessAfterRevoke => {
                "a member keeps processing partitions after its revoke callback gave them up"
            }
            Mutant::EarlyAssign => {
                "the KIP-848 coordinator assigns a partition before its owner released it"
            }
            Mutant::FencedCommit => {
                "the coordinator accepts a commit from a fenced member (old generation or epoch)"
            }
        }
    }

    pub fn parse(name: &str) -> Result<Mutant, String> {
        Mutant::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Mutant::ALL.iter().map(|m| m.name()).collect();
                format!("unknown mutant {name:?} (one of: {})", names.join(", "))
            })
    }
}
