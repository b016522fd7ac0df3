//! The chat types' rules: summaries, ids, names, roles, defaults and the list's order.

use super::*;
use crate::error::ErrorCode;

#[test]
fn summary_counts_messages() {
    let d = Dialog {
        id: "a".into(),
        chat_name: "n".into(),
        messages: vec![
            Message {
                id: "1".into(),
                role: Role::User,
                content: "hi".into(),
                created: "t".into(),
                name: None,
                model: None,
                metadata: None,
            };
            3
        ],
        created: "c".into(),
        updated: "u".into(),
        guid: "g".into(),
    };
    let s = d.summary();
    assert_eq!(s.num_messages, 3);
    let v = serde_json::to_value(&s).unwrap();
    for key in [
        "id",
        "chatName",
        "numMessages",
        "created",
        "updated",
        "GUID",
    ] {
        assert!(v.get(key).is_some(), "{key} missing");
    }
}

#[test]
fn ids_are_checked() {
    assert!(validate_id("id", "abc-DEF_1.2").is_ok());
    for bad in ["", "a b", "a/b", "é", &"x".repeat(65)] {
        let e = validate_id("id", bad).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidField);
    }
}

#[test]
fn chat_names_are_trimmed_and_bounded() {
    assert_eq!(validate_chat_name("  hello ").unwrap(), "hello");
    assert!(validate_chat_name("   ").is_err());
    assert!(validate_chat_name(&"n".repeat(201)).is_err());
}

#[test]
fn roles_are_closed() {
    let bad: Result<NewMessage, _> =
        crate::json::parse_body(br#"{"role": "wizard", "content": "x"}"#);
    let e = bad.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidField);
    assert!(e.message.contains("role"), "{}", e.message);
}

#[test]
fn message_defaults_fill_in() {
    let m: NewMessage = crate::json::parse_body(br#"{"role": "user", "content": "x"}"#).unwrap();
    let m = m.into_message("message", || "gen".into(), "now").unwrap();
    assert_eq!((m.id.as_str(), m.created.as_str()), ("gen", "now"));
}

#[test]
fn sort_is_newest_first() {
    let mk = |id: &str, updated: &str| ChatSummary {
        id: id.into(),
        chat_name: String::new(),
        num_messages: 0,
        created: String::new(),
        updated: updated.into(),
        guid: String::new(),
    };
    let mut l = vec![
        mk("a", "2025-01-01"),
        mk("b", "2026-01-01"),
        mk("c", "2026-01-01"),
    ];
    sort_summaries(&mut l);
    let ids: Vec<_> = l.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["b", "c", "a"]);
}
