//! The Kubernetes API emulator answers kube-rs like kube-apiserver does. These tests use kube-rs
//! itself as the client, through a kubeconfig the emulator writes, exactly as `trainlab` does.

use crate::support::emulator;

use std::future::Future;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use emulator::{Emulator, Fault};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Node, Pod};
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::{ApiResource, GroupVersionKind};
use kube::discovery::{Discovery, Scope};
use kube::{Client, Config, ResourceExt};
use serde_json::{json, Value};

// --- helpers ----------------------------------------------------------------------------------

/// Every awaited step gets a deadline, so a hung server fails the test instead of the run.
async fn bounded<T>(step: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), step)
        .await
        .expect("step did not finish in 20s")
}

/// A kube-rs client configured from the kubeconfig the emulator writes.
async fn client(emu: &Emulator) -> Client {
    let dir = tempfile::tempdir().unwrap();
    let path = emu.kubeconfig(dir.path(), "emulator");
    let kubeconfig = Kubeconfig::read_from(&path).unwrap();
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    Client::try_from(config).unwrap()
}

fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

fn pod(ns: &str, name: &str, labels: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
        "status": {"phase": "Running"},
    })
}

fn node(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": "zone-a"}},
        "spec": {"providerID": format!("kind://docker/trainlab/{name}")},
        "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    })
}

fn config_map(ns: &str, name: &str, data: Value) -> ConfigMap {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns},
        "data": data,
    }))
    .unwrap()
}

fn names<K: ResourceExt>(items: impl IntoIterator<Item = K>) -> Vec<String> {
    items.into_iter().map(|o| o.name_any()).collect()
}

/// The `Status` of an API error; panics on any other outcome.
fn api_error<T: std::fmt::Debug>(result: kube::Result<T>) -> kube::core::Status {
    match result {
        Err(kube::Error::Api(status)) => *status,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// A raw HTTP/1.1 GET over a std socket, to see headers kube-rs does not expose.
fn raw_get(emu: &Emulator, path: &str, accept: &str) -> (String, String) {
    let addr = emu.url().trim_start_matches("http://").to_string();
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    (head.to_string(), body.to_string())
}

fn pods_seed() -> Vec<Value> {
    vec![
        namespace("a"),
        namespace("b"),
        pod("a", "p1", json!({"app": "train", "tier": "gpu"})),
        pod("a", "p2", json!({"app": "train"})),
        pod("a", "p3", json!({"app": "web"})),
        pod("b", "p4", json!({"app": "train"})),
    ]
}

// --- version, kubeconfig, discovery -----------------------------------------------------------

#[tokio::test]
async fn kubeconfig_points_kube_rs_at_the_emulator() {
    let emu = Emulator::start(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = Kubeconfig::read_from(emu.kubeconfig(dir.path(), "lab")).unwrap();
    assert_eq!(kubeconfig.current_context.as_deref(), Some("lab"));

    let version = bounded(client(&emu).await.apiserver_version())
        .await
        .unwrap();
    assert_eq!(version.git_version, "v1.33.1");
    assert_eq!(
        (version.major.as_str(), version.minor.as_str()),
        ("1", "33")
    );
    assert!(emu.url().starts_with("http://127.0.0.1:"));
}

#[tokio::test]
async fn discovery_serves_built_ins_and_crd_groups_and_404s_unserved_groups() {
    let emu = Emulator::start(vec![]);
    emu.serve_crd(
        "scheduling.volcano.sh",
        "v1beta1",
        "PodGroup",
        "podgroups",
        true,
    );
    emu.serve_crd("karpenter.sh", "v1", "NodePool", "nodepools", false);
    let client = client(&emu).await;

    let discovery = bounded(Discovery::new(client.clone()).run()).await.unwrap();
    for group in [
        "",
        "batch",
        "apps",
        "storage.k8s.io",
        "apiextensions.k8s.io",
    ] {
        assert!(discovery.has_group(group), "{group:?} is served");
    }
    let podgroup = GroupVersionKind::gvk("scheduling.volcano.sh", "v1beta1", "PodGroup");
    let (resource, caps) = discovery
        .resolve_gvk(&podgroup)
        .expect("PodGroup is served");
    assert_eq!(resource.plural, "podgroups");
    assert_eq!(caps.scope, Scope::Namespaced);
    let nodepool = GroupVersionKind::gvk("karpenter.sh", "v1", "NodePool");
    let (_, caps) = discovery
        .resolve_gvk(&nodepool)
        .expect("NodePool is served");
    assert_eq!(caps.scope, Scope::Cluster);
    let node = GroupVersionKind::gvk("", "v1", "Node");
    let (_, caps) = discovery.resolve_gvk(&node).unwrap();
    let subresources: Vec<&str> = caps
        .subresources
        .iter()
        .map(|(r, _)| r.plural.as_str())
        .collect();
    assert_eq!(subresources, ["status"]);
    assert!(!discovery.has_group("kubeflow.org"));

    let request = http::Request::get("/apis/kubeflow.org/v2beta1")
        .body(vec![])
        .unwrap();
    let status = api_error(bounded(client.request::<Value>(request)).await);
    assert_eq!((status.code, status.reason.as_str()), (404, "NotFound"));
}

#[tokio::test]
async fn crd_objects_make_their_kinds_served_and_deleting_them_removes_their_objects() {
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "mpijobs.kubeflow.org"},
        "spec": {
            "group": "kubeflow.org", "scope": "Namespaced",
            "names": {"kind": "MPIJob", "plural": "mpijobs", "singular": "mpijob"},
            "versions": [{"name": "v2beta1", "served": true, "storage": true,
                          "subresources": {"status": {}}}],
        },
    });
    let job = json!({
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": "nccl", "namespace": "a"}, "spec": {"slotsPerWorker": 8},
    });
    let emu = Emulator::start(vec![namespace("a"), crd, job]);
    let client = client(&emu).await;

    let discovery = bounded(Discovery::new(client.clone()).run()).await.unwrap();
    assert!(discovery.has_group("kubeflow.org"));
    let gvk = GroupVersionKind::gvk("kubeflow.org", "v2beta1", "MPIJob");
    let mpijobs: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "a",
        &ApiResource::from_gvk_with_plural(&gvk, "mpijobs"),
    );
    assert_eq!(
        names(bounded(mpijobs.list(&ListParams::default())).await.unwrap()),
        ["nccl"]
    );

    let crds: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    );
    bounded(crds.delete("mpijobs.kubeflow.org", &DeleteParams::default()))
        .await
        .unwrap();
    assert!(emu.objects().iter().all(|o| o["kind"] != "MPIJob"));
    let status = api_error(bounded(mpijobs.list(&ListParams::default())).await);
    assert_eq!(status.code, 404);
}

#[test]
fn aggregated_discovery_is_served_when_asked_for_and_the_legacy_json_otherwise() {
    let emu = Emulator::start(vec![]);
    emu.serve_crd("batch.volcano.sh", "v1alpha1", "Job", "jobs", true);
    let aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

    // As kube-apiserver 1.26+: `/apis` and `/api` answer every group/version at once.
    let (head, body) = raw_get(&emu, "/apis", aggregated);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase().contains(
            "content-type: application/json;g=apidiscovery.k8s.io;v=v2;as=apigroupdiscoverylist"
        ),
        "{head}"
    );
    let list: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(list["kind"], "APIGroupDiscoveryList");
    assert_eq!(list["apiVersion"], "apidiscovery.k8s.io/v2");
    let volcano = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "batch.volcano.sh")
        .unwrap();
    assert_eq!(
        volcano["versions"][0],
        json!({"version": "v1alpha1", "freshness": "Current", "resources": [{
            "resource": "jobs",
            "responseKind": {"group": "batch.volcano.sh", "version": "v1alpha1", "kind": "Job"},
            "scope": "Namespaced",
            "singularResource": "job",
            "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
            "subresources": [{
                "subresource": "status",
                "responseKind": {"group": "batch.volcano.sh", "version": "v1alpha1", "kind": "Job"},
                "verbs": ["get", "patch", "update"],
            }],
        }]})
    );
    let (_, body) = raw_get(&emu, "/api", aggregated);
    let core: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(core["items"].as_array().unwrap().len(), 1);
    assert!(core["items"][0]["metadata"].get("name").is_none());
    assert_eq!(core["items"][0]["versions"][0]["version"], "v1");
    let v2beta1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
    let (_, body) = raw_get(&emu, "/apis", v2beta1);
    let list: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(list["apiVersion"], "apidiscovery.k8s.io/v2beta1");

    // As a server before 1.26 (or any client that does not ask): the legacy documents.
    emu.legacy_discovery_only(true);
    let accept =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

    let (head, body) = raw_get(&emu, "/apis", accept);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/json\r\n")
            || head
                .to_ascii_lowercase()
                .ends_with("content-type: application/json"),
        "{head}"
    );
    let groups: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(groups["kind"], "APIGroupList");
    let served: Vec<&str> = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        served,
        [
            "batch",
            "apps",
            "storage.k8s.io",
            "apiextensions.k8s.io",
            "batch.volcano.sh"
        ]
    );

    let (_, body) = raw_get(&emu, "/api", accept);
    let versions: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (versions["kind"].as_str(), &versions["versions"]),
        (Some("APIVersions"), &json!(["v1"]))
    );
}

// --- reads ------------------------------------------------------------------------------------

#[tokio::test]
async fn lists_pods_with_label_and_field_selectors() {
    let emu = Emulator::start(pods_seed());
    let client = client(&emu).await;
    let in_a: Api<Pod> = Api::namespaced(client.clone(), "a");
    let everywhere: Api<Pod> = Api::all(client.clone());
    let list = |api: &Api<Pod>, lp: ListParams| {
        let api = api.clone();
        async move { names(bounded(api.list(&lp)).await.unwrap()) }
    };

    assert_eq!(
        list(&in_a, ListParams::default().labels("app=train")).await,
        ["p1", "p2"]
    );
    assert_eq!(
        list(&in_a, ListParams::default().labels("app==train,tier!=gpu")).await,
        ["p2"]
    );
    assert_eq!(
        list(
            &in_a,
            ListParams::default().labels("app in (web, train),!tier")
        )
        .await,
        ["p2", "p3"]
    );
    assert_eq!(
        list(&in_a, ListParams::default().labels("app notin (train)")).await,
        ["p3"]
    );
    assert_eq!(
        list(&in_a, ListParams::default().labels("tier")).await,
        ["p1"]
    );
    // The cluster-wide path lists every namespace.
    assert_eq!(
        list(&everywhere, ListParams::default().labels("app=train")).await,
        ["p1", "p2", "p4"]
    );
    assert_eq!(
        list(
            &everywhere,
            ListParams::default().fields("metadata.namespace=b")
        )
        .await,
        ["p4"]
    );
    assert_eq!(
        list(
            &everywhere,
            ListParams::default().fields("metadata.name!=p1,status.phase=Running")
        )
        .await,
        ["p2", "p3", "p4"]
    );

    let status = api_error(bounded(in_a.list(&ListParams::default().labels("app in (x"))).await);
    assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));
}

#[tokio::test]
async fn lists_nodes() {
    let emu = Emulator::start(vec![node("worker-b"), node("worker-a")]);
    let nodes: Api<Node> = Api::all(client(&emu).await);

    let list = bounded(nodes.list(&ListParams::default())).await.unwrap();
    assert_eq!(names(list.items.clone()), ["worker-a", "worker-b"]);
    let capacity = list.items[0]
        .status
        .as_ref()
        .unwrap()
        .capacity
        .as_ref()
        .unwrap();
    assert_eq!(capacity["cpu"].0, "8");
    assert_eq!(
        list.items[0].spec.as_ref().unwrap().provider_id.as_deref(),
        Some("kind://docker/trainlab/worker-a")
    );
}

#[tokio::test]
async fn list_items_of_built_in_kinds_omit_type_meta_but_custom_resources_keep_it() {
    let podgroup = json!({
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
        "metadata": {"name": "gang", "namespace": "a"}, "spec": {"minMember": 4},
    });
    let mut seed = pods_seed();
    seed.push(podgroup);
    let emu = Emulator::start(seed);
    emu.serve_crd(
        "scheduling.volcano.sh",
        "v1beta1",
        "PodGroup",
        "podgroups",
        true,
    );
    let client = client(&emu).await;
    let get = |path: &str| {
        let request = http::Request::get(path).body(vec![]).unwrap();
        let client = client.clone();
        async move { bounded(client.request::<Value>(request)).await.unwrap() }
    };

    let pods = get("/api/v1/namespaces/b/pods").await;
    assert_eq!(
        (pods["kind"].as_str(), pods["apiVersion"].as_str()),
        (Some("PodList"), Some("v1"))
    );
    assert!(pods["metadata"]["resourceVersion"].is_string());
    assert_eq!(pods["items"][0]["metadata"]["name"], "p4");
    assert!(pods["items"][0].get("kind").is_none() && pods["items"][0].get("apiVersion").is_none());

    let groups = get("/apis/scheduling.volcano.sh/v1beta1/namespaces/a/podgroups").await;
    assert_eq!(groups["kind"], "PodGroupList");
    assert_eq!(groups["items"][0]["kind"], "PodGroup");
    assert_eq!(
        groups["items"][0]["apiVersion"],
        "scheduling.volcano.sh/v1beta1"
    );

    // A single GET always carries apiVersion/kind.
    let one = get("/api/v1/namespaces/b/pods/p4").await;
    assert_eq!(
        (one["kind"].as_str(), one["apiVersion"].as_str()),
        (Some("Pod"), Some("v1"))
    );
}

#[tokio::test]
async fn get_of_an_absent_object_is_a_not_found_status() {
    let emu = Emulator::start(pods_seed());
    let pods: Api<Pod> = Api::namespaced(client(&emu).await, "a");

    let status = api_error(bounded(pods.get("nope")).await);
    assert_eq!((status.code, status.reason.as_str()), (404, "NotFound"));
    assert_eq!(status.message, "pods \"nope\" not found");
    let details = status.details.unwrap();
    assert_eq!(
        (details.name.as_str(), details.kind.as_str()),
        ("nope", "pods")
    );
    assert!(bounded(pods.get("p1")).await.is_ok());
}

#[tokio::test]
async fn list_pages_with_limit_and_continue() {
    let emu = Emulator::start(pods_seed());
    let pods: Api<Pod> = Api::all(client(&emu).await);

    let first = bounded(pods.list(&ListParams::default().limit(3)))
        .await
        .unwrap();
    assert_eq!(names(first.items), ["p1", "p2", "p3"]);
    let token = first.metadata.continue_.expect("a continue token");
    let rest = bounded(pods.list(&ListParams::default().limit(3).continue_token(&token)))
        .await
        .unwrap();
    assert_eq!(names(rest.items), ["p4"]);
    assert!(rest.metadata.continue_.is_none());
}

#[tokio::test]
async fn watch_sends_current_objects_then_changes() {
    let emu = Emulator::start(pods_seed());
    let client = client(&emu).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "b");

    let mut events = bounded(pods.watch(&WatchParams::default().timeout(15), "0"))
        .await
        .unwrap()
        .boxed();
    let first = bounded(events.next()).await.unwrap().unwrap();
    assert!(
        matches!(&first, WatchEvent::Added(p) if p.name_any() == "p4"),
        "{first:?}"
    );

    let created: Pod = serde_json::from_value(pod("b", "p5", json!({}))).unwrap();
    bounded(pods.create(&PostParams::default(), &created))
        .await
        .unwrap();
    let second = bounded(events.next()).await.unwrap().unwrap();
    assert!(
        matches!(&second, WatchEvent::Added(p) if p.name_any() == "p5"),
        "{second:?}"
    );

    bounded(pods.delete("p4", &DeleteParams::default()))
        .await
        .unwrap();
    let third = bounded(events.next()).await.unwrap().unwrap();
    assert!(
        matches!(&third, WatchEvent::Deleted(p) if p.name_any() == "p4"),
        "{third:?}"
    );
}

// --- writes -----------------------------------------------------------------------------------

#[tokio::test]
async fn server_side_apply_creates_then_a_second_identical_apply_changes_nothing() {
    let emu = Emulator::start(vec![]);
    let client = client(&emu).await;
    let params = PatchParams::apply("trainlab").force();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(namespace("lab")).unwrap();
    bounded(namespaces.patch("lab", &params, &Patch::Apply(&ns)))
        .await
        .unwrap();

    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "lab");
    let desired = config_map("lab", "settings", json!({"nodes": "2"}));
    let created = bounded(maps.patch("settings", &params, &Patch::Apply(&desired)))
        .await
        .unwrap();
    let again = bounded(maps.patch("settings", &params, &Patch::Apply(&desired)))
        .await
        .unwrap();
    assert_eq!(
        again.resource_version(),
        created.resource_version(),
        "a no-op apply keeps the resourceVersion"
    );
    assert_eq!(again.uid(), created.uid());

    let changed = config_map("lab", "settings", json!({"nodes": "4"}));
    let updated = bounded(maps.patch("settings", &params, &Patch::Apply(&changed)))
        .await
        .unwrap();
    assert_ne!(updated.resource_version(), created.resource_version());
    assert_eq!(updated.uid(), created.uid());
    assert_eq!(updated.creation_timestamp(), created.creation_timestamp());
    assert_eq!(updated.data.unwrap()["nodes"], "4");

    let applies: Vec<_> = emu
        .requests()
        .into_iter()
        .filter(|r| r.method == "PATCH")
        .collect();
    assert_eq!(applies.len(), 4);
    assert!(applies
        .iter()
        .all(|r| r.content_type.as_deref() == Some("application/apply-patch+yaml")));
    assert!(applies
        .iter()
        .all(|r| r.query.contains("fieldManager=trainlab") && r.query.contains("force=true")));
}

#[tokio::test]
async fn apply_into_a_missing_namespace_is_not_found_and_without_a_name_is_invalid() {
    let emu = Emulator::start(vec![]);
    let client = client(&emu).await;
    let params = PatchParams::apply("trainlab");
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "ghost");

    let status = api_error(
        bounded(maps.patch(
            "x",
            &params,
            &Patch::Apply(&config_map("ghost", "x", json!({}))),
        ))
        .await,
    );
    assert_eq!(
        (status.code, status.message.as_str()),
        (404, "namespaces \"ghost\" not found")
    );

    let request =
        http::Request::patch("/api/v1/namespaces/default/configmaps/x?fieldManager=trainlab")
            .header("Content-Type", "application/apply-patch+yaml")
            .body(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n".to_vec())
            .unwrap();
    let status = api_error(bounded(client.request::<Value>(request)).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert!(emu.objects().is_empty());
}

#[tokio::test]
async fn create_conflicts_with_an_existing_object_and_needs_a_name() {
    let emu = Emulator::start(vec![namespace("a")]);
    let maps: Api<ConfigMap> = Api::namespaced(client(&emu).await, "a");
    let map = config_map("a", "c", json!({"k": "v"}));

    let created = bounded(maps.create(&PostParams::default(), &map))
        .await
        .unwrap();
    assert_eq!(created.namespace().as_deref(), Some("a"));
    assert_eq!(created.uid().unwrap().len(), 36);
    assert!(created.creation_timestamp().is_some() && created.resource_version().is_some());

    let status = api_error(bounded(maps.create(&PostParams::default(), &map)).await);
    assert_eq!(
        (status.code, status.reason.as_str()),
        (409, "AlreadyExists")
    );
    assert_eq!(status.message, "configmaps \"c\" already exists");

    let unnamed = config_map("a", "", json!({}));
    let status = api_error(bounded(maps.create(&PostParams::default(), &unnamed)).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(status.details.unwrap().causes[0].field, "metadata.name");
}

#[tokio::test]
async fn json_patch_on_node_status_adds_capacity() {
    let emu = Emulator::start(vec![node("worker-a")]);
    let client = client(&emu).await;
    let patch = json!([{"op": "add", "path": "/status/capacity/nvidia.com~1gpu", "value": "8"}]);
    let request = http::Request::patch("/api/v1/nodes/worker-a/status")
        .header("Content-Type", "application/json-patch+json")
        .body(patch.to_string().into_bytes())
        .unwrap();

    let patched: Node = bounded(client.request(request)).await.unwrap();
    assert_eq!(
        patched.status.unwrap().capacity.unwrap()["nvidia.com/gpu"].0,
        "8"
    );
    let nodes: Api<Node> = Api::all(client.clone());
    let stored = bounded(nodes.get("worker-a")).await.unwrap();
    assert_eq!(
        stored.status.unwrap().capacity.unwrap()["nvidia.com/gpu"].0,
        "8"
    );

    // A patch of the main resource cannot change status (it has its own subresource).
    let merge =
        json!({"metadata": {"labels": {"gpu": "true"}}, "status": {"capacity": {"cpu": "0"}}});
    let patched = bounded(nodes.patch("worker-a", &PatchParams::default(), &Patch::Merge(&merge)))
        .await
        .unwrap();
    assert_eq!(patched.labels()["gpu"], "true");
    assert_eq!(patched.status.unwrap().capacity.unwrap()["cpu"].0, "8");

    let missing = json!([{"op": "replace", "path": "/status/allocatable/cpu", "value": "1"}]);
    let request = http::Request::patch("/api/v1/nodes/worker-a/status")
        .header("Content-Type", "application/json-patch+json")
        .body(missing.to_string().into_bytes())
        .unwrap();
    assert_eq!(
        api_error(bounded(client.request::<Node>(request)).await).code,
        422
    );
}

#[tokio::test]
async fn replace_with_a_stale_resource_version_conflicts() {
    let emu = Emulator::start(vec![namespace("a")]);
    let maps: Api<ConfigMap> = Api::namespaced(client(&emu).await, "a");
    let created = bounded(maps.create(
        &PostParams::default(),
        &config_map("a", "c", json!({"k": "1"})),
    ))
    .await
    .unwrap();

    let mut next = created.clone();
    next.data = Some([("k".to_string(), "2".to_string())].into());
    let replaced = bounded(maps.replace("c", &PostParams::default(), &next))
        .await
        .unwrap();
    assert_ne!(replaced.resource_version(), created.resource_version());

    let status = api_error(bounded(maps.replace("c", &PostParams::default(), &next)).await);
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
}

#[tokio::test]
async fn deleting_a_namespace_deletes_every_object_in_it() {
    let mut seed = pods_seed();
    seed.push(serde_json::to_value(config_map("a", "c", json!({}))).unwrap());
    let emu = Emulator::start(seed);
    let client = client(&emu).await;

    let namespaces: Api<Namespace> = Api::all(client.clone());
    let answer = bounded(namespaces.delete("a", &DeleteParams::default()))
        .await
        .unwrap();
    let terminating = answer
        .left()
        .expect("a namespace delete answers with the namespace");
    assert_eq!(
        terminating.status.unwrap().phase.as_deref(),
        Some("Terminating")
    );

    let pods: Api<Pod> = Api::all(client.clone());
    assert_eq!(
        names(bounded(pods.list(&ListParams::default())).await.unwrap()),
        ["p4"]
    );
    assert!(emu
        .objects()
        .iter()
        .all(|o| o["metadata"]["namespace"] != "a" && o["metadata"]["name"] != "a"));

    // Kinds without ReturnDeletedObject answer with a Success Status.
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "b");
    bounded(maps.create(&PostParams::default(), &config_map("b", "c", json!({}))))
        .await
        .unwrap();
    let answer = bounded(maps.delete("c", &DeleteParams::default()))
        .await
        .unwrap();
    assert_eq!(answer.right().expect("a Status").details.unwrap().name, "c");
}

#[tokio::test]
async fn dry_run_answers_as_if_applied_but_changes_nothing() {
    let emu = Emulator::start(pods_seed());
    let client = client(&emu).await;
    let before = emu.objects();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "a");
    let map = config_map("a", "c", json!({"k": "v"}));

    let post = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let created = bounded(maps.create(&post, &map)).await.unwrap();
    assert_eq!(created.name_any(), "c");
    let applied = bounded(maps.patch(
        "c",
        &PatchParams::apply("trainlab").dry_run(),
        &Patch::Apply(&map),
    ))
    .await
    .unwrap();
    assert_eq!(applied.data.unwrap()["k"], "v");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "a");
    bounded(pods.delete("p1", &DeleteParams::default().dry_run()))
        .await
        .unwrap();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    bounded(namespaces.delete("a", &DeleteParams::default().dry_run()))
        .await
        .unwrap();

    assert_eq!(emu.objects(), before);
}

// --- faults -----------------------------------------------------------------------------------

#[tokio::test]
async fn a_forbidden_fault_answers_a_real_status_only_on_its_path() {
    let emu = Emulator::start(pods_seed());
    let client = client(&emu).await;
    let message = "pods is forbidden: User \"learner\" cannot list resource \"pods\" in API group \"\" in the namespace \"a\"";
    emu.fault(
        Some("get"),
        "/api/v1/namespaces/a/pods",
        false,
        Fault::Status(403, message.into()),
    );
    let in_a: Api<Pod> = Api::namespaced(client.clone(), "a");

    let status = api_error(bounded(in_a.list(&ListParams::default())).await);
    assert_eq!(
        (status.code, status.reason.as_str(), status.message.as_str()),
        (403, "Forbidden", message)
    );
    assert_eq!(status.details.unwrap().kind, "pods");
    let in_b: Api<Pod> = Api::namespaced(client.clone(), "b");
    assert!(bounded(in_b.list(&ListParams::default())).await.is_ok());

    emu.clear_faults();
    assert!(bounded(in_a.list(&ListParams::default())).await.is_ok());
}

#[tokio::test]
async fn a_sequence_fault_fails_the_first_request_then_passes() {
    let emu = Emulator::start(vec![node("worker-a")]);
    let nodes: Api<Node> = Api::all(client(&emu).await);
    emu.fault(None, "/api/v1/nodes", false, Fault::Sequence(vec![500]));

    let status = api_error(bounded(nodes.list(&ListParams::default())).await);
    assert_eq!(
        (status.code, status.reason.as_str()),
        (500, "InternalError")
    );
    assert_eq!(
        names(bounded(nodes.list(&ListParams::default())).await.unwrap()),
        ["worker-a"]
    );
}

#[tokio::test]
async fn kube_rs_retries_503_so_a_short_503_sequence_is_invisible_to_callers() {
    let emu = Emulator::start(vec![node("worker-a")]);
    let nodes: Api<Node> = Api::all(client(&emu).await);
    emu.fault(
        Some("GET"),
        "/api/v1/nodes",
        false,
        Fault::Sequence(vec![503, 503, 200]),
    );

    assert_eq!(
        names(bounded(nodes.list(&ListParams::default())).await.unwrap()),
        ["worker-a"]
    );
    assert_eq!(
        emu.requests().len(),
        3,
        "two 503 answers, then the retry that passed"
    );
}

#[tokio::test]
async fn a_down_fault_drops_the_connection() {
    let emu = Emulator::start(vec![node("worker-a")]);
    let nodes: Api<Node> = Api::all(client(&emu).await);
    emu.fault(None, "/api/v1/nodes", false, Fault::Down);

    match bounded(nodes.list(&ListParams::default())).await {
        Err(kube::Error::HyperError(_) | kube::Error::Service(_)) => {}
        other => panic!("expected a connection error, got {other:?}"),
    }
    emu.clear_faults();
    assert!(
        bounded(nodes.list(&ListParams::default())).await.is_ok(),
        "the server still serves"
    );
}

#[tokio::test]
async fn a_latency_fault_delays_the_answer() {
    let emu = Emulator::start(vec![node("worker-a")]);
    let nodes: Api<Node> = Api::all(client(&emu).await);
    emu.fault(
        Some("GET"),
        "/api/v1/nodes",
        false,
        Fault::Latency(Duration::from_millis(300)),
    );

    let started = Instant::now();
    assert!(bounded(nodes.list(&ListParams::default())).await.is_ok());
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[tokio::test]
async fn a_dry_run_only_fault_spares_real_requests() {
    let emu = Emulator::start(vec![namespace("lab")]);
    let maps: Api<ConfigMap> = Api::namespaced(client(&emu).await, "lab");
    emu.fault(
        Some("PATCH"),
        "/api/v1/namespaces/lab/configmaps",
        true,
        Fault::Status(500, "webhook down".into()),
    );
    let map = config_map("lab", "c", json!({}));

    let dry = PatchParams::apply("trainlab").dry_run();
    assert_eq!(
        api_error(bounded(maps.patch("c", &dry, &Patch::Apply(&map))).await).code,
        500
    );
    assert!(
        bounded(maps.patch("c", &PatchParams::apply("trainlab"), &Patch::Apply(&map)))
            .await
            .is_ok()
    );
}

// --- recording and seeding --------------------------------------------------------------------

#[tokio::test]
async fn every_request_is_recorded_in_order_discovery_included() {
    let emu = Emulator::start(pods_seed());
    let client = client(&emu).await;

    bounded(Discovery::new(client.clone()).run()).await.unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "a");
    bounded(pods.list(&ListParams::default().labels("app=train")))
        .await
        .unwrap();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "a");
    let map = config_map("a", "c", json!({"k": "v"}));
    bounded(maps.patch("c", &PatchParams::apply("trainlab"), &Patch::Apply(&map)))
        .await
        .unwrap();

    let requests = emu.requests();
    let paths: Vec<(&str, &str)> = requests
        .iter()
        .map(|r| (r.method.as_str(), r.path.as_str()))
        .collect();
    assert_eq!(paths[0], ("GET", "/apis"));
    for discovered in ["/apis/batch/v1", "/apis/apps/v1", "/api", "/api/v1"] {
        assert!(
            paths.contains(&("GET", discovered)),
            "{discovered} in {paths:?}"
        );
    }
    let list = &requests[requests.len() - 2];
    assert_eq!(
        (list.method.as_str(), list.path.as_str()),
        ("GET", "/api/v1/namespaces/a/pods")
    );
    assert!(
        list.query.contains("labelSelector=app%3Dtrain"),
        "{}",
        list.query
    );
    assert_eq!(list.body, "");
    let apply = requests.last().unwrap();
    assert_eq!(
        (apply.method.as_str(), apply.path.as_str()),
        ("PATCH", "/api/v1/namespaces/a/configmaps/c")
    );
    assert_eq!(
        apply.content_type.as_deref(),
        Some("application/apply-patch+yaml")
    );
    assert_eq!(
        serde_json::from_str::<Value>(&apply.body).unwrap()["data"]["k"],
        "v"
    );
    assert!(requests[..requests.len() - 1]
        .iter()
        .all(|r| r.method == "GET"));

    emu.clear_requests();
    assert!(emu.requests().is_empty());
}

#[test]
fn every_request_records_its_headers() {
    let emu = Emulator::start(vec![node("n1")]);
    raw_get(&emu, "/api/v1/nodes", "application/json");
    let recorded = &emu.requests()[0];
    assert_eq!(recorded.header("Accept"), Some("application/json"));
    assert_eq!(recorded.header("connection"), Some("close"));
    assert!(recorded
        .header("host")
        .is_some_and(|h| h.starts_with("127.0.0.1:")));
    assert_eq!(recorded.header("user-agent"), None);
}

#[tokio::test]
async fn start_tls_serves_https_with_a_certificate_the_kubeconfig_trusts() {
    let emu = Emulator::start_tls(vec![node("n1")]);
    assert!(emu.url().starts_with("https://127.0.0.1:"), "{}", emu.url());
    let client = client(&emu).await;
    let nodes: Api<Node> = Api::all(client);
    let list = bounded(nodes.list(&ListParams::default())).await.unwrap();
    assert_eq!(names(list), ["n1"]);
    assert_eq!(emu.requests().len(), 1);

    // Plain HTTP to the TLS port gets no HTTP answer.
    let addr = emu.url().trim_start_matches("https://").to_string();
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(format!("GET /version HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    assert!(
        !answer.starts_with(b"HTTP/1.1"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    assert_eq!(emu.requests().len(), 1);
}

#[tokio::test]
async fn start_from_loads_yaml_documents_lists_and_json_recursively() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cluster")).unwrap();
    std::fs::write(
        dir.path().join("a.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: lab\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: lab\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("cluster/nodes.yaml"),
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n1\n    resourceVersion: '5000'\n    uid: 00000000-0000-4000-8000-000000000001\n",
    )
    .unwrap();
    let typed_list = json!({"apiVersion": "v1", "kind": "PodList", "items": [
        {"metadata": {"name": "p", "namespace": "lab"}, "spec": {"containers": []}}
    ]});
    std::fs::write(dir.path().join("cluster/pods.json"), typed_list.to_string()).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a manifest").unwrap();

    let emu = Emulator::start_from(&[dir.path()]);
    let kinds: Vec<String> = emu
        .objects()
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o["kind"].as_str().unwrap(),
                o["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(kinds, ["ConfigMap/c", "Namespace/lab", "Node/n1", "Pod/p"]);

    let nodes: Api<Node> = Api::all(client(&emu).await);
    let n1 = bounded(nodes.get("n1")).await.unwrap();
    assert_eq!(
        n1.resource_version().as_deref(),
        Some("5000"),
        "seed objects keep their resourceVersion"
    );
    assert_eq!(
        n1.uid().as_deref(),
        Some("00000000-0000-4000-8000-000000000001")
    );
}

#[tokio::test]
async fn metadata_only_lists_answer_partial_object_metadata() {
    let emu = Emulator::start(pods_seed());
    let pods: Api<Pod> = Api::namespaced(client(&emu).await, "a");

    let list = bounded(pods.list_metadata(&ListParams::default().labels("app=train")))
        .await
        .unwrap();
    assert_eq!(names(list.items), ["p1", "p2"]);
}

#[tokio::test]
async fn watch_from_a_resource_version_sends_only_later_changes() {
    let emu = Emulator::start(pods_seed());
    let pods: Api<Pod> = Api::namespaced(client(&emu).await, "a");
    let listed = bounded(pods.list(&ListParams::default())).await.unwrap();
    let rv = listed.metadata.resource_version.unwrap();

    // A change made between the LIST and the WATCH is replayed, nothing older is.
    let created: Pod = serde_json::from_value(pod("a", "late", json!({"app": "train"}))).unwrap();
    bounded(pods.create(&PostParams::default(), &created))
        .await
        .unwrap();
    let wp = WatchParams::default().labels("app=train").timeout(15);
    let mut events = bounded(pods.watch(&wp, &rv)).await.unwrap().boxed();
    let replayed = bounded(events.next()).await.unwrap().unwrap();
    assert!(
        matches!(&replayed, WatchEvent::Added(p) if p.name_any() == "late"),
        "{replayed:?}"
    );

    // Then live changes, filtered by the selector: p3 (app=web) is not reported.
    bounded(pods.delete("p3", &DeleteParams::default()))
        .await
        .unwrap();
    bounded(pods.delete("p2", &DeleteParams::default()))
        .await
        .unwrap();
    let live = bounded(events.next()).await.unwrap().unwrap();
    assert!(
        matches!(&live, WatchEvent::Deleted(p) if p.name_any() == "p2"),
        "{live:?}"
    );
}

#[test]
fn stop_closes_the_port() {
    let emu = Emulator::start(vec![]);
    let addr = emu.url().trim_start_matches("http://").to_string();
    assert!(std::net::TcpStream::connect(&addr).is_ok());

    emu.stop();
    assert!(std::net::TcpStream::connect(&addr).is_err());
}

// --- field ownership (server-side apply) --------------------------------------------------------

/// (manager, operation, fields as FieldsV1) of each managedFields entry.
fn owners(obj: &Value) -> Vec<(String, String, Value)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap().to_string(),
                        e["operation"].as_str().unwrap().to_string(),
                        e["fieldsV1"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn stored(emu: &Emulator, kind: &str, name: &str) -> Value {
    emu.objects()
        .into_iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{kind}/{name} is stored"))
}

fn edit_params(manager: &str) -> PatchParams {
    PatchParams {
        field_manager: Some(manager.into()),
        ..PatchParams::default()
    }
}

#[tokio::test]
async fn apply_records_managed_fields_and_an_update_takes_the_fields_it_changes() {
    let emu = Emulator::start(vec![namespace("lab")]);
    let client = client(&emu).await;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "lab");
    let mut desired = config_map("lab", "settings", json!({"queue": "default", "nodes": "2"}));
    desired.metadata.labels = Some([("app".to_string(), "gang".to_string())].into());
    bounded(maps.patch(
        "settings",
        &PatchParams::apply("trainlab"),
        &Patch::Apply(&desired),
    ))
    .await
    .unwrap();
    let obj = stored(&emu, "ConfigMap", "settings");
    assert_eq!(
        owners(&obj),
        [(
            "trainlab".to_string(),
            "Apply".to_string(),
            json!({"f:data": {"f:nodes": {}, "f:queue": {}}, "f:metadata": {"f:labels": {"f:app": {}}}})
        )]
    );
    let entry = &obj["metadata"]["managedFields"][0];
    assert_eq!(entry["fieldsType"], "FieldsV1");
    assert_eq!(entry["apiVersion"], "v1");
    assert!(entry["time"].as_str().unwrap().ends_with('Z'), "{entry}");

    // `kubectl edit` changes one value: that field moves to its manager; the rest stays.
    let edit = json!({"data": {"queue": "mine"}});
    bounded(maps.patch(
        "settings",
        &edit_params("kubectl-edit"),
        &Patch::Merge(&edit),
    ))
    .await
    .unwrap();
    let obj = stored(&emu, "ConfigMap", "settings");
    assert_eq!(
        owners(&obj),
        [
            (
                "trainlab".to_string(),
                "Apply".to_string(),
                json!({"f:data": {"f:nodes": {}}, "f:metadata": {"f:labels": {"f:app": {}}}})
            ),
            (
                "kubectl-edit".to_string(),
                "Update".to_string(),
                json!({"f:data": {"f:queue": {}}})
            ),
        ]
    );
    assert_eq!(
        obj["metadata"]["managedFields"][1]["apiVersion"], "v1",
        "updates record the version they wrote"
    );

    // An update that changes nothing records nothing and keeps the resourceVersion.
    let before = obj["metadata"]["resourceVersion"].clone();
    bounded(maps.patch(
        "settings",
        &edit_params("kubectl-edit"),
        &Patch::Merge(&edit),
    ))
    .await
    .unwrap();
    assert_eq!(
        stored(&emu, "ConfigMap", "settings")["metadata"]["resourceVersion"],
        before
    );
}

#[tokio::test]
async fn an_apply_that_changes_another_managers_field_is_a_409_conflict_unless_forced() {
    let emu = Emulator::start(vec![namespace("lab")]);
    let client = client(&emu).await;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "lab");
    let desired = config_map("lab", "settings", json!({"queue": "default", "nodes": "2"}));
    let apply = PatchParams::apply("trainlab");
    bounded(maps.patch("settings", &apply, &Patch::Apply(&desired)))
        .await
        .unwrap();
    let edit = json!({"data": {"queue": "mine", "nodes": "3"}});
    bounded(maps.patch(
        "settings",
        &edit_params("kubectl-edit"),
        &Patch::Merge(&edit),
    ))
    .await
    .unwrap();
    let edited = stored(&emu, "ConfigMap", "settings");

    // Two fields: the message lists them under their manager; one cause per field.
    for params in [apply.clone(), apply.clone().dry_run()] {
        let status =
            api_error(bounded(maps.patch("settings", &params, &Patch::Apply(&desired))).await);
        assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
        assert_eq!(
            status.message,
            "Apply failed with 2 conflicts: conflicts with \"kubectl-edit\" using v1:\n- .data.nodes\n- .data.queue"
        );
        let causes: Vec<(String, String, String)> = status
            .details
            .unwrap()
            .causes
            .into_iter()
            .map(|c| (c.reason, c.message, c.field))
            .collect();
        assert_eq!(
            causes,
            [
                (
                    "FieldManagerConflict".to_string(),
                    "conflict with \"kubectl-edit\" using v1".to_string(),
                    ".data.nodes".to_string()
                ),
                (
                    "FieldManagerConflict".to_string(),
                    "conflict with \"kubectl-edit\" using v1".to_string(),
                    ".data.queue".to_string()
                ),
            ]
        );
    }
    assert_eq!(
        stored(&emu, "ConfigMap", "settings"),
        edited,
        "nothing changed"
    );

    // One field: the one-line message names it.
    let one = config_map("lab", "settings", json!({"queue": "default", "nodes": "3"}));
    let status = api_error(bounded(maps.patch("settings", &apply, &Patch::Apply(&one))).await);
    assert_eq!(
        status.message,
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using v1: .data.queue"
    );

    // Applying the value the other manager set is no conflict: the field is shared.
    let agree = config_map("lab", "settings", json!({"queue": "mine", "nodes": "3"}));
    bounded(maps.patch("settings", &apply, &Patch::Apply(&agree)))
        .await
        .unwrap();
    let shared = owners(&stored(&emu, "ConfigMap", "settings"));
    assert_eq!(shared.len(), 2, "{shared:?}");
    assert_eq!(
        shared[0].2,
        json!({"f:data": {"f:nodes": {}, "f:queue": {}}})
    );

    // force=true takes the fields: the other manager loses them.
    let forced = bounded(maps.patch("settings", &apply.clone().force(), &Patch::Apply(&desired)))
        .await
        .unwrap();
    assert_eq!(forced.data.unwrap()["queue"], "default");
    assert_eq!(
        owners(&stored(&emu, "ConfigMap", "settings")),
        [(
            "trainlab".to_string(),
            "Apply".to_string(),
            json!({"f:data": {"f:nodes": {}, "f:queue": {}}})
        )],
        "kubectl-edit owned nothing any more, so its entry is gone"
    );
}

#[tokio::test]
async fn an_apply_removes_a_field_its_manager_stopped_sending_unless_someone_else_owns_it() {
    let emu = Emulator::start(vec![namespace("lab")]);
    let client = client(&emu).await;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "lab");
    let apply = PatchParams::apply("trainlab");
    let full = config_map("lab", "c", json!({"a": "1", "b": "2", "c": "3"}));
    bounded(maps.patch("c", &apply, &Patch::Apply(&full)))
        .await
        .unwrap();
    // Another applier co-owns `b` (same value: no conflict).
    let other = config_map("lab", "c", json!({"b": "2"}));
    bounded(maps.patch("c", &PatchParams::apply("kubectl"), &Patch::Apply(&other)))
        .await
        .unwrap();
    let fewer = config_map("lab", "c", json!({"a": "1"}));
    let after = bounded(maps.patch("c", &apply, &Patch::Apply(&fewer)))
        .await
        .unwrap();
    let data = after.data.unwrap();
    assert_eq!(
        data.keys().collect::<Vec<_>>(),
        ["a", "b"],
        "c removed, b kept"
    );
}

#[tokio::test]
async fn a_create_belongs_to_the_user_agent_without_a_field_manager() {
    let emu = Emulator::start(vec![namespace("lab")]);
    let client = client(&emu).await;
    let body = serde_json::to_vec(&config_map("lab", "c", json!({"a": "1"}))).unwrap();
    let request = http::Request::post("/api/v1/namespaces/lab/configmaps")
        .header("Content-Type", "application/json")
        .header(
            "User-Agent",
            "kubectl/v1.33.1 (linux/amd64) kubernetes/8adc0f0",
        )
        .body(body)
        .unwrap();
    bounded(client.request::<Value>(request)).await.unwrap();
    assert_eq!(
        owners(&stored(&emu, "ConfigMap", "c")),
        [(
            "kubectl".to_string(),
            "Update".to_string(),
            json!({"f:data": {"f:a": {}}})
        )]
    );
}

#[tokio::test]
async fn a_seeded_object_with_managed_fields_keeps_its_owners() {
    let mut map = serde_json::to_value(config_map("lab", "c", json!({"a": "1"}))).unwrap();
    map["metadata"]["managedFields"] = json!([{
        "manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1",
        "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {".": {}, "f:a": {}}},
    }]);
    let emu = Emulator::start(vec![namespace("lab"), map]);
    let client = client(&emu).await;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "lab");
    let status = api_error(
        bounded(maps.patch(
            "c",
            &PatchParams::apply("trainlab"),
            &Patch::Apply(&config_map("lab", "c", json!({"a": "2"}))),
        ))
        .await,
    );
    assert_eq!(
        status.message,
        "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using v1: .data.a"
    );
}

// --- terminating namespaces -------------------------------------------------------------------

#[tokio::test]
async fn a_namespace_terminates_for_its_grace_and_refuses_new_content_meanwhile() {
    let emu = Emulator::start(vec![
        namespace("lab"),
        serde_json::to_value(config_map("lab", "old", json!({}))).unwrap(),
    ]);
    emu.terminate_namespaces_after(Duration::from_millis(700));
    let client = client(&emu).await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let started = Instant::now();
    let answer = bounded(namespaces.delete("lab", &DeleteParams::default()))
        .await
        .unwrap()
        .left()
        .unwrap();
    assert_eq!(answer.status.unwrap().phase.as_deref(), Some("Terminating"));
    assert!(answer.metadata.deletion_timestamp.is_some());

    // Still there, terminating, with its content; a second delete changes nothing.
    let now = bounded(namespaces.get("lab")).await.unwrap();
    assert_eq!(now.status.unwrap().phase.as_deref(), Some("Terminating"));
    bounded(namespaces.delete("lab", &DeleteParams::default()))
        .await
        .unwrap();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "lab");
    assert_eq!(
        names(bounded(maps.list(&ListParams::default())).await.unwrap()),
        ["old"]
    );

    // New content is refused, by POST and by an apply that would create, dry run or not.
    let status = api_error(
        bounded(maps.create(&PostParams::default(), &config_map("lab", "new", json!({})))).await,
    );
    assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        status.message,
        "configmaps \"new\" is forbidden: unable to create new content in namespace lab because it is being terminated"
    );
    assert_eq!(
        status.details.unwrap().causes[0].reason,
        "NamespaceTerminating"
    );
    for params in [
        PatchParams::apply("trainlab"),
        PatchParams::apply("trainlab").dry_run(),
    ] {
        let status = api_error(
            bounded(maps.patch(
                "new",
                &params,
                &Patch::Apply(&config_map("lab", "new", json!({}))),
            ))
            .await,
        );
        assert_eq!(status.code, 403);
    }

    // Once the grace is over, the namespace and its content are gone.
    while started.elapsed() < Duration::from_millis(800) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let status = api_error(bounded(namespaces.get("lab")).await);
    assert_eq!(status.code, 404);
    assert!(emu
        .objects()
        .iter()
        .all(|o| o["metadata"]["namespace"] != "lab"));
}
