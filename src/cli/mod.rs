//! Command layer.
