//! The standard timeout response: conventional RTO recovery ([`super::conventional`]), nothing
//! special about the ACKs that follow.

use super::{conventional, TimeoutEvent, TimeoutResponse};

/// The standard response.
#[derive(Debug, Default, Clone, Copy)]
pub struct Standard;

impl TimeoutResponse for Standard {
    fn name(&self) -> &'static str {
        "standard"
    }

    fn on_timeout(&mut self, mut t: TimeoutEvent<'_>) {
        conventional(&mut t);
    }
}
