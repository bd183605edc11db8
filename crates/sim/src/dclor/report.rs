//! The DCLOR study's report (filled in below).
