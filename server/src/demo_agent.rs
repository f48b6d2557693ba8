//! `harness demo-agent`: the ready demo agent behind Home's "Try it with a
//! demo agent". Run as a task's command, it shows the
//! whole loop in a minute: it asks a question with options through the REST
//! API (its own `TOWER_*` credentials), parks, reads the answer Harness types
//! into its terminal, and finishes with what it got.

use std::{
    io::{BufRead, Write},
    time::Duration,
};

use serde_json::json;

/// The question the demo asks.
pub const QUESTION: &str = "Which database should the demo service use?";
pub const OPTIONS: [(&str, &str); 3] = [
    ("SQLite", "one file next to the service"),
    ("Postgres", "a database server"),
    ("Decide later", "keep both behind a flag"),
];

fn env(name: &str) -> Result<String, String> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| format!("{name} is not set: run me as a Harness task"))
}

/// Ask, wait for the answer on stdin, say what it was. The exit code is 0
/// when the loop went round.
pub fn run() -> i32 {
    match demo() {
        Ok(answer) => {
            println!();
            println!("Thanks! You answered: {answer}");
            println!(
                "That is the whole loop: the agent asked, parked, and resumed with your answer."
            );
            0
        }
        Err(e) => {
            eprintln!("demo agent: {e}");
            1
        }
    }
}

fn demo() -> Result<String, String> {
    let (url, token, task) = (
        env("TOWER_API_URL")?,
        env("TOWER_API_TOKEN")?,
        env("TOWER_TASK_ID")?,
    );
    // One question per run: a restarted demo asks again.
    let run = env("TOWER_EXECUTION_ID")?;
    println!("Hello, I am the Harness demo agent.");
    println!("I have a question for you: see your Inbox.");
    let options: Vec<_> = OPTIONS
        .iter()
        .map(|(label, description)| json!({"label": label, "description": description}))
        .collect();
    let body = json!({
        "taskId": task,
        "question": QUESTION,
        "options": options,
        "idempotencyKey": format!("demo:{run}"),
    });
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
    let response = client
        .post(format!(
            "{}/api/internal/harness/ask",
            url.trim_end_matches('/')
        ))
        .bearer_auth(token)
        .json(&body)
        .send()
        .map_err(|e| format!("cannot reach Harness at {url}: {e}"))?;
    if !response.status().is_success() {
        let status = response.status();
        let text = response.text().unwrap_or_default();
        return Err(format!("the question was refused ({status}): {text}"));
    }
    print!("Waiting for your answer… ");
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("cannot read the answer: {e}"))?;
    let answer = line.trim();
    if answer.is_empty() {
        return Err("no answer arrived".into());
    }
    Ok(answer.to_string())
}
