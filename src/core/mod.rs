//! The UI-free core: workspace discovery, capture records, provider adapters, the stages
//! of the pipeline and the verdict model.
//!
//! The pipeline ([`pipeline`]) runs the stages in a fixed order and stops at the first
//! one that fails (`docs/verdicts.md#stages`):
//!
//! 0. **input** ([`capture`], [`contract`]): is the record readable, is its contract usable?
//! 1. **response** ([`adapter`]): did the provider finish normally, and what is the proposal?
//! 2. **parse** ([`stage::parse`]): is the text one strict RFC 8259 JSON value?
//! 3. **schema** ([`stage::schema`]): does the value meet the JSON Schema contract?
//! 4. **business** ([`stage::intent`]): CEL rules over trusted context, then the
//!    confirmed-intent comparison.
//!
//! A capture that fails at the parse or schema stage is then tried with the narrow
//! [`repair`]s, on a copy: the verdict gains which one would change its outcome.

pub mod adapter;
pub mod bounded;
pub mod capture;
pub mod capture_file;
pub mod chain;
pub mod config;
pub mod contract;
pub mod drift;
pub mod escape;
pub mod fast_pass;
pub mod feedback;
pub mod generation;
pub mod hint;
pub mod item;
pub mod join;
pub mod json_string;
pub mod lint;
pub mod mcp;
pub mod meta;
pub mod outcome;
pub mod pipeline;
pub mod pointer;
pub mod prescan;
pub mod record_ref;
pub mod repair;
pub mod request;
pub mod review;
pub mod rules;
pub mod schema_budget;
pub mod shape;
pub mod stage;
pub mod summary;
pub mod text;
pub mod verdict;
pub mod workspace;
