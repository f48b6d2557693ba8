use std::{os::unix::fs::MetadataExt, time::SystemTime};

use super::*;

const HOLDER_BYTES: &[u8] = b"#!/bin/sh\necho holder\n";

fn holder_image() -> HolderImage {
    // The SHA-256 of HOLDER_BYTES is not checked by `install` (the build
    // computes it); any hex names the file.
    HolderImage {
        bytes: HOLDER_BYTES,
        sha256: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    }
}

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// (inode, ctime): what changes when a file is written or replaced.
fn stamp(p: &Path) -> (u64, i64, i64) {
    let m = fs::symlink_metadata(p).unwrap();
    (m.ino(), m.ctime(), m.ctime_nsec())
}

fn source_file(dir: &Path, body: &[u8]) -> PathBuf {
    let exe = dir.join("harness-src");
    fs::write(&exe, body).unwrap();
    exe
}

#[test]
fn the_copy_is_private_named_by_content_and_replaces_stale_ones() {
    let data = tempfile::tempdir().unwrap();
    let exe = source_file(data.path(), b"#!/bin/sh\necho one\n");
    let first = install(data.path(), &Source::File(exe.clone()), None).unwrap();
    assert!(!first.reused);
    assert_eq!(fs::read(&first.harness).unwrap(), b"#!/bin/sh\necho one\n");
    assert_eq!(mode(&first.harness), 0o500);
    assert_eq!(mode(&data.path().join(DIR)), 0o700);
    // The same content, the same name.
    let again = install(data.path(), &Source::File(exe.clone()), None).unwrap();
    assert_eq!(again.harness, first.harness);
    // Replacing the source afterwards changes nothing in the copy…
    fs::write(&exe, b"#!/bin/sh\nexit 0\n").unwrap();
    assert_eq!(fs::read(&first.harness).unwrap(), b"#!/bin/sh\necho one\n");
    // …until the next start, which copies the new build and removes the old.
    let second = install(data.path(), &Source::File(exe), None).unwrap();
    assert!(!second.reused, "a changed source is copied again");
    assert_ne!(second.harness, first.harness);
    assert!(!first.harness.exists(), "the stale copy is removed");
    let left: Vec<String> = fs::read_dir(data.path().join(DIR))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left.len(),
        2,
        "the copy and its record, no temporary file: {left:?}"
    );
}

#[test]
fn the_running_image_is_read_not_the_path() {
    let data = tempfile::tempdir().unwrap();
    let copy = install(data.path(), &Source::Running, None).unwrap();
    let me = fs::read("/proc/self/exe").unwrap();
    assert_eq!(fs::read(&copy.harness).unwrap(), me);
    // The running image is the source of the record, too: reused.
    let again = install(data.path(), &Source::Running, None).unwrap();
    assert!(again.reused);
    assert_eq!(again.harness, copy.harness);
}

#[test]
fn a_second_start_reuses_the_copy_and_the_holder_without_writing_them() {
    let data = tempfile::tempdir().unwrap();
    let exe = source_file(data.path(), b"#!/bin/sh\necho one\n");
    let first = install(
        data.path(),
        &Source::File(exe.clone()),
        Some(holder_image()),
    )
    .unwrap();
    let holder = first.holder.clone().unwrap();
    assert_eq!(fs::read(&holder).unwrap(), HOLDER_BYTES);
    assert_eq!(mode(&holder), 0o500);
    assert_eq!(
        holder.file_name().unwrap().to_string_lossy(),
        "harness-hold-0123456789abcdef"
    );
    let record = data.path().join(DIR).join(record::FILE);
    assert_eq!(mode(&record), 0o600);
    let before = [stamp(&first.harness), stamp(&holder), stamp(&record)];
    let second = install(data.path(), &Source::File(exe), Some(holder_image())).unwrap();
    assert!(second.reused);
    assert_eq!(
        second,
        Installed {
            reused: true,
            ..first.clone()
        }
    );
    let after = [stamp(&second.harness), stamp(&holder), stamp(&record)];
    assert_eq!(before, after, "nothing was rewritten");
}

#[test]
fn a_copy_replaced_by_other_bytes_of_the_same_size_and_mtime_is_copied_again() {
    let data = tempfile::tempdir().unwrap();
    let exe = source_file(data.path(), b"#!/bin/sh\necho one\n");
    let first = install(data.path(), &Source::File(exe.clone()), None).unwrap();
    let modified = fs::metadata(&first.harness).unwrap().modified().unwrap();
    // The attack: another file of the same size, same mode and mtime,
    // moved over the copy.
    let evil = data.path().join(DIR).join("evil");
    fs::write(&evil, b"#!/bin/sh\nexit 0 #\n").unwrap();
    assert_eq!(
        fs::metadata(&evil).unwrap().len(),
        fs::metadata(&first.harness).unwrap().len()
    );
    let f = File::options().write(true).open(&evil).unwrap();
    f.set_modified(modified).unwrap();
    drop(f);
    fs::set_permissions(&evil, fs::Permissions::from_mode(0o500)).unwrap();
    fs::rename(&evil, &first.harness).unwrap();
    let second = install(data.path(), &Source::File(exe), None).unwrap();
    assert!(!second.reused, "a replaced copy is not trusted");
    assert_eq!(fs::read(&second.harness).unwrap(), b"#!/bin/sh\necho one\n");
}

#[test]
fn a_copy_rewritten_in_place_is_copied_again() {
    let data = tempfile::tempdir().unwrap();
    let exe = source_file(data.path(), b"#!/bin/sh\necho one\n");
    let first = install(data.path(), &Source::File(exe.clone()), None).unwrap();
    let modified = fs::metadata(&first.harness).unwrap().modified().unwrap();
    // Same inode, same size, same mtime, mode set back: only ctime tells.
    fs::set_permissions(&first.harness, fs::Permissions::from_mode(0o700)).unwrap();
    let mut f = File::options().write(true).open(&first.harness).unwrap();
    f.write_all(b"#!/bin/sh\nexit 0 #\n").unwrap();
    f.set_modified(modified).unwrap();
    drop(f);
    fs::set_permissions(&first.harness, fs::Permissions::from_mode(0o500)).unwrap();
    let second = install(data.path(), &Source::File(exe), None).unwrap();
    assert!(!second.reused);
    assert_eq!(fs::read(&second.harness).unwrap(), b"#!/bin/sh\necho one\n");
}

#[test]
fn a_copy_with_a_second_name_or_another_mode_is_copied_again() {
    let data = tempfile::tempdir().unwrap();
    let exe = source_file(data.path(), b"#!/bin/sh\necho one\n");
    let first = install(data.path(), &Source::File(exe.clone()), None).unwrap();
    // A hard link elsewhere: whoever holds it could chmod and write later.
    let link = data.path().join("link");
    fs::hard_link(&first.harness, &link).unwrap();
    let second = install(data.path(), &Source::File(exe.clone()), None).unwrap();
    assert!(!second.reused, "a copy with two names is not trusted");
    assert_ne!(stamp(&second.harness).0, stamp(&link).0, "a new file");
    // Writable again (mode 0700), even with the ctime recorded afterwards:
    // the mode alone refuses it.
    fs::set_permissions(&second.harness, fs::Permissions::from_mode(0o700)).unwrap();
    let third = install(data.path(), &Source::File(exe), None).unwrap();
    assert!(!third.reused);
    assert_eq!(mode(&third.harness), 0o500);
}

#[test]
fn a_directory_open_to_others_or_a_forged_record_is_not_trusted() {
    let data = tempfile::tempdir().unwrap();
    let exe = source_file(data.path(), b"#!/bin/sh\necho one\n");
    let first = install(data.path(), &Source::File(exe.clone()), None).unwrap();
    let dir = data.path().join(DIR);
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
    let second = install(data.path(), &Source::File(exe.clone()), None).unwrap();
    assert!(!second.reused, "others could write here: copied again");
    assert_eq!(mode(&dir), 0o700);
    // A record naming a file outside the directory (or not one of ours)
    // is not followed, even when that file's identity matches.
    let outside = data.path().join("outside");
    fs::write(&outside, b"#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(&outside, fs::Permissions::from_mode(0o500)).unwrap();
    let mut forged = Record::read(&dir).unwrap();
    forged.copy = Made::stat(&dir, "../outside").unwrap();
    forged.write(&dir).unwrap();
    let third = install(data.path(), &Source::File(exe), None).unwrap();
    assert!(!third.reused);
    assert_eq!(third.harness, first.harness);
}

#[test]
fn a_changed_holder_is_written_again_and_another_builds_is_removed() {
    let data = tempfile::tempdir().unwrap();
    let exe = source_file(data.path(), b"#!/bin/sh\necho one\n");
    let first = install(
        data.path(),
        &Source::File(exe.clone()),
        Some(holder_image()),
    )
    .unwrap();
    let holder = first.holder.unwrap();
    // Replaced by another file: written again from the build's bytes; the
    // copy itself is still reused.
    fs::remove_file(&holder).unwrap();
    fs::write(&holder, b"#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(&holder, fs::Permissions::from_mode(0o500)).unwrap();
    let second = install(
        data.path(),
        &Source::File(exe.clone()),
        Some(holder_image()),
    )
    .unwrap();
    assert!(second.reused);
    assert_eq!(second.holder.as_deref(), Some(holder.as_path()));
    assert_eq!(fs::read(&holder).unwrap(), HOLDER_BYTES);
    // Another build's holder replaces this one.
    let other = HolderImage {
        bytes: b"#!/bin/sh\necho other\n",
        sha256: "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
    };
    let third = install(data.path(), &Source::File(exe), Some(other)).unwrap();
    let new = third.holder.unwrap();
    assert_ne!(new, holder);
    assert!(!holder.exists(), "the old build's holder is removed");
    assert_eq!(fs::read(&new).unwrap(), other.bytes);
}

#[test]
fn a_source_touched_since_is_copied_again() {
    // The same bytes, another mtime (a re-link, a new install): not the
    // file the record names, so copied and hashed again.
    let data = tempfile::tempdir().unwrap();
    let exe = source_file(data.path(), b"#!/bin/sh\necho one\n");
    install(data.path(), &Source::File(exe.clone()), None).unwrap();
    let f = File::options().write(true).open(&exe).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH).unwrap();
    drop(f);
    let again = install(data.path(), &Source::File(exe), None).unwrap();
    assert!(!again.reused);
}
