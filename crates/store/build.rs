//! `sqlx::migrate!` embeds the migration files at compile time; without
//! this, a new file in `migrations/` is not picked up until the crate's
//! own sources change.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
