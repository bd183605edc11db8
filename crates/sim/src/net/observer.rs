//! What a study watches of a run without the network knowing the study: hooks with default
//! methods that do nothing, called by the event loop as things happen.

use taroc_core::AnyCompressor;

use super::LinkId;
use crate::event::Time;
use crate::tcp::sender::TcpSender;

/// Hooks into a network's run ([`super::Network::run_observed`]). Every method does nothing by
/// default; `()` watches nothing.
pub trait Observer {
    /// The compressor sending on `link` took `packet` at `now` (its frame is made, and the
    /// notes to its sibling decompressor passed); `sender` is the network's first bulk TCP
    /// sender, if any, as it stands at that instant.
    fn compressed(
        &mut self,
        now: Time,
        link: LinkId,
        packet: &[u8],
        compressor: &AnyCompressor,
        sender: Option<&TcpSender>,
    ) {
        let _ = (now, link, packet, compressor, sender);
    }
}

impl Observer for () {}
