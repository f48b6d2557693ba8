pub mod harness;
pub mod home;
