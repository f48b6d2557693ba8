use proptest::prelude::*;

use super::*;

fn roundtrip<F: Frame + PartialEq + std::fmt::Debug>(frame: &F) {
    let mut bytes = Vec::new();
    frame.encode(&mut bytes);
    let mut r = FrameReader::new();
    // Byte by byte: a frame split anywhere is reassembled.
    for (i, b) in bytes.iter().enumerate() {
        r.push(std::slice::from_ref(b));
        let got = r.next_frame::<F>().unwrap();
        if i + 1 < bytes.len() {
            assert!(got.is_none(), "frame decoded early at byte {i}");
        } else {
            assert_eq!(got.as_ref(), Some(frame));
        }
    }
}

#[test]
fn every_frame_roundtrips() {
    let holder = [
        HolderFrame::Hello {
            build: "0.1.0 abc".into(),
            holder_pid: 7,
            child_pid: 8,
            rows: 24,
            cols: 80,
        },
        HolderFrame::Replaying { seq: 42 },
        HolderFrame::Output {
            seq: u64::MAX - 3,
            data: b"\x1b[1mhi\x00".to_vec(),
        },
        HolderFrame::Snapshot {
            kind: SnapshotKind::Requested(9),
            seq: 5,
            rows: 2,
            cols: 3,
            data: b"\x1bc".to_vec(),
        },
        HolderFrame::Snapshot {
            kind: SnapshotKind::Lagged,
            seq: 5,
            rows: 2,
            cols: 3,
            data: Vec::new(),
        },
        HolderFrame::InputResult {
            id: 3,
            outcome: InputOutcome::Duplicate,
        },
        HolderFrame::Exit {
            seq: 10,
            status: ExitInfo {
                code: None,
                signal: Some(9),
            },
        },
        HolderFrame::Pong { nonce: 1 },
        HolderFrame::Refuse {
            reason: "another user".into(),
        },
    ];
    for f in &holder {
        roundtrip(f);
    }
    let server = [
        ServerFrame::Hello { build: "b".into() },
        ServerFrame::Refuse { reason: "r".into() },
        ServerFrame::Attach { have: None },
        ServerFrame::Attach { have: Some(77) },
        ServerFrame::Input {
            id: 1,
            key: "delivery-1".into(),
            mode: InputMode::Reply {
                submit: true,
                paste: harness_pty::PasteMode::Always,
                settle_ms: 80,
            },
            data: "héllo\n".as_bytes().to_vec(),
        },
        ServerFrame::Input {
            id: 2,
            key: String::new(),
            mode: InputMode::Raw,
            data: b"\x03".to_vec(),
        },
        ServerFrame::Resize {
            rows: 50,
            cols: 200,
        },
        ServerFrame::SnapshotRequest {
            id: 4,
            history: 100,
        },
        ServerFrame::ExitAck,
        ServerFrame::Ping { nonce: 99 },
        ServerFrame::Signal { signal: 15 },
    ];
    for f in &server {
        roundtrip(f);
    }
}

#[test]
fn preamble_is_checked() {
    assert_eq!(parse_preamble(&preamble(VERSION)).unwrap(), VERSION);
    assert!(matches!(
        parse_preamble(b"HTTP/1"),
        Err(HolderError::NotAHolder)
    ));
}

#[test]
fn oversized_frame_is_refused_before_buffering() {
    let mut r = FrameReader::new();
    let len = u32::try_from(MAX_FRAME + 1).unwrap();
    r.push(&len.to_be_bytes());
    assert!(matches!(
        r.next_frame::<ServerFrame>(),
        Err(HolderError::FrameTooLarge { .. })
    ));
}

#[test]
fn trailing_bytes_and_truncation_are_errors() {
    // A ping with one byte too many.
    let mut r = FrameReader::new();
    r.push(&[0, 0, 0, 10, 0x88, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
    assert!(r.next_frame::<ServerFrame>().is_err());
    // A ping with one byte too few.
    let mut r = FrameReader::new();
    r.push(&[0, 0, 0, 8, 0x88, 0, 0, 0, 0, 0, 0, 0]);
    assert!(r.next_frame::<ServerFrame>().is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Random bytes: decoding returns frames or errors, never panics, and
    /// never buffers a frame above the bound.
    #[test]
    fn random_bytes_never_panic(chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..64), 0..16)) {
        let mut h = FrameReader::new();
        let mut s = FrameReader::new();
        let _ = h.preamble();
        for chunk in &chunks {
            h.push(chunk);
            s.push(chunk);
            while let Ok(Some(_)) = h.next_frame::<HolderFrame>() {}
            while let Ok(Some(_)) = s.next_frame::<ServerFrame>() {}
        }
    }

    /// Random payloads behind every type byte.
    #[test]
    fn random_payloads_never_panic(ty in any::<u8>(), payload in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = HolderFrame::decode(ty, &payload);
        let _ = ServerFrame::decode(ty, &payload);
    }
}
