//! `cgsim run ... --emit-scenario FILE`: the scenario as it was run, as a scenario file that
//! `cgsim run FILE` replays with the same digest. It is the file as written, with the
//! variant's and the command line's `--set` overrides applied, the seed written in, the
//! variant resolved (its assignors as the group's, members' own lists cleared, its protocol),
//! and the timeline written out as the run's plan (a rolling bounce as its leaves and
//! restarts). Comments and layout of the file are kept where they survive.

use super::file::ScenarioFile;
use super::load::{apply_sets, LoadOptions};
use super::{Protocol, Scenario};
use toml_edit::{value, Array, DocumentMut, Item, Table};

/// The scenario file for `scenario`, loaded from `text` with `options`.
pub fn emit_scenario(
    text: &str,
    options: &LoadOptions,
    scenario: &Scenario,
) -> Result<String, String> {
    // The variant's own overrides are read from the file as the command line left it.
    let with_cli_sets = apply_sets(text, &options.sets)?;
    let parsed: ScenarioFile =
        toml::from_str(&with_cli_sets).map_err(|e| e.message().to_string())?;
    let variant = options
        .variant
        .as_ref()
        .map(|name| (name, parsed.variants.get(name)));
    // The same overrides in the same order as loading: the variant's, then the command line's.
    let mut sets = variant
        .and_then(|(_, v)| v)
        .and_then(|v| v.get_ref().set.clone())
        .unwrap_or_default();
    sets.extend(options.sets.iter().cloned());
    let text = apply_sets(text, &sets)?;
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.message().to_string())?;
    doc.insert("seed", value(scenario.seed as i64));
    if let Some((name, custom)) = variant {
        let (assignors, protocol) = match custom.map(|v| v.get_ref()) {
            Some(v) => (v.assignors.clone(), v.protocol),
            None => match name.as_str() {
                "eager" => (Some(vec!["range".to_string()]), None),
                "cooperative" => (Some(vec!["cooperative-sticky".to_string()]), None),
                "default" => (None, None),
                "consumer" => (None, Some(Protocol::Consumer)),
                other => return Err(format!("variant {other:?} cannot be emitted")),
            },
        };
        let group = doc
            .entry("group")
            .or_insert(Item::Table(Table::new()))
            .as_table_mut()
            .ok_or("[group] is not a table")?;
        if let Some(list) = assignors {
            group.insert(
                "assignors",
                value(list.iter().map(String::as_str).collect::<Array>()),
            );
            if let Some(members) = doc
                .get_mut("members")
                .and_then(Item::as_array_of_tables_mut)
            {
                for m in members.iter_mut() {
                    m.remove("assignors");
                }
            }
        }
        if let Some(p) = protocol {
            let group = doc["group"].as_table_mut().expect("inserted above");
            group.insert(
                "protocol",
                value(match p {
                    Protocol::Classic => "classic",
                    Protocol::Consumer => "consumer",
                }),
            );
        }
    }
    doc.remove("timeline");
    if !scenario.plan.is_empty() {
        let tables = super::timeline::to_tables(scenario.plan.iter().map(|p| &p.entry));
        doc.insert("timeline", Item::ArrayOfTables(tables));
    }
    let header = format!(
        "# {}, emitted by cgsim run (variant {}, seed {}): replays the run with the same digest.\n",
        scenario.name, scenario.variant, scenario.seed
    );
    Ok(header + &doc.to_string())
}
