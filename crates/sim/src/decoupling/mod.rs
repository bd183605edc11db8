//! TCP decoupling (Wang & Kung, "Use of TCP decoupling in improving TCP performance over
//! wireless networks"): the analysis ([`mat`]).

pub mod mat;
