//! `--resume`: the runs an earlier, interrupted invocation of the same sweep already wrote.
//! Its header must be this sweep's exactly (the same scenario bytes, grid, variants, seeds and
//! shard); a last line cut short by a kill is dropped, and the file is cut back to its whole
//! lines before new ones are appended.

use super::lines::{header_difference, read};
use super::{Plan, Record};
use std::collections::BTreeMap;

/// What the file already holds.
#[derive(Debug)]
pub struct Resumed {
    /// Runs already written, in the unsharded order.
    pub records: Vec<Record>,
    /// Bytes of the file to keep (its whole lines); 0 when the header must be written anew.
    pub keep_bytes: usize,
    /// A partial last line was dropped.
    pub dropped_partial: bool,
}

pub fn resume(plan: &Plan, text: &str) -> Result<Resumed, String> {
    let Some(file) = read(text)? else {
        return Ok(Resumed {
            records: Vec::new(),
            keep_bytes: 0,
            dropped_partial: !text.is_empty(),
        });
    };
    if let Some(diff) = header_difference(&file.header, &plan.header(), false) {
        return Err(format!(
            "line 1: it holds another sweep (its {diff} this one's): give another --out, or drop --resume to start it again"
        ));
    }
    let mut done: BTreeMap<_, Record> = BTreeMap::new();
    for (n, line) in &file.lines {
        let r = plan
            .parse_record(line)
            .map_err(|m| format!("line {n}: {m}"))?;
        if !plan.owns(r.job) {
            return Err(format!(
                "line {n}: {} {} seed {} is not shard {}'s run",
                plan.label(r.job.point),
                plan.variants[r.job.variant],
                r.job.seed,
                plan.shard
            ));
        }
        if let Some(old) = done.get(&r.job) {
            if *old != r {
                return Err(format!(
                    "line {n}: {} {} seed {} is there twice, with different figures",
                    plan.label(r.job.point),
                    plan.variants[r.job.variant],
                    r.job.seed
                ));
            }
            continue;
        }
        done.insert(r.job, r);
    }
    Ok(Resumed {
        records: done.into_values().collect(),
        keep_bytes: file.whole_bytes,
        dropped_partial: file.truncated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::shard::Shard;
    use crate::sweep::{figures, Job};

    fn plan(shard: Shard) -> Plan {
        Plan::for_tests("group.session_timeout_ms=10000", &["eager"], 20, shard)
    }

    fn record(job: Job) -> Record {
        Record {
            job,
            digest: format!("{}", job.seed),
            values: vec![Some(job.seed); figures().count()],
            violations: vec![],
        }
    }

    #[test]
    fn resume_skips_what_is_written_and_drops_a_partial_line() {
        let p = plan(Shard::ALL);
        let jobs = p.own_jobs();
        let mut text = p.header_line() + "\n";
        for &j in &jobs[..5] {
            text += &(p.record_line(&record(j)) + "\n");
        }
        let whole = text.len();
        text += "{\"point\":\"p1\",\"varia";
        let r = resume(&p, &text).unwrap();
        assert_eq!(r.records.len(), 5);
        assert_eq!(r.keep_bytes, whole);
        assert!(r.dropped_partial);
        assert_eq!(r.records[4], record(jobs[4]));
        // An empty file, or one killed inside its header: start again.
        let r = resume(&p, "").unwrap();
        assert_eq!((r.records.len(), r.keep_bytes), (0, 0));
        let r = resume(&p, "{\"cgsim_sw").unwrap();
        assert_eq!((r.keep_bytes, r.dropped_partial), (0, true));
    }

    #[test]
    fn resume_refuses_another_sweeps_file() {
        let p = plan(Shard::ALL);
        let other = Plan {
            last_seed: 30,
            ..p.clone()
        };
        let text = other.header_line() + "\n";
        let e = resume(&p, &text).unwrap_err();
        assert!(e.contains("another sweep") && e.contains("seeds:"), "{e}");
        // Another shard of the same sweep is another file too.
        let s2 = plan(Shard { index: 2, count: 3 });
        let e = resume(&s2, &text.replace("\"last\":30", "\"last\":20")).unwrap_err();
        assert!(e.contains("shard:"), "{e}");
        assert!(resume(&p, "not json\n").is_err());
    }

    #[test]
    fn resume_refuses_a_run_of_another_shard_or_a_conflicting_duplicate() {
        let s1 = plan(Shard { index: 1, count: 2 });
        let all = plan(Shard::ALL).jobs();
        let foreign = *all.iter().find(|&&j| !s1.owns(j)).unwrap();
        let text = s1.header_line() + "\n" + &s1.record_line(&record(foreign)) + "\n";
        assert!(resume(&s1, &text)
            .unwrap_err()
            .contains("is not shard 1/2's run"));
        let mine = *all.iter().find(|&&j| s1.owns(j)).unwrap();
        let mut changed = record(mine);
        changed.digest = "different".into();
        let text = s1.header_line()
            + "\n"
            + &s1.record_line(&record(mine))
            + "\n"
            + &s1.record_line(&record(mine))
            + "\n";
        assert_eq!(resume(&s1, &text).unwrap().records.len(), 1);
        let text = text + &s1.record_line(&changed) + "\n";
        assert!(resume(&s1, &text).unwrap_err().contains("twice"));
    }
}
