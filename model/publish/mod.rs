//! The texts a maintainer reads, made from the drivers' and measurements'
//! results: each finding's mail ([`mail`]: a patch with a diff made from
//! the user's kernel tree by [`kdiff`], a stable-only patch, a short reply,
//! or the model's whole report), the findings listing and replays
//! ([`findings`]), the candidates' price ([`price`]) and the real-kernel
//! check's tables ([`kernels`]). One floor above
//! drive/ and measure/, whose searches they run and print, and below
//! cli/, which parses arguments and dispatches here.

pub mod answer;
pub mod findings;
pub mod kdiff;
pub mod kernels;
pub mod mail;
pub mod price;
pub mod summary;
pub mod table;
