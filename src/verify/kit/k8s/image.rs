//! Container image references, split the way the distribution reference grammar does
//! (distribution/reference `reference.go`):
//!
//! ```text
//! reference := name [ ":" tag ] [ "@" digest ]
//! name      := [domain '/'] remote-name
//! domain    := host [':' port-number]
//! ```
//!
//! The tag is after the last `:` that follows the last `/`, so a registry port is not a tag.
//! Parsing is lenient: it never fails, a check decides what a value must be.

/// An image reference: `nvcr.io/nvidia/clara/bionemo-framework:2.6`,
/// `registry.local:5000/team/trainer:1.2@sha256:ff`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    /// Everything before the tag and digest (`nvcr.io/nvidia/clara/bionemo-framework`).
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl ImageRef {
    pub fn parse(image: &str) -> ImageRef {
        let image = image.trim();
        let (name, digest) = match image.split_once('@') {
            Some((n, d)) => (n, Some(d.to_string())),
            None => (image, None),
        };
        let slash = name.rfind('/').map_or(0, |i| i + 1);
        let (repository, tag) = match name[slash..].rfind(':') {
            Some(i) => (&name[..slash + i], Some(name[slash + i + 1..].to_string())),
            None => (name, None),
        };
        ImageRef {
            repository: repository.to_string(),
            tag: tag.filter(|t| !t.is_empty()),
            digest: digest.filter(|d| !d.is_empty()),
        }
    }

    /// The last path component (`bionemo-framework`, `pytorch-training-neuronx`).
    pub fn name(&self) -> &str {
        self.repository
            .rsplit('/')
            .next()
            .unwrap_or(&self.repository)
    }

    /// The registry host (with its port), when the reference names one: the first component
    /// holds a `.` or a `:`, or is `localhost` (distribution/reference `normalize.go`
    /// `splitDockerDomain`; otherwise the image is on Docker Hub).
    pub fn domain(&self) -> Option<&str> {
        let (first, _) = self.repository.split_once('/')?;
        (first.contains('.') || first.contains(':') || first == "localhost").then_some(first)
    }

    /// Pinned to a version: a digest, or a tag other than `latest` (no tag means `latest`:
    /// distribution/reference `normalize.go` `TagNameOnly`).
    pub fn is_pinned(&self) -> bool {
        self.digest.is_some() || self.tag.as_deref().is_some_and(|t| t != "latest")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIONEMO: &str = "nvcr.io/nvidia/clara/bionemo-framework";

    #[test]
    fn a_reference_splits_into_repository_tag_and_digest() {
        let r = ImageRef::parse("nvcr.io/nvidia/clara/bionemo-framework:2.6");
        assert_eq!(r.repository, BIONEMO);
        assert_eq!(r.tag.as_deref(), Some("2.6"));
        assert_eq!(r.name(), "bionemo-framework");
        assert_eq!(r.domain(), Some("nvcr.io"));

        let r = ImageRef::parse("nvcr.io/nvidia/clara/bionemo-framework@sha256:0123abcd");
        assert_eq!(r.repository, BIONEMO);
        assert_eq!(
            (r.tag, r.digest.as_deref()),
            (None, Some("sha256:0123abcd"))
        );
        // Surrounding blanks are not part of the reference.
        assert_eq!(ImageRef::parse("  python:3.13-slim\n").name(), "python");
    }

    #[test]
    fn a_registry_port_is_not_a_tag() {
        let r = ImageRef::parse("registry.local:5000/team/trainer");
        assert_eq!(r.repository, "registry.local:5000/team/trainer");
        assert_eq!(r.tag, None);
        assert_eq!(r.domain(), Some("registry.local:5000"));
        let r = ImageRef::parse("registry.local:5000/team/trainer:1.2@sha256:ff");
        assert_eq!(
            (r.repository.as_str(), r.tag.as_deref(), r.digest.as_deref()),
            (
                "registry.local:5000/team/trainer",
                Some("1.2"),
                Some("sha256:ff")
            )
        );
    }

    #[test]
    fn docker_hub_names_have_no_domain() {
        assert_eq!(ImageRef::parse("python:3.13-slim").domain(), None);
        assert_eq!(ImageRef::parse("library/python").domain(), None);
        assert_eq!(
            ImageRef::parse("localhost/trainer:1").domain(),
            Some("localhost")
        );
        assert_eq!(
            ImageRef::parse(
                "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:2.1"
            )
            .domain(),
            Some("763104351884.dkr.ecr.us-west-2.amazonaws.com")
        );
    }

    #[test]
    fn latest_or_no_tag_is_not_pinned() {
        assert!(ImageRef::parse("nvcr.io/nvidia/clara/bionemo-framework:2.6").is_pinned());
        assert!(!ImageRef::parse(BIONEMO).is_pinned());
        assert!(!ImageRef::parse("nvcr.io/nvidia/clara/bionemo-framework:latest").is_pinned());
        // An empty tag or digest is no pin.
        assert!(!ImageRef::parse("trainer:").is_pinned());
        assert!(!ImageRef::parse("trainer@").is_pinned());
        assert!(ImageRef::parse("trainer:latest@sha256:ff").is_pinned());
    }
}
