//! Sans-IO TCP/IP header compression.
//!
//! This crate holds the codecs and nothing else: no clocks, no sockets, no files, no randomness.
//! Every scheme implements the [`codec::Compressor`] / [`codec::Decompressor`] pair, and
//! [`scheme::Scheme`] (a module above the schemes) selects one by name with static dispatch
//! ([`scheme::AnyCompressor`], [`scheme::AnyDecompressor`]).
//!
//! Schemes:
//! - [`none`]: every packet passes unchanged (the baseline every other scheme is measured against);
//! - [`vj`]: Van Jacobson's compression (RFC 1144), the baseline of the 1990s;
//! - [`iphc`]: IP Header Compression (RFC 2507), with the twice algorithm and header requests;
//! - [`taroc`]: TCP-Aware RObust header Compression (draft-ietf-rohc-tcp-taroc-00): W-LSB encoding
//!   with a sliding window managed by TCP congestion-window tracking, robust without feedback.
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod codec;
pub mod encoding;
pub mod iphc;
pub mod none;
pub mod scheme;
pub mod taroc;
pub mod variant;
pub mod vj;

pub use codec::{Compressor, Decompressor, DropReason, FrameKind};
pub use scheme::{AnyCompressor, AnyDecompressor, Scheme, SchemeConfig};
pub use variant::Variant;
