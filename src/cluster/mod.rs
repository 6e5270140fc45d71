//! Talking to a cluster: connecting, retries, discovery (cached on disk per server), reading
//! (gather), applying (and the server-side dry run of `check --files`), deleting.

mod apply;
pub mod bounds;
pub mod cache;
mod connect;
mod discovery;
pub mod dry_run;
pub mod eks_token;
mod exec_plugin;
mod gather;
mod http;
mod kubeconfig_error;
mod retry;

pub use apply::{
    apply_all, apply_rename, delete, label_and_place, labelled, learner_renames, prepare, Change,
    Prepared, Rename, FIELD_MANAGER, LAB_LABEL,
};
pub use connect::{connect, Conn, ConnectOpts};
pub use discovery::{Discovery, AGGREGATED_ACCEPT};
pub use eks_token::EksTokenMode;
pub use gather::{
    compact, gather, gather_as, gather_each, gather_more, plan, probe, too_many_objects, Compact,
    PAGE_SIZE,
};
pub use http::{download, LogLayer, LOG_TARGET, USER_AGENT};
pub use retry::{
    api_error, credentials_error, is_credentials_error, is_timeout, is_transient, with_retry,
};
