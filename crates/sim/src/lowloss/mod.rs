//! The evaluation of Degermark, Engan, Nordgren and Pink, "Low-loss TCP/IP header compression
//! for wireless networks": the analytic Figures 4, 5, 6 and 13 ([`analytic`]), Figure 9's Modem
//! and WLAN topologies as scenarios ([`topology`]), the simulated Figures 10–12, 14, 18 and 19
//! with the real codecs ([`run`]), the paper's claims checked ([`claims`]), a report
//! ([`report`]) and plots ([`plots`]).

pub mod analytic;
pub mod claims;
pub mod plots;
pub mod report;
pub mod run;
pub mod topology;
