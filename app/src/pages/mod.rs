pub mod harness;
pub mod home;
pub mod projects;
pub mod settings;
pub mod tasks;
pub mod project_workbench;
