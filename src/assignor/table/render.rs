//! The table as text.

use super::{Block, Section, SectionTable};
use crate::assignor::{Topic, TopicPartition};
use std::fmt::Write as _;

/// `t3a:0,1;t3b:2`, exactly as Kafka 4.x's `kafka-consumer-groups --describe --members
/// --verbose` prints an assignment (topics' entries in Java string order), `-` for nothing.
pub fn partitions_text(topics: &[Topic], parts: &[TopicPartition]) -> String {
    crate::assignor::assignment_text(
        parts
            .iter()
            .map(|tp| (topics[tp.topic as usize].name.as_str(), tp.partition as u32)),
    )
}

/// The table as text: per section a header, then one block per group with a row per member
/// (JoinGroup order), a column per assignor, then the idle members and the rebalances each
/// assignor took to get there. With `detail`, cells list the partitions too.
pub fn render(tables: &[SectionTable], detail: bool) -> String {
    let mut out = String::new();
    for (i, table) in tables.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let section = &table.section;
        let _ = writeln!(out, "{}", section.label());
        let ids = section
            .topics
            .iter()
            .map(|t| {
                format!(
                    "{}={}",
                    t.name,
                    t.id.map(|u| u.to_string()).unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join(",");
        let _ = writeln!(out, "topic ids (uniform): {ids}");
        for block in &table.blocks {
            out.push('\n');
            render_block(&mut out, section, block, detail);
        }
    }
    out
}

fn render_block(out: &mut String, section: &Section, block: &Block, detail: bool) {
    let n = block.plan.member_ids.len();
    let _ = writeln!(
        out,
        "{n} member{}, {}",
        if n == 1 { "" } else { "s" },
        block.plan.history.describe()
    );
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header = vec!["member".to_string()];
    header.extend(block.columns.iter().map(|c| c.assignor.to_string()));
    rows.push(header);
    for (m, id) in block.plan.member_ids.iter().enumerate() {
        let mut row = vec![id.clone()];
        for c in &block.columns {
            let parts = &c.formation.final_assignment()[m];
            row.push(if detail {
                format!(
                    "{} {}",
                    parts.len(),
                    partitions_text(&section.topics, parts)
                )
            } else {
                parts.len().to_string()
            });
        }
        rows.push(row);
    }
    let mut idle = vec!["idle members".to_string()];
    idle.extend(block.columns.iter().map(|c| c.idle().to_string()));
    rows.push(idle);
    let mut runs = vec!["rebalances".to_string()];
    runs.extend(
        block
            .columns
            .iter()
            .map(|c| c.formation.rebalances.len().to_string()),
    );
    rows.push(runs);

    let widths: Vec<usize> = (0..rows[0].len())
        .map(|col| {
            rows.iter()
                .map(|r| r[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &rows {
        let mut line = String::new();
        for (col, cell) in row.iter().enumerate() {
            let pad = widths[col] - cell.chars().count();
            if col == 0 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str("  ");
                if detail {
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad));
                } else {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                }
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}
