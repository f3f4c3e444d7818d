//! A sprint board on FastRMCP, in the shape its wiki documents: a
//! `#[resource]` (subscribable through resources/subscribe, its update
//! carrying the new content) and a `#[tool]` that changes it, served over
//! stdio by `FastMCP::run`. crates.io serves no `fastrmcp`, so this has
//! never compiled here: Cargo.toml says why.

use std::sync::Mutex;

use fastrmcp::prelude::*;
use fastrmcp_macros::{resource, tool};

/// The board's tasks, each done or not.
static TASKS: Mutex<[(&str, bool); 3]> =
    Mutex::new([("design", false), ("build", false), ("ship", false)]);

#[resource("board://sprint")]
async fn sprint_board() -> Result<String> {
    let tasks = TASKS.lock().expect("the board's lock");
    let lines: Vec<String> = tasks
        .iter()
        .map(|(task, done)| format!("[{}] {task}", if *done { "x" } else { " " }))
        .collect();
    Ok(lines.join("\n"))
}

/// Marks the first open task done; names it.
#[tool]
async fn complete_next_task() -> Result<String> {
    let mut tasks = TASKS.lock().expect("the board's lock");
    let next = tasks.iter_mut().find(|(_, done)| !*done);
    Ok(next.map_or("nothing left".to_owned(), |(task, done)| {
        *done = true;
        format!("{task}: done")
    }))
}

#[tokio::main]
async fn main() -> Result<()> {
    FastMCP::new("sprint-board").version("1.0.0").run().await
}
