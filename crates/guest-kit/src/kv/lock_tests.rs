//! The lock of increments ([`super::lock`]) against a fake of Spin's Redis store, whose swaps
//! cannot be trusted, so that every update holds the lock: racers, dead holders, residues,
//! breakers that come late, store errors. Another request's steps run at chosen calls (the
//! fake's triggers); each test also checks that the store holds no note or marker after.

use super::fakes::{FakeBucket, Flavour, Op};
use super::lock::{HOLD_MS, STALE_MS, note_key, now_ms};
use super::{Change, Store};
use edge_api::error::{ApiError, ErrorCode};
use edge_api::kv_lock::lock_key;

const RECORD: &str = "rec";

fn redis() -> (FakeBucket, Store<FakeBucket>, String) {
    let fake = FakeBucket::new(Flavour::SpinRedis);
    let store = fake.store();
    (fake, store, lock_key(RECORD))
}

/// Adds one to the number at `RECORD`; returns the new number.
fn bump(store: &Store<FakeBucket>) -> Result<u64, ApiError> {
    store.update(RECORD, |n: Option<u64>| {
        let n = n.unwrap_or(0) + 1;
        Ok((Change::Put(n), n))
    })
}

fn record(fake: &FakeBucket) -> Option<u64> {
    fake.raw(RECORD)
        .map(|b| serde_json::from_slice(&b).expect("a number"))
}

/// The lock is free and nothing but the record and its counter is left.
fn assert_clean(fake: &FakeBucket, lock: &str) {
    assert_eq!(fake.counter(lock), 0, "the lock is free");
    assert_eq!(
        fake.markers(),
        Vec::<String>::new(),
        "no note or marker is left"
    );
}

/// As a holder (another request) does: writes `value` and releases the lock taken at `taken`.
fn holder_finishes(fake: &FakeBucket, lock: &str, taken: i64, value: u64) {
    fake.put_raw(RECORD, value.to_string().as_bytes());
    fake.add(lock, -taken);
}

#[test]
fn a_racer_who_added_at_the_same_moment_makes_the_taker_take_back_and_wait() {
    let (fake, store, lock) = redis();
    let racer = now_ms();
    // Between our read of 0 and our add, a racer adds its own timestamp and so holds the lock.
    let f = fake.clone();
    fake.before(Op::Increment, &lock, 1, move || {
        assert_eq!(f.add(&lock_key(RECORD), racer), racer)
    });
    // A few reads later the racer has written 41 and released.
    let f = fake.clone();
    fake.before(Op::Increment, &lock, 5, move || {
        holder_finishes(&f, &lock_key(RECORD), racer, 41)
    });
    assert_eq!(
        bump(&store).unwrap(),
        42,
        "the update ran on the holder's write"
    );
    assert_eq!(record(&fake), Some(42));
    assert_clean(&fake, &lock);
}

#[test]
fn a_dead_holders_old_timestamp_is_broken_at_once() {
    let (fake, store, lock) = redis();
    fake.add(&lock, now_ms() - STALE_MS - 1_000);
    assert_eq!(bump(&store).unwrap(), 1);
    // Read, break, read, add, release: no waiting for a note.
    assert_eq!(fake.calls(Op::Increment, &lock), 5);
    assert_clean(&fake, &lock);
}

#[test]
fn a_live_holders_timestamp_is_never_broken() {
    let (fake, store, lock) = redis();
    let holder = now_ms() - 1_000;
    fake.add(&lock, holder);
    let f = fake.clone();
    fake.before(Op::Increment, &lock, 20, move || {
        holder_finishes(&f, &lock_key(RECORD), holder, 6)
    });
    assert_eq!(bump(&store).unwrap(), 7, "waited for the holder");
    assert_clean(&fake, &lock);
}

#[test]
fn a_fresh_residue_of_two_requests_is_noted_waited_for_and_its_note_kept() {
    let (fake, store, lock) = redis();
    let residue = 2 * now_ms();
    fake.add(&lock, residue);
    let e = bump(&store).expect_err("a residue younger than STALE_MS stands");
    assert_eq!(e.code, ErrorCode::StoreContention, "{}", e.message);
    assert_eq!(fake.counter(&lock), residue, "not broken");
    assert_eq!(record(&fake), None);
    // The note stays for the requests after this one, with the time it was first seen.
    let note: (i64, i64) = serde_json::from_slice(&fake.raw(&note_key(&lock)).unwrap()).unwrap();
    assert_eq!(note.0, residue);
    assert!(
        now_ms() - note.1 < STALE_MS,
        "noted when first seen: {note:?}"
    );
}

#[test]
fn a_residue_that_stood_for_stale_ms_is_broken_and_its_note_deleted() {
    let (fake, store, lock) = redis();
    let residue = 2 * (now_ms() - 20_000);
    fake.add(&lock, residue);
    // As noted by an earlier request (or by runtime-host's Redis store), STALE_MS ago.
    let since = now_ms() - STALE_MS - 1;
    fake.put_raw(&note_key(&lock), format!("[{residue},{since}]").as_bytes());
    assert_eq!(bump(&store).unwrap(), 1);
    assert_clean(&fake, &lock);
}

/// Two racers' timestamps on the counter at once, read by us before they take them back:
/// they do so right after our note of their sum is written.
fn racers_leave_once_noted(fake: &FakeBucket, lock: &str) {
    let (a, b) = (now_ms(), now_ms() + 1);
    fake.add(lock, a + b);
    let f = fake.clone();
    fake.after(Op::Set, &note_key(lock), 0, move || {
        f.add(&lock_key(RECORD), -a - b);
    });
}

#[test]
fn a_note_is_deleted_once_the_counter_moves_on() {
    let (fake, store, lock) = redis();
    racers_leave_once_noted(&fake, &lock);
    assert_eq!(bump(&store).unwrap(), 1);
    assert_eq!(fake.calls(Op::Set, &note_key(&lock)), 1, "it was noted");
    assert_clean(&fake, &lock);
}

#[test]
fn a_note_that_cannot_be_deleted_fails_no_update() {
    let (fake, store, lock) = redis();
    racers_leave_once_noted(&fake, &lock);
    fake.fail(Op::Delete, &note_key(&lock), 0);
    assert_eq!(bump(&store).unwrap(), 1);
    assert_eq!(fake.counter(&lock), 0);
    assert!(
        fake.raw(&note_key(&lock)).is_some(),
        "left for the next note to overwrite"
    );
}

#[test]
fn two_breakers_of_one_residue_take_it_off_once() {
    let (fake, store, lock) = redis();
    let dead = now_ms() - STALE_MS - 1_000;
    fake.add(&lock, dead);
    // Another request that read the same residue breaks it just before we do.
    let f = fake.clone();
    fake.before(Op::Increment, &lock, 1, move || {
        assert_eq!(f.add(&lock_key(RECORD), -dead), 0)
    });
    assert_eq!(bump(&store).unwrap(), 1);
    assert_clean(&fake, &lock);
}

#[test]
fn a_late_breaker_gives_back_what_it_took_from_a_new_holder() {
    let (fake, store, lock) = redis();
    let dead = now_ms() - STALE_MS - 1_000;
    fake.add(&lock, dead);
    // Before our break lands, another request breaks the residue and a third takes the lock.
    let holder = now_ms();
    let f = fake.clone();
    fake.before(Op::Increment, &lock, 1, move || {
        let lock = lock_key(RECORD);
        f.add(&lock, -dead);
        assert_eq!(f.add(&lock, holder), holder, "the third holds the lock");
    });
    // Our break found the counter moved and added the value back: the holder's lock is
    // intact, so we wait for it.
    let f = fake.clone();
    fake.before(Op::Increment, &lock, 4, move || {
        assert_eq!(
            f.counter(&lock_key(RECORD)),
            holder,
            "the holder's timestamp, unchanged"
        );
        holder_finishes(&f, &lock_key(RECORD), holder, 8);
    });
    assert_eq!(bump(&store).unwrap(), 9);
    assert_clean(&fake, &lock);
}

#[test]
fn a_store_error_while_holding_still_releases_the_lock() {
    let (fake, store, lock) = redis();
    fake.fail(Op::Get, RECORD, 0);
    let e = bump(&store).expect_err("the read failed");
    assert_eq!(e.code, ErrorCode::StoreUnavailable, "{}", e.message);
    assert_clean(&fake, &lock);
    assert_eq!(record(&fake), None, "nothing written");
    assert_eq!(bump(&store).unwrap(), 1, "the next update is not held up");
}

#[test]
fn a_release_that_fails_leaves_the_change_and_a_residue_to_break() {
    let (fake, store, lock) = redis();
    let before = now_ms();
    // Read, add, release: the release fails.
    fake.fail(Op::Increment, &lock, 2);
    assert_eq!(bump(&store).unwrap(), 1, "the change stands");
    assert_eq!(record(&fake), Some(1));
    let left = fake.counter(&lock);
    assert!(
        (before..=now_ms()).contains(&left),
        "our timestamp stays: {left}"
    );
    assert_eq!(fake.markers(), Vec::<String>::new());
}

#[test]
fn an_add_whose_answer_is_lost_fails_and_writes_nothing() {
    let (fake, store, lock) = redis();
    let before = now_ms();
    fake.fail_after(Op::Increment, &lock, 1);
    let e = bump(&store).expect_err("the add's answer was lost");
    assert_eq!(e.code, ErrorCode::StoreUnavailable, "{}", e.message);
    assert_eq!(record(&fake), None);
    // A residue: one timestamp, broken once older than STALE_MS (as a dead holder's).
    assert!((before..=now_ms()).contains(&fake.counter(&lock)));
}

#[test]
fn a_holder_past_hold_ms_writes_nothing() {
    let (fake, store, _) = redis();
    let taken = now_ms() - HOLD_MS as i64 - 1;
    let put = |_: Option<&[u8]>| Ok((Change::Put(b"1".to_vec()), ()));
    let e = store
        .read_change_write(RECORD, taken, put)
        .expect_err("too late to write");
    assert_eq!(e.code, ErrorCode::StoreContention, "{}", e.message);
    assert_eq!(fake.raw(RECORD), None);
}

#[test]
fn plain_writes_wait_for_a_held_lock_where_swaps_cannot_be_trusted() {
    let (fake, store, lock) = redis();
    let holder = now_ms();
    fake.add(&lock, holder);
    let f = fake.clone();
    fake.before(Op::Increment, &lock, 3, move || {
        holder_finishes(&f, &lock_key(RECORD), holder, 5)
    });
    store.remove(RECORD).unwrap();
    assert_eq!(
        fake.raw(RECORD),
        None,
        "deleted after the holder's write, not before"
    );
    store.put_json(RECORD, &7u64).unwrap();
    assert_eq!(record(&fake), Some(7));
    assert_clean(&fake, &lock);
}

#[test]
fn plain_writes_take_no_lock_where_swaps_hold() {
    let fake = FakeBucket::new(Flavour::Faithful);
    let store = fake.store();
    store.put_json(RECORD, &7u64).unwrap();
    store.remove(RECORD).unwrap();
    assert_eq!(fake.calls(Op::Increment, &lock_key(RECORD)), 0);
    assert_eq!(fake.keys(), Vec::<String>::new());
}
