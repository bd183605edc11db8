//! TCP decoupling (Wang & Kung, "Use of TCP decoupling in improving TCP performance over
//! wireless networks"): the analysis ([`mat`]); the TCP circuit — tunnel queue ([`tunnel`]),
//! control TCPs ([`control`]), GMB sender ([`circuit`]) —; the decoupling socket's data TCP
//! ([`socket`]); both hosts as network agents ([`agent`]); the testbed they run on ([`testbed`]).

pub mod agent;
pub mod circuit;
pub mod control;
pub mod mat;
pub mod socket;
pub mod study;
pub mod testbed;
pub mod tunnel;
