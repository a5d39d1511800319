//! The summary of a sweep: its points, then per variant a table with a row per figure and a
//! column per point, each cell the median over seeds with its p10-p90 spread, the best median
//! of each row marked. Computed from the records alone, in the plan's order, so an unsharded
//! run and a merge of its shards print the same bytes.

use super::{figures, Plan, Record};
use crate::report::compare::{show, table, Figure, Spread, Unit};
use std::fmt::Write;

/// At most this many points side by side; more continue in another table below.
const POINTS_PER_TABLE: usize = 6;

/// Every (point, variant)'s spread of every figure: `[point][variant][figure]`.
pub fn spreads(plan: &Plan, records: &[Record]) -> Vec<Vec<Vec<Option<Spread>>>> {
    let n = figures().count();
    let mut values: Vec<Vec<Vec<Vec<Option<u64>>>>> =
        vec![vec![vec![Vec::new(); n]; plan.variants.len()]; plan.points.len()];
    for r in records {
        for (f, v) in r.values.iter().enumerate() {
            values[r.job.point][r.job.variant][f].push(*v);
        }
    }
    values
        .iter()
        .map(|per_variant| {
            per_variant
                .iter()
                .map(|per_figure| per_figure.iter().map(|v| Spread::of(v)).collect())
                .collect()
        })
        .collect()
}

/// `seeds 1..20 (20)`, or `seed 5`.
pub fn seeds_text(plan: &Plan) -> String {
    if plan.first_seed == plan.last_seed {
        format!("seed {}", plan.first_seed)
    } else {
        format!(
            "seeds {}..{} ({})",
            plan.first_seed,
            plan.last_seed,
            plan.seed_count()
        )
    }
}

/// `median [p10-p90]`, the median alone when p10 = p90, `-` when undefined.
pub fn show_spread(unit: Unit, s: Option<Spread>) -> String {
    match s {
        None => "-".into(),
        Some(s) if s.p10 == s.p90 => show(unit, s.median),
        Some(s) => format!(
            "{} [{}-{}]",
            show(unit, s.median),
            show(unit, s.p10),
            show(unit, s.p90)
        ),
    }
}

/// Whether `a` is a better median than `b` for this figure.
pub fn better(figure: &Figure, a: u64, b: u64) -> bool {
    if figure.higher_is_better() {
        a > b
    } else {
        a < b
    }
}

/// The points of `row` holding the best median, unless every defined one is the same.
fn best_of_row(figure: &Figure, row: &[Option<Spread>]) -> Vec<bool> {
    let medians: Vec<u64> = row.iter().flatten().map(|s| s.median).collect();
    let Some(&first) = medians.first() else {
        return vec![false; row.len()];
    };
    if medians.iter().all(|&m| m == first) {
        return vec![false; row.len()];
    }
    let best = medians
        .iter()
        .copied()
        .reduce(|a, b| if better(figure, b, a) { b } else { a })
        .expect("not empty");
    row.iter()
        .map(|s| s.is_some_and(|s| s.median == best))
        .collect()
}

/// How a point reads in the list: its settings, aligned, and whether it is Kafka's defaults.
fn point_lines(plan: &Plan) -> Vec<String> {
    let keys = plan.grid.len();
    let cells: Vec<Vec<String>> = plan
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut row = vec![plan.label(i)];
            row.extend(p.settings.iter().map(|(k, v)| format!("{k}={v}")));
            row
        })
        .collect();
    let widths: Vec<usize> = (0..=keys)
        .map(|c| {
            cells
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    plan.points
        .iter()
        .zip(&cells)
        .map(|(p, row)| {
            let mut line = String::from(" ");
            for (c, cell) in row.iter().enumerate() {
                let _ = write!(line, " {cell:<w$}", w = widths[c]);
            }
            if p.unset {
                line.push_str("  Kafka's defaults (the keys left out of the file)");
            } else if p.kafka_defaults {
                line.push_str("  Kafka's defaults");
            }
            line.trim_end().to_string()
        })
        .collect()
}

pub fn render(plan: &Plan, records: &[Record]) -> String {
    let mut o = String::new();
    let total = plan.points.len() as u64 * plan.variants.len() as u64 * plan.seed_count();
    let runs = if records.len() as u64 == total {
        format!("runs {total}")
    } else {
        format!("runs {} of {total}", records.len())
    };
    let shard = if plan.shard.count > 1 {
        format!(
            "  (shard {}: `cgsim merge` joins the shards into the whole sweep)",
            plan.shard
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "sweep {}  {}  variants {}  points {}  {runs}{shard}",
        plan.scenario,
        seeds_text(plan),
        plan.variants.join(", "),
        plan.points.len()
    );
    let _ = writeln!(
        o,
        "cells: median over seeds [p10-p90] (one value: p10 = p90)"
    );
    let _ = writeln!(
        o,
        "*: the best median of its row, the lowest (join hit rate and local hits: the highest); \
         none when all are equal"
    );
    let _ = writeln!(o);
    let _ = writeln!(o, "points");
    for line in point_lines(plan) {
        let _ = writeln!(o, "{line}");
    }
    if let Some(why) = &plan.defaults_not_run {
        let _ = writeln!(o, "  Kafka's defaults: not run: {why}");
    }
    if !plan.sets.is_empty() {
        let _ = writeln!(o, "  every point with --set {}", plan.sets.join(" --set "));
    }

    let spreads = spreads(plan, records);
    let figures: Vec<&Figure> = figures().collect();
    let chunks: Vec<std::ops::Range<usize>> = (0..plan.points.len())
        .step_by(POINTS_PER_TABLE)
        .map(|s| s..(s + POINTS_PER_TABLE).min(plan.points.len()))
        .collect();
    for (v, variant) in plan.variants.iter().enumerate() {
        let marks: Vec<Vec<bool>> = figures
            .iter()
            .enumerate()
            .map(|(f, figure)| {
                let row: Vec<Option<Spread>> =
                    (0..plan.points.len()).map(|p| spreads[p][v][f]).collect();
                best_of_row(figure, &row)
            })
            .collect();
        for chunk in &chunks {
            let _ = writeln!(o);
            if chunks.len() > 1 {
                let _ = writeln!(
                    o,
                    "variant {variant}, {}..{}",
                    plan.label(chunk.start),
                    plan.label(chunk.end - 1)
                );
            } else {
                let _ = writeln!(o, "variant {variant}");
            }
            let mut rows = Vec::with_capacity(figures.len() + 1);
            let mut header = vec!["figure".to_string()];
            header.extend(chunk.clone().map(|p| plan.label(p)));
            rows.push(header);
            for (f, figure) in figures.iter().enumerate() {
                if crate::report::compare::shown_only_when_measured(figure)
                    && (0..plan.points.len()).all(|p| spreads[p][v][f].is_none())
                {
                    continue;
                }
                let mut row = vec![figure.label.to_string()];
                for p in chunk.clone() {
                    let cell = show_spread(figure.unit, spreads[p][v][f]);
                    row.push(if marks[f][p] {
                        format!("*{cell}")
                    } else {
                        cell
                    });
                }
                rows.push(row);
            }
            o.push_str(&table(&rows));
        }
    }

    let bad: Vec<&Record> = records.iter().filter(|r| r.violation_count() > 0).collect();
    if !bad.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(o, "runs with invariant violations: {}", bad.len());
        for r in bad {
            let _ = writeln!(
                o,
                "  {} {} seed {}: {} ({})",
                plan.label(r.job.point),
                plan.variants[r.job.variant],
                r.job.seed,
                r.violation_count(),
                r.violations.join(", ")
            );
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::grid::{parse_grid, points};
    use crate::sweep::shard::Shard;
    use crate::sweep::{figure_index, Job};

    fn plan() -> Plan {
        Plan::for_tests(
            "group.heartbeat_interval_ms=1000,2000",
            &["eager", "cooperative"],
            10,
            Shard::ALL,
        )
    }

    /// Every figure of the run `base + seed`, the hit rate undefined.
    fn records(plan: &Plan, value: impl Fn(Job) -> u64) -> Vec<Record> {
        plan.jobs()
            .into_iter()
            .map(|job| {
                let mut values = vec![Some(value(job)); figures().count()];
                values[figure_index("join.hit_rate").unwrap()] = None;
                values[figure_index("invariants.violations").unwrap()] = Some(0);
                Record {
                    job,
                    digest: String::new(),
                    values,
                    violations: vec![],
                }
            })
            .collect()
    }

    fn row<'a>(text: &'a str, after: &str, label: &str) -> Vec<&'a str> {
        let start = text.find(after).unwrap();
        let line = text[start..]
            .lines()
            .find(|l| l.starts_with(label) && l[label.len()..].starts_with("  "))
            .unwrap();
        line.split("  ")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect()
    }

    #[test]
    fn medians_and_p10_p90_per_point_and_variant_the_best_marked() {
        let p = plan();
        // Point 0 is the lowest under eager, point 1 under cooperative; seeds spread 1..10.
        let r = records(&p, |j| {
            let base = match (j.point, j.variant) {
                (0, 0) => 100,
                (1, 1) => 100,
                _ => 200,
            };
            base + j.seed
        });
        let t = render(&p, &r);
        assert!(
            t.starts_with(
                "sweep s  seeds 1..10 (10)  variants eager, cooperative  points 3  runs 60\n"
            ),
            "{t}"
        );
        assert!(
            t.contains("\n  p1 group.heartbeat_interval_ms=1000\n"),
            "{t}"
        );
        assert!(t.contains("\n  p3 group.heartbeat_interval_ms=3000  Kafka's defaults (the keys left out of the file)\n"), "{t}");
        assert_eq!(
            row(&t, "variant eager", "revocations"),
            [
                "revocations",
                "*105 [101-109]",
                "205 [201-209]",
                "205 [201-209]"
            ]
        );
        assert_eq!(
            row(&t, "variant cooperative", "revocations"),
            [
                "revocations",
                "205 [201-209]",
                "*105 [101-109]",
                "205 [201-209]"
            ]
        );
        // Undefined everywhere: `-`, nothing marked.
        assert_eq!(
            row(&t, "variant eager", "join hit rate"),
            ["join hit rate", "-", "-", "-"]
        );
        // The same everywhere: nothing marked.
        assert_eq!(
            row(&t, "variant eager", "violations"),
            ["violations", "0", "0", "0"]
        );
        assert!(!t.contains("invariant violations"));
    }

    #[test]
    fn more_is_better_for_the_joins_hits() {
        let p = plan();
        let r = records(&p, |j| j.point as u64 * 10);
        let t = render(&p, &r);
        assert_eq!(
            row(&t, "variant eager", "join local hits"),
            ["join local hits", "0", "10", "*20"]
        );
        assert_eq!(
            row(&t, "variant eager", "moved"),
            ["moved", "*0", "10", "20"]
        );
    }

    #[test]
    fn a_shard_says_so_and_violations_are_listed() {
        let p = Plan {
            shard: Shard { index: 2, count: 3 },
            ..plan()
        };
        let mut r: Vec<Record> = records(&p, |_| 1)
            .into_iter()
            .filter(|r| p.owns(r.job))
            .collect();
        let v = figure_index("invariants.violations").unwrap();
        r[0].values[v] = Some(2);
        r[0].violations = vec!["double_ownership".into()];
        let t = render(&p, &r);
        let first = t.lines().next().unwrap();
        assert!(
            first.contains(&format!("runs {} of 60  (shard 2/3", r.len())),
            "{first}"
        );
        assert!(t.contains("runs with invariant violations: 1\n"), "{t}");
    }

    #[test]
    fn many_points_continue_in_tables_below() {
        let grid = vec![parse_grid("group.heartbeat_interval_ms=1,2,4,5,6,7,8,9").unwrap()];
        let p = Plan {
            points: points(&grid),
            grid,
            ..plan()
        };
        let t = render(&p, &records(&p, |j| j.seed));
        assert!(t.contains("\nvariant eager, p1..p6\n"), "{t}");
        assert!(t.contains("\nvariant eager, p7..p9\n"), "{t}");
        assert!(t.contains("\nvariant cooperative, p7..p9\n"), "{t}");
    }
}
