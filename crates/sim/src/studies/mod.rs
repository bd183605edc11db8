//! The studies: published evaluations the simulator reproduces, each built on the kernel
//! (events, links, queues, TCP, the network and its topologies), which knows none of them.

pub mod tracking;
