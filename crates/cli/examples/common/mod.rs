//! What the `taroc-plus` examples share: a capture read, and one live `taroc-plus` compressor
//! and decompressor per direction of it (forward: source address below destination address, as
//! `taroc eval` splits them), over a clean link, each end's two codecs passing their sibling
//! notes as `taroc eval` does (so the frames are `taroc eval`'s).

use std::path::Path;
use std::process::ExitCode;

use taroc_core::codec::{pass_sibling_notes, Compressor, Decompressor, FrameKind};
use taroc_core::plus::{PlusCompressor, PlusConfig, PlusDecompressor};
use taroc_core::tcp::repair::Repair;
use taroc_wire::ip::IpInfo;

/// The packets of the capture at `path`; if it cannot be read, says why on standard error
/// and gives the exit code to end with.
pub fn packets(path: &str) -> Result<Vec<Vec<u8>>, ExitCode> {
    taroc_cli::capture::read_file(Path::new(path))
        .map(|capture| capture.packets)
        .map_err(|e| {
            eprintln!("{e}");
            ExitCode::FAILURE
        })
}

/// Two `taroc-plus` compressors and decompressors with the live repairs on, one of each per
/// direction.
pub struct Directions {
    /// The forward and the reverse direction's compressor.
    pub compressors: [PlusCompressor; 2],
    decompressors: [PlusDecompressor; 2],
    frame: Vec<u8>,
    packet: Vec<u8>,
    note: Vec<u8>,
}

impl Directions {
    /// Fresh compressors.
    pub fn new() -> Directions {
        let config = PlusConfig {
            repair: Repair::live(),
            ..PlusConfig::default()
        };
        Directions {
            compressors: [
                PlusCompressor::new(config.clone()),
                PlusCompressor::new(config.clone()),
            ],
            decompressors: [
                PlusDecompressor::new(config.clone()),
                PlusDecompressor::new(config),
            ],
            frame: Vec::new(),
            packet: Vec::new(),
            note: Vec::new(),
        }
    }

    /// Compresses `packet` with its direction's compressor and decompresses the frame at the
    /// far end (the sibling notes passed at both ends): the frame's kind and bytes.
    pub fn compress(&mut self, packet: &[u8]) -> (FrameKind, &[u8]) {
        let d = usize::from(IpInfo::parse(packet).is_ok_and(|ip| ip.src > ip.dst));
        let kind = self.compressors[d].compress(packet, &mut self.frame);
        let [c0, c1] = &mut self.compressors;
        let [d0, d1] = &mut self.decompressors;
        // The sending end: this direction's compressor, the other's decompressor; the
        // receiving end: this direction's decompressor, the other's compressor.
        let (c, other_c, dd, other_d) = if d == 0 {
            (c0, c1, d0, d1)
        } else {
            (c1, c0, d1, d0)
        };
        pass_sibling_notes(c, other_d, &mut self.note);
        // A clean link: a refusal would be a bug the tests catch; here it only counts bytes.
        let _ = dd.decompress(kind, &self.frame, &mut self.packet);
        pass_sibling_notes(other_c, dd, &mut self.note);
        (kind, &self.frame)
    }
}
