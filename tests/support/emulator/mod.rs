//! A local Kubernetes API server emulator for tests that cannot run a real control plane.
//!
//! It speaks plain HTTP on 127.0.0.1 (random port) and answers the way kube-apiserver v1.33 does
//! for the requests trainlab makes: version, discovery (aggregated, `apidiscovery.k8s.io/v2` and
//! `v2beta1`, when the Accept header asks for it, as servers since 1.27 do by default; the legacy documents
//! otherwise, or always after [`Emulator::legacy_discovery_only`]), list/get/watch with label and field
//! selectors (watches resume from a resourceVersion, send BOOKMARKs on demand to clients that allow
//! them, and can be dropped or expired with `410 Gone` by the test), create, replace, delete (with namespace and CRD cascades), server-side apply, JSON
//! patch and merge patch, `dryRun=All`, and real-shaped `Status` errors. Every request is recorded
//! so tests can prove grading is read-only and count requests, with when it arrived and when it
//! was answered (a request timeline); faults (errors, latency, dropped connections, a gate that
//! holds requests until enough are in flight at once) can be injected per path prefix.
//!
//! The server runs on its own thread with its own tokio runtime, so a test can run the real
//! `trainlab` binary as a child process (blocking) while the emulator keeps serving.
//!
//! Choices where a real server has more behaviour than an emulator needs:
//! - objects are deleted at once (no finalizers, no graceful pod termination), but the DELETE
//!   answer has the real shape (the object for pods/namespaces/services/…, else a `Status`);
//!   [`Emulator::terminate_namespaces_after`] makes namespaces terminate for a while first, with
//!   the `Terminating` phase and the refusal of new content a real namespace has meanwhile;
//! - server-side apply merges the applied fields over the stored object (objects merge key by
//!   key, lists and scalars are replaced, `null` removes) and tracks field ownership in
//!   `metadata.managedFields`, with real-shaped 409 conflicts and `force` (a simplified model,
//!   see `ownership.rs`: lists are atomic, seeded objects have no owners);
//! - list items of built-in kinds carry no `apiVersion`/`kind` (as kube-apiserver encodes typed
//!   lists); items of custom resources keep them (as unstructured lists do);
//! - field selectors compare any dotted path (`metadata.name`, `spec.nodeName`, `status.phase`)
//!   instead of rejecting the ones a kind does not index.
//! - a custom resource whose CustomResourceDefinition is stored is checked against its
//!   `openAPIV3Schema` for undeclared fields and enums only, with the real server's words (see
//!   `schema.rs`); types, patterns, `required` and CEL rules are not
//!   enforced, and CRDs made with [`Emulator::serve_crd`] have no schema at all.
//!
//! One file per job: `control` (the handle a test holds), `server` and `listener` (HTTP and
//! its connections), `request` (a request as handlers read it), `recorded` (what is recorded),
//! `reply` (what a handler answers), `faults`, `routing`, `resources` and `discovery`, `store`
//! (objects and resourceVersions), `meta` (an object's metadata), `reads` (get, LIST paging),
//! `filter` (what a list or watch selects, with `selectors`), `watch`, `writes`, `patch`,
//! `ownership` (server-side apply's field managers), `schema` (CRD validation), `status`
//! (errors), `seed` (manifest files), `ids`.

#![allow(dead_code)]

mod control;
mod discovery;
mod fault_rule;
mod faults;
mod filter;
mod ids;
mod listener;
mod meta;
mod ownership;
mod patch;
mod reads;
mod recorded;
mod reply;
mod request;
mod resources;
mod routing;
mod schema;
mod seed;
mod selectors;
mod server;
mod status;
mod store;
mod watch;
mod writes;

pub use control::Emulator;
// A bench that includes this module (`#[path]`) may use only part of its API.
#[allow(unused_imports)]
pub use fault_rule::Fault;
#[allow(unused_imports)]
pub use recorded::Recorded;
