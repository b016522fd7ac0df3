//! `runtime-host`'s side of guest-kit's lock of increments ([`edge_api::kv_lock`]), so that a
//! `spin up` and a `runtime-host` on one Redis agree on one protocol for every record.
//!
//! Under Spin's Redis store (whose swaps cannot be trusted) a guest changes a record holding
//! the counter `guest-kit/lock/<key>` (read, change, plain `SET`, release); `runtime-host`'s
//! guests swap instead. A swap that ignored the lock could land between a Spin holder's read
//! and its write and be overwritten (acknowledged chat appends were lost that way), and a
//! plain write of ours could do the same. So every write of this store to a record, swap,
//! `SET`, `DEL`, `MSET` alike, is one Lua script that writes only while the record's lock
//! reads 0; Redis runs a script atomically, so "nobody holds the lock" and the write are one
//! step, and a Spin holder, who reads the record only after taking the lock, sees our write.
//! A held lock makes the script write nothing; the store waits for it to be released
//! ([`super::RedisStore`]'s `guarded`), as Spin's own requests do.
//!
//! Residues of requests that died holding (or racing for) a lock are broken by guest-kit's
//! rules, here on Redis's clock (`TIME`): a value that is one timestamp older than
//! [`STALE_MS`] at once; any other value once it has stood unchanged for [`STALE_MS`]
//! (noted in `<lock>/seen` as `[value,since]`, the note guest-kit keeps, deleted with the
//! break, or expiring after twice that time where the value went away without one). A script
//! reads the value and takes it off in one step, so its break counts exactly when a guest's
//! would (a guest's counts only if it leaves the counter at 0; one that finds
//! it moved adds the value back). So a record left locked by a killed `spin` is written again
//! after [`STALE_MS`], never sooner, whichever side sees it first.
//!
//! A key the scripts touch beyond their declared ones (the note) rules out Redis Cluster,
//! which Spin's Redis store does not support either.

use edge_api::kv_lock::{ONE_TIMESTAMP_WITHIN_MS, STALE_MS, lock_key};
use redis::Script;

/// Lua: `lock_free(lock)` is true when the counter at `lock` is absent or 0, or was a
/// residue it has just broken; false while someone may hold it.
fn lock_free_lua() -> String {
    format!(
        r"
local function lock_free(lock)
  local raw = redis.call('GET', lock)
  if not raw then return true end
  local value = tonumber(raw)
  if value == nil then return false end
  if value == 0 then return true end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if value >= now - {stale} and value <= now + {stale} then return false end
  local one_old = value >= now - {within} and value < now - {stale}
  if not one_old then
    local note = lock .. '/seen'
    local seen = redis.call('GET', note)
    local since = nil
    if seen then
      local noted, at = string.match(seen, '^%[(%-?%d+),(%-?%d+)%]$')
      if noted == raw then since = tonumber(at) end
    end
    if since == nil then
      redis.call('SET', note, '[' .. raw .. ',' .. string.format('%d', now) .. ']', 'PX', {keep})
      since = now
    end
    if now - since < {stale} then return false end
  end
  redis.call('DECRBY', lock, raw)
  redis.call('DEL', lock .. '/seen')
  return true
end
",
        stale = STALE_MS,
        within = ONE_TIMESTAMP_WITHIN_MS,
        // A note of a value that went away without a break (two racers' sum, a losing
        // breaker's residue) expires instead of staying: twice the time a break waits, so a
        // value still standing is broken before its note could lapse.
        keep = 2 * STALE_MS,
    )
}

/// Compare-and-swap: KEYS[1] the record, KEYS[2] its lock; ARGV[1] is `1` when a value is
/// expected (ARGV[2]), `0` when the key must be absent; ARGV[3] is the new value. Returns
/// `{1}` when written, `{0, current}` or `{0}` (absent) when the record is not what the
/// caller saw, `{2}` when its lock is held (nothing compared or written).
pub fn cas_script() -> Script {
    Script::new(&format!(
        r"{}
if not lock_free(KEYS[2]) then return {{2}} end
local current = redis.call('GET', KEYS[1])
local matches
if ARGV[1] == '1' then matches = (current == ARGV[2]) else matches = (current == false) end
if not matches then
  if current then return {{0, current}} end
  return {{0}}
end
redis.call('SET', KEYS[1], ARGV[3])
return {{1}}
",
        lock_free_lua()
    ))
}

/// Plain writes of n records: KEYS[1..n] the records, KEYS[n+1..2n] their locks; ARGV[1]
/// `set` (ARGV[2..n+1] the values) or `del`. All or nothing: returns 1 when written, 0 when
/// any of the locks is held.
pub fn write_script() -> Script {
    Script::new(&format!(
        r"{}
local n = #KEYS / 2
for i = 1, n do
  if not lock_free(KEYS[n + i]) then return 0 end
end
for i = 1, n do
  if ARGV[1] == 'set' then redis.call('SET', KEYS[i], ARGV[i + 1])
  else redis.call('DEL', KEYS[i]) end
end
return 1
",
        lock_free_lua()
    ))
}

/// The lock of each of `keys`, in their order.
pub fn locks_of<'k>(keys: impl IntoIterator<Item = &'k String>) -> Vec<String> {
    keys.into_iter().map(|k| lock_key(k)).collect()
}

/// A pause of up to `cap_ms` before trying a held lock again, jittered from the clock so that
/// waiters do not all come back at once.
pub async fn pause(cap_ms: u64) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let micros = 200 + u64::from(nanos) % (cap_ms * 1000);
    tokio::time::sleep(std::time::Duration::from_micros(micros)).await;
}
