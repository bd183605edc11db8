//! Field encodings shared by the schemes.
//!
//! - [`wlsb`]: window-based least-significant-bit encoding (TAROC draft section 5 and
//!   Appendix A);
//! - [`lsb`]: LSBs with a one-sided interpretation interval, for fields that mostly grow
//!   (`taroc-plus`);
//! - [`bits`]: MSB-first bit packing, for fields that are not byte-aligned;
//! - [`varint`]: LEB128 unsigned integers (`taroc-plus` IR-R ports);
//! - [`delta`]: the RFC 1144 variable-length delta (one octet 1..=255, or 0 and two octets).

pub mod bits;
pub mod delta;
pub mod lsb;
pub mod varint;
pub mod wlsb;
