meta:
  id: custom_process
doc: |
  Custom processors: `add_key(k)` (found as `super::AddKey`) and `codecs.framed` (found as
  `super::codecs::Framed`), both written in Rust next to the generated module.
seq:
  - id: key
    type: u1
  - id: shifted
    size: 3
    process: add_key(key, true)
  - id: framed
    size: 2
    process: codecs.framed
