//! The UI-free core: workspace discovery, capture records, provider adapters, the stages
//! of the pipeline and the verdict model.
//!
//! The pipeline (`pipeline::run`) runs the stages in a fixed order and stops at the first
//! one that fails (DESIGN 1):
//!
//! 1. **response** ([`adapter`]): did the provider finish normally, and what is the proposal?
//! 2. **parse** ([`stage::parse`]): is the text one strict RFC 8259 JSON value?
//! 3. **schema** ([`stage::schema`]): does the value meet the JSON Schema contract?
//! 4. **business**: CEL rules over trusted context, then the confirmed-intent comparison.

pub mod adapter;
pub mod stage;
pub mod text;
pub mod verdict;
