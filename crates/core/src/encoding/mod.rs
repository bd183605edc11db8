//! Field encodings shared by the schemes.
