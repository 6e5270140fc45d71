//! Framework texts in both languages: outcome reasons and the labels of the human report. Lab
//! specific texts live in lab.yaml; these are the few the framework itself says.

use crate::catalog::Lab;
use crate::facts::unavailable::unavailable_text;
use crate::text::Lang;
use crate::verify::Reason;

/// What an unknown key shows: visible, never a silent `?`.
pub(crate) const KEY_MISSING: &str = "(missing ui word)";

/// Short UI labels: the one table of the words the framework's outputs (human report, room
/// table, HTML page, list, show, start) say themselves.
pub fn ui(key: &str, lang: Lang) -> &'static str {
    let (ja, en) = match key {
        "expected" => ("期待値", "expected"),
        "found" => ("実際", "found"),
        "hint" => ("ヒント", "hint"),
        "advice" => ("アドバイス", "advice"),
        "score" => ("スコア", "score"),
        "source" => ("ソース", "source"),
        "target" => ("対象", "target"),
        "profile" => ("プロファイル", "profile"),
        "not-graded" => (
            "採点なし（数えられたチェックが 1 つもありません）",
            "not graded (no check could be counted)",
        ),
        "not-graded-unsaved" => (
            "採点なし（スナップショットに保存されていないもの）:",
            "not graded (the snapshot did not save what it reads):",
        ),
        "namespace" => ("namespace", "namespace"),
        "params" => ("パラメーター", "Parameters"),
        "reads" => (
            "読み取るもの（--snapshot 用に保存するもの）",
            "What it reads (save these for --snapshot)",
        ),
        "list-id" => ("ID", "id"),
        "list-topic" => ("トピック", "topic"),
        "list-title" => ("タイトル", "title"),
        "list-gradable" => ("採点", "gradable"),
        "list-checks" => ("あり（チェック {n} 個）", "yes ({n} checks)"),
        "list-quiz-only" => ("クイズのみ", "quiz-only"),
        "pass" => ("合格", "pass"),
        "fail" => ("不合格", "fail"),
        "pending" => ("待機中", "pending"),
        "skipped" => ("スキップ", "skipped"),
        "error" => ("エラー", "error"),
        "right" => ("正解", "Right"),
        "wrong" => ("不正解", "Wrong"),
        "answer" => ("解答", "Answer"),
        "explanation" => ("解説", "Explanation"),
        "notes" => (
            "補足（現在の upstream との違い）",
            "Notes (where current upstream differs)",
        ),
        "task" => ("課題", "Task"),
        "weight" => ("重み", "weight"),
        "static-no-cluster" => ("静的モード、クラスター不要", "static mode, no cluster"),
        "on-a-cluster-starter" => (
            "クラスター上で: namespace と starter のオブジェクト",
            "on a cluster: the namespace and the starter objects",
        ),
        "instructor-runs" => ("講師が実行するコマンド", "what the instructor runs"),
        "wrote-complete-todos" => (
            "{path} を書き出しました。TODO を埋めてから次を実行してください",
            "wrote {path}: complete the TODOs, then",
        ),
        "demo-state" => ("組み込みのデモ状態", "embedded demo state"),
        "demo-room" => ("組み込みのデモ教室", "embedded demo room"),
        "checks" => ("チェック", "Checks"),
        "solution-commands" => (
            "模範解答のコマンドライン",
            "The reference solution's command lines",
        ),
        "quiz-only" => (
            "この lab はクイズのみです。まだ採点できる課題はありません。",
            "This lab is quiz-only: it has no graded task yet.",
        ),
        // The HTML scoreboard's headings (capitalised, as a page's are).
        "page-title" => ("trainlab 教室のスコアボード", "trainlab room scoreboard"),
        "page-learner" => ("受講者", "Learner"),
        "page-total" => ("合計", "Total"),
        "page-help" => (
            "セルをクリックすると、その受講者のチェック結果とヒントを表示します。列見出しで並べ替えできます。",
            "Click a cell to see that learner's checks and hints. Click a column heading to sort.",
        ),
        "page-none-failed" => ("不合格のチェックはありません。", "No check fails."),
        "page-of" => ("人中", "of"),
        "page-failing" => ("人が不合格", "learners fail"),
        "page-graded-at" => ("採点日時", "Graded at"),
        "page-source" => ("ソース", "Source"),
        "page-room" => ("教室全体", "Room"),
        "page-notes" => ("注記", "Notes"),
        "page-legend" => ("凡例", "Legend"),
        "page-reason" => ("理由", "reason"),
        "page-close" => ("閉じる", "Close"),
        "page-sort" => ("並べ替え", "Sort by"),
        // The served page's status line (`grade --serve`).
        "live-following" => ("ライブ: クラスターの変更を追跡中", "Live: following the cluster"),
        "live-confirmed" => ("クラスターで最後に確認", "last confirmed by the cluster"),
        "live-lost" => (
            "trainlab への接続が切れました。再接続しています…（表示は最後に受け取った内容です）",
            "connection to trainlab lost; reconnecting… (the board shows what last arrived)",
        ),
        "live-cluster-lost" => (
            "クラスターへの接続が切れました。再接続しています",
            "connection to the cluster lost; reconnecting",
        ),
        "live-ended" => (
            "trainlab は終了しました。この表示は最後の状態です",
            "trainlab has stopped; this is the last board it sent",
        ),
        "live-room-json" => ("教室の JSON", "room JSON"),
        // The room's table (`grade`) and the page.
        "room-learner" => ("受講者", "learner"),
        "room-total" => ("合計", "total"),
        "room-legend" => ("凡例", "legend"),
        "most-failed" => ("多くの受講者が不合格のチェック", "Checks the room fails most"),
        "room" => ("教室", "room"),
        "room-notes" => ("注記", "notes"),
        "not-graded-row" => ("採点できませんでした", "could not be graded"),
        // Unknown: a bug that the test `every_ui_key_used_in_the_source_has_its_words` catches;
        // the key itself is shown rather than nothing.
        _ => return KEY_MISSING,
    };
    match lang {
        Lang::Ja => ja,
        Lang::En => en,
    }
}

/// The text of an outcome's reason.
pub fn reason_text(
    reason: &Reason,
    lab: &Lab,
    evidence: &crate::verify::Evidence,
    lang: Lang,
) -> String {
    let ja = lang == Lang::Ja;
    match reason {
        Reason::Cluster(text) => text.clone(),
        Reason::Message(id) => lab
            .messages
            .get(id)
            .map(|t| t.render(lang, evidence))
            .unwrap_or_else(|| id.clone()),
        Reason::NeedsParam(name) => {
            if ja {
                format!("静的モードではクラスターから読めません。`--profile kind|eks` (そのプロファイルの値) か `--param {name}=<値>` で指定してください")
            } else {
                format!("static mode cannot read this from a cluster; supply it with `--profile kind|eks` (that profile's figures) or `--param {name}=<value>`")
            }
        }
        Reason::SecretsWithheld => {
            if ja {
                "ワークショップの採点は Secret を読みません。RBAC ではメタデータだけの読み取りを許可できないため、採点ロールには Secret の権限がありません。学習者自身の `trainlab check` は Secret のメタデータだけを読みます".into()
            } else {
                "workshop grading reads no Secrets: RBAC cannot grant metadata-only reads, so the grader's role has no permission on Secrets; the learner's own `trainlab check` reads Secret metadata only".into()
            }
        }
        Reason::MissingCapability {
            capability,
            seen,
            profile,
            installable,
        } => {
            let detail = crate::facts::capabilities::Seen::join(seen, ja);
            let install = crate::facts::capabilities::install_hint_in(capability, *profile, ja);
            match (ja, installable) {
                (true, true) => {
                    format!("{capability} が必要です（{detail}）— インストール: {install}")
                }
                (false, true) => {
                    format!("requires {capability} ({detail}) — install with {install}")
                }
                (true, false) => format!(
                "{capability} が必要です（{detail}）— このプロファイルでは用意できません: {install}"
            ),
                (false, false) => format!("requires {capability} ({detail}) — {install}"),
            }
        }
        Reason::Unavailable(u) => unavailable_text(u, lang),
    }
}

/// The few words verifiers put into expected/found values themselves (`TP unset (default 1)`,
/// `(= node allocatable)`), in the report's language. Only these exact phrases are replaced, so
/// a value from the cluster (a namespace named `default`) is never touched.
pub fn value_words(value: &str, lang: Lang) -> String {
    const JA: [(&str, &str); 6] = [
        (" unset (default ", " 未設定 (既定値 "),
        ("— (default ", "— (既定値 "),
        ("(= node allocatable)", "(= ノードの allocatable)"),
        // volcano_gang's gang-size: `spec.tasks[0].replicas: 4 (3 GPU nodes + 1)`.
        (" GPU nodes + 1)", " GPU ノード + 1)"),
        // tensor_parallelism, parallelism_3d, optimum_neuron: `nvidia.com/gpu per pod: 8`.
        (" per pod: ", " (Pod あたり): "),
        (" per pod", " (Pod あたり)"),
    ];
    match lang {
        Lang::En => value.to_string(),
        Lang::Ja => JA
            .iter()
            .fold(value.to_string(), |v, (en, ja)| v.replace(en, ja)),
    }
}

/// Every word a module asks for with `t("key")` (its own lookup into [`ui`]) exists in both
/// languages: a test helper shared by the room table and the HTML page.
#[cfg(test)]
pub(crate) fn assert_every_word_exists(source: &str, t: fn(&str, Lang) -> &'static str) {
    let keys: Vec<&str> = source
        .match_indices("t(\"")
        .filter(|(i, _)| {
            // `t(` itself, not the end of another name (`closest(`).
            !source[..*i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.')
        })
        .filter_map(|(i, _)| source[i + 3..].split('"').next())
        .collect();
    assert!(keys.len() > 3, "{keys:?}");
    for k in keys {
        for lang in [Lang::Ja, Lang::En] {
            assert_ne!(t(k, lang), KEY_MISSING, "`{k}`");
        }
    }
}

#[cfg(test)]
mod value_words_tests {
    #[test]
    fn a_withheld_secret_is_said_in_the_reports_language() {
        let catalog = crate::catalog::Catalog::embedded().unwrap();
        let lab = &catalog.labs[0].lab;
        let ja = super::reason_text(
            &crate::verify::Reason::SecretsWithheld,
            lab,
            &Default::default(),
            crate::text::Lang::Ja,
        );
        assert!(
            ja.starts_with("ワークショップの採点は Secret を読みません"),
            "{ja}"
        );
    }

    #[test]
    fn value_words_are_said_in_japanese_and_names_are_left_alone() {
        use super::value_words;
        use crate::text::Lang;
        assert_eq!(
            value_words("TP unset (default 1)", Lang::Ja),
            "TP 未設定 (既定値 1)"
        );
        assert_eq!(
            value_words("--save_total_limit — (default None)", Lang::Ja),
            "--save_total_limit — (既定値 None)"
        );
        assert_eq!(
            value_words("spec.tasks[0].replicas: 4 (3 GPU nodes + 1)", Lang::Ja),
            "spec.tasks[0].replicas: 4 (3 GPU ノード + 1)"
        );
        assert_eq!(
            value_words("nvidia.com/gpu per pod: 8 (= node allocatable)", Lang::Ja),
            "nvidia.com/gpu (Pod あたり): 8 (= ノードの allocatable)"
        );
        assert_eq!(
            value_words("namespace default", Lang::Ja),
            "namespace default"
        );
        assert_eq!(
            value_words("TP unset (default 1)", Lang::En),
            "TP unset (default 1)"
        );
    }

    /// Every literal key passed to `ui(…)` in src/ has its words (and the statuses' keys too).
    #[test]
    fn every_ui_key_used_in_the_source_has_its_words() {
        use super::{ui, KEY_MISSING};
        use crate::text::Lang;
        fn walk(dir: &std::path::Path, keys: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, keys);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    for (i, _) in text.match_indices("ui(\"") {
                        let rest = &text[i + 4..];
                        if let Some(end) = rest.find('"') {
                            keys.push(rest[..end].to_string());
                        }
                    }
                }
            }
        }
        let mut keys = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut keys,
        );
        assert!(keys.len() > 40, "{}", keys.len());
        keys.extend(["pass", "fail", "pending", "skipped", "error"].map(String::from));
        for k in &keys {
            for lang in [Lang::Ja, Lang::En] {
                assert_ne!(ui(k, lang), KEY_MISSING, "ui key `{k}` has no words");
            }
        }
    }
}
