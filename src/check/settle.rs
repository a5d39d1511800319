//! eventually `not_settled`: the group must be Stable, with every member settled, within
//! rebalance timeout + session timeout after the last timeline event has ended (DESIGN.md "What
//! counts"). A run that ends sooner is not checked (`settle_checked` false), so a loop that never
//! settles can never pass a run long enough to check it.

use super::{Findings, Property};
use crate::sim::SimTime;

#[derive(Default)]
pub struct Settle {
    checked: bool,
}

impl Settle {
    pub fn check(&mut self, now: SimTime, stable: bool, state: &str, found: &mut Findings) {
        self.checked = true;
        if !stable {
            let detail = format!("the group is {state}, not Stable with every member settled");
            found.violation(now, Property::NotSettled, detail);
        }
    }

    pub fn checked(&self) -> bool {
        self.checked
    }
}
