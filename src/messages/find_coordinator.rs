//! FindCoordinator.

/// FindCoordinator for the group, to any broker (the client's first step,
/// `ensureCoordinatorReady`); the broker answers with the coordinator's.
#[derive(Clone, Copy, Debug, Default)]
pub struct FindCoordinatorRequest;

/// A FindCoordinator response.
#[derive(Clone, Debug)]
pub struct FindCoordinatorResponse {
    /// The broker that leads the group's `__consumer_offsets` partition.
    pub broker: u32,
}
