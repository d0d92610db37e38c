//! The validation stages after the response stage.

pub mod intent;
pub mod parse;
pub mod schema;
pub(crate) mod tape;
