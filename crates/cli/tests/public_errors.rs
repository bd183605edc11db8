//! Every public error type of the workspace is a `std::error::Error` that can cross threads and
//! be boxed (`?` into `Box<dyn Error + Send + Sync>`), with a one-line message.

use std::error::Error;

use taroc_core::scheme::UnknownScheme;
use taroc_core::DropReason;
use taroc_gateway::counters::Rejection;
use taroc_gateway::link::LinkDrop;
use taroc_sim::tcp::segment::SegmentError;
use taroc_wire::WireError;

/// The error boxed as a caller's `?` would box it, and its message.
fn message<E: Error + Send + Sync + 'static>(error: E) -> String {
    let boxed: Box<dyn Error + Send + Sync> = Box::new(error);
    boxed.to_string()
}

#[test]
fn every_public_error_type_is_an_error_with_a_one_line_message() {
    let messages = [
        message(WireError::Truncated),
        message(WireError::Malformed),
        message(UnknownScheme),
        message(taroc_gateway::Error::new("opening tc0")),
        message(taroc_gateway::Error::io(
            "opening tc0",
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        )),
        message(SegmentError::Malformed),
        message(SegmentError::BadChecksum),
        message(taroc_cli::capture::CaptureError {
            file: "a.pcap".into(),
            problem: "not a capture".into(),
        }),
    ]
    .into_iter()
    .chain(DropReason::ALL.map(message))
    .chain(Rejection::ALL.map(message))
    .chain([LinkDrop::Oversize, LinkDrop::QueueFull, LinkDrop::SlotsFull].map(message));
    for text in messages {
        assert!(!text.is_empty() && !text.contains('\n'), "{text:?}");
    }
}

#[test]
fn errors_with_a_cause_expose_it() {
    let error = taroc_gateway::Error::io(
        "opening tc0",
        std::io::Error::from(std::io::ErrorKind::PermissionDenied),
    );
    assert!(error.source().is_some());
    assert!(taroc_gateway::Error::new("bad option").source().is_none());
}
