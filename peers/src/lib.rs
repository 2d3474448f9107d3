//! Nothing to link: this package holds the peers benchmark
//! (`benches/peers.rs`), which compares `ad` with candle and burn on the
//! ML-shaped scenarios of the registry. Run it with
//! `cargo bench -p ad-peers --features peers`.
