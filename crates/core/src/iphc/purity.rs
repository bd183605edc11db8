//! Pure TCP streams: the decompressor guesses what lost packets changed only on a *data
//! stream* (the acknowledgment number stands still) or an *ACK stream* (no data, the sequence
//! number stands still), because the TCP checksum is a one's-complement sum, blind to which
//! field a difference is in: on a stream where both numbers move, a guess that puts too little on
//! one and as much too much on the other verifies.
//!
//! The decompressor counts, per TCP context, the packets in a row for which each number stood
//! still. A lost packet can break that purity unseen; the compressor, which runs the same code
//! on its shadow of the decompressor, sends a header whole when a decompressor that lost packets
//! before it would guess it wrongly ([`super::compressor`]).

/// Counts one packet into the counters.
///
/// `data_run` counts the packets carrying data since the acknowledgment number last moved
/// (packets without data leave it as it is); `ack_run` counts the packets without data since
/// the sequence number last moved or data was sent.
pub fn count(
    data_run: &mut u32,
    ack_run: &mut u32,
    seq_moved: bool,
    ack_moved: bool,
    payload: usize,
) {
    let seq_moves = seq_moved || payload > 0;
    if ack_moved {
        *data_run = 0;
    } else if payload > 0 {
        *data_run = data_run.saturating_add(1);
    }
    *ack_run = if seq_moves {
        0
    } else {
        ack_run.saturating_add(1)
    };
}
