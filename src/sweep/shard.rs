//! `--shard I/N` and `--shard env/N`: which share of a sweep's runs this process runs. A run
//! belongs to the shard its key hashes to (FNV-1a 64 over the point's settings, the variant and
//! the seed, never over a position in the grid), so adding seeds or grid values moves no other
//! run to another shard, and every machine and version agrees on the split.

use std::fmt;

/// One share of the work, 1-based: shard `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The whole sweep.
    pub const ALL: Shard = Shard { index: 1, count: 1 };

    /// Whether the run with this key is this shard's.
    pub fn owns(&self, key: &str) -> bool {
        shard_of(key, self.count) == self.index
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The most shards a sweep is cut into.
pub const MAX_SHARDS: u64 = 1_000_000;

/// `--shard` as given: a fixed index, or one read from the batch engine's environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardSpec {
    Fixed(Shard),
    /// `env/N`: the index from the environment (`ENV_INDEXES`), the count `N`.
    Env(u64),
}

/// Parses `I/N` (1-based, 1 <= I <= N) or `env/N`.
pub fn parse_shard(text: &str) -> Result<ShardSpec, String> {
    let (index, count) = text
        .split_once('/')
        .ok_or_else(|| format!("{text:?}: expected I/N (1-based, e.g. 2/3) or env/N"))?;
    let count: u64 = count
        .trim()
        .parse()
        .map_err(|_| format!("{text:?}: {count:?} is not a shard count"))?;
    if count == 0 || count > MAX_SHARDS {
        return Err(format!(
            "{text:?}: the shard count must be from 1 to {MAX_SHARDS}"
        ));
    }
    if index.trim() == "env" {
        return Ok(ShardSpec::Env(count));
    }
    let index: u64 = index
        .trim()
        .parse()
        .map_err(|_| format!("{text:?}: {index:?} is not a shard index (1-based) or env"))?;
    if index == 0 || index > count {
        return Err(format!(
            "{text:?}: shard index {index} is not in 1..{count} (shards are numbered from 1)"
        ));
    }
    Ok(ShardSpec::Fixed(Shard { index, count }))
}

/// Where `env/N` looks for its index, in this order (the first one set wins): Kubernetes
/// Indexed Jobs, Slurm job arrays, Bazel's test sharding.
pub const ENV_INDEXES: &[&str] = &[
    "JOB_COMPLETION_INDEX",
    "SLURM_ARRAY_TASK_ID",
    "TEST_SHARD_INDEX",
];

/// The shard `spec` names, `env` reading the environment; with `env/N`, also the variable
/// the index came from. Kubernetes and Bazel count from 0; Slurm from `SLURM_ARRAY_TASK_MIN`
/// (an array `--array=1-3` has task ids 1, 2, 3).
pub fn resolve(
    spec: ShardSpec,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(Shard, Option<&'static str>), String> {
    let count = match spec {
        ShardSpec::Fixed(s) => return Ok((s, None)),
        ShardSpec::Env(count) => count,
    };
    let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let number = |name: &str, v: &str| {
        v.trim()
            .parse::<u64>()
            .map_err(|_| format!("--shard env/{count}: {name}={v:?} is not a non-negative integer"))
    };
    let Some(name) = ENV_INDEXES.iter().copied().find(|n| set(n).is_some()) else {
        return Err(format!(
            "--shard env/{count}: none of {} is set (Kubernetes Indexed Job, Slurm job array, Bazel); give --shard I/{count} instead",
            ENV_INDEXES.join(", ")
        ));
    };
    let raw = set(name).expect("found above");
    let mut index = number(name, &raw)?;
    if name == "SLURM_ARRAY_TASK_ID" {
        let min = set("SLURM_ARRAY_TASK_MIN").ok_or_else(|| {
            format!(
                "--shard env/{count}: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MIN is not"
            )
        })?;
        let min = number("SLURM_ARRAY_TASK_MIN", &min)?;
        index = index.checked_sub(min).ok_or_else(|| {
            format!("--shard env/{count}: SLURM_ARRAY_TASK_ID={raw} is below SLURM_ARRAY_TASK_MIN={min}")
        })?;
    }
    if index >= count {
        return Err(format!(
            "--shard env/{count}: {name}={raw} gives shard {} of {count} (it counts from 0): the job has more tasks than the sweep has shards",
            index + 1
        ));
    }
    if name == "TEST_SHARD_INDEX" {
        if let Some(total) = set("TEST_TOTAL_SHARDS") {
            if number("TEST_TOTAL_SHARDS", &total)? != count {
                return Err(format!(
                    "--shard env/{count}: TEST_TOTAL_SHARDS={total} but the sweep is cut into {count}"
                ));
            }
        }
    }
    Ok((
        Shard {
            index: index + 1,
            count,
        },
        Some(name),
    ))
}

/// FNV-1a, 64-bit: a fixed, documented hash (not std's `DefaultHasher`, whose output may
/// change between Rust versions), so every machine and every cgsim version splits alike.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// A run's key: what it runs, not where it stands in the grid.
pub fn run_key(point_text: &str, variant: &str, seed: u64) -> String {
    format!("{point_text}\u{0}{variant}\u{0}{seed}")
}

/// The shard (1-based) of `count` that the run with `key` belongs to.
pub fn shard_of(key: &str, count: u64) -> u64 {
    fnv1a64(key.as_bytes()) % count + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn fnv1a_is_the_published_function() {
        // The reference vectors of the FNV specification (draft-eastlake-fnv).
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn shard_specs_parse_and_bad_ones_are_named() {
        assert_eq!(
            parse_shard("2/3"),
            Ok(ShardSpec::Fixed(Shard { index: 2, count: 3 }))
        );
        assert_eq!(parse_shard("env/4"), Ok(ShardSpec::Env(4)));
        assert!(parse_shard("0/3").unwrap_err().contains("numbered from 1"));
        assert!(parse_shard("4/3").unwrap_err().contains("not in 1..3"));
        assert!(parse_shard("1/0").unwrap_err().contains("from 1 to"));
        assert!(parse_shard("3").unwrap_err().contains("expected I/N"));
        assert!(parse_shard("a/3")
            .unwrap_err()
            .contains("not a shard index"));
        assert!(parse_shard("1/x")
            .unwrap_err()
            .contains("not a shard count"));
    }

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn kubernetes_indexed_job_counts_from_zero() {
        let (s, from) = resolve(ShardSpec::Env(3), env(&[("JOB_COMPLETION_INDEX", "0")])).unwrap();
        assert_eq!(
            (s, from),
            (Shard { index: 1, count: 3 }, Some("JOB_COMPLETION_INDEX"))
        );
        let (s, _) = resolve(ShardSpec::Env(3), env(&[("JOB_COMPLETION_INDEX", "2")])).unwrap();
        assert_eq!(s.index, 3);
        assert!(
            resolve(ShardSpec::Env(3), env(&[("JOB_COMPLETION_INDEX", "3")]))
                .unwrap_err()
                .contains("more tasks than the sweep has shards")
        );
        assert!(
            resolve(ShardSpec::Env(3), env(&[("JOB_COMPLETION_INDEX", "x")]))
                .unwrap_err()
                .contains("not a non-negative integer")
        );
    }

    #[test]
    fn slurm_array_counts_from_its_minimum() {
        let vars = [("SLURM_ARRAY_TASK_ID", "7"), ("SLURM_ARRAY_TASK_MIN", "5")];
        let (s, from) = resolve(ShardSpec::Env(3), env(&vars)).unwrap();
        assert_eq!(
            (s, from),
            (Shard { index: 3, count: 3 }, Some("SLURM_ARRAY_TASK_ID"))
        );
        let vars = [("SLURM_ARRAY_TASK_ID", "1"), ("SLURM_ARRAY_TASK_MIN", "1")];
        assert_eq!(resolve(ShardSpec::Env(2), env(&vars)).unwrap().0.index, 1);
        assert!(
            resolve(ShardSpec::Env(3), env(&[("SLURM_ARRAY_TASK_ID", "1")]))
                .unwrap_err()
                .contains("SLURM_ARRAY_TASK_MIN is not")
        );
        let vars = [("SLURM_ARRAY_TASK_ID", "1"), ("SLURM_ARRAY_TASK_MIN", "2")];
        assert!(resolve(ShardSpec::Env(3), env(&vars))
            .unwrap_err()
            .contains("below"));
    }

    #[test]
    fn bazel_test_sharding_counts_from_zero_and_checks_the_total() {
        let (s, from) = resolve(ShardSpec::Env(4), env(&[("TEST_SHARD_INDEX", "1")])).unwrap();
        assert_eq!(
            (s, from),
            (Shard { index: 2, count: 4 }, Some("TEST_SHARD_INDEX"))
        );
        let vars = [("TEST_SHARD_INDEX", "1"), ("TEST_TOTAL_SHARDS", "4")];
        assert!(resolve(ShardSpec::Env(4), env(&vars)).is_ok());
        let vars = [("TEST_SHARD_INDEX", "1"), ("TEST_TOTAL_SHARDS", "5")];
        assert!(resolve(ShardSpec::Env(4), env(&vars))
            .unwrap_err()
            .contains("TEST_TOTAL_SHARDS=5"));
    }

    #[test]
    fn the_first_variable_set_wins_and_none_set_is_an_error() {
        let vars = [
            ("TEST_SHARD_INDEX", "0"),
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("JOB_COMPLETION_INDEX", "1"),
        ];
        let (s, from) = resolve(ShardSpec::Env(3), env(&vars)).unwrap();
        assert_eq!((s.index, from), (2, Some("JOB_COMPLETION_INDEX")));
        // An empty variable counts as unset.
        let vars = [("JOB_COMPLETION_INDEX", ""), ("TEST_SHARD_INDEX", "2")];
        let (s, from) = resolve(ShardSpec::Env(3), env(&vars)).unwrap();
        assert_eq!((s.index, from), (3, Some("TEST_SHARD_INDEX")));
        assert!(resolve(ShardSpec::Env(3), env(&[]))
            .unwrap_err()
            .contains("none of JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID, TEST_SHARD_INDEX"));
        let fixed = ShardSpec::Fixed(Shard { index: 2, count: 2 });
        assert_eq!(
            resolve(fixed, env(&vars)).unwrap(),
            (Shard { index: 2, count: 2 }, None)
        );
    }

    #[test]
    fn adding_seeds_moves_no_run_and_shards_share_the_work() {
        let point = "group.session_timeout_ms=10000 group.heartbeat_interval_ms=1000";
        let few: Vec<u64> = (1..=100)
            .map(|s| shard_of(&run_key(point, "eager", s), 3))
            .collect();
        let more: Vec<u64> = (1..=1000)
            .map(|s| shard_of(&run_key(point, "eager", s), 3))
            .collect();
        assert_eq!(few[..], more[..100]);
        // Every shard gets about a third.
        for shard in 1..=3 {
            let n = more.iter().filter(|&&s| s == shard).count();
            assert!((250..=420).contains(&n), "shard {shard}: {n} of 1000");
        }
        // The key is what runs: the variant and the point's settings count, a position does not.
        assert_ne!(run_key(point, "eager", 1), run_key(point, "cooperative", 1));
        // Pinned: the split must never change between versions or platforms.
        assert_eq!(
            fnv1a64(run_key("a=1", "eager", 7).as_bytes()),
            0xc290_1d8c_bca5_fd4b
        );
        assert_eq!(shard_of(&run_key("a=1", "eager", 7), 3), 1);
    }
}
