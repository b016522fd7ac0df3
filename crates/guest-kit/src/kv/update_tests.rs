//! [`Store::update`]'s loop against fakes of the stores guest-kit meets: what it learns of
//! each store's swaps, a value changed between its read and its swap, a record created
//! meanwhile on Spin's SQLite store, store errors, and contenders on threads.

use super::fakes::{FakeBucket, Flavour, Op};
use super::update::Swaps;
use super::{Change, Store};
use edge_api::error::{ApiError, ErrorCode};
use edge_api::kv_lock::lock_key;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const RECORD: &str = "rec";

/// Adds one to the number at `RECORD`, counting the runs of the change in `runs`.
fn bump(store: &Store<FakeBucket>, runs: &AtomicUsize) -> Result<u64, ApiError> {
    store.update(RECORD, |n: Option<u64>| {
        runs.fetch_add(1, Ordering::Relaxed);
        let n = n.unwrap_or(0) + 1;
        Ok((Change::Put(n), n))
    })
}

fn record(fake: &FakeBucket) -> Option<u64> {
    fake.raw(RECORD)
        .map(|b| serde_json::from_slice(&b).expect("a number"))
}

#[test]
fn what_each_store_swaps_is_learnt_and_its_probes_deleted() {
    for (flavour, swaps) in [
        (Flavour::Faithful, Swaps::All),
        (Flavour::SpinSqlite, Swaps::OnExistingKeys),
        (Flavour::SpinRedis, Swaps::Untrusted),
    ] {
        let fake = FakeBucket::new(flavour);
        assert_eq!(fake.store().swaps().unwrap(), swaps, "{flavour:?}");
        assert_eq!(
            fake.keys(),
            Vec::<String>::new(),
            "{flavour:?}: probes deleted"
        );
    }
}

#[test]
fn a_store_with_neither_trustworthy_swaps_nor_increments_is_refused() {
    let fake = FakeBucket::new(Flavour::NoAtomics);
    let e = bump(&fake.store(), &AtomicUsize::new(0)).expect_err("no atomic change");
    assert_eq!(e.code, ErrorCode::StoreCasBroken, "{}", e.message);
    assert!(e.message.contains("gave 1 and 2"), "{}", e.message);
    assert_eq!(
        fake.keys(),
        Vec::<String>::new(),
        "probes deleted, nothing written"
    );
}

#[test]
fn a_value_changed_between_read_and_swap_is_read_again() {
    for flavour in [Flavour::Faithful, Flavour::SpinSqlite] {
        let fake = FakeBucket::new(flavour);
        fake.put_raw(RECORD, b"1");
        let f = fake.clone();
        fake.after(Op::Current, RECORD, 0, move || f.put_raw(RECORD, b"10"));
        let runs = AtomicUsize::new(0);
        assert_eq!(bump(&fake.store(), &runs).unwrap(), 11, "{flavour:?}");
        assert_eq!(
            runs.into_inner(),
            2,
            "{flavour:?}: ran again on the winner's value"
        );
        assert_eq!(record(&fake), Some(11));
    }
}

#[test]
fn on_spins_sqlite_store_a_record_created_meanwhile_is_not_overwritten() {
    // A swap from "absent" there writes whatever is there by then: the record is created
    // under the lock, which finds the other's record and swaps on from it.
    let fake = FakeBucket::new(Flavour::SpinSqlite);
    let f = fake.clone();
    fake.after(Op::Current, RECORD, 0, move || f.put_raw(RECORD, b"10"));
    assert_eq!(bump(&fake.store(), &AtomicUsize::new(0)).unwrap(), 11);
    assert_eq!(record(&fake), Some(11));
    assert_eq!(fake.counter(&lock_key(RECORD)), 0);
    assert_eq!(fake.markers(), Vec::<String>::new());
}

#[test]
fn a_record_changed_under_every_attempt_is_refused_after_a_bounded_number() {
    let fake = FakeBucket::new(Flavour::Faithful);
    fake.put_raw(RECORD, b"0");
    for nth in 0..200 {
        let f = fake.clone();
        let other = format!("{}", 1_000 + nth);
        fake.after(Op::Current, RECORD, nth, move || {
            f.put_raw(RECORD, other.as_bytes())
        });
    }
    let runs = AtomicUsize::new(0);
    let e = bump(&fake.store(), &runs).expect_err("never won");
    assert_eq!(e.code, ErrorCode::StoreContention, "{}", e.message);
    assert_eq!(runs.into_inner(), 96, "one run per attempt");
    assert_eq!(fake.calls(Op::Swap, RECORD), 96);
}

#[test]
fn a_store_error_in_the_swap_is_503_and_changes_nothing() {
    let fake = FakeBucket::new(Flavour::Faithful);
    fake.put_raw(RECORD, b"1");
    fake.fail(Op::Swap, RECORD, 0);
    let e = bump(&fake.store(), &AtomicUsize::new(0)).expect_err("the swap failed");
    assert_eq!(e.code, ErrorCode::StoreUnavailable, "{}", e.message);
    assert!(e.message.contains("injected fault"), "{}", e.message);
    assert_eq!(record(&fake), Some(1));
}

#[test]
fn a_change_that_keeps_the_record_writes_nothing() {
    for flavour in [Flavour::Faithful, Flavour::SpinSqlite, Flavour::SpinRedis] {
        let fake = FakeBucket::new(flavour);
        fake.put_raw(RECORD, b"3");
        let seen = fake
            .store()
            .update(RECORD, |n: Option<u64>| Ok((Change::Keep, n)))
            .unwrap();
        assert_eq!(seen, Some(3), "{flavour:?}");
        assert_eq!(
            fake.calls(Op::Swap, RECORD) + fake.calls(Op::Set, RECORD),
            0
        );
    }
}

#[test]
fn contenders_on_threads_lose_no_increment_on_any_store() {
    const THREADS: usize = 4;
    const EACH: usize = 25;
    for flavour in [Flavour::Faithful, Flavour::SpinSqlite, Flavour::SpinRedis] {
        let fake = FakeBucket::new(flavour);
        let runs = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                let (fake, runs) = (fake.clone(), runs.clone());
                std::thread::spawn(move || {
                    let store = fake.store();
                    for _ in 0..EACH {
                        bump(&store, &runs).expect("an update");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("a contender panicked");
        }
        assert_eq!(record(&fake), Some((THREADS * EACH) as u64), "{flavour:?}");
        assert_eq!(fake.counter(&lock_key(RECORD)), 0, "{flavour:?}");
        assert_eq!(fake.markers(), Vec::<String>::new(), "{flavour:?}");
    }
}

#[test]
fn batch_reads_fall_back_to_single_reads_on_spins_redis_store() {
    let fake = FakeBucket::new(Flavour::SpinRedis);
    fake.put_raw("a", b"1");
    fake.put_raw("b", b"2");
    let keys = ["a", "b", "absent"].map(String::from);
    // A store whose single reads fail too fails the call.
    fake.fail(Op::Get, "a", 0);
    let e = fake
        .store()
        .get_many_json::<u64>(&keys)
        .expect_err("reads fail");
    assert_eq!(e.code, ErrorCode::StoreUnavailable, "{}", e.message);
    let found = fake.store().get_many_json::<u64>(&keys).unwrap();
    assert_eq!(found, [("a".to_owned(), 1), ("b".to_owned(), 2)]);
    assert_eq!(
        fake.calls(Op::GetMany, "a,b,absent"),
        2,
        "then one key at a time"
    );
    fake.store().get_many_json::<u64>(&keys).unwrap();
    assert_eq!(
        fake.calls(Op::GetMany, "a,b,absent"),
        2,
        "no batch read tried again"
    );
}
