//! Summaries over members or partitions: nearest-rank percentiles in integers.

use serde::Serialize;
use std::collections::BTreeMap;

/// Nearest-rank percentile of sorted values: the value at rank ceil(p/100 * n); 0 when empty.
pub fn nearest_rank(sorted: &[u64], percentile: u64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let n = sorted.len() as u64;
    let rank = (percentile * n).div_ceil(100).max(1);
    sorted[(rank - 1) as usize]
}

/// `{per_..., total, p50, p99, max}` over named values, with the names whose interval was still
/// open when the run ended.
#[derive(Serialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub per: BTreeMap<String, u64>,
    pub total: u64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
    pub open_at_end: Vec<String>,
}

impl Summary {
    pub fn of(per: BTreeMap<String, u64>, open_at_end: Vec<String>) -> Summary {
        let mut values: Vec<u64> = per.values().copied().collect();
        values.sort_unstable();
        Summary {
            total: values.iter().sum(),
            p50: nearest_rank(&values, 50),
            p99: nearest_rank(&values, 99),
            max: values.last().copied().unwrap_or(0),
            per,
            open_at_end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
        assert_eq!(nearest_rank(&v, 50), 5);
        assert_eq!(nearest_rank(&v, 99), 10);
        assert_eq!(nearest_rank(&[7], 50), 7);
        assert_eq!(nearest_rank(&[], 50), 0);
    }
}
