//! The holder's boundaries: its socket, other users, other versions, and
//! the death of whoever started it.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::time::Duration;

use common::{BIN, Held, Stream, alive, eventually, run_dir, session_of, sh};
use harness_holder::protocol::{self, Frame, FrameReader, ServerFrame};
use harness_holder::{HolderClient, HolderError, InputMode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const SEC: Duration = Duration::from_secs(1);

#[tokio::test]
async fn the_agent_survives_the_death_of_its_starter() {
    let (_tmp, dir) = run_dir();
    let cfg = sh(&dir, "stty -echo; echo ready; cat");
    let mut args = vec![BIN.to_owned()];
    args.extend(
        cfg.to_args()
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned()),
    );
    // The helper (a stand-in for the server) starts the holder, then stays;
    // it is in its own process group, which is then SIGKILLed whole.
    let mut helper = std::process::Command::new("sh")
        .arg("-c")
        .arg("\"$@\"; sleep 1000")
        .arg("helper")
        .args(&args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .process_group(0)
        .spawn()
        .unwrap();
    let socket = cfg.socket_path();
    eventually(10 * SEC, "the socket", || socket.exists()).await;
    let helper_pid = libc::pid_t::try_from(helper.id()).unwrap();
    // SAFETY: killpg with a valid group id.
    assert_eq!(unsafe { libc::killpg(helper_pid, libc::SIGKILL) }, 0);
    helper.wait().unwrap();

    let (client, mut events) = HolderClient::connect(&socket, "test").await.unwrap();
    let held = Held {
        socket: socket.clone(),
        holder_pid: client.info().holder_pid,
        child_pid: client.info().child_pid,
    };
    assert!(alive(held.holder_pid) && alive(held.child_pid));
    let own_session = session_of(std::process::id());
    let holder_session = session_of(held.holder_pid);
    assert_ne!(holder_session, own_session);
    assert_eq!(
        holder_session,
        Some(held.holder_pid),
        "the holder leads its own session"
    );
    assert_eq!(session_of(held.child_pid), Some(held.child_pid));

    client.attach(Some(0)).await.unwrap();
    let mut stream = Stream::default();
    stream
        .until(&mut events, 10 * SEC, |s| s.text().contains("ready"))
        .await;
    client
        .input("", InputMode::Raw, b"still-here\r")
        .await
        .unwrap();
    stream
        .until(&mut events, 10 * SEC, |s| s.text().contains("still-here"))
        .await;
    assert_eq!(stream.text(), "ready\r\nstill-here\r\n");
}

#[tokio::test]
async fn another_user_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        // Without root the test cannot run a holder as another user; the
        // uid rule itself is unit-tested (`peer_allowed`).
        eprintln!("skipped: needs root to run the holder as another user");
        return;
    }
    const NOBODY: u32 = 65534;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = tmp.path().join("run");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
    let mut cfg = sh(&dir, "sleep 30");
    cfg.orphan_timeout = Duration::from_secs(3);
    cfg.kill_grace = Duration::from_millis(200);
    let status = std::process::Command::new(BIN)
        .args(cfg.to_args())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .uid(NOBODY)
        .gid(NOBODY)
        .status()
        .unwrap();
    assert!(status.success());
    let meta = std::fs::metadata(cfg.socket_path()).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(meta.uid(), NOBODY);
    // Root passes the file permissions; the peer check still refuses it.
    let err = HolderClient::connect(&cfg.socket_path(), "test")
        .await
        .unwrap_err();
    match err {
        HolderError::Refused(reason) => assert!(reason.contains("uid 0"), "{reason}"),
        other => panic!("expected a refusal, got {other}"),
    }
}

#[tokio::test]
async fn an_incompatible_holder_gets_a_clear_error_and_a_refusal() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("holder.sock");
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    let fake = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        s.write_all(&protocol::preamble(protocol::VERSION + 1))
            .await
            .unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).await.unwrap();
        got
    });
    let err = HolderClient::connect(&path, "test").await.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, HolderError::Incompatible { .. }), "{text}");
    assert!(
        text.contains(&format!("version {}", protocol::VERSION + 1)),
        "{text}"
    );
    assert!(
        text.contains("leaves this holder and its agent running"),
        "{text}"
    );
    // The holder was told, in the frame format every version keeps.
    let got = fake.await.unwrap();
    let mut reader = FrameReader::new();
    reader.push(&got);
    assert_eq!(reader.preamble().unwrap(), Some(protocol::VERSION));
    match reader.next_frame::<ServerFrame>().unwrap() {
        Some(ServerFrame::Refuse { reason }) => {
            assert!(reason.contains("incompatible"), "{reason}")
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn something_else_on_the_socket_is_not_a_holder() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("holder.sock");
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let _ = s.write_all(b"SSH-2.0-OpenSSH\r\n").await;
        tokio::time::sleep(Duration::from_secs(1)).await;
    });
    let err = HolderClient::connect(&path, "test").await.unwrap_err();
    assert!(matches!(err, HolderError::NotAHolder), "{err}");
}

#[tokio::test]
async fn a_server_speaking_garbage_is_dropped_and_the_holder_lives_on() {
    let (_tmp, dir) = run_dir();
    let held = common::start(&sh(&dir, "sleep 30")).await;
    let mut raw = tokio::net::UnixStream::connect(&held.socket).await.unwrap();
    let mut garbage = protocol::preamble(protocol::VERSION).to_vec();
    // A frame announcing 4 GiB.
    garbage.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x81]);
    raw.write_all(&garbage).await.unwrap();
    let mut sink = Vec::new();
    let closed = tokio::time::timeout(5 * SEC, raw.read_to_end(&mut sink)).await;
    assert!(closed.is_ok(), "the holder keeps a connection that lied");
    // Still serving.
    let (client, _events) = held.connect().await;
    assert!(client.ping().await.is_ok());
    let mut bytes = Vec::new();
    ServerFrame::Ping { nonce: 1 }.encode(&mut bytes);
    assert!(alive(held.child_pid));
}

/// Not a test on its own: the connecting side of
/// `a_process_in_other_namespaces_is_refused`, run in a child process when
/// `HOLDER_TEST_CONNECT` names a socket.
#[test]
fn connect_helper() {
    let Ok(path) = std::env::var("HOLDER_TEST_CONNECT") else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    match rt.block_on(HolderClient::connect(path.as_ref(), "helper")) {
        Ok(_) => println!("HELPER:connected"),
        Err(e) => println!("HELPER:{e}"),
    }
}

/// What `connect_helper` reported when run under `wrapper` (e.g.
/// `unshare --pid --fork`), or `None` when the wrapper cannot run here.
fn connect_from(wrapper: &[&str], socket: &std::path::Path) -> Option<String> {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = std::process::Command::new(wrapper.first().copied().unwrap_or("env"));
    cmd.args(wrapper.iter().skip(1))
        .arg(exe)
        .args([
            "--exact",
            "connect_helper",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("HOLDER_TEST_CONNECT", socket);
    let out = cmd.output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .find_map(|l| l.split_once("HELPER:"))
        .map(|(_, result)| result.to_owned())
}

#[tokio::test]
async fn a_process_in_other_namespaces_is_refused() {
    let (_tmp, dir) = run_dir();
    let held = common::start(&sh(&dir, "sleep 30")).await;
    // The same program, same uid, same namespaces: allowed.
    let plain = connect_from(&[], &held.socket).expect("helper ran");
    assert_eq!(plain, "connected");
    // As an agent runs: same uid, its own PID (and user) namespace.
    for wrapper in [
        &["unshare", "--pid", "--fork"][..],
        &["unshare", "--user", "--map-root-user", "--pid", "--fork"][..],
        &["unshare", "--user", "--map-root-user"][..],
    ] {
        match connect_from(wrapper, &held.socket) {
            Some(result) => assert!(
                result.contains("refused") && result.contains("namespace"),
                "{wrapper:?}: {result}"
            ),
            None => eprintln!("skipped {wrapper:?}: cannot create namespaces here"),
        }
    }
    assert!(alive(held.child_pid));
}
