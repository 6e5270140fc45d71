//! The server's verdict (`check --files … --dry-run=server`) in a lab's report: each refusal
//! quoted exactly as the API server worded it, inside trainlab's words in the report's
//! language, under the check it is attached to, or on the lab when it belongs to no check or
//! to several; and what kept the dry run from judging.

use serde::Serialize;

use super::LabReport;
use crate::results::check::{ServerRefusal, ServerVerdict};
use crate::text::say;
use crate::text::Lang;
use crate::verify::Status;

/// The `server_dry_run` object of a lab report.
#[derive(Debug, Clone, Serialize)]
pub struct ServerReport {
    /// The cluster whose API server judged the files (empty when none could be reached).
    pub cluster: String,
    /// How many objects were sent.
    pub sent: usize,
    /// The refusals reported in this lab, in file order.
    pub refused: Vec<RefusalReport>,
    /// What kept the dry run from judging, in the report's language.
    pub errors: Vec<String>,
}

/// One refusal in a lab's report.
#[derive(Debug, Clone, Serialize)]
pub struct RefusalReport {
    /// `NodePool/gpu-training`.
    pub object: String,
    /// The file and document it came from.
    pub origin: String,
    /// The HTTP status (0: no request, the kind is not served in that version).
    pub code: u16,
    /// The `Status` reason (`Invalid`, `BadRequest`, empty when the server gave none).
    pub reason: String,
    /// The API server's message, exactly.
    pub message: String,
    /// The fields the server named.
    pub fields: Vec<String>,
    /// The refusal said in the report's language, quoting `message`.
    pub text: String,
    /// The checks of this lab it is attached to; empty: the lab's own.
    pub checks: Vec<String>,
}

impl RefusalReport {
    /// Said once above the checks: it belongs to no check, or to several.
    pub fn on_the_lab(&self) -> bool {
        self.checks.len() != 1
    }
}

/// `422 Invalid`, `500`.
fn status(r: &ServerRefusal) -> String {
    let x = &r.refusal;
    match (x.code, x.reason.is_empty()) {
        (0, _) => x.reason.clone(),
        (code, true) => code.to_string(),
        (code, false) => format!("{code} {}", x.reason),
    }
}

/// A refusal in the report's language, quoting the server's message.
pub fn refusal_text(r: &ServerRefusal, lang: Lang) -> String {
    let (object, origin, message) = (&r.object, &r.origin, &r.refusal.message);
    if r.refusal.code == 0 {
        // Refused before any request, as kubectl would be (a kind the server does not serve in
        // that version, an object without a name).
        return say(
            lang,
            format!("{object}（{origin}）は API サーバーに送れません: {message}（`kubectl apply` と同じ表示です）"),
            format!("{object} ({origin}) cannot be sent to the API server: {message} (as `kubectl apply` says)"),
        );
    }
    let status = status(r);
    let mut text = say(
        lang,
        format!("API サーバーがサーバー側ドライランで {object}（{origin}）を拒否しました（{status}）: {message}"),
        format!("the API server refused {object} ({origin}) in a server-side dry run ({status}): {message}"),
    );
    if r.refusal.code == 500 {
        text.push_str(&say(
            lang,
            "（スキーマが宣言していないフィールドを含む apply に、kube-apiserver は 500 で答えます: kubernetes/kubernetes#139253。サーバーの故障ではなく、ファイルのフィールドの問題です）",
            " (kube-apiserver answers an apply with a field its schema does not declare with 500, kubernetes/kubernetes#139253: the field is in your file, it is no server fault)",
        ));
    }
    text
}

/// Under each check of a refusal said on the lab.
fn see_above(r: &ServerRefusal, lang: Lang) -> String {
    let object = &r.object;
    say(
        lang,
        format!("API サーバーが {object} を拒否しました（上記を参照）"),
        format!("the API server refused {object} (quoted above)"),
    )
}

/// The line that opens the verdict in human output.
pub fn summary(s: &ServerReport, lang: Lang) -> String {
    let (sent, refused) = (s.sent, s.refused.len());
    if s.cluster.is_empty() {
        return say(
            lang,
            "サーバー側ドライラン: 実行できませんでした",
            "server-side dry run: not made",
        );
    }
    let cluster = &s.cluster;
    say(
        lang,
        format!("サーバー側ドライラン（{cluster}）: {sent} 個のオブジェクトを送信、このラボで {refused} 個が拒否されました"),
        format!("server-side dry run on {cluster}: {sent} object(s) sent, {refused} refused for this lab"),
    )
}

impl LabReport {
    /// Adds the server's verdict: the refusals of this lab under their checks (which `plan`
    /// already made fail) or on the lab, and the problems that concern it.
    pub fn with_server(mut self, verdict: &ServerVerdict) -> LabReport {
        let lang = self.lang;
        let lab = self.lab.id.clone();
        let mut refused = Vec::new();
        let mut touched: Vec<String> = Vec::new();
        for (r, checks) in verdict.refusals_in(&lab) {
            let report = RefusalReport {
                object: r.object.clone(),
                origin: r.origin.clone(),
                code: r.refusal.code,
                reason: r.refusal.reason.clone(),
                message: r.refusal.message.clone(),
                fields: r.refusal.fields.clone(),
                text: refusal_text(r, lang),
                checks: checks.iter().map(|c| c.check.clone()).collect(),
            };
            // Human output quotes a refusal of several checks once, above them.
            let short = if report.on_the_lab() {
                see_above(r, lang)
            } else {
                report.text.clone()
            };
            for c in checks {
                let Some(o) = self.outcomes.iter_mut().find(|o| o.check == c.check) else {
                    continue;
                };
                // Several refusals on one check, or a fail's own reason: each said.
                let again = touched.contains(&c.check) || c.before == Status::Fail;
                let join = |earlier: Option<String>, now: &str| match earlier {
                    Some(e) if again => format!("{e}\n{now}"),
                    _ => now.to_string(),
                };
                let earlier_human = o.human_reason.take().or_else(|| o.reason.clone());
                o.human_reason = Some(join(earlier_human, &short));
                o.reason = Some(join(o.reason.take(), &report.text));
                touched.push(c.check.clone());
                if c.before != Status::Fail {
                    // The check's own hint is about something else: the server says what to fix.
                    o.hint = None;
                    o.missing = false;
                    o.expected = Some(say(
                        lang,
                        "API サーバーが受け付ける（サーバー側ドライラン）",
                        "accepted by the API server (server-side dry run)",
                    ));
                    o.found = Some(say(
                        lang,
                        format!("拒否（{}）", status(r)),
                        format!("refused ({})", status(r)),
                    ));
                }
            }
            refused.push(report);
        }
        self.server_dry_run = Some(ServerReport {
            cluster: verdict.cluster.clone(),
            sent: verdict.sent,
            refused,
            errors: verdict
                .problems_in(&lab)
                .map(|t| t.get(lang).to_string())
                .collect(),
        });
        self
    }
}
