//! statepack-codegen
