//! Processes as `/proc` shows them: who holds a socket, a process's parent, its children.

/// What `/proc/<pid>/stat` says of a process that matters here.
pub struct Stat {
    pub ppid: u32,
    pub state: char,
}

pub fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    let mut rest = text.rsplit_once(')')?.1.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some(Stat { ppid, state })
}

/// The process holding socket `inode`: a pass over every process's descriptors, so callers
/// keep the answer for the connection (see `host_core::http::connection::ConnInfo`).
pub fn holder(inode: u64) -> Option<u32> {
    let target = format!("socket:[{inode}]");
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .find(|&pid| holds(pid, &target))
}

/// Whether process `pid` has a file descriptor open on `target` (`socket:[inode]`).
fn holds(pid: u32, target: &str) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|link| link.as_os_str() == target))
}

/// `pid` and its ancestors below init, a walk up through each parent; `None` if `pid` is
/// not running (gone, or a zombie).
pub fn line(pid: u32) -> Option<Vec<u32>> {
    let first = stat(pid).filter(|s| !matches!(s.state, 'Z' | 'X'))?;
    let mut line = vec![pid];
    let mut up = first.ppid;
    while up > 1 && !line.contains(&up) {
        line.push(up);
        match stat(up) {
            Some(s) => up = s.ppid,
            None => break,
        }
    }
    Some(line)
}

/// Whether `pid` descends from `ancestor` (a walk up from `pid`).
pub fn descends_from(pid: u32, ancestor: u32) -> bool {
    line(pid).is_some_and(|line| line[1..].contains(&ancestor))
}

/// Every descendant of `pid`: a walk down through each thread's `children` list, so a few
/// reads per descendant and per thread, not one per process on the machine.
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut frontier = vec![pid];
    while let Some(p) = frontier.pop() {
        for child in children(p) {
            if child != pid && !found.contains(&child) {
                found.push(child);
                frontier.push(child);
            }
        }
    }
    found
}

/// The children of every thread of `pid` (`/proc/<pid>/task/<tid>/children`).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|c| c.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child started here is among this process's descendants, and this process in the
    /// child's line; init is in no one's.
    #[test]
    fn relatives_up_and_down() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let (me, kid) = (std::process::id(), child.id());
        let mine = descendants(me);
        assert!(mine.contains(&kid), "{mine:?} lacks the child {kid}");
        let theirs = line(kid).unwrap();
        assert_eq!(
            theirs[..2],
            [kid, me],
            "the child's line starts with it and us"
        );
        assert!(!theirs.contains(&1), "init is nobody's relative");
        assert!(descends_from(kid, me) && !descends_from(me, kid));
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(line(kid), None, "a child that ended has no line");
    }
}
