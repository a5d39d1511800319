//! Broker lanes of the timeline, drawn when brokers failed or the coordinator moved.

use super::{escape, n, seconds, Report, Scale, C_PROCESSING, C_REVOKE, LEFT, RIGHT, WIDTH};

/// Broker lanes, drawn when brokers failed or the coordinator moved: each broker's down time
/// (crash to restart) and where the group's coordinator lived (from its load until it failed
/// or moved), with the moment it had none.
pub(super) struct BrokerLanes {
    /// Per broker id: down intervals (µs).
    down: Vec<Vec<(u64, u64)>>,
    /// Per broker id: intervals it hosted the loaded coordinator (µs).
    home: Vec<Vec<(u64, u64)>>,
    /// (at µs, text) of each coordinator event.
    marks: Vec<(u64, usize, String)>,
}

impl BrokerLanes {
    pub(super) fn of(report: &Report, end_us: u64) -> BrokerLanes {
        let ids = report
            .brokers
            .iter()
            .filter_map(|e| e.broker)
            .chain(report.coordinator.iter().filter_map(|c| c.broker));
        let count = ids.max().map_or(0, |b| b as usize + 1);
        let mut lanes = BrokerLanes {
            down: vec![Vec::new(); count],
            home: vec![Vec::new(); count],
            marks: Vec::new(),
        };
        let mut open: Vec<Option<u64>> = vec![None; count];
        for e in &report.brokers {
            let (Some(b), at) = (e.broker.map(|b| b as usize), e.at_ms * 1000) else {
                continue;
            };
            match e.event {
                "crash" => open[b] = Some(at),
                "restart" => {
                    if let Some(from) = open[b].take() {
                        lanes.down[b].push((from, at));
                    }
                }
                _ => {}
            }
        }
        for (b, from) in open.into_iter().enumerate() {
            if let Some(from) = from {
                lanes.down[b].push((from, end_us));
            }
        }
        // The coordinator's home: from the run's start on the broker the first event names
        // (it failed there, or moved off it), then from each load.
        let mut home: Option<(usize, u64)> = report
            .coordinator
            .first()
            .filter(|c| c.event == "failed")
            .and_then(|c| c.broker)
            .map(|b| (b as usize, 0));
        for c in &report.coordinator {
            let at = c.at_ms * 1000;
            if let Some((b, from)) = home.take() {
                if c.event != "loaded" {
                    lanes.home[b].push((from, at));
                } else {
                    home = Some((b, from));
                }
            }
            if let (Some(b), "loaded") = (c.broker, c.event) {
                home = Some((b as usize, at));
            }
            if let Some(b) = c.broker {
                lanes
                    .marks
                    .push((at, b as usize, format!("coordinator {}", c.event)));
            }
        }
        if let Some((b, from)) = home {
            lanes.home[b].push((from, end_us));
        }
        lanes
    }

    pub(super) fn height(&self) -> f64 {
        if self.down.is_empty() {
            0.0
        } else {
            16.0 + self.down.len() as f64 * 14.0 + 26.0
        }
    }

    pub(super) fn render(&self, o: &mut String, scale: &Scale, top: f64) {
        if self.down.is_empty() {
            return;
        }
        o.push_str("<g class=\"brokers\">\n");
        o.push_str(&format!(
            "<text x=\"8\" y=\"{}\" font-weight=\"bold\">brokers</text>\n",
            n(top + 10.0)
        ));
        for b in 0..self.down.len() {
            let y = top + 16.0 + b as f64 * 14.0;
            o.push_str(&format!(
                "<text x=\"8\" y=\"{}\" fill=\"#444\">broker-{b}</text>\n",
                n(y + 10.0)
            ));
            for &(a, z) in &self.home[b] {
                if let Some((x, w)) = scale.span(a, z, 1.0) {
                    o.push_str(&format!(
                        "<rect class=\"coordinator-home\" data-broker=\"{b}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" fill=\"{C_PROCESSING}\" fill-opacity=\"0.35\"><title>broker-{b} hosts the group's coordinator</title></rect>\n",
                        n(x), n(y + 1.0), n(w)
                    ));
                }
            }
            for &(a, z) in &self.down[b] {
                if let Some((x, w)) = scale.span(a, z, 2.0) {
                    o.push_str(&format!(
                        "<rect class=\"broker-down\" data-broker=\"{b}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" fill=\"{C_REVOKE}\" fill-opacity=\"0.8\"><title>broker-{b} down {} s</title></rect>\n",
                        n(x), n(y + 1.0), n(w), seconds((z - a) / 1000, 1)
                    ));
                }
            }
        }
        for (at, b, text) in &self.marks {
            let y = top + 16.0 + *b as f64 * 14.0;
            let x = scale.x(*at);
            if (LEFT..=WIDTH - RIGHT).contains(&x) {
                o.push_str(&format!(
                    "<line class=\"coordinator-mark\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"#222\"><title>{}</title></line>\n",
                    n(y),
                    n(y + 12.0),
                    escape(text),
                    x = n(x)
                ));
            }
        }
        o.push_str("</g>\n");
    }
}
