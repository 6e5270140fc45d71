//! moto, the AWS API emulator (PyPI `moto[server]`), on a free 127.0.0.1 port for the EKS and
//! EC2 tests. `.ci/run` installs it; on a machine without it a test says so and passes only
//! outside CI.

use std::net::TcpListener;
use std::process::{Child, Command as Process, Stdio};
use std::time::Duration;

/// A moto server, stopped when dropped.
pub struct Moto {
    child: Child,
    pub url: String,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// moto on a free loopback port whose new EKS clusters get `endpoint` (None: moto's own random
/// `https://….eks.amazonaws.com/`); None when moto is not installed (allowed outside CI).
pub fn moto(endpoint: Option<&str>) -> Option<Moto> {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let installed = Process::new(&python)
        .args(["-c", "import moto.server"])
        .status()
        .is_ok_and(|s| s.success());
    if !installed {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must provide moto (pip install 'moto[server]')"
        );
        eprintln!("skipping: moto is not installed (pip install 'moto[server]')");
        return None;
    }
    // moto.eks.models formats ENDPOINT_TEMPLATE when a cluster is created (moto 5).
    let script = "import sys\n\
import moto.eks.models as m\n\
if sys.argv[1]:\n    m.ENDPOINT_TEMPLATE = sys.argv[1]\n\
from moto.server import main\n\
main(['-H', '127.0.0.1', '-p', sys.argv[2]])\n";
    let mut child = Process::new(&python)
        .args(["-c", script, endpoint.unwrap_or(""), &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("moto stopped ({status}) before listening on 127.0.0.1:{port}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Some(Moto {
        child,
        url: format!("http://127.0.0.1:{port}"),
    })
}
