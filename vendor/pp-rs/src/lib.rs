extern crate unicode_xid;

#[allow(clippy::match_like_matches_macro)]
mod lexer;
pub mod pp;
pub mod token;
