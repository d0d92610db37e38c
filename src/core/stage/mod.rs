//! The validation stages after the response stage.

pub mod parse;
