//! The TCP (or TLS) listener whose connections a handler can drop without answering.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

/// Per-connection switch a handler flips to drop the connection without answering (`Down`).
#[derive(Clone, Debug, Default)]
pub(super) struct Conn {
    pub(super) dead: Arc<AtomicBool>,
}

impl Connected<IncomingStream<'_, KillableListener>> for Conn {
    fn connect_info(stream: IncomingStream<'_, KillableListener>) -> Self {
        stream.remote_addr().clone()
    }
}

/// A byte stream a connection runs on: plain TCP or TLS over it.
trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// A TCP listener whose connections can be killed from a handler: axum has no API to drop a
/// connection, so the stream fails every write once its switch is flipped and hyper closes it.
/// With TLS, handshakes run in their own tasks so a slow client never holds up the others.
pub(super) struct KillableListener {
    tcp: tokio::net::TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    ready: mpsc::UnboundedSender<Box<dyn Io>>,
    handshaken: mpsc::UnboundedReceiver<Box<dyn Io>>,
}

impl KillableListener {
    /// Listens on `tcp` (inside a tokio runtime), over TLS when `tls` is given.
    pub(super) fn new(
        tcp: tokio::net::TcpListener,
        tls: Option<tokio_rustls::TlsAcceptor>,
    ) -> KillableListener {
        let (ready, handshaken) = mpsc::unbounded_channel();
        KillableListener {
            tcp,
            tls,
            ready,
            handshaken,
        }
    }

    fn wrap(io: Box<dyn Io>) -> (KillableStream, Conn) {
        let conn = Conn::default();
        let stream = KillableStream {
            inner: io,
            dead: conn.dead.clone(),
        };
        (stream, conn)
    }
}

impl axum::serve::Listener for KillableListener {
    type Io = KillableStream;
    type Addr = Conn;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let accepted = tokio::select! {
                Some(io) = self.handshaken.recv() => return KillableListener::wrap(io),
                accepted = self.tcp.accept() => accepted,
            };
            match accepted {
                Ok((stream, _)) => {
                    // Go's net package enables TCP_NODELAY on every TCP connection by default
                    // (net.TCPConn.SetNoDelay docs), so kube-apiserver answers without Nagle.
                    let _ = stream.set_nodelay(true);
                    let Some(acceptor) = self.tls.clone() else {
                        return KillableListener::wrap(Box::new(stream));
                    };
                    let ready = self.ready.clone();
                    tokio::spawn(async move {
                        if let Ok(tls) = acceptor.accept(stream).await {
                            let _ = ready.send(Box::new(tls));
                        }
                    });
                }
                // Out of file descriptors and the like: back off instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(Conn::default())
    }
}

pub(super) struct KillableStream {
    inner: Box<dyn Io>,
    dead: Arc<AtomicBool>,
}

impl KillableStream {
    fn killed(&self) -> Option<io::Error> {
        self.dead
            .load(Ordering::SeqCst)
            .then(|| io::Error::new(io::ErrorKind::ConnectionReset, "emulated outage"))
    }
}

impl AsyncRead for KillableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(err) = self.killed() {
            return Poll::Ready(Err(err));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for KillableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if let Some(err) = self.killed() {
            return Poll::Ready(Err(err));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Some(err) = self.killed() {
            return Poll::Ready(Err(err));
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(err) = self.killed() {
            return Poll::Ready(Err(err));
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
