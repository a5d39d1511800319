//! `cgsim new`: a commented scenario for a group of one's own (members, topics, static or
//! dynamic, the protocol and assignors, and a deploy), on stdout. Its comments say what a reader
//! would otherwise find by experiment: who subscribes to what, what each deploy's durations
//! mean, and why the run lasts as long as it does: past the settle window, so the report's
//! settle check runs. The timeline is written through the timeline's one writer, and the text is
//! loaded before it is printed, so what `cgsim new` prints always loads.

use super::timeline::{Action, Entry, ROLLING_BOUNCE_DOWNTIME_MS, ROLLING_BOUNCE_INTERVAL_MS};
use super::{load_str, LoadOptions, Protocol};
use clap::ValueEnum;
use std::fmt::Write;

/// The deploy a new scenario scripts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Deploy {
    /// No fault: the group forms and runs.
    None,
    /// Every member restarts in turn (a rolling deploy).
    Rolling,
    /// The last member's process dies.
    Crash,
    /// One member more joins.
    ScaleOut,
}

/// What `cgsim new` is asked for.
#[derive(Clone, Debug)]
pub struct NewGroup {
    pub members: u32,
    pub static_members: bool,
    /// Names and partition counts, in order.
    pub topics: Vec<(String, i32)>,
    pub protocol: Protocol,
    /// `partition.assignment.strategy` (classic) or the `group.remote.assignor` (consumer);
    /// `None`: Kafka's default.
    pub assignors: Option<Vec<String>>,
    pub deploy: Deploy,
    /// When the deploy starts.
    pub at_ms: u64,
}

/// Each topic's producer rate: enough records to see lag move, few enough for a fast run.
const RECORDS_PER_SEC: u64 = 100;
/// Members' name prefix: `c1`, `c2`, ...
const PREFIX: &str = "c";

impl NewGroup {
    /// The scenario file, checked by loading it.
    pub fn write(&self) -> Result<String, String> {
        if self.members == 0 {
            return Err("--members: a group has at least 1 member".into());
        }
        if u64::from(self.members) > super::limits::MAX_MEMBERS {
            return Err(format!(
                "--members {}: above the limit of {}",
                self.members,
                super::limits::MAX_MEMBERS
            ));
        }
        // First with room to spare (a rolling deploy of every member, and an hour), to find
        // when the settle window ends; then with that.
        let room = self.at_ms
            + u64::from(self.members + 1)
                * (ROLLING_BOUNCE_INTERVAL_MS + ROLLING_BOUNCE_DOWNTIME_MS)
            + 3_600_000;
        let draft = self.text(room.min(super::limits::MAX_DURATION_MS), None)?;
        let scenario =
            load_str("cgsim new", &draft, &LoadOptions::default()).map_err(|e| e.message)?;
        let until = scenario.settle_window_end_ms();
        // Ten seconds past the window, rounded up to the next ten seconds.
        let duration = (until + 10_000).div_ceil(10_000) * 10_000;
        let text = self.text(duration, Some((until, scenario.settle_bound().1)))?;
        load_str("cgsim new", &text, &LoadOptions::default()).map_err(|e| e.message)?;
        Ok(text)
    }

    /// The file, lasting `duration_ms`; `settle`: when the settle window ends and what its
    /// bound adds up, for the comment on `duration_ms`.
    fn text(&self, duration_ms: u64, settle: Option<(u64, &str)>) -> Result<String, String> {
        let mut s = String::new();
        let w = &mut s;
        let _ = writeln!(
            w,
            "# A scenario written by `cgsim new`: {} member(s) on {},\n# {} protocol, deploy {}.",
            self.members,
            self.topics
                .iter()
                .map(|(t, p)| format!("{t} ({p} partitions)"))
                .collect::<Vec<_>>()
                .join(", "),
            match self.protocol {
                Protocol::Classic => "the classic",
                Protocol::Consumer => "the consumer (KIP-848)",
            },
            self.deploy
                .to_possible_value()
                .map_or_else(String::new, |v| v.get_name().to_string())
        );
        let _ = writeln!(
            w,
            "# Run it: `cgsim run FILE`; every variant side by side: `cgsim compare FILE`;"
        );
        let _ = writeln!(
            w,
            "# each rebalance's causes: `cgsim explain FILE --variant cooperative`."
        );
        let _ = writeln!(w, "name = \"my-group\"");
        let _ = writeln!(w, "seed = 1");
        if let Some((until, terms)) = settle {
            let _ = writeln!(
                w,
                "# The report checks that the group settles: Stable by the settle bound"
            );
            let _ = writeln!(w, "# ({terms}),");
            let _ = writeln!(w, "# then quiet for a session timeout. Here that window ends at {until} ms, so the run");
            let _ = writeln!(
                w,
                "# lasts a little longer; a shorter run is not settle-checked."
            );
        }
        let _ = writeln!(w, "duration_ms = {duration_ms}");
        let _ = writeln!(w, "\n[group]");
        match self.protocol {
            Protocol::Classic => {
                let _ = writeln!(
                    w,
                    "# group.protocol: classic (JoinGroup/SyncGroup, the leader assigns)."
                );
                let _ = writeln!(w, "protocol = \"classic\"");
                match &self.assignors {
                    Some(list) => {
                        let _ =
                            writeln!(w, "# partition.assignment.strategy, in preference order.");
                        let list: toml_edit::Array = list.iter().map(String::as_str).collect();
                        let _ = writeln!(w, "assignors = {list}");
                    }
                    None => {
                        let _ = writeln!(w, "# partition.assignment.strategy: Kafka's default, [\"range\", \"cooperative-sticky\"]");
                        let _ =
                            writeln!(w, "# (compare --variants eager,cooperative to see each).");
                    }
                }
            }
            Protocol::Consumer => {
                let _ = writeln!(
                    w,
                    "# group.protocol: consumer (KIP-848: the broker assigns, members heartbeat)."
                );
                let _ = writeln!(w, "protocol = \"consumer\"");
                match self.assignors.as_deref() {
                    Some([one]) => { let _ = writeln!(w, "# group.remote.assignor: uniform or range.\nremote_assignor = {one:?}"); }
                    Some(_) => return Err("--assignors: the consumer protocol takes one remote assignor (uniform or range)".into()),
                    None => { let _ = writeln!(w, "# group.remote.assignor: the broker's default (uniform)."); }
                }
            }
        }
        let _ = writeln!(
            w,
            "# Every other setting is Kafka's default: session_timeout_ms = 45000,"
        );
        let _ = writeln!(w, "# heartbeat_interval_ms = 3000, max_poll_interval_ms = 300000 (README: the scenario format).");
        for (t, p) in &self.topics {
            let _ = writeln!(w, "\n[[topics]]\nname = {t:?}\npartitions = {p}");
        }
        let _ = writeln!(w, "\n# {} members, {PREFIX}1 to {PREFIX}{}, each subscribed to every topic (a member entry", self.members, self.members);
        let _ = writeln!(
            w,
            "# without `topics` subscribes to all; `topics = [...]` narrows it)."
        );
        let _ = writeln!(
            w,
            "[[members]]\nname = {PREFIX:?}\ncount = {}",
            self.members
        );
        if self.static_members {
            let _ = writeln!(
                w,
                "# group.instance.id (KIP-345): a static member's restart within its session"
            );
            let _ = writeln!(
                w,
                "# timeout takes its place back without a rebalance. {{n}} is its number."
            );
            let _ = writeln!(w, "group_instance_id = \"{PREFIX}-{{n}}\"");
        }
        let _ = writeln!(
            w,
            "\n# A producer per topic, null keys, {RECORDS_PER_SEC} records/s."
        );
        for (t, _) in &self.topics {
            let _ = writeln!(
                w,
                "[[producers]]\ntopic = {t:?}\nrecords_per_sec = {RECORDS_PER_SEC}"
            );
        }
        let last = format!("{PREFIX}{}", self.members);
        let (comment, action) = match self.deploy {
            Deploy::None => return Ok(s),
            Deploy::Rolling => (
                "The rolling deploy: from at_ms, each member in file order closes (LeaveGroup; a static\n\
                 # member sends none) and starts again duration_ms later. duration_ms is each member's\n\
                 # downtime; interval_ms the time from one member's close to the next one's."
                    .to_string(),
                Action::RollingBounce {
                    interval_ms: ROLLING_BOUNCE_INTERVAL_MS,
                    duration_ms: ROLLING_BOUNCE_DOWNTIME_MS,
                    set: Vec::new(),
                },
            ),
            Deploy::Crash => (
                format!(
                    "The crash: {last}'s process dies without a LeaveGroup; the coordinator notices when\n\
                     # its session times out. A `restart` entry would bring it back."
                ),
                Action::Crash { member: last },
            ),
            Deploy::ScaleOut => {
                let new = format!("{PREFIX}{}", self.members + 1);
                let _ = writeln!(w, "\n# The member the scale-out adds, started by the `join` below.");
                let _ = writeln!(w, "[[members]]\nname = {new:?}");
                if self.static_members {
                    let _ = writeln!(w, "group_instance_id = \"{PREFIX}-{}\"", self.members + 1);
                }
                (
                    format!("The scale-out: {new} starts and joins the group."),
                    Action::Join { member: new },
                )
            }
        };
        let mut entry = Entry {
            at_ms: self.at_ms,
            action,
        }
        .to_table();
        entry.decor_mut().set_prefix(format!("\n# {comment}\n"));
        let mut timeline = toml_edit::ArrayOfTables::new();
        timeline.push(entry);
        let mut doc = toml_edit::DocumentMut::new();
        doc.insert("timeline", toml_edit::Item::ArrayOfTables(timeline));
        let _ = write!(w, "{doc}");
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn group(deploy: Deploy, protocol: Protocol, static_members: bool) -> NewGroup {
        NewGroup {
            members: 4,
            static_members,
            topics: vec![("orders".into(), 6), ("audit".into(), 3)],
            protocol,
            assignors: None,
            deploy,
            at_ms: 60_000,
        }
    }

    #[test]
    fn the_comments_say_what_a_reader_would_find_by_experiment() {
        let text = group(Deploy::Rolling, Protocol::Classic, true)
            .write()
            .unwrap();
        assert!(text.contains("each subscribed to every topic"));
        assert!(text.contains("duration_ms is each member's\n# downtime"));
        assert!(text.contains("group_instance_id = \"c-{n}\""));
        assert!(
            text.contains("three rebalance timeouts"),
            "a static member's close waits"
        );
        let text = group(Deploy::ScaleOut, Protocol::Consumer, false)
            .write()
            .unwrap();
        assert!(text.contains("[[members]]\nname = \"c5\""));
        assert!(text.contains("action = \"join\"\nmember = \"c5\""));
    }

    #[test]
    fn what_cannot_be_a_group_is_refused() {
        let refused = |g: NewGroup| g.write().unwrap_err();
        let mut g = group(Deploy::None, Protocol::Classic, false);
        g.members = 0;
        assert_eq!(
            refused(g.clone()),
            "--members: a group has at least 1 member"
        );
        g.members = 2;
        g.assignors = Some(vec!["nope".into()]);
        assert!(refused(g.clone()).contains("nope"), "the loader's word");
        g.protocol = Protocol::Consumer;
        g.assignors = Some(vec!["uniform".into(), "range".into()]);
        assert!(refused(g).contains("one remote assignor"));
    }
}
