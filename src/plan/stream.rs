//! What a room graded from watches says about its cells and its streams (`grade --watch` on a
//! shared cluster, `grade::follow`): which cells a change re-judged, and how the watches stand.

use std::time::{Duration, SystemTime};

/// One cell of a room: a learner's lab.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellRef {
    pub learner: String,
    pub lab: String,
}

/// How a room's watches stand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamState {
    /// Every kind is listed and watched (`kinds` streams, one per kind and scope).
    Watching { kinds: usize },
    /// A kind's stream failed; it is tried again after `retry_in`.
    Reconnecting {
        kind: String,
        why: String,
        retry_in: Duration,
    },
    /// The cluster had forgotten where a kind's stream stood (`410 Gone`): the kind was listed
    /// again, `objects` objects.
    Relisted { kind: String, objects: usize },
    /// What the room holds was last confirmed by the cluster (an event of a stream) at `at`.
    Confirmed { at: SystemTime },
}

impl StreamState {
    /// What the state says to a person (the served page's status line, and stderr under
    /// `--watch`); nothing for a confirmation, which comes with every change.
    pub fn said(&self, lang: crate::text::Lang) -> Option<String> {
        use crate::report::ui;
        let ja = lang == crate::text::Lang::Ja;
        Some(match self {
            StreamState::Watching { kinds } if ja => {
                format!("{}（watch {kinds} 本）", ui("live-following", lang))
            }
            StreamState::Watching { kinds } => {
                format!("{} ({kinds} watches)", ui("live-following", lang))
            }
            StreamState::Reconnecting {
                kind,
                why,
                retry_in,
            } => {
                let lost = ui("live-cluster-lost", lang);
                let secs = retry_in.as_secs().max(1);
                if ja {
                    format!("{lost}（{kind}: {why}）。{secs} 秒後に再試行します")
                } else {
                    format!("{lost} ({kind}: {why}); retrying in {secs}s")
                }
            }
            StreamState::Relisted { kind, objects } if ja => format!(
                "{kind} を読み直しました（クラスターが watch の位置を忘れていました: 410 Gone）: {objects} 個"
            ),
            StreamState::Relisted { kind, objects } => format!(
                "{kind} listed again (the cluster had forgotten where its watch stood: 410 Gone): {objects} objects"
            ),
            StreamState::Confirmed { .. } => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Lang;

    #[test]
    fn each_state_but_a_confirmation_is_said_in_both_languages_naming_the_kind() {
        let lost = StreamState::Reconnecting {
            kind: "jobs.batch".into(),
            why: "HTTP 500".into(),
            retry_in: Duration::from_millis(800),
        };
        let relisted = StreamState::Relisted {
            kind: "pods".into(),
            objects: 7,
        };
        for lang in [Lang::En, Lang::Ja] {
            let said = |s: &StreamState| s.said(lang).unwrap();
            let lost = said(&lost);
            assert!(
                lost.contains("jobs.batch: HTTP 500") && lost.contains('1'),
                "{lost}"
            );
            assert!(said(&relisted).contains("pods") && said(&relisted).contains('7'));
            assert!(said(&StreamState::Watching { kinds: 20 }).contains("20"));
            let confirmed = StreamState::Confirmed {
                at: SystemTime::UNIX_EPOCH,
            };
            assert_eq!(confirmed.said(lang), None);
        }
        assert!(relisted.said(Lang::En).unwrap().contains("listed again"));
    }
}
