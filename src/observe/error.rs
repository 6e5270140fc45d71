//! Errors about input files: the user's snapshot or manifests. Always exit 2, never a grade.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error("{path}: cannot read: {message}")]
    Unreadable { path: String, message: String },

    /// A file that is not UTF-8 text (binary data, UTF-16, an invalid byte), said in both
    /// languages.
    #[error("{path}: cannot read: {en}")]
    NotText {
        path: String,
        en: String,
        ja: String,
    },

    #[error("{path}:{}: document {doc}: {message}", line.map(|l| match column { Some(c) => format!("{l}:{c}"), None => l.to_string() }).unwrap_or_else(|| "?".into()))]
    Syntax {
        path: String,
        doc: usize,
        line: Option<usize>,
        column: Option<usize>,
        message: String,
    },

    #[error(
        "{origin}: expected a Kubernetes object (a mapping with string `apiVersion` and `kind`)"
    )]
    NotAnObject { origin: String },

    #[error("{origin}: {object}: field `{field}`: {message}")]
    Field {
        origin: String,
        object: String,
        field: String,
        message: String,
    },

    #[error("--param {name}={value}: expected {expected}")]
    Param {
        name: String,
        value: String,
        expected: String,
        /// `expected` in Japanese.
        expected_ja: String,
    },

    /// A parameter the verifier needs that neither lab.yaml nor `--param` gives (a lab being
    /// written, read with `--labs-dir`): lab.yaml holds every default, the code none.
    #[error("the lab gives no parameter `{name}` (lab.yaml `task.params.<profile>.{name}`); set it there or pass --param {name}=VALUE")]
    ParamMissing { name: String },

    #[error("{object} appears twice with different contents: {first} and {second}; keep one (a snapshot saves each object once; for your own files, move the other copy out of the folder)")]
    Duplicate {
        object: String,
        first: String,
        second: String,
    },

    #[error("{path}: not a regular file or folder ({what}); give .yaml, .yml or .json files")]
    NotAFile { path: String, what: String },

    #[error("{path}: no Kubernetes objects found (expected .yaml, .yml or .json files)")]
    Empty { path: String },

    /// Files were read, and none holds an object: each is empty, or only comments and `---`.
    #[error("{path}: holds no Kubernetes object (empty, or only comments and `---`); write the manifest in it, or name the file that has it")]
    NoObjects { path: String },

    /// Input beyond a limit that bounds trainlab's memory (`--max-input-mib`, `--max-objects`),
    /// or a YAML structure its parser refuses to build (nesting, alias expansion); said in both
    /// languages by whoever found it.
    #[error("{path}: {en}")]
    Limit {
        path: String,
        en: String,
        ja: String,
    },
}

use super::object::origin_ja;

impl InputError {
    /// The error in `lang`: trainlab's own words translated; what it quotes (a parser's
    /// message, a file name, a value) as it was.
    pub fn in_lang(&self, lang: crate::text::Lang) -> String {
        if lang == crate::text::Lang::En {
            return self.to_string();
        }
        match self {
            InputError::Unreadable { path, message } => format!("{path}: 読み取れません: {message}"),
            InputError::Limit { path, ja, .. } => format!("{path}: {ja}"),
            InputError::NotText { path, ja, .. } => format!("{path}: 読み取れません: {ja}"),
            InputError::Syntax {
                path,
                doc,
                line,
                column,
                message,
            } => {
                let at = match (line, column) {
                    (Some(l), Some(c)) => format!("{l}:{c}"),
                    (Some(l), None) => l.to_string(),
                    _ => "?".into(),
                };
                format!("{path}:{at}: {doc} 番目のドキュメント: {message}")
            }
            InputError::NotAnObject { origin } => format!(
                "{}: Kubernetes のオブジェクト（文字列の `apiVersion` と `kind` を持つマッピング）ではありません",
                origin_ja(origin)
            ),
            InputError::Field {
                origin,
                object,
                field,
                message,
            } => format!(
                "{}: {object}: フィールド `{field}`: {message}",
                origin_ja(origin)
            ),
            InputError::Param {
                name,
                value,
                expected_ja,
                ..
            } => format!("--param {name}={value}: {expected_ja}を指定してください"),
            InputError::ParamMissing { name } => format!(
                "lab にパラメーター `{name}` がありません（lab.yaml の `task.params.<プロファイル>.{name}`）。そこに書くか、--param {name}=値 を指定してください"
            ),
            InputError::Duplicate {
                object,
                first,
                second,
            } => format!(
                "{object} が異なる内容で 2 回現れます: {} と {}。どちらか 1 つにしてください（スナップショットは各オブジェクトを 1 回だけ保存します。自分のファイルなら、もう一方をフォルダーの外に移してください）",
                origin_ja(first),
                origin_ja(second)
            ),
            InputError::NotAFile { path, what } => format!(
                "{path}: 通常のファイルでもフォルダーでもありません（{what}）。.yaml、.yml か .json のファイルを指定してください"
            ),
            InputError::Empty { path } => format!(
                "{path}: Kubernetes のオブジェクトが見つかりません（.yaml、.yml か .json のファイルが必要です）"
            ),
            InputError::NoObjects { path } => format!(
                "{path}: Kubernetes のオブジェクトがありません（空か、コメントと `---` だけです）。マニフェストを書くか、マニフェストのあるファイルを指定してください"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::InputError;
    use crate::text::Lang;

    #[test]
    fn input_errors_keep_their_english_and_say_their_own_words_in_japanese() {
        let e = InputError::Empty { path: "x/".into() };
        assert_eq!(e.in_lang(Lang::En), e.to_string());
        assert!(e
            .in_lang(Lang::Ja)
            .starts_with("x/: Kubernetes のオブジェクトが見つかりません"));
        let e = InputError::Syntax {
            path: "a.yaml".into(),
            doc: 2,
            line: Some(3),
            column: Some(4),
            message: "did not find expected key".into(),
        };
        assert_eq!(
            e.in_lang(Lang::Ja),
            "a.yaml:3:4: 2 番目のドキュメント: did not find expected key"
        );
    }
}
