//! Rule results and how they are printed.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    /// Required by the specification: a failure makes the exit status non-zero.
    Must,
    /// Expected of a good deployment where the specification is silent: reported as WARN.
    Should,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    Pass,
    Fail,
    Warn,
}

#[derive(Debug, Clone, Serialize)]
pub struct RuleResult {
    pub rule: String,
    pub level: Level,
    pub status: Status,
    pub description: String,
    /// What was expected and what came back, for failures and warnings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub target: String,
    /// What the target is judged against, for the printed title.
    #[serde(skip)]
    pub standard: &'static str,
    pub results: Vec<RuleResult>,
}

impl Report {
    pub fn new(target: &str) -> Self {
        Self {
            target: target.to_owned(),
            standard: "the Lightweight AI Model Runtime Interface 1.2",
            results: Vec::new(),
        }
    }

    /// Records a rule: passed when `problems` is empty.
    pub fn rule(&mut self, rule: &str, level: Level, description: &str, problems: Vec<String>) {
        let status = match (problems.is_empty(), level) {
            (true, _) => Status::Pass,
            (false, Level::Must) => Status::Fail,
            (false, Level::Should) => Status::Warn,
        };
        self.results.push(RuleResult {
            rule: rule.to_owned(),
            level,
            status,
            description: description.to_owned(),
            problems,
        });
    }

    pub fn passed(&self) -> bool {
        self.results.iter().all(|r| r.status != Status::Fail)
    }

    pub fn print(&self) {
        println!("conformance of {} to {}", self.target, self.standard);
        for r in &self.results {
            let status = match r.status {
                Status::Pass => "PASS",
                Status::Fail => "FAIL",
                Status::Warn => "WARN",
            };
            println!("{status}  {:<34} {}", r.rule, r.description);
            for p in &r.problems {
                println!("        {p}");
            }
        }
        let count = |s| self.results.iter().filter(|r| r.status == s).count();
        println!(
            "{} passed, {} failed, {} warnings",
            count(Status::Pass),
            count(Status::Fail),
            count(Status::Warn)
        );
    }
}
