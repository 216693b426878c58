//! One module per format: the semantic API (recorders, readers, players) over the generated
//! raw types and the runtime's quantizers and delta chains.
pub mod snap;
