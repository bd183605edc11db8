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
//!   with a sliding window managed by TCP congestion-window tracking, robust without feedback;
//! - [`plus`]: `taroc-plus`, TAROC's core with a redesigned, smaller wire format.
//!
//! Both TAROC profiles build on [`tcp`], which neither owns: TCP/IP packet parsing, the window
//! of references (VSW), congestion-window tracking, contexts' identities, the bounded repairs
//! and what their statistics count by. [`taroc`] keeps the draft's own formats and rules, and
//! [`plus`] takes nothing from it.
//!
//! Named settings of these schemes ([`Variant`]: `iphc-twice`, `taroc-plus`, …) are what the
//! `taroc` command line and reports call schemes.
//!
//! # Example
//!
//! Compress a TCP/IPv4 bulk transfer with `taroc-plus`, carry each frame (its [`FrameKind`] and
//! bytes) over a link of your own, and get every packet back byte for byte:
//!
//! ```
//! use taroc_core::{Compressor, Decompressor, FrameKind, Variant};
//! use taroc_wire::checksum::Sum;
//!
//! let variant = Variant::by_name("taroc-plus").expect("a known scheme");
//! let (mut compressor, mut decompressor) = (variant.compressor(), variant.decompressor());
//! let (mut frame, mut delivered) = (Vec::new(), Vec::new());
//! let (mut header_bytes, mut link_bytes) = (0, 0);
//! for i in 0..20 {
//!     let packet = segment(1000 + 100 * i, &[b'x'; 100]);
//!     let kind: FrameKind = compressor.compress(&packet, &mut frame);
//!     // ... the link carries `kind` and `frame` ...
//!     decompressor.decompress(kind, &frame, &mut delivered).expect("an intact frame");
//!     assert_eq!(delivered, packet);
//!     header_bytes += packet.len() - 100;
//!     link_bytes += frame.len() - 100;
//! }
//! // The last frame's header is a few bytes instead of 40.
//! assert!(frame.len() - 100 < 10, "{} header bytes", frame.len() - 100);
//! // The first frames carry the whole header (to set up the context robustly); all 20 together
//! // cost under half the original header bytes.
//! assert!(2 * link_bytes < header_bytes, "{link_bytes} of {header_bytes} bytes");
//!
//! /// An IPv4/TCP segment from 192.0.2.1:5001 to 192.0.2.2:80 with sequence number `seq`.
//! fn segment(seq: u32, payload: &[u8]) -> Vec<u8> {
//!     let len = 40 + payload.len();
//!     let mut packet = vec![0x45, 0, (len >> 8) as u8, len as u8, 0, 1, 0x40, 0, 64, 6, 0, 0];
//!     packet.extend_from_slice(&[192, 0, 2, 1, 192, 0, 2, 2]);
//!     packet.extend_from_slice(&[0x13, 0x89, 0, 80]); // ports 5001, 80
//!     packet.extend_from_slice(&seq.to_be_bytes());
//!     packet.extend_from_slice(&7000u32.to_be_bytes()); // acknowledgment number
//!     packet.extend_from_slice(&[0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0]); // ACK, window, checksum
//!     packet.extend_from_slice(payload);
//!     let ip = Sum::new().add_bytes(&packet[..20]).checksum();
//!     packet[10..12].copy_from_slice(&ip.to_be_bytes());
//!     let tcp = Sum::new()
//!         .add_bytes(&packet[12..20]) // the pseudo-header: addresses,
//!         .add_u16(6) // protocol and TCP length
//!         .add_u16((len - 20) as u16)
//!         .add_bytes(&packet[20..])
//!         .checksum();
//!     packet[36..38].copy_from_slice(&tcp.to_be_bytes());
//!     packet
//! }
//! ```
//!
//! A decompressor refuses what it cannot rebuild and verify with a [`DropReason`] (which
//! implements `std::error::Error`) instead of delivering a wrong packet.
//!
//! Each end of a link runs the compressor of the direction it sends and the decompressor of the
//! one it receives. A decompressor's feedback ([`Decompressor::take_feedback`]) crosses the link
//! to the far end's compressor; an end's own two codecs also pass each other notes of the flows
//! they hold ([`codec::pass_sibling_notes`], after every frame either sends or receives), which
//! `taroc-plus` uses to start a flow from the opposite direction's. Without the notes every
//! scheme works as well, and `taroc-plus` sends those starts whole.
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod codec;
pub mod encoding;
pub mod iphc;
pub mod link_end;
pub mod none;
pub mod plus;
pub mod scheme;
pub mod taroc;
pub mod tcp;
#[cfg(test)]
mod test_rng;
pub mod variant;
pub mod vj;

pub use codec::{Compressor, Decompressor, DropReason, FrameKind};
pub use link_end::{Arrived, LinkEnd};
pub use scheme::{AnyCompressor, AnyDecompressor, Scheme, SchemeConfig};
pub use variant::Variant;
