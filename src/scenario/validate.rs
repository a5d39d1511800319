//! From the file as written to the typed scenario: defaults resolved, variant applied, every
//! cross-reference checked. Errors carry the byte span of the offending entry for its line.
//!
//! `build` runs one section after another, each in its own file under `validate/` and each
//! returning its typed part: `topics.rs`, `cluster.rs`, `group.rs` (the variant, the group's
//! settings, the notices), `members.rs`, `workload.rs` (producers, arrival), `app.rs`, then the
//! timeline (`scenario/timeline/resolve.rs`), `co_partitioned` (`topics.rs`) and what the tests
//! ask (`harness.rs`). The order is the order errors are found in: a file's first error does not
//! depend on the split.

mod app;
mod cluster;
mod group;
mod harness;
mod members;
mod topics;
mod workload;

use super::file::ScenarioFile;
use super::limits::{self, KeySpans};
use super::members::{Invalid, MemberContext};
use super::timeline::resolve::{resolve, Roster};
use super::{LoadOptions, Scenario};

/// Variants every scenario has (DESIGN.md "Interfaces"), and `default`: the file as written
/// (what a run without `--variant` runs; an upgrade scenario's members carry their own lists).
pub const BUILT_IN_VARIANTS: &[&str] = &["eager", "cooperative", "consumer", DEFAULT_VARIANT];
const DEFAULT_VARIANT: &str = "default";

/// A command line's `--variants`: at least one, each named once, none empty (`purpose` says in
/// the error what there is none to do: "no variant to compare"). Whether each exists, the
/// scenario says.
pub fn check_variant_names(variants: &[String], purpose: &str) -> Result<(), String> {
    if variants.is_empty() {
        return Err(format!("no variant to {purpose}"));
    }
    for (i, v) in variants.iter().enumerate() {
        if v.trim().is_empty() {
            return Err(format!("empty variant name at position {}", i + 1));
        }
        if variants[..i].contains(v) {
            return Err(format!("variant {v:?} named twice"));
        }
    }
    Ok(())
}

pub fn validate(
    file: ScenarioFile,
    text: &str,
    options: &LoadOptions,
) -> Result<Scenario, Invalid> {
    let keys = KeySpans::new(text);
    limits::check_file(&file, &keys)?;
    let scenario = build(file, options)?;
    limits::check_scenario(&scenario, &keys)?;
    Ok(scenario)
}

fn build(file: ScenarioFile, options: &LoadOptions) -> Result<Scenario, Invalid> {
    let duration_ms = *file.duration_ms.get_ref();
    if duration_ms == 0 {
        return Err((
            Some(file.duration_ms.span()),
            "duration_ms must be positive".into(),
        ));
    }
    // Each section in turn, in the order its errors are reported; each takes what it needs of
    // the sections before it.
    let mut topics = topics::topic_specs(&file.topics)?;
    let cluster = cluster::cluster_spec(&file.cluster, &file.topics)?;
    let brokers = cluster.brokers;
    let variant = group::apply_variant(&file.group, &file.variants, options.variant.as_ref())?;
    let group = group::group_spec(&file.group, variant.protocol)?;
    let notices = group::notices(&file.group, &file.members, &group, &cluster.broker_racks);
    let cx = MemberContext {
        group: &group,
        group_assignors: &variant.assignors,
        assignors_span: variant.assignors_span.clone(),
        clear_member_assignors: variant.clear_member_assignors,
        topics: topics.iter().map(|t| t.name.clone()).collect(),
    };
    let (mut members, entry_of) = members::member_specs(&file.members, &cx)?;
    let producers = workload::producer_specs(&file.producers, &topics, duration_ms)?;
    if file.lag_sample_ms == 0 {
        return Err((None, "lag_sample_ms must be positive".into()));
    }
    let arrival = workload::arrival_spec(&file.arrival, brokers)?;
    let app = app::join_app(file.app.as_ref(), &topics, &producers)?;

    let (timeline, plan) = resolve(
        &file.timeline,
        Roster {
            members: &mut members,
            topics: &mut topics,
            brokers,
            duration_ms,
            cx: &cx,
            entry_of: &entry_of,
        },
    )?;

    let co_partitioned = topics::co_partitioned(&file.co_partitioned, &topics)?;
    let snapshot_variants =
        harness::snapshot_variants(file.snapshot_variants.as_ref(), &file.variants)?;
    let expects = harness::expectations(&file.expect, &file.variants)?;
    let mutant = harness::mutant(file.mutant.as_ref())?;

    Ok(Scenario {
        name: file.name.unwrap_or_else(|| "scenario".into()),
        description: file.description,
        seed: options.seed.unwrap_or(file.seed),
        variant: variant.name,
        duration_ms,
        cluster,
        topics,
        group,
        members,
        producers,
        arrival,
        app,
        lag_sample_ms: file.lag_sample_ms,
        timeline,
        plan,
        co_partitioned,
        snapshot_variants,
        expects,
        notices,
        mutant,
    })
}

#[cfg(test)]
mod tests {
    use super::check_variant_names;

    #[test]
    fn variants_are_named_once() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(check_variant_names(&names(&["eager", "cooperative"]), "run").is_ok());
        assert!(check_variant_names(&names(&["eager", "eager"]), "run")
            .unwrap_err()
            .contains("named twice"));
        assert!(check_variant_names(&names(&[""]), "run")
            .unwrap_err()
            .contains("empty"));
        assert_eq!(
            check_variant_names(&[], "compare").unwrap_err(),
            "no variant to compare"
        );
    }
}
