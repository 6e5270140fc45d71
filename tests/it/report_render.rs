//! Rendering a graded lab: human text (ja/en, with and without colour), JSON (schema version 1)
//! and JUnit XML, from a hand-built `LabResult` holding one outcome of every status.

use trainlab::catalog::{parse_lab, Lab};
use trainlab::facts::Profile;
use trainlab::observe::{SourceKind, Unavailable};
use trainlab::report::{self, Format, LabReport};
use trainlab::text::Lang;
use trainlab::verify::{Advice, LabResult, Outcome, Reason, Status, Target};

const LAB_YAML: &str = r#"
id: gang-sample
number: 9
topic: scheduling
status: gradable
title:
  ja: "Volcano のギャングスケジューリング"
  en: "Gang scheduling with Volcano"
quiz:
  question:
    ja: "minAvailable: 4 でノードが 3 つしかない場合は？"
    en: "With minAvailable: 4 and only 3 nodes?"
  choices:
    A: {ja: "3 つで開始する", en: "It starts with 3"}
    B: {ja: "4 つ揃うまで待機する", en: "It waits until 4 are available"}
    C: {ja: "失敗する", en: "It fails"}
    D: {ja: "1 つずつ開始する", en: "It starts one by one"}
  answer: B
  explanation:
    ja: "ギャングスケジューリングは全か無かです。"
    en: "Gang scheduling is all or nothing."
task:
  text:
    ja: "{gpu_nodes} ノードで Volcano Job を作成してください。"
    en: "Create a Volcano Job on {gpu_nodes} nodes."
  params:
    kind: {gpu_nodes: "3"}
    eks: {gpu_nodes: "4"}
checks:
  - id: job-exists
    stage: spec
    weight: 2
    title: {ja: "Volcano Job がある", en: "a Volcano Job exists"}
    hint: {ja: "Job を作成してください", en: "create the Job"}
  - id: min-available
    stage: spec
    weight: 3
    title: {ja: "minAvailable がレプリカ数と等しい", en: "minAvailable equals the replicas"}
    hint:
      ja: "minAvailable を {replicas} にしてください"
      en: "set spec.minAvailable to {replicas}, the number of workers"
  - id: scheduler-name
    stage: spec
    weight: 1
    title: {ja: "Volcano スケジューラーを使う", en: "uses the Volcano scheduler"}
    hint: {ja: "schedulerName を volcano に", en: "set schedulerName: volcano"}
    hints:
      missing:
        ja: "schedulerName がありません。{kind} の spec に schedulerName: volcano を追加してください"
        en: "schedulerName is missing; add schedulerName: volcano to the {kind} spec"
  - id: podgroup-inqueue
    stage: state
    weight: 2
    title: {ja: "PodGroup がキューに入る", en: "the PodGroup is enqueued"}
    hint: {ja: "PodGroup を確認してください", en: "look at the PodGroup"}
  - id: pods-running
    stage: state
    weight: 2
    title: {ja: "Pod が一斉に起動する", en: "the pods start together"}
    hint: {ja: "Pod を確認してください", en: "look at the pods"}
  - id: nodes-ready
    stage: state
    weight: 1
    title: {ja: "{count} 台のノードが Ready", en: "{count} nodes are Ready"}
    hint: {ja: "ノードを確認してください", en: "look at the nodes"}
advice:
  rdma-fork-safe:
    ja: "{var}=1 は現在の aws-ofi-nccl では非推奨です"
    en: "{var}=1 is discouraged by current aws-ofi-nccl"
"#;

const PENDING_TEXT: &str =
    "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. pod group is not ready, 3 Pending, 4 minAvailable";

fn lab() -> Lab {
    parse_lab(LAB_YAML, "test.yaml").expect("the test lab parses")
}

fn result() -> LabResult {
    let outcomes = vec![
        Outcome::pass("job-exists"),
        Outcome::fail("min-available", "minAvailable: 4", "minAvailable: 3").with("replicas", 4),
        Outcome::fail(
            "scheduler-name",
            "schedulerName: volcano",
            "no schedulerName",
        )
        .hint("missing")
        .with("kind", "Job"),
        Outcome::pending("podgroup-inqueue", Reason::Cluster(PENDING_TEXT.into())),
        Outcome::skipped(
            "pods-running",
            Reason::Unavailable(Unavailable::NeedsLiveCluster),
        ),
        Outcome::unavailable(
            "nodes-ready",
            &Unavailable::Forbidden {
                verb: "list".into(),
                resource: "nodes".into(),
                namespace: None,
                message: "User \"alice\" cannot list resource \"nodes\"".into(),
            },
        )
        .with("count", 3),
    ];
    LabResult {
        lab: lab().into(),
        source: SourceKind::Snapshot,
        source_detail: "saved/gang".into(),
        target: Target::for_lab("gang-sample"),
        profile: Some(Profile::Kind),
        outcomes,
        advice: vec![Advice::new("rdma-fork-safe").with("var", "RDMAV_FORK_SAFE")],
    }
}

fn render(lang: Lang, format: Format, color: bool) -> String {
    let rep = LabReport::new(&result(), lang);
    report::render(&[rep], format, color)
}

// ---------------------------------------------------------------------------------------------
// The outcome set itself, so the snapshots below are read against a known input

#[test]
fn the_sample_result_holds_every_status_once_or_twice() {
    let r = result();
    assert_eq!(r.count(Status::Pass), 1);
    assert_eq!(r.count(Status::Fail), 2);
    assert_eq!(r.count(Status::Pending), 1);
    assert_eq!(r.count(Status::Skipped), 1);
    assert_eq!(
        r.count(Status::Error),
        1,
        "Forbidden is an environment error, not skipped"
    );
    let ids: Vec<&str> = r.lab.checks.iter().map(|c| c.id.as_str()).collect();
    let outcome_ids: Vec<&str> = r.outcomes.iter().map(|o| o.check.as_str()).collect();
    assert_eq!(ids, outcome_ids);
}

#[test]
fn score_counts_pass_fail_and_pending_but_not_skipped_or_error() {
    let s = result().score();
    // pass 2; fail 3 + 1; pending 2; skipped 2 and error 1 are not counted.
    assert_eq!(s.passed_weight, 2);
    assert_eq!(s.counted_weight, 2 + 3 + 1 + 2);
    assert_eq!(s.percent, Some(25.0));
}

#[test]
fn a_lab_with_nothing_counted_is_not_graded_not_100_and_scores_round_to_one_decimal() {
    let mut r = result();
    for o in &mut r.outcomes {
        *o = Outcome::skipped(&o.check, Reason::Unavailable(Unavailable::NeedsLiveCluster));
    }
    let s = r.score();
    assert_eq!((s.passed_weight, s.counted_weight, s.percent), (0, 0, None));
    assert!(!s.graded());
    let report = LabReport::new(&r, Lang::En);
    let json: serde_json::Value =
        serde_json::from_str(&trainlab::report::json::render_all(&[report])).unwrap();
    assert!(json["score"]["percent"].is_null(), "{json}");
    let human = trainlab::report::human::render_all(&[LabReport::new(&r, Lang::Ja)], false);
    assert!(human.contains("採点なし"), "{human}");

    let mut r = result();
    r.outcomes = vec![
        Outcome::pass("scheduler-name"),              // 1
        Outcome::fail("job-exists", "a Job", "none"), // 2
    ];
    let s = r.score();
    assert_eq!(
        (s.passed_weight, s.counted_weight, s.percent),
        (1, 3, Some(33.3))
    );
}

// ---------------------------------------------------------------------------------------------
// Human

#[test]
fn human_report_in_english() {
    let text = render(Lang::En, Format::Human, false);
    insta::assert_snapshot!("human_en", text);
}

#[test]
fn human_report_in_japanese() {
    let text = render(Lang::Ja, Format::Human, false);
    insta::assert_snapshot!("human_ja", text);
}

#[test]
fn human_report_fills_hint_placeholders_from_evidence_and_selects_hint_variants() {
    let text = render(Lang::En, Format::Human, false);
    assert!(
        text.contains("hint: set spec.minAvailable to 4, the number of workers"),
        "{text}"
    );
    assert!(
        text.contains("hint: schedulerName is missing; add schedulerName: volcano to the Job spec"),
        "the `missing` variant replaces the default hint: {text}"
    );
    assert!(!text.contains("set schedulerName: volcano\n"), "{text}");
    assert!(!text.contains('{'), "no unfilled placeholder: {text}");
    assert!(
        text.contains("advice: RDMAV_FORK_SAFE=1 is discouraged"),
        "{text}"
    );
    assert!(
        text.contains("3 nodes are Ready"),
        "titles are filled too: {text}"
    );
}

#[test]
fn human_report_without_colour_has_no_ansi_escapes_and_with_colour_has_them() {
    let plain = render(Lang::En, Format::Human, false);
    assert!(!plain.contains('\u{1b}'), "{plain:?}");
    let coloured = render(Lang::En, Format::Human, true);
    assert!(coloured.contains("\u{1b}["), "{coloured:?}");
    // Same text once the escapes are removed.
    assert_eq!(strip_ansi(&coloured), plain);
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ params final-byte(@..~)
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// JSON

#[test]
fn json_report_in_english() {
    let text = render(Lang::En, Format::Json, false);
    insta::assert_snapshot!("json_en", text);
}

#[test]
fn json_report_has_the_documented_keys() {
    let text = render(Lang::En, Format::Json, false);
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(v["schema_version"], 2);
    // docs/report-schema.md
    for key in [
        "schema_version",
        "lab",
        "lang",
        "source",
        "target",
        "profile",
        "score",
        "counts",
        "outcomes",
        "advice",
    ] {
        assert!(v.get(key).is_some(), "missing top-level `{key}`: {text}");
    }
    assert_eq!(v["lang"], "en");
    assert_eq!(v["profile"], "kind");
    assert_eq!(
        v["counts"],
        serde_json::json!({"pass": 1, "fail": 2, "pending": 1, "skipped": 1, "error": 1})
    );
    assert_eq!(v["lab"]["id"], "gang-sample");
    assert_eq!(v["lab"]["number"], 9);
    assert_eq!(v["lab"]["title"], "Gang scheduling with Volcano");
    assert_eq!(v["source"]["kind"], "snapshot");
    assert_eq!(v["source"]["detail"], "saved/gang");
    assert_eq!(v["target"]["namespace"], "trainlab-gang-sample");
    assert_eq!(v["score"]["passed_weight"], 2);
    assert_eq!(v["score"]["counted_weight"], 8);
    assert_eq!(v["score"]["percent"], 25.0);

    let outcomes = v["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 6);
    for o in outcomes {
        for key in [
            "check", "status", "stage", "weight", "title", "hint", "expected", "found", "reason",
            "evidence",
        ] {
            assert!(o.get(key).is_some(), "outcome without `{key}`: {o}");
        }
    }
    let by_id = |id: &str| outcomes.iter().find(|o| o["check"] == id).unwrap();
    let statuses: Vec<&str> = outcomes
        .iter()
        .map(|o| o["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["pass", "fail", "fail", "pending", "skipped", "error"]
    );

    let pass = by_id("job-exists");
    assert!(pass["hint"].is_null() && pass["reason"].is_null(), "{pass}");
    let fail = by_id("min-available");
    assert_eq!(fail["weight"], 3);
    assert_eq!(fail["expected"], "minAvailable: 4");
    assert_eq!(fail["found"], "minAvailable: 3");
    assert_eq!(
        fail["hint"],
        "set spec.minAvailable to 4, the number of workers"
    );
    assert_eq!(
        by_id("scheduler-name")["hint"],
        "schedulerName is missing; add schedulerName: volcano to the Job spec"
    );
    let pending = by_id("podgroup-inqueue");
    assert_eq!(
        pending["reason"], PENDING_TEXT,
        "cluster text is shown verbatim"
    );
    assert!(
        pending["hint"].is_null(),
        "hints are for failures only: {pending}"
    );
    assert_eq!(
        by_id("pods-running")["reason"],
        "needs a live cluster (static mode)"
    );
    let error = by_id("nodes-ready");
    assert!(
        error["reason"]
            .as_str()
            .unwrap()
            .starts_with("forbidden: cannot list nodes at cluster scope"),
        "{error}"
    );
    assert_eq!(error["title"], "3 nodes are Ready");

    assert_eq!(
        v["advice"],
        serde_json::json!([{
            "id": "rdma-fork-safe",
            "text": "RDMAV_FORK_SAFE=1 is discouraged by current aws-ofi-nccl"
        }])
    );
}

#[test]
fn json_report_is_rendered_in_the_chosen_language() {
    let v: serde_json::Value =
        serde_json::from_str(&render(Lang::Ja, Format::Json, false)).unwrap();
    assert_eq!(v["lab"]["title"], "Volcano のギャングスケジューリング");
    assert_eq!(v["outcomes"][1]["hint"], "minAvailable を 4 にしてください");
    // Stable identifiers do not change with the language.
    assert_eq!(v["outcomes"][1]["check"], "min-available");
    assert_eq!(v["outcomes"][1]["status"], "fail");
}

#[test]
fn several_reports_in_json_are_wrapped_with_a_schema_version() {
    let r = result();
    let reps = [LabReport::new(&r, Lang::En), LabReport::new(&r, Lang::En)];
    let v: serde_json::Value =
        serde_json::from_str(&report::render(&reps, Format::Json, false)).unwrap();
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["results"].as_array().unwrap().len(), 2);
    assert_eq!(v["results"][0]["lab"]["id"], "gang-sample");
}

// ---------------------------------------------------------------------------------------------
// JUnit

#[test]
fn junit_has_one_suite_named_after_the_lab_and_one_case_per_check() {
    let xml = render(Lang::En, Format::Junit, false);
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let suites: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), 1, "{xml}");
    let suite = suites[0];
    assert_eq!(suite.attribute("name"), Some("gang-sample"));

    let cases: Vec<_> = suite
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let names: Vec<&str> = cases.iter().map(|c| c.attribute("name").unwrap()).collect();
    assert_eq!(
        names,
        [
            "job-exists",
            "min-available",
            "scheduler-name",
            "podgroup-inqueue",
            "pods-running",
            "nodes-ready"
        ]
    );
    for c in &cases {
        assert_eq!(c.attribute("classname"), Some("gang-sample"), "{xml}");
    }
}

#[test]
fn junit_maps_each_status_to_its_element() {
    let xml = render(Lang::En, Format::Junit, false);
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let case = |name: &str| {
        doc.descendants()
            .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some(name))
            .unwrap_or_else(|| panic!("no testcase {name}: {xml}"))
    };
    let elements = |name: &str| -> Vec<String> {
        case(name)
            .children()
            .filter(|n| n.is_element())
            .map(|n| n.tag_name().name().to_string())
            .collect()
    };
    let child = |name: &str, tag: &str| {
        case(name)
            .children()
            .find(|n| n.has_tag_name(tag))
            .unwrap_or_else(|| panic!("testcase {name} has no <{tag}>: {xml}"))
    };

    assert!(
        elements("job-exists").is_empty(),
        "a pass has no child: {xml}"
    );

    assert_eq!(elements("min-available"), ["failure"]);
    let failure = child("min-available", "failure");
    assert_eq!(
        failure.attribute("message"),
        Some("set spec.minAvailable to 4, the number of workers"),
        "the failure message is the hint"
    );
    assert_eq!(failure.attribute("type"), Some("fail"));
    let body = failure.text().unwrap_or_default();
    assert!(body.contains("expected: minAvailable: 4"), "{body}");
    assert!(body.contains("found: minAvailable: 3"), "{body}");

    let variant = child("scheduler-name", "failure");
    assert_eq!(
        variant.attribute("message"),
        Some("schedulerName is missing; add schedulerName: volcano to the Job spec")
    );

    assert_eq!(elements("podgroup-inqueue"), ["failure"]);
    let pending = child("podgroup-inqueue", "failure");
    assert_eq!(pending.attribute("type"), Some("pending"));
    assert_eq!(pending.attribute("message"), Some(PENDING_TEXT));

    assert_eq!(elements("pods-running"), ["skipped"]);
    assert_eq!(
        child("pods-running", "skipped").attribute("message"),
        Some("needs a live cluster (static mode)")
    );

    assert_eq!(elements("nodes-ready"), ["error"]);
    let error = child("nodes-ready", "error");
    assert!(
        error
            .attribute("message")
            .is_some_and(|m| m.starts_with("forbidden: cannot list nodes")),
        "{xml}"
    );
}

#[test]
fn junit_counts_match_the_outcomes() {
    let xml = render(Lang::En, Format::Junit, false);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert_eq!(suite.attribute("tests"), Some("6"));
    assert_eq!(
        suite.attribute("failures"),
        Some("3"),
        "2 fail + 1 pending: {xml}"
    );
    assert_eq!(suite.attribute("errors"), Some("1"));
    assert_eq!(suite.attribute("skipped"), Some("1"));
}

#[test]
fn human_output_wraps_to_the_width_with_a_hanging_indent() {
    let mut r = result();
    r.outcomes[0] = Outcome::fail(
        "scheduler-name",
        "schedulerName: volcano",
        "a very long value ".repeat(8),
    );
    for (lang, width) in [(Lang::En, 60), (Lang::Ja, 50)] {
        let text = trainlab::report::human::render_all_width(
            &[LabReport::new(&r, lang)],
            false,
            Some(width),
        );
        let lines: Vec<&str> = text.lines().collect();
        for l in &lines {
            // The title line and unbreakable tokens aside, nothing runs past the width.
            let summary = ["lab ", "source:", "ソース", "score:", "スコア"];
            if !summary.iter().any(|s| l.starts_with(s)) {
                assert!(
                    textwrap::core::display_width(l) <= width,
                    "{width}: {l:?}\n{text}"
                );
            }
        }
        // The long `found:` value continues on lines indented under its text, not at column 0.
        let found = lines
            .iter()
            .position(|l| {
                l.trim_start()
                    .starts_with(trainlab::report::ui("found", lang))
            })
            .unwrap();
        let next = lines[found + 1];
        let hang = 6 + textwrap::core::display_width(&format!(
            "{}: ",
            trainlab::report::ui("found", lang)
        ));
        assert!(
            next.starts_with(&" ".repeat(hang)) && next.contains("very long"),
            "{next:?}\n{text}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// A room keeps each learner's results packed (`PackedLabs`); reports read them back

/// What a report shows of a result, in both languages and every format.
fn shown(r: &LabResult) -> Vec<String> {
    let mut out = Vec::new();
    for lang in [Lang::En, Lang::Ja] {
        let rep = LabReport::new(r, lang);
        for format in [Format::Json, Format::Human, Format::Junit] {
            out.push(report::render(std::slice::from_ref(&rep), format, false));
        }
    }
    out
}

#[test]
fn a_packed_result_reads_back_as_the_result_judged_and_reports_the_same() {
    use trainlab::facts::capabilities::Seen;
    use trainlab::results::packed::PackedLabs;

    let mut workshop = result();
    workshop.target.learner = Some("alice".into());
    workshop.target.name_prefix = "alice-".into();
    workshop.target.context = Some("kind-trainlab".into());
    // Every reason a check can carry, with the facts each holds.
    workshop.outcomes[4] = Outcome::skipped(
        "pods-running",
        Reason::MissingCapability {
            capability: "volcano".into(),
            seen: vec![
                Seen::CrdNotFound {
                    crd: "jobs.batch.volcano.sh".into(),
                },
                Seen::ControllerNotAvailable {
                    deployment: "volcano-scheduler".into(),
                },
                Seen::Device {
                    resource: "nvidia.com/gpu".into(),
                    faked: true,
                    nodes: 0,
                },
                Seen::Unknown {
                    message: "the API server did not answer".into(),
                },
                Seen::NotOnKind,
            ],
            profile: Some(Profile::Kind),
            installable: true,
        },
    );
    let mut others = result();
    others.profile = None;
    others.outcomes[1] = Outcome::skipped(
        "min-available",
        Reason::Unavailable(Unavailable::NotServed {
            resource: "jobs.batch.volcano.sh".into(),
            crd: "jobs.batch.volcano.sh".into(),
            capability: Some("volcano".into()),
        }),
    );
    others.outcomes[2] = Outcome::error(
        "scheduler-name",
        Reason::Unavailable(Unavailable::Failed {
            message: "listing pods failed: 500".into(),
        }),
    );
    others.outcomes[3] = Outcome::skipped("podgroup-inqueue", Reason::SecretsWithheld);
    others.outcomes[4] =
        Outcome::skipped("pods-running", Reason::NeedsParam("gpus_per_node".into()));
    others.outcomes[5] = Outcome::skipped(
        "nodes-ready",
        Reason::Unavailable(Unavailable::NotCaptured {
            resource: "nodes".into(),
        }),
    );
    others.outcomes.push(Outcome::pending(
        "nodes-ready",
        Reason::Message("waiting for {count} nodes".into()),
    ));
    let judged = vec![result(), workshop, others];

    let packed = PackedLabs::pack(&judged).expect("judged results pack");
    let back = packed.unpack().expect("packed results read back");

    assert_eq!(back.len(), judged.len());
    for (b, j) in back.iter().zip(&judged) {
        assert_eq!(b.lab.id, j.lab.id);
        assert_eq!(b.source, j.source);
        assert_eq!(b.source_detail, j.source_detail);
        assert_eq!(b.target, j.target);
        assert_eq!(b.profile, j.profile);
        assert_eq!(b.outcomes, j.outcomes);
        assert_eq!(b.advice, j.advice);
        assert_eq!(shown(b), shown(j), "what reports show of {}", j.lab.id);
    }
    assert_eq!(
        packed.environment_incomplete(),
        judged.iter().any(LabResult::environment_incomplete),
        "the room's exit code is known without reading the results back"
    );
    // One allocation for the lot, and much smaller than the JSON a report writes of it.
    let report_json: usize = judged
        .iter()
        .map(|r| report::render(&[LabReport::new(r, Lang::En)], Format::Json, false).len())
        .sum();
    assert!(
        packed.held() < report_json / 2,
        "{} bytes held for {report_json} bytes of report",
        packed.held()
    );
}

#[test]
fn a_learner_without_results_packs_to_nothing_to_read_back() {
    use trainlab::results::packed::PackedLabs;
    let packed = PackedLabs::pack(&[]).expect("packs");
    assert!(packed.is_empty());
    assert!(packed.unpack().expect("reads back").is_empty());
    assert!(!packed.environment_incomplete());
}
