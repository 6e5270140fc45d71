//! Talking to a cluster: connecting, retries, discovery, reading (gather), applying, deleting.

mod apply;
mod connect;
mod discovery;
mod gather;
mod retry;

pub use apply::{
    apply_all, delete, label_and_place, labelled, prepare, Change, Prepared, FIELD_MANAGER,
    LAB_LABEL,
};
pub use connect::{connect, Conn, ConnectOpts};
pub use discovery::Discovery;
pub use gather::{gather, plan, probe};
pub use retry::{api_error, is_timeout, is_transient, with_retry};
