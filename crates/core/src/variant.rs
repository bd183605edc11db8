//! Named variants: a scheme with particular settings, selectable by one name on a command line
//! (`iphc-twice` is IPHC without header requests, for instance).

use alloc::vec::Vec;
use core::fmt;

use crate::scheme::{AnyCompressor, AnyDecompressor, Scheme, SchemeConfig};
use crate::tcp::repair::{LinkLoss, Repair};

/// A scheme with its settings, under a name of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// The name on the command line and in reports.
    pub name: &'static str,
    /// The scheme.
    pub scheme: Scheme,
    /// Its settings.
    pub config: SchemeConfig,
}

/// Every variant's name, in the order reports list them.
pub const NAMES: [&str; 6] = ["none", "vj", "iphc-twice", "iphc", "taroc", "taroc-plus"];

/// Names of variants that exist for comparisons but are not in the default lists ([`NAMES`]).
pub const EXTRA_NAMES: [&str; 4] = [
    "taroc-repair",
    "taroc-plus-u",
    "taroc-plus-u-lossy",
    "iphc-plain",
];

impl Variant {
    /// The variant of `scheme` with default settings, named after the scheme (`taroc-plus`
    /// with every repair on: they are part of the profile).
    pub fn of(scheme: Scheme) -> Variant {
        let mut config = SchemeConfig::default();
        if scheme == Scheme::Plus {
            config.plus.repair = Repair::live();
        }
        Variant {
            name: scheme.name(),
            scheme,
            config,
        }
    }

    /// The variant called `name` (one of [`NAMES`]), if any:
    /// - `none`, `vj`, `iphc`, `taroc`: the scheme with its defaults (IPHC with the twice
    ///   algorithm and header requests, as RFC 2507 and the paper describe it);
    /// - `iphc-twice`: IPHC repairing TCP contexts with the twice algorithm, no header requests;
    ///   its compressor sends a full header on a retransmission and, as RFC 1144 does, on a
    ///   duplicate ACK (the compressor of Degermark et al. "peeks into TCP segments and
    ///   acknowledgments"): without requests, the duplicate ACK is what repairs an ACK stream
    ///   that twice cannot, a restarted decompressor's for one;
    /// - `taroc-plus`: the redesigned profile ([`crate::plus`]) with every repair on
    ///   ([`Repair::live`]);
    /// - `taroc-repair` (one of [`EXTRA_NAMES`]): the draft's TAROC, its wire format and coding
    ///   unchanged, with the bounded repairs of `taroc-plus` ([`Repair::live`]):
    ///   what the draft needs to stay live;
    /// - `taroc-plus-u` (one of [`EXTRA_NAMES`]): `taroc-plus` without context requests, for a
    ///   link with no reverse channel (ROHC's U-mode): its repairs are the compressor's alone;
    /// - `taroc-plus-u-lossy` (one of [`EXTRA_NAMES`]): `taroc-plus-u` on a link declared to lose
    ///   frames in bursts ([`crate::plus::PlusConfig::link_loss`]), for a link used one way
    ///   only, where no frame comes back to tell the compressor what the link loses;
    /// - `iphc-plain` (one of [`EXTRA_NAMES`]): RFC 2507 TCP compression with no repair (neither
    ///   twice nor header requests), the compressor's full header on a retransmission (and, as
    ///   RFC 1144 does, on a duplicate ACK) the only repair: what Degermark et al. call "VJ
    ///   header compression" for IPv6.
    pub fn by_name(name: &str) -> Option<Variant> {
        match name {
            "iphc-twice" => {
                let mut variant = Variant::of(Scheme::Iphc);
                variant.name = "iphc-twice";
                variant.config.iphc.header_requests = false;
                variant.config.iphc.full_on_repeat = true;
                Some(variant)
            }
            "iphc-plain" => {
                let mut variant = Variant::of(Scheme::Iphc);
                variant.name = "iphc-plain";
                variant.config.iphc.twice = false;
                variant.config.iphc.header_requests = false;
                variant.config.iphc.full_on_repeat = true;
                Some(variant)
            }
            "taroc-plus-u" => {
                let mut variant = Variant::of(Scheme::Plus);
                variant.name = "taroc-plus-u";
                variant.config.plus.repair.context_requests = false;
                Some(variant)
            }
            "taroc-plus-u-lossy" => {
                let mut variant = Variant::by_name("taroc-plus-u")?;
                variant.name = "taroc-plus-u-lossy";
                variant.config.plus.link_loss = LinkLoss::Bursts;
                Some(variant)
            }
            "taroc-repair" => {
                let mut variant = Variant::of(Scheme::Taroc);
                variant.name = "taroc-repair";
                variant.config.taroc.repair = Repair::live();
                Some(variant)
            }
            _ => name.parse::<Scheme>().ok().map(Variant::of),
        }
    }

    /// The variant called `name`, or an error naming every variant: the parser of a
    /// command-line option.
    pub fn parse(name: &str) -> Result<Variant, alloc::string::String> {
        Variant::by_name(name).ok_or_else(|| {
            alloc::format!(
                "unknown scheme `{name}` (expected one of: {}, {})",
                NAMES.join(", "),
                EXTRA_NAMES.join(", ")
            )
        })
    }

    /// Every variant, in the order of [`NAMES`].
    pub fn all() -> Vec<Variant> {
        NAMES
            .iter()
            .filter_map(|name| Variant::by_name(name))
            .collect()
    }

    /// This variant for a link that may reorder frames between compressor and decompressor
    /// (a multi-path radio link, a tunnel across the Internet), or why it cannot run there:
    /// - IPHC with EXPECT_REORDERING on ([`crate::iphc::IphcConfig::expect_reordering`]);
    /// - VJ refused: RFC 1144 codes each header as deltas from the previous one and assumes a
    ///   link that keeps order, so a reordered frame is rebuilt against the wrong header, and
    ///   the IPv4 Identification it gets wrong passes the TCP checksum;
    /// - the others unchanged: they code against references the decompressor verified, and
    ///   refuse what they cannot rebuild exactly.
    pub fn for_reordering_link(&self) -> Result<Variant, alloc::string::String> {
        let mut variant = self.clone();
        match self.scheme {
            Scheme::Vj => Err(alloc::format!(
                "{}: RFC 1144 assumes a link that keeps order: a reordered frame is rebuilt \
                 against the wrong previous header, and a wrong IPv4 Identification passes \
                 the TCP checksum (iphc, taroc and taroc-plus run on such links)",
                self.name
            )),
            Scheme::Iphc => {
                variant.config.iphc.expect_reordering = true;
                Ok(variant)
            }
            _ => Ok(variant),
        }
    }

    /// A fresh compressor of this variant.
    pub fn compressor(&self) -> AnyCompressor {
        AnyCompressor::new(self.scheme, &self.config)
    }

    /// A fresh decompressor of this variant.
    pub fn decompressor(&self) -> AnyDecompressor {
        AnyDecompressor::new(self.scheme, &self.config)
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_a_variant_and_every_scheme_has_one() {
        let all = Variant::all();
        assert_eq!(all.len(), NAMES.len());
        for (variant, name) in all.iter().zip(NAMES) {
            assert_eq!(variant.name, name);
        }
        for scheme in Scheme::ALL {
            assert_eq!(Variant::by_name(scheme.name()), Some(Variant::of(scheme)));
        }
        assert!(Variant::by_name("iphc-twice")
            .is_some_and(|v| !v.config.iphc.header_requests && v.config.iphc.full_on_repeat));
        assert!(Variant::by_name("iphc").is_some_and(|v| v.config.iphc.header_requests));
        let plain = Variant::by_name("iphc-plain").unwrap();
        assert!(!plain.config.iphc.twice && !plain.config.iphc.header_requests);
        assert!(plain.config.iphc.full_on_repeat);
        assert!(!Variant::all().contains(&plain));
        assert!(Variant::by_name("taroc-plus")
            .is_some_and(|v| v.scheme == Scheme::Plus && v.config.plus.repair == Repair::live()));
        assert!(Variant::by_name("taroc")
            .is_some_and(|v| v.config.taroc == crate::taroc::TarocConfig::default()));
        assert_eq!(Variant::by_name("twice"), None);
        let repair = Variant::by_name("taroc-repair").unwrap();
        assert_eq!(repair.config.taroc.improvements, Default::default());
        assert_eq!(repair.config.taroc.repair, Repair::live());
        assert!(!Variant::all().contains(&repair));
        let u = Variant::by_name("taroc-plus-u").unwrap();
        assert!(!u.config.plus.repair.context_requests);
        assert_ne!(u.config.plus.repair, Repair::default());
        assert_eq!(Variant::parse("iphc").map(|v| v.name), Ok("iphc"));
        let error = Variant::parse("twice").unwrap_err();
        assert!(
            error.contains("`twice`") && error.contains("iphc-twice"),
            "{error}"
        );
    }
}
