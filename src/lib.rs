//! statepack
