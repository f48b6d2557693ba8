pub mod harness;
pub mod home;
pub mod settings;
pub mod tasks;
