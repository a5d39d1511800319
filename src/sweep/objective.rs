//! `--objective [max:]FIGURE`: every (point, variant) ranked by its median over seeds, and the
//! recommended settings with their margin over the next best and over Kafka's defaults.
//!
//! Ranking: the better median first (lower, or higher with `max:`); equal medians by the tail
//! (the lower p90, or with `max:` the higher p10), then the point that changes fewest of
//! Kafka's defaults (a setting that made no difference is no reason to change it), then grid
//! order; undefined last.

use super::grid::Point;
use super::summary::{seeds_text, show_spread, spreads};
use super::{figure_index, figures, Plan, Record};
use crate::report::compare::{show, table, Figure, Spread, Unit, RATE_SCALE};
use crate::scenario::default_text;
use std::cmp::Ordering;
use std::fmt::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Objective {
    /// Index in [`figures`].
    pub figure: usize,
    pub maximise: bool,
}

impl Objective {
    fn figure(&self) -> &'static Figure {
        figures().nth(self.figure).expect("a figure index")
    }
}

/// `FIGURE` (minimised), `min:FIGURE` or `max:FIGURE`; FIGURE a key of the record lines.
pub fn parse_objective(text: &str) -> Result<Objective, String> {
    let text = text.trim();
    let (maximise, key) = match text.split_once(':') {
        Some(("max", k)) => (true, k.trim()),
        Some(("min", k)) => (false, k.trim()),
        Some((d, _)) => return Err(format!("{d:?}: the direction is min: or max:")),
        None => (false, text),
    };
    let figure = figure_index(key).ok_or_else(|| {
        let keys: Vec<&str> = figures().map(|f| f.key).collect();
        format!("unknown figure {key:?}; one of {}", keys.join(", "))
    })?;
    Ok(Objective { figure, maximise })
}

/// One (point, variant) and its figure over seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub point: usize,
    pub variant: usize,
    pub spread: Option<Spread>,
}

/// Every (point, variant), best first.
pub fn rank(plan: &Plan, records: &[Record], objective: Objective) -> Vec<Candidate> {
    let spreads = spreads(plan, records);
    let mut candidates: Vec<Candidate> = (0..plan.points.len())
        .flat_map(|point| {
            let spreads = &spreads;
            (0..plan.variants.len()).map(move |variant| Candidate {
                point,
                variant,
                spread: spreads[point][variant][objective.figure],
            })
        })
        .collect();
    candidates.sort_by(|a, b| compare(plan, objective, a, b));
    candidates
}

fn compare(plan: &Plan, objective: Objective, a: &Candidate, b: &Candidate) -> Ordering {
    let order = |a: &Candidate, b: &Candidate| match (a.spread, b.spread) {
        (Some(x), Some(y)) if objective.maximise => y.median.cmp(&x.median).then(y.p10.cmp(&x.p10)),
        (Some(x), Some(y)) => x.median.cmp(&y.median).then(x.p90.cmp(&y.p90)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    };
    // A tie goes to the point that changes fewest of Kafka's defaults: a setting whose value
    // made no difference is no reason to change it.
    let away = |c: &Candidate| changed_from_defaults(&plan.points[c.point]);
    order(a, b)
        .then(away(a).cmp(&away(b)))
        .then((a.point, a.variant).cmp(&(b.point, b.variant)))
}

/// How many of the point's settings are not Kafka's default (0 for the defaults point).
pub fn changed_from_defaults(point: &Point) -> usize {
    if point.unset {
        return 0;
    }
    point
        .settings
        .iter()
        .filter(|(k, v)| default_text(k).as_deref() != Some(v.as_str()))
        .count()
}

/// Rankings longer than this show the first `SHOWN` and Kafka's defaults.
const ALL_UP_TO: usize = 15;
const SHOWN: usize = 10;

pub fn render(plan: &Plan, records: &[Record], objective: Objective) -> String {
    let figure = objective.figure();
    let ranking = rank(plan, records, objective);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "objective: the {} median of {} ({}) over {}, per point and variant",
        if objective.maximise {
            "highest"
        } else {
            "lowest"
        },
        figure.key,
        figure.label,
        seeds_text(plan)
    );
    let tail = if objective.maximise {
        "p10, then to fewer changes from Kafka's defaults"
    } else {
        "p90, then to fewer changes from Kafka's defaults"
    };
    let mut rows = vec![vec![
        "rank".to_string(),
        "point".into(),
        "variant".into(),
        "median [p10-p90]".into(),
        "settings".into(),
    ]];
    let mut skipped = false;
    for (i, c) in ranking.iter().enumerate() {
        let shown = ranking.len() <= ALL_UP_TO || i < SHOWN || plan.points[c.point].kafka_defaults;
        if !shown {
            skipped = true;
            continue;
        }
        if skipped {
            rows.push(vec![
                "...".into(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]);
            skipped = false;
        }
        rows.push(vec![
            (i + 1).to_string(),
            plan.label(c.point),
            plan.variants[c.variant].clone(),
            show_spread(figure.unit, c.spread),
            settings_text(plan, c.point),
        ]);
    }
    if skipped {
        rows.push(vec![
            "...".into(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ]);
    }
    o.push_str(&table(&rows));

    let Some(best) = ranking.first().filter(|c| c.spread.is_some()) else {
        let _ = writeln!(
            o,
            "no recommendation: {} is undefined on every run",
            figure.key
        );
        return o;
    };
    let best_spread = best.spread.expect("defined");
    let _ = writeln!(
        o,
        "recommended: {}, variant {}: {}",
        plan.label(best.point),
        plan.variants[best.variant],
        settings_text(plan, best.point)
    );
    let _ = writeln!(
        o,
        "  median {} [p10-p90 {}-{}] over {} seed{}",
        with_unit(figure.unit, best_spread.median),
        show(figure.unit, best_spread.p10),
        show(figure.unit, best_spread.p90),
        best_spread.seeds,
        if best_spread.seeds == 1 { "" } else { "s" }
    );
    match ranking.get(1) {
        Some(next) => {
            let _ = writeln!(
                o,
                "  over the next best, {}, variant {}: {}",
                plan.label(next.point),
                plan.variants[next.variant],
                margin(figure, objective, best_spread, next.spread, tail)
            );
        }
        None => {
            let _ = writeln!(o, "  the only candidate");
        }
    }
    let defaults = plan.points.iter().position(|p| p.kafka_defaults);
    match (defaults, &plan.defaults_not_run) {
        (Some(d), _) if d == best.point => {
            let _ = writeln!(
                o,
                "  it is Kafka's defaults (under variant {})",
                plan.variants[best.variant]
            );
        }
        (Some(d), _) => {
            let spread = ranking
                .iter()
                .find(|c| c.point == d && c.variant == best.variant)
                .and_then(|c| c.spread);
            let _ = writeln!(
                o,
                "  over Kafka's defaults, {}, variant {}: {}",
                plan.label(d),
                plan.variants[best.variant],
                margin(figure, objective, best_spread, spread, tail)
            );
        }
        (None, Some(why)) => {
            let _ = writeln!(o, "  over Kafka's defaults: not run ({why})");
        }
        (None, None) => {}
    }
    o
}

/// A point's settings, and whether they are Kafka's defaults.
fn settings_text(plan: &Plan, point: usize) -> String {
    let p = &plan.points[point];
    if p.kafka_defaults {
        format!("{} (Kafka's defaults)", p.text())
    } else {
        p.text()
    }
}

fn with_unit(unit: Unit, v: u64) -> String {
    match unit {
        Unit::Ms => format!("{v} ms"),
        Unit::Count | Unit::Rate => show(unit, v),
    }
}

/// How much better `best` is than `other`: the difference of the medians in the figure's unit
/// (a rate's in percentage points) and relative to `other`'s median.
fn margin(
    figure: &Figure,
    objective: Objective,
    best: Spread,
    other: Option<Spread>,
    tail: &str,
) -> String {
    let Some(other) = other else {
        return "it is undefined there".into();
    };
    let diff = best.median.abs_diff(other.median);
    if diff == 0 {
        return format!(
            "a tie at {} (ties go to the better {tail})",
            with_unit(figure.unit, other.median)
        );
    }
    let (direction, relative) = if objective.maximise {
        ("higher", "more")
    } else {
        ("lower", "less")
    };
    let amount = match figure.unit {
        Unit::Ms => format!("{diff} ms"),
        Unit::Count => diff.to_string(),
        Unit::Rate => {
            let tenths = (diff + RATE_SCALE / 2000) / (RATE_SCALE / 1000);
            format!("{}.{} percentage points", tenths / 10, tenths % 10)
        }
    };
    let percent = if other.median == 0 {
        String::new()
    } else {
        format!(
            ", {:.1}% {relative}",
            diff as f64 * 100.0 / other.median as f64
        )
    };
    format!(
        "{amount} {direction} (its median {}{percent})",
        with_unit(figure.unit, other.median)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::grid::{parse_grid, points};
    use crate::sweep::shard::Shard;
    use crate::sweep::Job;

    fn plan() -> Plan {
        Plan::for_tests(
            "group.heartbeat_interval_ms=1000,2000",
            &["eager", "cooperative"],
            5,
            Shard::ALL,
        )
    }

    fn records(plan: &Plan, value: impl Fn(Job) -> Option<u64>) -> Vec<Record> {
        plan.jobs()
            .into_iter()
            .map(|job| Record {
                job,
                digest: String::new(),
                values: vec![value(job); figures().count()],
                violations: vec![],
            })
            .collect()
    }

    #[test]
    fn objectives_parse_and_unknown_figures_are_named() {
        let o = parse_objective("pauses.stop_the_world_ms.p99").unwrap();
        assert!(!o.maximise);
        assert_eq!(o.figure().key, "pauses.stop_the_world_ms.p99");
        assert!(parse_objective("max:join.local_hits").unwrap().maximise);
        assert!(
            !parse_objective("min:records.processed_twice")
                .unwrap()
                .maximise
        );
        parse_objective("pauses.unavailable_ms.total").unwrap();
        let e = parse_objective("pauses.nope").unwrap_err();
        assert!(
            e.contains("unknown figure \"pauses.nope\"") && e.contains("join.local_hits"),
            "{e}"
        );
        assert!(parse_objective("up:moved.total")
            .unwrap_err()
            .contains("min: or max:"));
    }

    #[test]
    fn the_recommendation_is_the_argmin_of_the_medians_with_its_margins() {
        let p = plan();
        // Medians: p1 eager 30, p1 coop 12, p2 eager 20, p2 coop 10, p3 (defaults) eager 40,
        // p3 coop 25; seed s adds s - 3 (so the median is the base).
        let base = |j: Job| [[30, 12], [20, 10], [40, 25]][j.point][j.variant];
        let r = records(&p, |j| Some(base(j) + j.seed - 3 + 3));
        let o = parse_objective("pauses.unavailable_ms.total").unwrap();
        let ranking = rank(&p, &r, o);
        let order: Vec<(usize, usize)> = ranking.iter().map(|c| (c.point, c.variant)).collect();
        assert_eq!(order, [(1, 1), (0, 1), (1, 0), (2, 1), (0, 0), (2, 0)]);
        assert_eq!(ranking[0].spread.unwrap().median, 13);
        let t = render(&p, &r, o);
        assert!(
            t.contains("recommended: p2, variant cooperative: group.heartbeat_interval_ms=2000\n"),
            "{t}"
        );
        assert!(t.contains("  over the next best, p1, variant cooperative: 2 ms lower (its median 15 ms, 13.3% less)\n"), "{t}");
        assert!(t.contains("  over Kafka's defaults, p3, variant cooperative: 15 ms lower (its median 28 ms, 53.6% less)\n"), "{t}");
        // Maximised, the other end wins.
        let o = parse_objective("max:pauses.unavailable_ms.total").unwrap();
        let t = render(&p, &r, o);
        assert!(t.contains("recommended: p3, variant eager: group.heartbeat_interval_ms=3000 (Kafka's defaults)\n"), "{t}");
        assert!(
            t.contains("  it is Kafka's defaults (under variant eager)\n"),
            "{t}"
        );
        assert!(t.contains("  over the next best, p1, variant eager: 10 ms higher (its median 33 ms, 30.3% more)\n"), "{t}");
    }

    #[test]
    fn ties_go_to_the_better_tail_then_grid_order_and_undefined_ranks_last() {
        let p = plan();
        // Every median 0; p2 cooperative has a worse tail.
        let r = records(&p, |j| {
            Some(if j.point == 1 && j.variant == 1 && j.seed == 5 {
                9
            } else {
                0
            })
        });
        let o = parse_objective("pauses.stop_the_world_ms.p99").unwrap();
        let ranking = rank(&p, &r, o);
        let order: Vec<(usize, usize)> = ranking.iter().map(|c| (c.point, c.variant)).collect();
        // Kafka's defaults (p3) first among equals, then grid order; the worse tail last.
        assert_eq!(order, [(2, 0), (2, 1), (0, 0), (0, 1), (1, 0), (1, 1)]);
        let t = render(&p, &r, o);
        assert!(t.contains("recommended: p3, variant eager: group.heartbeat_interval_ms=3000 (Kafka's defaults)\n"), "{t}");
        assert!(t.contains("over the next best, p3, variant cooperative: a tie at 0 ms (ties go to the better p90, then to fewer changes from Kafka's defaults)"), "{t}");
        // Undefined on every run: no recommendation.
        let r = records(&p, |_| None);
        let t = render(&p, &r, o);
        assert!(
            t.contains("no recommendation: pauses.stop_the_world_ms.p99 is undefined on every run"),
            "{t}"
        );
        // Undefined on some: those rank last.
        let r = records(&p, |j| if j.point == 0 { None } else { Some(5) });
        let ranking = rank(&p, &r, o);
        assert!(ranking[4].spread.is_none() && ranking[5].spread.is_none());
    }

    #[test]
    fn a_tie_goes_to_the_point_nearest_kafkas_defaults() {
        let grid = vec![
            parse_grid("group.session_timeout_ms=10000,45000").unwrap(),
            parse_grid("group.heartbeat_interval_ms=1000,3000").unwrap(),
        ];
        let p = Plan {
            points: points(&grid),
            grid,
            variants: vec!["eager".into()],
            ..plan()
        };
        assert_eq!(p.points.len(), 4);
        let changed: Vec<usize> = p.points.iter().map(changed_from_defaults).collect();
        assert_eq!(changed, [2, 1, 1, 0]);
        // The session timeout makes no difference, the heartbeat does: 1000 beats 3000.
        let r = records(&p, |j| Some([5, 9, 5, 9][j.point]));
        let o = parse_objective("pauses.unavailable_ms.total").unwrap();
        let order: Vec<usize> = rank(&p, &r, o).iter().map(|c| c.point).collect();
        assert_eq!(order, [2, 0, 3, 1]);
        let t = render(&p, &r, o);
        assert!(t.contains("recommended: p3, variant eager: group.session_timeout_ms=45000 group.heartbeat_interval_ms=1000\n"), "{t}");
    }

    #[test]
    fn rate_margins_are_in_percentage_points() {
        let p = plan();
        let rate = figure_index("join.hit_rate").unwrap();
        let r = records(&p, |j| {
            Some([[500_000, 600_000], [985_000, 700_000], [400_000, 100_000]][j.point][j.variant])
        });
        let o = Objective {
            figure: rate,
            maximise: true,
        };
        let t = render(&p, &r, o);
        assert!(t.contains("recommended: p2, variant eager"), "{t}");
        assert!(t.contains("next best, p2, variant cooperative: 28.5 percentage points higher (its median 70.0%, 40.7% more)"), "{t}");
    }
}
