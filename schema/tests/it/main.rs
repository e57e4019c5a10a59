//! Integration tests of the wire types: round trips, versioning, the generated JSON Schemas and
//! their usefulness to a validator.

mod common;
mod generated;
mod properties;
mod round_trip;
mod validation;
mod versioning;
