//! Reads: get, and LIST with paging, label and field selectors and metadata-only answers.

use serde_json::{json, Value};

use super::filter::Filter;
use super::reply::{Outcome, Reply};
use super::request::Request;
use super::resources::Resource;
use super::routing::Target;
use super::selectors::{parse_field_selector, parse_label_selector};
use super::status::{bad_request, not_found};
use super::store::{Inner, Key};

/// The filter a list, watch or deletecollection request asks for (its `labelSelector` and
/// `fieldSelector`), or the API server's 400 when a selector does not parse.
impl Filter {
    pub(super) fn from_request(req: &Request, t: &Target) -> Result<Filter, Reply> {
        let labels = parse_label_selector(req.query.get("labelSelector").unwrap_or(""))
            .map_err(|e| bad_request(format!("unable to parse requirement: {e}")))?;
        let fields = parse_field_selector(req.query.get("fieldSelector").unwrap_or(""))
            .map_err(|e| bad_request(format!("invalid field selector: {e}")))?;
        Ok(Filter {
            group: t.resource.group.clone(),
            kind: t.resource.kind.clone(),
            namespace: t.namespace.clone(),
            labels,
            fields,
        })
    }
}

/// An object as the API answers it: apiVersion/kind of the version that was asked for.
pub(super) fn present(r: &Resource, obj: &Value) -> Value {
    let mut out = obj.clone();
    if let Some(map) = out.as_object_mut() {
        map.insert("apiVersion".into(), json!(r.api_version()));
        map.insert("kind".into(), json!(r.kind));
    }
    out
}

/// [`list_item`] written as JSON text onto `out`, from the stored object (keys in the order
/// `list_item`'s value would serialise them).
fn write_list_item(out: &mut String, r: &Resource, obj: &Value) {
    let Some(map) = obj.as_object() else {
        out.push_str(&list_item(r, obj).to_string());
        return;
    };
    let (api_version, kind) = (
        Value::String(r.api_version()),
        Value::String(r.kind.clone()),
    );
    let mut entries: Vec<(&str, &Value)> = map
        .iter()
        .filter(|(k, _)| *k != "apiVersion" && *k != "kind")
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    if !r.builtin {
        entries.push(("apiVersion", &api_version));
        entries.push(("kind", &kind));
        entries.sort_by(|a, b| a.0.cmp(b.0));
    }
    out.push('{');
    for (i, (k, v)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::from(k).to_string());
        out.push(':');
        out.push_str(&v.to_string());
    }
    out.push('}');
}

/// A list item: typed (built-in) lists carry no apiVersion/kind per item, unstructured
/// (custom resource) lists do.
pub(super) fn list_item(r: &Resource, obj: &Value) -> Value {
    let mut out = present(r, obj);
    if r.builtin {
        if let Some(map) = out.as_object_mut() {
            map.remove("apiVersion");
            map.remove("kind");
        }
    }
    out
}

pub(super) fn list_document(r: &Resource, items: Vec<Value>, metadata: Value) -> Value {
    json!({
        "apiVersion": r.api_version(),
        "kind": format!("{}List", r.kind),
        "metadata": metadata,
        "items": items,
    })
}

/// kube-rs' `list_metadata`/`get_metadata` ask for `as=PartialObjectMetadata[List]`.
fn wants_metadata_only(req: &Request) -> bool {
    req.accept.contains("as=PartialObjectMetadata")
}

fn partial_metadata(obj: &Value) -> Value {
    json!({
        "apiVersion": "meta.k8s.io/v1",
        "kind": "PartialObjectMetadata",
        "metadata": obj["metadata"],
    })
}

impl Inner {
    pub(super) fn get(&mut self, req: &Request, t: &Target) -> Outcome {
        let obj = self
            .store
            .get(&t.key(t.name()))
            .ok_or_else(|| not_found(&t.resource, t.name()))?;
        let body = if wants_metadata_only(req) {
            partial_metadata(obj)
        } else {
            present(&t.resource, obj)
        };
        Ok(Reply::Json(200, body))
    }

    pub(super) fn selected(&self, filter: &Filter) -> Vec<(Key, Value)> {
        self.selected_refs(filter)
            .into_iter()
            .map(|(k, o)| (k.clone(), o.clone()))
            .collect()
    }

    /// The selected objects in key order, borrowed: a LIST walks only its own kind's keys (the
    /// store is ordered by group and kind first) and copies only the page it sends, as an API
    /// server's watch cache answers a paged LIST without copying the whole collection.
    fn selected_refs<'a>(&'a self, filter: &'a Filter) -> Vec<(&'a Key, &'a Value)> {
        self.kind_range(&filter.group, &filter.kind)
            .filter(|(k, o)| filter.matches(k, o))
            .collect()
    }

    /// LIST with selectors and `limit`/`continue` paging (the token is the offset).
    pub(super) fn list(&mut self, req: &Request, t: &Target) -> Outcome {
        let filter = Filter::from_request(req, t)?;
        let all = self.selected_refs(&filter);
        let offset: usize = match req.query.get("continue").filter(|c| !c.is_empty()) {
            Some(token) if self.endless_pages && token.starts_with("endless-") => 0,
            Some(token) => token
                .strip_prefix("emulator-")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| bad_request("invalid continue token"))?,
            None => 0,
        };
        let limit = req
            .query
            .get("limit")
            .and_then(|l| l.parse::<usize>().ok())
            .filter(|&l| l > 0)
            .unwrap_or(usize::MAX);
        let page: Vec<&Value> = all
            .iter()
            .skip(offset)
            .take(limit)
            .map(|&(_, o)| o)
            .collect();
        let mut metadata = json!({"resourceVersion": self.rv.to_string()});
        let next = offset.saturating_add(page.len());
        if next < all.len() {
            metadata["continue"] = json!(format!("emulator-{next}"));
            metadata["remainingItemCount"] = json!(all.len() - next);
        }
        if self.endless_pages {
            metadata["continue"] = json!(format!("endless-{}", self.next_seq));
        }
        if wants_metadata_only(req) {
            let items: Vec<Value> = page.into_iter().map(partial_metadata).collect();
            let list = json!({
                "apiVersion": "meta.k8s.io/v1",
                "kind": "PartialObjectMetadataList",
                "metadata": metadata,
                "items": items,
            });
            return Ok(Reply::Json(200, list));
        }
        // Written from the stored objects as they are, without copying each into a new value
        // first: a room's pods list is tens of thousands of objects, and the emulator answers
        // on one thread (a real API server serves a LIST from its watch cache, many at once).
        let head = list_document(&t.resource, Vec::new(), metadata);
        let mut body = String::from("{");
        for key in ["apiVersion", "kind", "metadata"] {
            body.push_str(&format!("{}:{},", Value::from(key), head[key]));
        }
        body.push_str("\"items\":[");
        let stray: Vec<&Value> = self
            .stray_items
            .iter()
            .filter(|(prefix, _)| req.path.starts_with(prefix.as_str()))
            .map(|(_, item)| item)
            .collect();
        for (i, o) in page.into_iter().enumerate() {
            if i > 0 {
                body.push(',');
            }
            write_list_item(&mut body, &t.resource, o);
        }
        for item in stray {
            if !body.ends_with('[') {
                body.push(',');
            }
            body.push_str(&item.to_string());
        }
        body.push_str("]}");
        Ok(Reply::Raw(200, body))
    }
}
