//! Read, Edit and Write through the whole pipeline: encodings and line endings kept, stale
//! files refused with Claude Code's text, writes atomic.

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use tool_core::Stage;
use toolgate_tests::{Sandbox, call};

fn utf16le_bom(s: &str) -> Vec<u8> {
    let mut v = vec![0xFF, 0xFE];
    for u in s.encode_utf16() {
        v.extend_from_slice(&u.to_le_bytes());
    }
    v
}

#[tokio::test]
async fn edit_keeps_crlf_line_endings() {
    let sb = Sandbox::new();
    sb.write("win.txt", "one\r\ntwo\r\nthree\r\n");
    let mut s = sb.session(&["Edit"]);
    assert_eq!(
        call(&mut s, "Read", json!({"file_path": sb.p("win.txt")}))
            .await
            .content
            .to_text(),
        "1\tone\n2\ttwo\n3\tthree\n4\t"
    );
    let o = call(&mut s, "Edit", json!({"file_path": sb.p("win.txt"), "old_string": "one\ntwo", "new_string": "uno\ndos\ntres"})).await;
    assert!(!o.is_error, "{:?}", o.content);
    assert_eq!(sb.read("win.txt"), b"uno\r\ndos\r\ntres\r\nthree\r\n");
}

#[tokio::test]
async fn edit_keeps_utf16le_with_bom() {
    let sb = Sandbox::new();
    sb.write(
        "u16.txt",
        utf16le_bom("h\u{e9}llo w\u{f6}rld\r\nline two\r\n"),
    );
    let mut s = sb.session(&["Edit"]);
    assert_eq!(
        call(&mut s, "Read", json!({"file_path": sb.p("u16.txt")}))
            .await
            .content
            .to_text(),
        "1\th\u{e9}llo w\u{f6}rld\n2\tline two\n3\t"
    );
    let o = call(&mut s, "Edit", json!({"file_path": sb.p("u16.txt"), "old_string": "w\u{f6}rld", "new_string": "th\u{e9}re"})).await;
    assert!(!o.is_error, "{:?}", o.content);
    assert_eq!(
        sb.read("u16.txt"),
        utf16le_bom("h\u{e9}llo th\u{e9}re\r\nline two\r\n")
    );
}

#[tokio::test]
async fn write_keeps_an_existing_files_encoding_and_mode() {
    let sb = Sandbox::new();
    sb.write("u16.txt", utf16le_bom("old\n"));
    std::fs::set_permissions(sb.path("u16.txt"), std::fs::Permissions::from_mode(0o640)).unwrap();
    let mut s = sb.session(&["Write"]);
    call(&mut s, "Read", json!({"file_path": sb.p("u16.txt")})).await;
    let o = call(
        &mut s,
        "Write",
        json!({"file_path": sb.p("u16.txt"), "content": "n\u{e9}w\n"}),
    )
    .await;
    assert_eq!(
        o.content.to_text(),
        format!(
            "The file {} has been updated successfully. (file state is current in your context — no need to Read it back)",
            sb.p("u16.txt")
        )
    );
    assert_eq!(sb.read("u16.txt"), utf16le_bom("n\u{e9}w\n"));
    assert_eq!(
        std::fs::metadata(sb.path("u16.txt"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o640
    );
}

#[tokio::test]
async fn file_changed_between_read_and_edit_is_refused_when_the_edit_no_longer_fits() {
    let sb = Sandbox::new();
    sb.write("f.txt", "alpha beta\n");
    let mut s = sb.session(&["Edit", "Write"]);
    call(&mut s, "Read", json!({"file_path": sb.p("f.txt")})).await;
    std::thread::sleep(std::time::Duration::from_millis(20));
    sb.write("f.txt", "gamma delta\n");
    let o = call(
        &mut s,
        "Edit",
        json!({"file_path": sb.p("f.txt"), "old_string": "alpha", "new_string": "A"}),
    )
    .await;
    assert_eq!(o.stage, Stage::Validation);
    assert_eq!(
        o.content.to_text(),
        "<tool_use_error>File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.</tool_use_error>"
    );
    assert_eq!(sb.read("f.txt"), b"gamma delta\n", "nothing written");
    // Write is strict: any newer mtime is refused.
    let o = call(
        &mut s,
        "Write",
        json!({"file_path": sb.p("f.txt"), "content": "x\n"}),
    )
    .await;
    assert_eq!(
        o.content.to_text(),
        "<tool_use_error>File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.</tool_use_error>"
    );
}

#[tokio::test]
async fn file_changed_between_read_and_edit_applies_a_still_unique_edit_with_a_note() {
    let sb = Sandbox::new();
    sb.write("f.txt", "hello world\n");
    let mut s = sb.session(&["Edit"]);
    call(&mut s, "Read", json!({"file_path": sb.p("f.txt")})).await;
    std::thread::sleep(std::time::Duration::from_millis(20));
    sb.write("f.txt", "hello there world\n");
    let o = call(
        &mut s,
        "Edit",
        json!({"file_path": sb.p("f.txt"), "old_string": "hello", "new_string": "bye"}),
    )
    .await;
    assert!(o.content.to_text().ends_with("(note: the file had been modified on disk since you last read it — the edit applied cleanly, but the file contains other changes not in your context. Read it before edits that depend on surrounding content.)"));
    assert_eq!(sb.read("f.txt"), b"bye there world\n");
}

#[tokio::test]
async fn edit_without_read_and_edit_errors() {
    let sb = Sandbox::new();
    sb.write("f.txt", "foo bar\nfoo baz\n");
    let mut s = sb.session(&["Edit"]);
    let e = |old: &str, new: &str| json!({"file_path": sb.p("f.txt"), "old_string": old, "new_string": new});
    let cases = [(
        e("foo", "x"),
        "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>",
    )];
    for (input, want) in cases {
        assert_eq!(call(&mut s, "Edit", input).await.content.to_text(), want);
    }
    call(&mut s, "Read", json!({"file_path": sb.p("f.txt")})).await;
    let cases = [
        (
            e("foo", "foo"),
            "<tool_use_error>No changes to make: old_string and new_string are exactly the same.</tool_use_error>",
        ),
        (
            e("qux", "x"),
            "<tool_use_error>String to replace not found in file.\nString: qux</tool_use_error>",
        ),
        (
            e("foo", "x"),
            "<tool_use_error>Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: foo</tool_use_error>",
        ),
        (
            e("", "x"),
            "<tool_use_error>Cannot create new file - file already exists.</tool_use_error>",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(call(&mut s, "Edit", input).await.content.to_text(), want);
    }
    assert_eq!(sb.read("f.txt"), b"foo bar\nfoo baz\n");
}

#[tokio::test]
async fn edit_writes_are_atomic_old_or_new_never_a_mix() {
    let sb = Sandbox::new();
    let a = format!("{}\nmarker-A\n", "a".repeat(2 * 1024 * 1024));
    let b = format!("{}\nmarker-B\n", "b".repeat(2 * 1024 * 1024));
    sb.write("big.txt", &a);
    let path = sb.path("big.txt");
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (stop, path, a, b) = (stop.clone(), path.clone(), a.clone(), b.clone());
        std::thread::spawn(move || {
            let mut reads = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let got = std::fs::read_to_string(&path).unwrap();
                assert!(
                    got == a || got == b,
                    "a reader saw a mix of old and new content ({} bytes)",
                    got.len()
                );
                reads += 1;
            }
            reads
        })
    };
    let mut s = sb.session(&["Write"]);
    for i in 0..20 {
        call(
            &mut s,
            "Read",
            // The marker line: the first, 2 MiB long, is over Read's token budget.
            json!({"file_path": sb.p("big.txt"), "offset": 2, "limit": 1}),
        )
        .await;
        let content = if i % 2 == 0 { &b } else { &a };
        let o = call(
            &mut s,
            "Write",
            json!({"file_path": sb.p("big.txt"), "content": content}),
        )
        .await;
        assert!(!o.is_error, "{:?}", o.content);
    }
    stop.store(true, Ordering::Relaxed);
    let reads = reader.join().expect("the reader saw only whole versions");
    assert!(reads > 0);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), a);
}

#[tokio::test]
async fn read_windows_and_reminders() {
    let sb = Sandbox::new();
    sb.write(
        "ten.txt",
        (1..=10).map(|i| format!("line {i}\n")).collect::<String>(),
    );
    sb.write("empty.txt", "");
    let mut s = sb.session(&[]);
    assert_eq!(
        call(
            &mut s,
            "Read",
            json!({"file_path": sb.p("ten.txt"), "offset": 3, "limit": 2})
        )
        .await
        .content
        .to_text(),
        "3\tline 3\n4\tline 4"
    );
    assert_eq!(
        call(
            &mut s,
            "Read",
            json!({"file_path": sb.p("ten.txt"), "offset": 0, "limit": 1})
        )
        .await
        .content
        .to_text(),
        "0\tline 1"
    );
    assert_eq!(
        call(
            &mut s,
            "Read",
            json!({"file_path": sb.p("ten.txt"), "offset": 20})
        )
        .await
        .content
        .to_text(),
        "<system-reminder>Warning: the file exists but is shorter than the provided offset (20). The file has 11 lines.</system-reminder>"
    );
    assert_eq!(
        call(&mut s, "Read", json!({"file_path": sb.p("empty.txt")}))
            .await
            .content
            .to_text(),
        "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
    );
}
