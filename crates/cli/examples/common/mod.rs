//! What the `taroc-plus` examples share: a capture read, and one live `taroc-plus` compressor
//! per direction of it (forward: source address below destination address, as `taroc eval`
//! splits them).

use std::path::Path;
use std::process::ExitCode;

use taroc_core::codec::{Compressor, FrameKind};
use taroc_core::plus::PlusCompressor;
use taroc_core::taroc::{Repair, TarocConfig};
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

/// Two `taroc-plus` compressors with the live repairs on, one per direction.
pub struct Directions {
    /// The forward and the reverse direction's compressor.
    pub compressors: [PlusCompressor; 2],
    frame: Vec<u8>,
}

impl Directions {
    /// Fresh compressors.
    pub fn new() -> Directions {
        let config = TarocConfig {
            repair: Repair::live(),
            ..TarocConfig::default()
        };
        Directions {
            compressors: [
                PlusCompressor::new(config.clone()),
                PlusCompressor::new(config),
            ],
            frame: Vec::new(),
        }
    }

    /// Compresses `packet` with its direction's compressor: the frame's kind and bytes.
    pub fn compress(&mut self, packet: &[u8]) -> (FrameKind, &[u8]) {
        let reverse = IpInfo::parse(packet).is_ok_and(|ip| ip.src > ip.dst);
        let kind = self.compressors[usize::from(reverse)].compress(packet, &mut self.frame);
        (kind, &self.frame)
    }
}
