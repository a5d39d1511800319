//! `cgsim compare`: the figures of many runs, variants side by side. Pure: the runs come in as
//! [`RunFigures`] in (variant, seed) order, the table and the JSON come out; nothing here knows
//! about threads, so the output cannot depend on how the runs were scheduled.
//!
//! Each cell is the median over seeds (nearest-rank p50, as every percentile in cgsim: for an
//! even number of seeds the lower middle value, always one that a seed really produced) with its
//! spread `[min-max]`; every variant after the first also gets the ratio of its median to the
//! first variant's (`x0.31`), undefined (`-`, JSON `null`) when the first's median is 0.

use super::Report;
use crate::metrics::nearest_rank;
use serde_json::{json, Map, Value};
use std::fmt::Write;

/// How a figure's integers read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Count,
    Ms,
    /// A fraction in parts per million (`RATE_SCALE`): printed as a percentage, in JSON as a
    /// fraction.
    Rate,
}

impl Unit {
    fn name(self) -> &'static str {
        match self {
            Unit::Count => "count",
            Unit::Ms => "ms",
            Unit::Rate => "fraction",
        }
    }
}

/// Parts per million: a rate of 1 is `RATE_SCALE`.
pub const RATE_SCALE: u64 = 1_000_000;

/// One row of the table: a figure of a run's report.
pub struct Figure {
    /// The report's JSON key it comes from (dotted), used as the key in `--format json`.
    pub key: &'static str,
    /// The row's label in the text table.
    pub label: &'static str,
    pub unit: Unit,
    /// The value for one run; `None` where it is undefined (a hit rate without notifications).
    pub of: fn(&Report) -> Option<u64>,
}

/// Figures the text table leaves out when no run measures them (a cluster without broker racks
/// has no rack to cross).
const SHOWN_WHEN_MEASURED: &[&str] = &["records.cross_rack_fetched"];

/// Whether a table leaves the figure out when no run measures it.
pub fn shown_only_when_measured(figure: &Figure) -> bool {
    SHOWN_WHEN_MEASURED.contains(&figure.key)
}

/// The rows, in table order.
pub const FIGURES: &[Figure] = &[
    Figure {
        key: "rebalances.count",
        label: "rebalances",
        unit: Unit::Count,
        of: |r| Some(r.rebalances.count),
    },
    Figure {
        key: "revocations.total",
        label: "revocations",
        unit: Unit::Count,
        of: |r| Some(r.revocations.total),
    },
    Figure {
        key: "moved.total",
        label: "moved",
        unit: Unit::Count,
        of: |r| Some(r.moved.total),
    },
    Figure {
        key: "moved.minimum",
        label: "moved minimum",
        unit: Unit::Count,
        of: |r| Some(r.moved.minimum),
    },
    Figure {
        key: "pauses.stop_the_world_ms.p50",
        label: "stop-the-world p50 ms",
        unit: Unit::Ms,
        of: |r| Some(r.pauses.stop_the_world_ms.p50),
    },
    Figure {
        key: "pauses.stop_the_world_ms.p99",
        label: "stop-the-world p99 ms",
        unit: Unit::Ms,
        of: |r| Some(r.pauses.stop_the_world_ms.p99),
    },
    Figure {
        key: "pauses.stop_the_world_ms.max",
        label: "stop-the-world max ms",
        unit: Unit::Ms,
        of: |r| Some(r.pauses.stop_the_world_ms.max),
    },
    Figure {
        key: "pauses.unavailable_ms.total",
        label: "unavailable total ms",
        unit: Unit::Ms,
        of: |r| Some(r.pauses.unavailable_ms.total),
    },
    Figure {
        key: "pauses.unavailable_ms.p99",
        label: "unavailable p99 ms",
        unit: Unit::Ms,
        of: |r| Some(r.pauses.unavailable_ms.p99),
    },
    Figure {
        key: "pauses.unavailable_ms.max",
        label: "unavailable max ms",
        unit: Unit::Ms,
        of: |r| Some(r.pauses.unavailable_ms.max),
    },
    Figure {
        key: "lag.peak",
        label: "lag peak partition",
        unit: Unit::Count,
        of: |r| Some(r.lag.peak.values().copied().max().unwrap_or(0)),
    },
    Figure {
        key: "lag.total_peak",
        label: "lag total peak",
        unit: Unit::Count,
        // The highest total lag in any rebalance window (formation's start-up lag left out).
        of: |r| {
            Some(
                r.rebalances
                    .list
                    .iter()
                    .map(|e| e.window.lag_peak)
                    .max()
                    .unwrap_or(0),
            )
        },
    },
    Figure {
        key: "lag.catch_up_ms",
        label: "lag catch-up ms (max)",
        unit: Unit::Ms,
        of: |r| {
            Some(
                r.lag
                    .catch_up_ms
                    .iter()
                    .flatten()
                    .copied()
                    .max()
                    .unwrap_or(0),
            )
        },
    },
    Figure {
        key: "lag.never_caught_up",
        label: "lag never caught up",
        unit: Unit::Count,
        of: |r| Some(r.lag.catch_up_ms.iter().filter(|c| c.is_none()).count() as u64),
    },
    Figure {
        key: "join.hit_rate",
        label: "join hit rate",
        unit: Unit::Rate,
        of: |r| rate(r.join.local_hits, r.join.notifications),
    },
    Figure {
        key: "records.processed_twice",
        label: "processed twice",
        unit: Unit::Count,
        of: |r| Some(r.records.processed_twice),
    },
    Figure {
        key: "records.cross_rack_fetched",
        label: "cross-rack fetched",
        unit: Unit::Count,
        of: |r| r.records.cross_rack_fetched,
    },
    Figure {
        key: "invariants.violations",
        label: "violations",
        unit: Unit::Count,
        of: |r| Some(r.invariants.violations.len() as u64),
    },
];

/// Figures a sweep records for every run besides the rows above (its `--objective` may name
/// any of them); not rows of compare's table.
pub const MORE_FIGURES: &[Figure] = &[
    Figure {
        key: "pauses.stop_the_world_ms.total",
        label: "stop-the-world total ms",
        unit: Unit::Ms,
        of: |r| Some(r.pauses.stop_the_world_ms.total),
    },
    Figure {
        key: "join.local_hits",
        label: "join local hits",
        unit: Unit::Count,
        of: |r| Some(r.join.local_hits),
    },
];

impl Figure {
    /// Whether more is better (the join's hits); for every other figure less is.
    pub fn higher_is_better(&self) -> bool {
        matches!(self.key, "join.hit_rate" | "join.local_hits")
    }
}

/// `part / whole` in parts per million (floored); `None` when `whole` is 0.
pub fn rate(part: u64, whole: u64) -> Option<u64> {
    if whole == 0 {
        return None;
    }
    Some((u128::from(part) * u128::from(RATE_SCALE) / u128::from(whole)) as u64)
}

/// What the table keeps of one run: its figures in [`FIGURES`] order, and its violations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFigures {
    pub values: Vec<Option<u64>>,
    /// The kinds of the run's invariant violations, sorted, each once.
    pub violation_kinds: Vec<String>,
    pub violations: u64,
}

impl RunFigures {
    pub fn of(report: &Report) -> RunFigures {
        let mut kinds: Vec<String> = report
            .invariants
            .violations
            .iter()
            .map(|v| v.kind.clone())
            .collect();
        kinds.sort();
        kinds.dedup();
        RunFigures {
            values: FIGURES.iter().map(|f| (f.of)(report)).collect(),
            violation_kinds: kinds,
            violations: report.invariants.violations.len() as u64,
        }
    }
}

/// A figure over seeds: nearest-rank percentiles of the seeds where it is defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spread {
    pub median: u64,
    pub min: u64,
    pub max: u64,
    pub p10: u64,
    pub p90: u64,
    /// Seeds where the figure was defined.
    pub seeds: usize,
}

impl Spread {
    /// `None` when no seed defines the figure.
    pub fn of(values: &[Option<u64>]) -> Option<Spread> {
        let mut v: Vec<u64> = values.iter().flatten().copied().collect();
        if v.is_empty() {
            return None;
        }
        v.sort_unstable();
        Some(Spread {
            median: nearest_rank(&v, 50),
            min: v[0],
            max: v[v.len() - 1],
            p10: nearest_rank(&v, 10),
            p90: nearest_rank(&v, 90),
            seeds: v.len(),
        })
    }
}

/// `value / baseline`; `None` when the baseline is 0 (no ratio to speak of).
pub fn ratio(value: u64, baseline: u64) -> Option<f64> {
    if baseline == 0 {
        None
    } else {
        Some(value as f64 / baseline as f64)
    }
}

/// One variant's column.
#[derive(Clone, Debug)]
pub struct Column {
    pub variant: String,
    /// One per seed, in seed order.
    pub runs: Vec<RunFigures>,
    /// One per figure: its spread over seeds and its median's ratio to the first column's.
    pub cells: Vec<Cell>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    pub spread: Option<Spread>,
    pub ratio: Option<f64>,
}

/// The whole comparison: variants side by side over the same seeds.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub scenario: String,
    pub seeds: Vec<u64>,
    pub columns: Vec<Column>,
}

impl Comparison {
    /// `runs`: per variant, in the order given (the first is the baseline), one [`RunFigures`]
    /// per seed in `seeds` order.
    pub fn new(scenario: &str, seeds: Vec<u64>, runs: Vec<(String, Vec<RunFigures>)>) -> Self {
        let mut columns: Vec<Column> = Vec::with_capacity(runs.len());
        for (variant, runs) in runs {
            assert_eq!(runs.len(), seeds.len(), "one run per seed for {variant}");
            let cells = (0..FIGURES.len())
                .map(|f| {
                    let values: Vec<Option<u64>> = runs.iter().map(|r| r.values[f]).collect();
                    let spread = Spread::of(&values);
                    let baseline = match columns.first() {
                        Some(first) => first.cells[f].spread,
                        None => spread,
                    };
                    let ratio = match (spread, baseline) {
                        (Some(s), Some(b)) => ratio(s.median, b.median),
                        _ => None,
                    };
                    Cell { spread, ratio }
                })
                .collect();
            columns.push(Column {
                variant,
                runs,
                cells,
            });
        }
        Comparison {
            scenario: scenario.to_string(),
            seeds,
            columns,
        }
    }

    /// `(variant, seed, run)` for every run that found invariant violations, in table order.
    pub fn violating_runs(&self) -> Vec<(&str, u64, &RunFigures)> {
        let mut out = Vec::new();
        for c in &self.columns {
            for (seed, run) in self.seeds.iter().zip(&c.runs) {
                if run.violations > 0 {
                    out.push((c.variant.as_str(), *seed, run));
                }
            }
        }
        out
    }

    pub fn has_violations(&self) -> bool {
        !self.violating_runs().is_empty()
    }

    fn seeds_text(&self) -> String {
        let contiguous = self.seeds.windows(2).all(|w| w[1] == w[0].wrapping_add(1));
        match (self.seeds.first(), self.seeds.last()) {
            (Some(a), Some(b)) if a == b => format!("seed {a}"),
            (Some(a), Some(b)) if contiguous => format!("seeds {a}..{b} ({})", self.seeds.len()),
            _ => {
                let list: Vec<String> = self.seeds.iter().map(u64::to_string).collect();
                format!("seeds {}", list.join(","))
            }
        }
    }
}

/// A value in its unit: integers as they are, rates as a percentage with one decimal.
pub fn show(unit: Unit, v: u64) -> String {
    match unit {
        Unit::Count | Unit::Ms => v.to_string(),
        Unit::Rate => {
            // Tenths of a percent, rounded half up, in integers.
            let tenths = (v + RATE_SCALE / 2000) / (RATE_SCALE / 1000);
            format!("{}.{}%", tenths / 10, tenths % 10)
        }
    }
}

/// `median [min-max]`, just `median` when every seed gave the same value, `-` when undefined.
fn show_spread(unit: Unit, s: Option<Spread>) -> String {
    match s {
        None => "-".into(),
        Some(s) if s.min == s.max => show(unit, s.median),
        Some(s) => format!(
            "{} [{}-{}]",
            show(unit, s.median),
            show(unit, s.min),
            show(unit, s.max)
        ),
    }
}

fn show_ratio(r: Option<f64>) -> String {
    match r {
        Some(r) => format!("x{r:.2}"),
        None => "-".into(),
    }
}

/// The table: a row per figure, a column per variant (after the first, with its ratio).
pub fn render_text(c: &Comparison) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "scenario {}  {}  variants {}",
        c.scenario,
        c.seeds_text(),
        c.columns
            .iter()
            .map(|c| c.variant.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(first) = c.columns.first() {
        let _ = writeln!(
            o,
            "cells: median over seeds [min-max] (one value: the same on every seed); \
             xR: median / {}'s median",
            first.variant
        );
    }
    let _ = writeln!(o);

    // Every cell as text, then padded to its column's width.
    let mut rows: Vec<Vec<String>> = Vec::with_capacity(FIGURES.len() + 1);
    let mut header = vec!["figure".to_string()];
    for (i, col) in c.columns.iter().enumerate() {
        header.push(col.variant.clone());
        if i > 0 {
            header.push(String::new());
        }
    }
    rows.push(header);
    for (f, figure) in FIGURES.iter().enumerate() {
        if shown_only_when_measured(figure)
            && c.columns.iter().all(|col| col.cells[f].spread.is_none())
        {
            continue;
        }
        let mut row = vec![figure.label.to_string()];
        for (i, col) in c.columns.iter().enumerate() {
            row.push(show_spread(figure.unit, col.cells[f].spread));
            if i > 0 {
                row.push(show_ratio(col.cells[f].ratio));
            }
        }
        rows.push(row);
    }
    o.push_str(&table(&rows));

    let bad = c.violating_runs();
    if !bad.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(o, "runs with invariant violations: {}", bad.len());
        for (variant, seed, run) in bad {
            let _ = writeln!(
                o,
                "  {variant} seed {seed}: {} ({})",
                run.violations,
                run.violation_kinds.join(", ")
            );
        }
    }
    o
}

/// A value for JSON: integers as they are, rates as fractions.
pub fn json_value(unit: Unit, v: u64) -> Value {
    match unit {
        Unit::Count | Unit::Ms => json!(v),
        Unit::Rate => json!(v as f64 / RATE_SCALE as f64),
    }
}

/// Ratios rounded to 4 decimals: enough to read, short to print.
fn json_ratio(r: Option<f64>) -> Value {
    match r {
        Some(r) => json!((r * 10_000.0).round() / 10_000.0),
        None => Value::Null,
    }
}

/// The same as the table, for scripts: per variant, per figure (keyed as in `cgsim run --format
/// json`), the median, min, p10, p90, max, ratio and the raw value of every seed (`seeds` order).
pub fn to_json(c: &Comparison) -> Value {
    let figures: Vec<Value> = FIGURES
        .iter()
        .map(|f| json!({"key": f.key, "label": f.label, "unit": f.unit.name()}))
        .collect();
    let mut variants = Map::new();
    for col in &c.columns {
        let mut per_figure = Map::new();
        for (f, figure) in FIGURES.iter().enumerate() {
            let cell = col.cells[f];
            let stat = |pick: fn(&Spread) -> u64| match &cell.spread {
                Some(s) => json_value(figure.unit, pick(s)),
                None => Value::Null,
            };
            let per_seed: Vec<Value> = col
                .runs
                .iter()
                .map(|r| match r.values[f] {
                    Some(v) => json_value(figure.unit, v),
                    None => Value::Null,
                })
                .collect();
            per_figure.insert(
                figure.key.to_string(),
                json!({
                    "median": stat(|s| s.median),
                    "min": stat(|s| s.min),
                    "p10": stat(|s| s.p10),
                    "p90": stat(|s| s.p90),
                    "max": stat(|s| s.max),
                    "ratio": json_ratio(cell.ratio),
                    "per_seed": per_seed,
                }),
            );
        }
        variants.insert(col.variant.clone(), Value::Object(per_figure));
    }
    let violations: Vec<Value> = c
        .violating_runs()
        .into_iter()
        .map(|(variant, seed, run)| {
            json!({
                "variant": variant,
                "seed": seed,
                "count": run.violations,
                "kinds": run.violation_kinds,
            })
        })
        .collect();
    json!({
        "scenario": c.scenario,
        "seeds": c.seeds,
        "baseline": c.columns.first().map(|c| c.variant.clone()),
        "statistics": "nearest-rank percentiles over seeds (median = p50); ratio = median / the baseline's median, null when the baseline's is 0",
        "figures": figures,
        "variants": Value::Object(variants),
        "violations": violations,
    })
}

/// Rows of cells, each column padded to its widest cell, two spaces apart (`compare`'s and
/// `sweep`'s tables).
pub fn table(rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut o = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let _ = write!(line, "{cell:<w$}", w = widths[i]);
        }
        let _ = writeln!(o, "{}", line.trim_end());
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(key: &str) -> usize {
        FIGURES.iter().position(|f| f.key == key).unwrap()
    }

    /// A run whose every figure is `v`, except the hit rate (undefined when `hits` is None).
    fn run(v: u64, hits: Option<u64>) -> RunFigures {
        let mut values = vec![Some(v); FIGURES.len()];
        values[index("join.hit_rate")] = hits;
        values[index("invariants.violations")] = Some(0);
        RunFigures {
            values,
            violation_kinds: vec![],
            violations: 0,
        }
    }

    #[test]
    fn median_is_nearest_rank_and_spread_is_min_max() {
        let s = Spread::of(&[Some(5), Some(1), Some(9), Some(3)]).unwrap();
        // Even count: the lower middle value (nearest rank), one a seed really produced.
        assert_eq!((s.median, s.min, s.max, s.seeds), (3, 1, 9, 4));
        let s = Spread::of(&[Some(7), Some(2), Some(4)]).unwrap();
        assert_eq!((s.median, s.min, s.max), (4, 2, 7));
        let ten: Vec<Option<u64>> = (1..=10).map(Some).collect();
        let s = Spread::of(&ten).unwrap();
        assert_eq!((s.p10, s.median, s.p90), (1, 5, 9));
    }

    #[test]
    fn undefined_values_are_skipped_and_all_undefined_is_none() {
        let s = Spread::of(&[None, Some(4), None, Some(8)]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.seeds), (4, 4, 8, 2));
        assert_eq!(Spread::of(&[None, None]), None);
        assert_eq!(Spread::of(&[]), None);
    }

    #[test]
    fn ratios_against_the_first_variant() {
        assert_eq!(ratio(31, 100), Some(0.31));
        assert_eq!(ratio(5, 0), None);
        let seeds = vec![1, 2, 3];
        let c = Comparison::new(
            "s",
            seeds,
            vec![
                (
                    "eager".into(),
                    vec![run(10, None), run(20, None), run(30, None)],
                ),
                (
                    "coop".into(),
                    vec![run(5, None), run(6, None), run(7, None)],
                ),
            ],
        );
        let f = index("revocations.total");
        assert_eq!(c.columns[0].cells[f].ratio, Some(1.0));
        assert_eq!(c.columns[1].cells[f].ratio, Some(0.3));
        // Undefined everywhere: no spread, no ratio.
        let h = index("join.hit_rate");
        assert_eq!(c.columns[1].cells[h].spread, None);
        assert_eq!(c.columns[1].cells[h].ratio, None);
        // A zero baseline has no ratio.
        let v = index("invariants.violations");
        assert_eq!(c.columns[1].cells[v].ratio, None);
    }

    #[test]
    fn rates_are_parts_per_million_and_print_as_percent() {
        assert_eq!(rate(1, 3), Some(333_333));
        assert_eq!(rate(0, 0), None);
        assert_eq!(show(Unit::Rate, 333_333), "33.3%");
        assert_eq!(show(Unit::Rate, 999_950), "100.0%");
        assert_eq!(show(Unit::Rate, 985_000), "98.5%");
        assert_eq!(show(Unit::Rate, 0), "0.0%");
    }

    #[test]
    fn text_table_has_a_row_per_figure_and_ratios_after_the_first() {
        let c = Comparison::new(
            "scale-out",
            vec![1, 2],
            vec![
                ("eager".into(), vec![run(24, Some(500_000)), run(24, None)]),
                (
                    "cooperative".into(),
                    vec![run(6, Some(900_000)), run(8, None)],
                ),
            ],
        );
        let t = render_text(&c);
        assert!(t.starts_with("scenario scale-out  seeds 1..2 (2)  variants eager, cooperative\n"));
        let row = t.lines().find(|l| l.starts_with("revocations")).unwrap();
        let cells: Vec<&str> = row
            .split("  ")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        assert_eq!(cells, ["revocations", "24", "6 [6-8]", "x0.25"], "{t}");
        let row = t.lines().find(|l| l.starts_with("join hit rate")).unwrap();
        let cells: Vec<&str> = row
            .split("  ")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        assert_eq!(cells, ["join hit rate", "50.0%", "90.0%", "x1.80"], "{t}");
        for f in FIGURES {
            assert!(t.lines().any(|l| l.starts_with(f.label)), "{}", f.label);
        }
        assert!(!t.contains("violations:"));
    }

    #[test]
    fn violations_are_listed_by_variant_and_seed() {
        let mut bad = run(1, None);
        bad.violations = 2;
        bad.violation_kinds = vec!["double_ownership".into()];
        bad.values[index("invariants.violations")] = Some(2);
        let c = Comparison::new(
            "s",
            vec![7, 8],
            vec![("eager".into(), vec![run(1, None), bad])],
        );
        assert!(c.has_violations());
        let t = render_text(&c);
        assert!(t.contains("  eager seed 8: 2 (double_ownership)"), "{t}");
        let j = to_json(&c);
        assert_eq!(j["violations"][0]["seed"], 8);
        assert_eq!(j["violations"][0]["kinds"][0], "double_ownership");
    }

    #[test]
    fn json_has_every_figure_per_variant_with_per_seed_values() {
        let c = Comparison::new(
            "s",
            vec![1, 2, 3],
            vec![
                (
                    "a".into(),
                    vec![run(2, Some(250_000)), run(4, None), run(6, None)],
                ),
                (
                    "b".into(),
                    vec![run(1, Some(500_000)), run(1, None), run(1, None)],
                ),
            ],
        );
        let j = to_json(&c);
        assert_eq!(j["baseline"], "a");
        let keys: Vec<&str> = j["variants"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(keys, ["a", "b"]);
        for f in FIGURES {
            assert!(j["variants"]["b"][f.key].is_object(), "{}", f.key);
        }
        let m = &j["variants"]["a"]["moved.total"];
        assert_eq!(
            (m["median"].as_u64(), m["min"].as_u64(), m["max"].as_u64()),
            (Some(4), Some(2), Some(6))
        );
        assert_eq!(m["per_seed"], json!([2, 4, 6]));
        assert_eq!(j["variants"]["b"]["moved.total"]["ratio"], json!(0.25));
        let h = &j["variants"]["b"]["join.hit_rate"];
        assert_eq!(h["median"], json!(0.5));
        assert_eq!(h["per_seed"], json!([0.5, null, null]));
        assert_eq!(h["ratio"], json!(2.0));
    }
}
