pub mod analytics;
pub mod harness;
pub mod home;
pub mod project_form;
pub mod project_workbench;
pub mod projects;
pub mod settings;
pub mod tasks;
