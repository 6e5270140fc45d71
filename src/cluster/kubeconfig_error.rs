//! A kubeconfig problem in the user's terms: which file, line or field, and what is wrong with it,
//! instead of kube's own wording (paths in debug quotes, a YAML parser's option names).

use kube::config::{KubeconfigError, LoadDataError};

/// The kubeconfig field a data-or-file setting comes from.
struct Field {
    file: &'static str,
    data: &'static str,
    what: &'static str,
}

const CA: Field = Field {
    file: "clusters[].cluster.certificate-authority",
    data: "clusters[].cluster.certificate-authority-data",
    what: "certificate authority",
};
const CLIENT_CERT: Field = Field {
    file: "users[].user.client-certificate",
    data: "users[].user.client-certificate-data",
    what: "client certificate",
};
const CLIENT_KEY: Field = Field {
    file: "users[].user.client-key",
    data: "users[].user.client-key-data",
    what: "client key",
};

/// What is wrong, said once, without kube's prefixes.
pub fn describe(e: &KubeconfigError) -> String {
    match e {
        KubeconfigError::ReadConfig(io, path) => {
            format!("cannot read {}: {io}", path.display())
        }
        KubeconfigError::Parse(p) => {
            format!("not a valid kubeconfig: {}", yaml_problem(&p.to_string()))
        }
        KubeconfigError::LoadCertificateAuthority(d) => load_data(&CA, d),
        KubeconfigError::LoadClientCertificate(d) => load_data(&CLIENT_CERT, d),
        KubeconfigError::LoadClientKey(d) => load_data(&CLIENT_KEY, d),
        KubeconfigError::ParseCertificates(pem) => format!(
            "the certificate authority (`{}` or `{}`) is not a PEM certificate: {pem}",
            CA.file, CA.data
        ),
        KubeconfigError::ParseClusterUrl(u) => {
            format!("`clusters[].cluster.server` is not a URL: {u}")
        }
        KubeconfigError::MissingClusterUrl => {
            "the context's cluster has no `clusters[].cluster.server`".to_string()
        }
        other => other.to_string(),
    }
}

fn load_data(f: &Field, e: &LoadDataError) -> String {
    match e {
        LoadDataError::ReadFile(io, path) => format!(
            "the {} file {} (`{}`) cannot be read: {io}",
            f.what,
            path.display(),
            f.file
        ),
        LoadDataError::DecodeBase64(b) => {
            format!("`{}` is not base64: {b}", f.data)
        }
        LoadDataError::NoBase64DataOrFile => {
            format!("neither `{}` nor `{}` is set", f.file, f.data)
        }
    }
}

/// The YAML parser's first line, with its location kept and its option advice dropped
/// (`duplicate mapping key: clusters, set DuplicateKeyPolicy in Options if acceptable` becomes
/// ``the key `clusters` is written twice``); the source excerpt after it names `<input>`, not the
/// file, so it is left out (the line and column say where).
fn yaml_problem(message: &str) -> String {
    let first = message.lines().next().unwrap_or(message).trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let first = first
        .split(", set DuplicateKeyPolicy")
        .next()
        .unwrap_or(first);
    match first.split_once("duplicate mapping key: ") {
        Some((at, key)) => format!("{at}the key `{}` is written twice", key.trim()),
        None => first.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duplicate_key_is_said_plainly_with_its_line() {
        assert_eq!(
            yaml_problem(
                "error: line 4 column 1: duplicate mapping key: clusters, set DuplicateKeyPolicy in Options if acceptable\n --> <input>:4:1\n  |"
            ),
            "line 4 column 1: the key `clusters` is written twice"
        );
        assert_eq!(
            yaml_problem("error: line 1 column 6: unclosed bracket '['\n --> <input>:1:6"),
            "line 1 column 6: unclosed bracket '['"
        );
    }

    #[test]
    fn a_missing_ca_file_names_the_file_once_and_the_field() {
        let e = KubeconfigError::LoadCertificateAuthority(LoadDataError::ReadFile(
            std::io::Error::from(std::io::ErrorKind::NotFound),
            "/nonexistent/ca.pem".into(),
        ));
        let text = describe(&e);
        assert!(text.starts_with("the certificate authority file /nonexistent/ca.pem (`clusters[].cluster.certificate-authority`) cannot be read"), "{text}");
        assert!(!text.contains('"'), "{text}");
    }
}
