//! `cgsim merge`: the shards of one sweep joined back into the sweep. The headers must agree
//! on everything but the shard; every run must be there once (a run found in two files must be
//! the same run); the result is the unsharded plan and its records in the unsharded order, so
//! its summary and its lines are exactly an unsharded run's.

use super::lines::{header_difference, read};
use super::{Job, Plan, Record};
use std::collections::BTreeMap;

#[derive(Debug)]
pub struct Merged {
    pub plan: Plan,
    pub records: Vec<Record>,
}

/// `files`: (name for errors, text).
pub fn merge(files: &[(String, String)]) -> Result<Merged, String> {
    let Some((first_name, _)) = files.first() else {
        return Err("no files to merge".into());
    };
    let mut first: Option<(serde_json::Value, Plan)> = None;
    let mut found: BTreeMap<Job, (Record, String)> = BTreeMap::new();
    for (name, text) in files {
        let file = read(text)
            .map_err(|m| format!("{name}: {m}"))?
            .ok_or_else(|| {
                format!("{name}: no header line (not a cgsim sweep output, or empty)")
            })?;
        let plan = Plan::from_header(&file.header).map_err(|m| format!("{name}: line 1: {m}"))?;
        match &first {
            None => first = Some((file.header.clone(), plan.clone())),
            Some((header, _)) => {
                if let Some(diff) = header_difference(header, &file.header, true) {
                    return Err(format!(
                        "{name}: not a shard of the same sweep as {first_name} (header {diff}): refusing to mix them"
                    ));
                }
            }
        }
        if file.truncated {
            tracing::warn!(file = %name, "dropped a partial last line");
        }
        for (n, line) in &file.lines {
            let r = plan
                .parse_record(line)
                .map_err(|m| format!("{name}: line {n}: {m}"))?;
            let at = format!("{name} line {n}");
            if let Some((old, old_at)) = found.get(&r.job) {
                if *old != r {
                    return Err(format!(
                        "{at}: {} {} seed {} differs from the same run at {old_at}",
                        plan.label(r.job.point),
                        plan.variants[r.job.variant],
                        r.job.seed
                    ));
                }
                continue;
            }
            found.insert(r.job, (r, at));
        }
    }
    let (_, plan) = first.expect("at least one file");
    let shard_count = plan.shard.count;
    let plan = plan.unsharded();
    let jobs = plan.jobs();
    let missing: Vec<Job> = jobs
        .iter()
        .copied()
        .filter(|j| !found.contains_key(j))
        .collect();
    if let Some(&j) = missing.first() {
        let owner = super::shard::shard_of(&plan.run_key(j), shard_count);
        return Err(format!(
            "{} of {} runs are missing, the first {} {} seed {} (shard {owner}/{shard_count}'s): merge every shard, each run to its end",
            missing.len(),
            jobs.len(),
            plan.label(j.point),
            plan.variants[j.variant],
            j.seed
        ));
    }
    Ok(Merged {
        plan,
        records: found.into_values().map(|(r, _)| r).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::figures;
    use crate::sweep::shard::Shard;

    fn plan(shard: Shard) -> Plan {
        Plan::for_tests(
            "group.heartbeat_interval_ms=1000,2000",
            &["eager", "cooperative"],
            10,
            shard,
        )
    }

    fn record(job: Job) -> Record {
        Record {
            job,
            digest: format!("{}-{}-{}", job.point, job.variant, job.seed),
            values: vec![Some(job.seed * 10 + job.point as u64); figures().count()],
            violations: vec![],
        }
    }

    fn shard_file(shard: Shard) -> String {
        let p = plan(shard);
        let mut text = p.header_line() + "\n";
        for j in p.own_jobs() {
            text += &(p.record_line(&record(j)) + "\n");
        }
        text
    }

    #[test]
    fn three_shards_merge_into_the_unsharded_runs_in_order() {
        let files: Vec<(String, String)> = (1..=3)
            .rev()
            .map(|i| {
                (
                    format!("part-{i}"),
                    shard_file(Shard { index: i, count: 3 }),
                )
            })
            .collect();
        let m = merge(&files).unwrap();
        assert_eq!(m.plan, plan(Shard::ALL));
        let expected: Vec<Record> = plan(Shard::ALL).jobs().into_iter().map(record).collect();
        assert_eq!(m.records, expected);
        // Each shard holds some of the runs, none all.
        for (_, text) in &files {
            let n = text.lines().count() - 1;
            assert!(n > 0 && n < 60, "{n}");
        }
    }

    #[test]
    fn merge_refuses_mixed_headers() {
        let a = shard_file(Shard { index: 1, count: 2 });
        let other = Plan {
            scenario_sha256: "ff".into(),
            ..plan(Shard { index: 2, count: 2 })
        };
        let b = other.header_line() + "\n";
        let e = merge(&[("a".into(), a), ("b".into(), b)]).unwrap_err();
        assert!(
            e.starts_with("b: not a shard of the same sweep as a (header scenario_sha256: "),
            "{e}"
        );
        assert!(e.contains("refusing to mix"), "{e}");
    }

    #[test]
    fn merge_refuses_missing_runs_and_conflicting_duplicates() {
        let a = shard_file(Shard { index: 1, count: 2 });
        let e = merge(&[("a".into(), a.clone())]).unwrap_err();
        assert!(
            e.contains("runs are missing") && e.contains("shard 2/2's"),
            "{e}"
        );
        // The same file twice is the same runs twice: fine.
        let b = shard_file(Shard { index: 2, count: 2 });
        let m = merge(&[
            ("a".into(), a.clone()),
            ("b".into(), b.clone()),
            ("a2".into(), a.clone()),
        ])
        .unwrap();
        assert_eq!(m.records.len(), 60);
        // A run that differs between two files is refused.
        let p = plan(Shard { index: 2, count: 2 });
        let j = p.own_jobs()[0];
        let mut r = record(j);
        r.digest = "other".into();
        let c = p.header_line() + "\n" + &p.record_line(&r) + "\n";
        let e = merge(&[("a".into(), a), ("b".into(), b), ("c".into(), c)]).unwrap_err();
        assert!(
            e.starts_with("c line 2: ") && e.contains("differs from the same run at b line"),
            "{e}"
        );
        assert!(merge(&[("x".into(), String::new())])
            .unwrap_err()
            .contains("no header line"));
    }
}
