//! Where a `taroc-plus` compressor's CO header bits go, per field, for data segments and pure
//! ACKs apart: what `cargo run -p taroc-cli --example breakdown` prints.

/// A part of a CO header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The kind byte (packet type, PSH, number classes).
    Kind,
    /// The extension octet.
    Extension,
    /// The CID octet.
    Cid,
    /// The checksum field.
    Checksum,
    /// Sequence number LSBs.
    Seq,
    /// Acknowledgment number LSBs.
    Ack,
    /// IP-ID code and LSBs.
    IpId,
    /// TS value code and LSBs.
    TsVal,
    /// TS echo reply code and LSBs.
    TsEcr,
    /// Window code and LSBs.
    Window,
    /// SACK count and blocks.
    Sack,
    /// The R-octet and urgent pointer.
    Other,
    /// Padding of the bit field to an octet.
    Padding,
}

impl Field {
    /// Every field, in header order.
    pub const ALL: [Field; 13] = [
        Field::Kind,
        Field::Extension,
        Field::Cid,
        Field::Checksum,
        Field::Seq,
        Field::Ack,
        Field::IpId,
        Field::TsVal,
        Field::TsEcr,
        Field::Window,
        Field::Sack,
        Field::Other,
        Field::Padding,
    ];

    /// A short name, for tables.
    pub fn name(self) -> &'static str {
        match self {
            Field::Kind => "kind",
            Field::Extension => "extension",
            Field::Cid => "CID",
            Field::Checksum => "checksum",
            Field::Seq => "seq",
            Field::Ack => "ack",
            Field::IpId => "IP-ID",
            Field::TsVal => "TS value",
            Field::TsEcr => "TS echo",
            Field::Window => "window",
            Field::Sack => "SACK",
            Field::Other => "R-octet, URG ptr",
            Field::Padding => "padding",
        }
    }
}

/// The bits of one CO header, per field ([`Field::ALL`] order).
pub type Tally = [u32; 13];

/// CO header bits per field, summed over data segments (class 0) and pure ACKs (class 1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Breakdown {
    packets: [u64; 2],
    bits: [[u64; 13]; 2],
    /// CO headers by their padding bits (0 to 7), data segments and pure ACKs together.
    padding: [u64; 8],
}

impl Breakdown {
    /// Adds one CO header of a data segment (`data`) or a pure ACK.
    pub fn add(&mut self, data: bool, tally: &Tally) {
        let class = usize::from(!data);
        self.packets[class] += 1;
        for (sum, &bits) in self.bits[class].iter_mut().zip(tally) {
            *sum += u64::from(bits);
        }
        self.padding[tally[Field::Padding as usize] as usize % 8] += 1;
    }

    /// CO headers counted whose bit field ends with `bits` (0 to 7) bits of padding: the bits of
    /// the field hash that verify a frame beyond its seal (specification section 5.8).
    pub fn padded(&self, bits: u8) -> u64 {
        self.padding[usize::from(bits % 8)]
    }

    /// CO headers counted of data segments (`data`) or pure ACKs.
    pub fn packets(&self, data: bool) -> u64 {
        self.packets[usize::from(!data)]
    }

    /// Mean bytes per CO header that `field` takes, for data segments (`data`) or pure ACKs.
    pub fn bytes(&self, data: bool, field: Field) -> f64 {
        let class = usize::from(!data);
        let at = Field::ALL.iter().position(|&f| f == field).unwrap_or(0);
        self.bits[class][at] as f64 / 8.0 / self.packets[class].max(1) as f64
    }
}
